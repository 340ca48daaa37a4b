"""Benchmark: what ``storage.usage(...)`` costs over a million messages, and what usage
adds to a write.

From the repository root, after ``pip install -e '.[dev,bench]'``::

    python bench/usage_totals.py                              # 1,000,000 messages, 3 backends
    python bench/usage_totals.py --owners 20 --backends sqlite   # a quick check

It fills ``--owners`` owners of ``--sessions`` sessions of ``--messages`` messages each
(1,000 x 10 x 100 by default) with plain ``INSERT``s (not timed), every second message an
assistant reply that carries a usage, their ``recorded_at`` spread over 90 days. Then it
times, interleaved, ``usage(owner=...)`` over all time and over the last 30 days,
``usage(session_id)`` and ``usage(since=...)`` of the last 7 days, each beside the same
statement run through the raw driver (the ratio is what sqlmemory adds), and prints the
query plan of the owner's totals. Last, the write overhead: appends of replies with a
usage against the same replies without, interleaved, one message an append and 50.

The SQLite database is a fresh file in a temporary directory; on PostgreSQL and
MySQL/MariaDB (``--pg-url``, ``--mysql-url``, defaults ``$SQLMEMORY_BENCH_POSTGRES_URL``
and ``$SQLMEMORY_BENCH_MYSQL_URL``) the schema is upgraded if needed and the rows of the
run, in sessions named ``bench-usage-<run id>-...``, are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, Usage, migrate
from sqlmemory.storage.sql.schema import messages_table, sessions_table
from sqlmemory.storage.sql.usage_queries import usage_statement

DEFAULT_URLS = {
    "postgresql": (
        "SQLMEMORY_BENCH_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    ),
    "mysql": (
        "SQLMEMORY_BENCH_MYSQL_URL",
        "mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4",
    ),
}
NOW = datetime.now(timezone.utc).replace(microsecond=0)
SPAN = timedelta(days=90)
FILL_CHUNK = 10_000
MODELS = ("gpt-4o", "claude-sonnet-4-5", "o3-mini")
REPLY = Usage("gpt-4o", 1200, 80, 1024, 0, 16)


def session_id(run: str, owner: int, session: int) -> str:
    return f"bench-usage-{run}-{owner:05d}-{session:03d}"


def owner_of(owner: int) -> str:
    return f"user-{owner:05d}"


def message_rows(run: str, owner: int, session: int, n: int) -> list[dict[str, Any]]:
    """The rows of one session: user and assistant in turn, each reply with a usage."""
    sid = session_id(run, owner, session)
    rows = []
    for seq in range(1, n + 1):
        reply = seq % 2 == 0
        at = NOW - SPAN + SPAN * (seq / (n + 1)) + timedelta(seconds=owner + session)
        model = MODELS[(owner + seq) % len(MODELS)]
        rows.append(
            {
                "session_id": sid,
                "seq": seq,
                "message_id": f"m{seq}",
                "role": "assistant" if reply else "user",
                "tool_call_id": None,
                "text": "A reply of a few words." if reply else "A question?",
                "n_blocks": 0,
                "call_ids": None,
                "metadata_json": None,
                "extras_json": None,
                "is_error": False,
                "recorded_at": at,
                "digest": f"{seq:064x}",
                "tokens": 10,
                "text_base64": False,
                "usage_input_tokens": 1000 + seq if reply else None,
                "usage_output_tokens": 50 + seq if reply else None,
                "usage_cache_read_tokens": 512 if reply else None,
                "usage_cache_write_tokens": 0 if reply else None,
                "usage_reasoning_tokens": seq if reply else None,
                "usage_model": model if reply else None,
            }
        )
    return rows


def fill(engine: sa.Engine, run: str, owners: int, sessions: int, n: int) -> None:
    """The sessions and their messages, in plain inserts of a few thousand rows."""
    records = [
        {
            "session_id": session_id(run, o, s),
            "next_seq": n + 1,
            "last_recorded_at": NOW,
            "created_at": NOW - SPAN,
            "updated_at": NOW,
            "message_count": n,
            "owner": owner_of(o),
        }
        for o in range(owners)
        for s in range(sessions)
    ]
    with engine.begin() as conn:
        for start in range(0, len(records), FILL_CHUNK):
            conn.execute(sa.insert(sessions_table), records[start : start + FILL_CHUNK])
    pending: list[dict[str, Any]] = []
    for o in range(owners):
        for s in range(sessions):
            pending += message_rows(run, o, s, n)
            if len(pending) >= FILL_CHUNK:
                with engine.begin() as conn:
                    conn.execute(sa.insert(messages_table), pending)
                pending = []
    if pending:
        with engine.begin() as conn:
            conn.execute(sa.insert(messages_table), pending)
    with engine.begin() as conn:
        analyze = {
            "postgresql": ["ANALYZE sqlmemory_sessions", "ANALYZE sqlmemory_messages"],
            "sqlite": ["ANALYZE"],
        }.get(engine.dialect.name, ["ANALYZE TABLE sqlmemory_sessions, sqlmemory_messages"])
        for statement in analyze:
            conn.exec_driver_sql(statement)


def raw_query(engine: sa.Engine, args: tuple[Any, ...]) -> Callable[[], Any]:
    """The totals' statement run through the DBAPI driver alone, as a raw-driver caller
    would: its SQL text and parameters compiled once, executed and fetched."""
    statement, values = usage_statement(engine.dialect.name, *args)
    compiled = statement.compile(dialect=engine.dialect)
    processors = compiled._bind_processors  # the driver's form of a datetime
    names = compiled.positiontup or []
    params = {
        k: processors[k](v) if k in processors else v
        for k, v in compiled.construct_params(values).items()
    }
    bound: Any = [params[name] for name in names] if names else params
    raw = engine.raw_connection()

    def run() -> Any:
        cursor = raw.cursor()
        cursor.execute(str(compiled), bound)
        rows = cursor.fetchall()
        cursor.close()
        raw.commit()
        return rows

    return run


def plan(engine: sa.Engine, args: tuple[Any, ...]) -> list[str]:
    """The database's plan of the totals' statement."""
    statement, values = usage_statement(engine.dialect.name, *args)
    compiled = statement.params(values).compile(
        dialect=engine.dialect, compile_kwargs={"literal_binds": True}
    )
    prefix = {
        "postgresql": "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ",
        "sqlite": "EXPLAIN QUERY PLAN ",
    }.get(engine.dialect.name, "EXPLAIN ")
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(prefix + str(compiled)).all()
    return [" | ".join(str(v) for v in row) for row in rows]


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def time_reads(
    storage: SqlStorage, engine: sa.Engine, run: str, owners: int, reps: int
) -> dict[str, dict[str, float]]:
    """Milliseconds per call of each query, through sqlmemory and the raw driver."""
    month, week = NOW - timedelta(days=30), NOW - timedelta(days=7)
    queries: dict[str, tuple[Any, ...]] = {
        "owner": (None, owner_of(owners // 2), None, None),
        "owner, 30 days": (None, owner_of(owners // 3), month, None),
        "session": (session_id(run, owners // 4, 0), None, None, None),
        "everything, 7 days": (None, None, week, None),
    }
    calls = {
        name: (
            lambda a=args: storage.usage(a[0], owner=a[1], since=a[2], until=a[3]),
            raw_query(engine, args),
        )
        for name, args in queries.items()
    }
    samples: dict[str, dict[str, list[float]]] = {n: {"ours": [], "raw": []} for n in calls}
    for name, (ours, raw) in calls.items():  # warm-up, and a check of the answer
        report = ours()
        if report.messages != sum(row[1] for row in raw()) or not report.messages:
            raise RuntimeError(f"{name}: sqlmemory and the driver disagree, or count nothing")
    for _ in range(reps):
        for name, (ours, raw) in calls.items():
            for kind, call in (("ours", ours), ("raw", raw)):
                began = time.perf_counter()
                call()
                samples[name][kind].append((time.perf_counter() - began) * 1000)
    return {
        name: {
            "median_ms": statistics.median(s["ours"]),
            "p95_ms": p95(s["ours"]),
            "raw_median_ms": statistics.median(s["raw"]),
            "messages": float(calls[name][0]().messages),
        }
        for name, s in samples.items()
    }


def time_writes(storage: SqlStorage, run: str, reps: int, batch: int) -> dict[str, float]:
    """Milliseconds per append of ``batch`` replies, with a usage and without, interleaved."""
    times: dict[str, list[float]] = {"with": [], "without": []}
    for rep in range(reps):
        for kind in ("with", "without") if rep % 2 else ("without", "with"):
            usage = REPLY if kind == "with" else None
            replies = [Message.assistant("A reply of a few words.", usage=usage)] * batch
            replies = [Message.assistant(m.content, usage=m.usage) for m in replies]
            sid = f"bench-usage-{run}-w-{kind}-{batch}-{rep % 20}"
            began = time.perf_counter()
            storage.append(sid, *replies)
            times[kind].append((time.perf_counter() - began) * 1000)
    with_, without = statistics.median(times["with"]), statistics.median(times["without"])
    return {"batch": batch, "with_ms": with_, "without_ms": without, "ratio": with_ / without}


def run_backend(name: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    engine = sa.create_engine(url)
    run = uuid.uuid4().hex[:8]
    try:
        migrate.upgrade(engine)
        filling = time.perf_counter()
        fill(engine, run, args.owners, args.sessions, args.messages)
        total = args.owners * args.sessions * args.messages
        print(f"{name}: {total:,} messages written in {time.perf_counter() - filling:.1f} s")
        storage = SqlStorage(engine)
        reads = time_reads(storage, engine, run, args.owners, args.reps)
        shown = plan(engine, (None, owner_of(args.owners // 2), NOW - timedelta(days=30), None))
        writes = [time_writes(storage, run, args.write_reps, batch) for batch in (1, 50)]
    finally:
        with engine.begin() as conn:
            ours = f"bench-usage-{run}-%"
            conn.execute(sa.delete(messages_table).where(messages_table.c.session_id.like(ours)))
            conn.execute(sa.delete(sessions_table).where(sessions_table.c.session_id.like(ours)))
        engine.dispose()
    return {"backend": name, "messages": total, "reads": reads, "plan": shown, "writes": writes}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--owners", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=10, help="sessions of each owner")
    parser.add_argument("--messages", type=int, default=100, help="messages of each session")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--write-reps", type=int, default=400)
    parser.add_argument("--backends", default="sqlite,postgresql,mysql")
    parser.add_argument("--sqlite-dir", type=Path, default=None)
    for backend, (env, default) in DEFAULT_URLS.items():
        parser.add_argument(f"--{backend[:5]}-url", default=os.environ.get(env, default))
    return parser.parse_args(argv)


def report(result: dict[str, Any]) -> None:
    backend = result["backend"]
    print(f"\n{backend}: {result['messages']:,} messages")
    print(
        f"{'query':<18} {'messages':>9} {'median ms':>10} {'p95 ms':>8} {'raw ms':>8} {'ratio':>6}"
    )
    for name, r in result["reads"].items():
        ratio = r["median_ms"] / r["raw_median_ms"]
        print(
            f"{name:<18} {r['messages']:>9,.0f} {r['median_ms']:>10.3f} {r['p95_ms']:>8.3f} "
            f"{r['raw_median_ms']:>8.3f} {ratio:>6.2f}"
        )
    print("plan of usage(owner=..., since=30 days ago):")
    for line in result["plan"]:
        print(f"  {line}")
    for w in result["writes"]:
        print(
            f"append of {w['batch']:>2}: with usage {w['with_ms']:.3f} ms, without "
            f"{w['without_ms']:.3f} ms, ratio {w['ratio']:.3f}"
        )


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(dir=args.sqlite_dir) as directory:
        urls = {
            "sqlite": f"sqlite:///{directory}/usage.db",
            "postgresql": args.postg_url,
            "mysql": args.mysql_url,
        }
        for name in args.backends.split(","):
            results.append(run_backend(name, urls[name], args))
    for result in results:
        report(result)
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
