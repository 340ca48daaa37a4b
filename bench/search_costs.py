"""Benchmark: what ``storage.search(...)`` costs, one owner's top 20, as the messages
grow from 100,000 to 1,000,000; what keeping the index adds to a write; and on SQLite
what the first search after the rows were written spends indexing them.

From the repository root, after ``pip install -e '.[dev,bench]'``::

    python bench/search_costs.py                              # 100k and 1M, 3 backends
    python bench/search_costs.py --sizes 20000 --backends sqlite   # a quick check

First the writes, on the empty schema: ``append`` of one message and of 50, with the
index and (after dropping it) without, interleaved; then the index is built again. Then
for each size it fills ``--owners`` owners (1,000) of ``--sessions`` sessions each (10:
10,000 sessions) with the messages, spread evenly, with plain ``INSERT``s of the rows the
codec writes (not timed): sentences of 12 words drawn from a vocabulary of 5,000 words
with a Zipf-like law, so a query's words are common, middling or rare as in real text.
Each size adds the messages of the previous one (100k, then 900k more). Then it times,
for ``--reps`` different owners, ``search(q, owner=..., limit=20)`` for three queries: a
common word, a middling one, and two words with the last one a prefix; p50 and p95.

The SQLite database is a fresh file in a temporary directory; on PostgreSQL and
MySQL/MariaDB (``--pg-url``, ``--mysql-url``, defaults ``$SQLMEMORY_BENCH_POSTGRES_URL``
and ``$SQLMEMORY_BENCH_MYSQL_URL``) the ``sqlmemory_*`` tables are dropped and rebuilt:
give it a database of its own.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, migrate
from sqlmemory.storage.sql.schema import messages_table, sessions_table
from sqlmemory.storage.sql.search_index import create_search_index, drop_search_index
from sqlmemory.storage.sql.search_lag import DEFER, catch_up

DEFAULT_URLS = {
    "postgresql": (
        "SQLMEMORY_BENCH_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/bench_search",
    ),
    "mysql": (
        "SQLMEMORY_BENCH_MYSQL_URL",
        "mysql+pymysql://root@127.0.0.1:3306/bench_search?charset=utf8mb4",
    ),
}
NOW = datetime.now(timezone.utc).replace(microsecond=0)
FILL_CHUNK = 10_000
VOCABULARY = 5000
WORDS_PER_MESSAGE = 12
QUERIES = {"common word": "w00003", "middling word": "w00150", "two words, prefix": "w00020 w0040"}
"""Word ``w00003`` is in about one message in six, ``w00150`` in one in 170; the last
query is a word and a prefix of ten words (``w00400``...``w00409``)."""


def word(rank: int) -> str:
    return f"w{rank:05d}"


def sentences(rng: random.Random, n: int) -> list[str]:
    """``n`` texts of words drawn with weight 1/rank (a Zipf law)."""
    weights = [1 / rank for rank in range(1, VOCABULARY + 1)]
    ranks = rng.choices(range(1, VOCABULARY + 1), weights, k=n * WORDS_PER_MESSAGE)
    return [
        " ".join(word(r) for r in ranks[i : i + WORDS_PER_MESSAGE])
        for i in range(0, len(ranks), WORDS_PER_MESSAGE)
    ]


def session_id(owner: int, session: int) -> str:
    return f"bench-search-{owner:05d}-{session:03d}"


def owner_of(owner: int) -> str:
    return f"user-{owner:05d}"


def fill(engine: sa.Engine, owners: int, sessions: int, first: int, last: int, seed: int) -> None:
    """Messages ``first`` to ``last - 1`` of each session, as plain rows."""
    rng = random.Random(seed)
    with engine.begin() as conn:
        if first == 0:
            records = [
                {
                    "session_id": session_id(o, s),
                    "next_seq": 1,
                    "created_at": NOW,
                    "updated_at": NOW,
                    "message_count": 0,
                    "owner": owner_of(o),
                }
                for o in range(owners)
                for s in range(sessions)
            ]
            for start in range(0, len(records), FILL_CHUNK):
                conn.execute(sa.insert(sessions_table), records[start : start + FILL_CHUNK])
    rows: list[dict[str, Any]] = []
    for o in range(owners):
        for s in range(sessions):
            texts = sentences(rng, last - first)
            for seq, text in enumerate(texts, first + 1):
                rows.append(_row(session_id(o, s), seq, text))
            if len(rows) >= FILL_CHUNK:
                with engine.begin() as conn:
                    conn.execute(sa.insert(messages_table), rows)
                rows = []
    with engine.begin() as conn:
        if rows:
            conn.execute(sa.insert(messages_table), rows)
        conn.execute(
            sa.update(sessions_table)
            .where(sessions_table.c.session_id.like("bench-search-%"))
            .values(message_count=last, next_seq=last + 1)
        )
    with engine.begin() as conn:
        for statement in {
            "postgresql": ["ANALYZE sqlmemory_sessions", "ANALYZE sqlmemory_messages"],
            "sqlite": ["ANALYZE"],
        }.get(engine.dialect.name, ["ANALYZE TABLE sqlmemory_sessions, sqlmemory_messages"]):
            conn.exec_driver_sql(statement)


def _row(sid: str, seq: int, text: str) -> dict[str, Any]:
    return {
        "session_id": sid,
        "seq": seq,
        "message_id": f"m{seq}",
        "role": "assistant" if seq % 2 == 0 else "user",
        "tool_call_id": None,
        "text": text,
        "n_blocks": 0,
        "call_ids": None,
        "metadata_json": None,
        "extras_json": None,
        "is_error": False,
        "recorded_at": NOW - timedelta(seconds=1_000_000 - seq),
        "digest": f"{seq:064x}",
        "tokens": 16,
        "text_base64": False,
        "search_text": text,  # as the codec computes it: the text of a plain message
    }


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def time_searches(storage: SqlStorage, owners: int, reps: int) -> dict[str, dict[str, float]]:
    """Milliseconds per ``search(query, owner=...)`` of ``reps`` owners, each query."""
    samples: dict[str, list[float]] = {name: [] for name in QUERIES}
    hits: dict[str, list[int]] = {name: [] for name in QUERIES}
    step = max(1, owners // reps)
    for rep in range(reps):
        owner = owner_of((rep * step + 7) % owners)
        for name, query in QUERIES.items():
            began = time.perf_counter()
            page = storage.search(query, owner=owner, limit=20)
            samples[name].append((time.perf_counter() - began) * 1000)
            hits[name].append(len(page.hits))
    return {
        name: {
            "p50_ms": statistics.median(s),
            "p95_ms": p95(s),
            "hits": statistics.median(hits[name]),
        }
        for name, s in samples.items()
    }


def time_writes(engine: sa.Engine, reps: int) -> list[dict[str, float]]:
    """Milliseconds per append of 1 and of 50 messages, with the index and without."""
    storage = SqlStorage(engine)
    rng = random.Random(1)
    results = []
    for batch in (1, 50):
        times: dict[str, list[float]] = {"with": [], "without": []}
        for kind in ("with", "without"):
            if kind == "without":
                with engine.begin() as conn:
                    drop_search_index(conn)
            for rep in range(reps):
                messages = [Message.user(text) for text in sentences(rng, batch)]
                began = time.perf_counter()
                storage.append(f"bench-write-{kind}-{batch}-{rep % 20}", *messages)
                times[kind].append((time.perf_counter() - began) * 1000)
            if kind == "without":
                with engine.begin() as conn:
                    create_search_index(conn)
                    if conn.dialect.name == "sqlite":  # as revision 0009 leaves it
                        for statement in DEFER:
                            conn.exec_driver_sql(statement)
        with_, without = statistics.median(times["with"]), statistics.median(times["without"])
        results.append(
            {"batch": batch, "with_ms": with_, "without_ms": without, "ratio": with_ / without}
        )
    with engine.begin() as conn:
        for table in (messages_table, sessions_table):
            conn.execute(sa.delete(table).where(table.c.session_id.like("bench-write-%")))
    return results


def run_backend(name: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    engine = sa.create_engine(url)
    try:
        if migrate.current(engine) is not None:
            migrate.downgrade(engine, "base")  # the database is the run's alone
        migrate.upgrade(engine)
        writes = time_writes(engine, args.write_reps)
        storage = SqlStorage(engine)
        sessions = args.owners * args.sessions
        sizes, done, reads = [int(s) for s in args.sizes.split(",")], 0, {}
        caught: dict[int, float] = {}
        for size in sizes:
            per_session = size // sessions
            began = time.perf_counter()
            fill(engine, args.owners, args.sessions, done, per_session, seed=size)
            filled = time.perf_counter() - began
            print(f"{name}: {size:,} messages ({filled:.0f} s to fill)", flush=True)
            if name == "sqlite":  # the rows filled wait for the index: the first search's work
                began = time.perf_counter()
                with engine.begin() as conn:
                    catch_up(conn)
                indexed = size - done * sessions
                caught[size] = (time.perf_counter() - began) / indexed * 1e6
                print(f"  indexed by a search: {caught[size]:.1f} us per message", flush=True)
            done = per_session
            reads[size] = time_searches(storage, args.owners, args.reps)
            for query, r in reads[size].items():
                print(f"  {query}: p50 {r['p50_ms']:.2f} ms, p95 {r['p95_ms']:.2f} ms", flush=True)
    finally:
        engine.dispose()
    return {"backend": name, "reads": reads, "writes": writes, "catch_up_us": caught}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="messages in all, growing")
    parser.add_argument("--owners", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=10, help="sessions of each owner")
    parser.add_argument("--reps", type=int, default=40, help="owners searched per query")
    parser.add_argument("--write-reps", type=int, default=200)
    parser.add_argument("--backends", default="sqlite,postgresql,mysql")
    parser.add_argument("--sqlite-dir", type=Path, default=None)
    for backend, (env, default) in DEFAULT_URLS.items():
        parser.add_argument(f"--{backend[:5]}-url", default=os.environ.get(env, default))
    return parser.parse_args(argv)


def report(result: dict[str, Any]) -> None:
    print(f"\n{result['backend']}: one owner's top 20", flush=True)
    print(f"{'messages':>10} {'query':<18} {'hits':>5} {'p50 ms':>8} {'p95 ms':>8}")
    for size, reads in result["reads"].items():
        for name, r in reads.items():
            print(
                f"{size:>10,} {name:<18} {r['hits']:>5.0f} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f}"
            )
    for w in result["writes"]:
        print(
            f"append of {w['batch']:>2}: with the index {w['with_ms']:.3f} ms, without "
            f"{w['without_ms']:.3f} ms, ratio {w['ratio']:.2f}"
        )


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(dir=args.sqlite_dir) as directory:
        urls = {
            "sqlite": f"sqlite:///{directory}/search.db",
            "postgresql": args.postg_url,
            "mysql": args.mysql_url,
        }
        for name in args.backends.split(","):
            results.append(run_backend(name, urls[name], args))
            report(results[-1])
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
