"""Benchmark: a page of ``list_sessions`` costs the same at any depth.

From the repository root, after ``pip install -e '.[dev]'``::

    python bench/session_pages.py                       # 100,000 sessions, SQLite and PostgreSQL
    python bench/session_pages.py --sessions 2000 --backends sqlite   # a quick check

It writes ``--sessions`` session records (plain ``INSERT``s, not timed), then times
``list_sessions(limit=50, cursor=...)`` at several depths, interleaved, and prints the
median and p95 in milliseconds for each. Keyset paging over the ``(updated_at,
session_id)`` index makes the deepest page cost what the first one does. The SQLite
database is a fresh file in a temporary directory; on PostgreSQL (``--pg-url``, default
``$SQLMEMORY_BENCH_POSTGRES_URL``) the schema is upgraded if needed and the sessions,
named ``bench-pages-<run id>-...``, are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from sqlmemory import SqlStorage, migrate
from sqlmemory.storage.records import SessionInfo, encode_cursor
from sqlmemory.storage.sql.schema import messages_table, sessions_table

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_URL_ENV = "SQLMEMORY_BENCH_POSTGRES_URL"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
FILL_CHUNK = 5000
DEPTHS = (0.0, 0.01, 0.1, 0.5, 0.99)
"""Where the timed pages start, as a fraction of all the sessions."""


def session_id(run: str, i: int) -> str:
    return f"bench-pages-{run}-{i:07d}"


def updated_at(i: int) -> datetime:
    """Session ``i``'s ``updated_at``: one second apart, three sessions a second (ties)."""
    return START + timedelta(seconds=i // 3)


def fill(engine: sa.Engine, run: str, n: int) -> None:
    """Write ``n`` session records with plain inserts (what the storage would store)."""
    for start in range(0, n, FILL_CHUNK):
        rows = [
            {
                "session_id": session_id(run, i),
                "next_seq": 1,
                "last_recorded_at": updated_at(i),
                "created_at": START,
                "updated_at": updated_at(i),
                "message_count": 0,
            }
            for i in range(start, min(n, start + FILL_CHUNK))
        ]
        with engine.begin() as conn:
            conn.execute(sa.insert(sessions_table), rows)
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql("ANALYZE sqlmemory_sessions")


def cursor_at(run: str, n: int, depth: float, limit: int) -> str | None:
    """The cursor of the page that starts ``depth`` of the way down the newest-first list
    (or of the last full page, if that is higher)."""
    position = max(0, min(int(depth * n), n - limit))
    if position == 0:
        return None
    i = n - position  # the session just above the page
    at = updated_at(i)
    return encode_cursor(SessionInfo(session_id(run, i), at, at, 0))


def measure(
    storage: SqlStorage, run: str, n: int, limit: int, reps: int
) -> dict[float, list[float]]:
    """Milliseconds per page at each depth, the depths interleaved in every repetition."""
    cursors = {depth: cursor_at(run, n, depth, limit) for depth in DEPTHS}
    for cursor in cursors.values():  # warm-up, and a check of what a page holds
        page = storage.list_sessions(limit=limit, cursor=cursor)
        if len(page.items) != min(limit, n):
            raise RuntimeError(f"a page of {len(page.items)} sessions, expected {limit}")
    samples: dict[float, list[float]] = {depth: [] for depth in DEPTHS}
    for _ in range(reps):
        for depth, cursor in cursors.items():
            began = time.perf_counter()
            storage.list_sessions(limit=limit, cursor=cursor)
            samples[depth].append((time.perf_counter() - began) * 1000)
    return samples


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def run_backend(name: str, url: str, n: int, limit: int, reps: int) -> list[dict[str, Any]]:
    engine = sa.create_engine(url)
    run = uuid.uuid4().hex[:8]
    try:
        migrate.upgrade(engine)
        filling = time.perf_counter()
        fill(engine, run, n)
        print(f"{name}: {n:,} sessions written in {time.perf_counter() - filling:.1f} s")
        samples = measure(SqlStorage(engine), run, n, limit, reps)
    finally:
        with engine.begin() as conn:
            ours = f"bench-pages-{run}-%"
            conn.execute(sa.delete(messages_table).where(messages_table.c.session_id.like(ours)))
            conn.execute(sa.delete(sessions_table).where(sessions_table.c.session_id.like(ours)))
        engine.dispose()
    return [
        {
            "backend": name,
            "sessions": n,
            "limit": limit,
            "depth": depth,
            "median_ms": statistics.median(values),
            "p95_ms": p95(values),
        }
        for depth, values in samples.items()
    ]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--pg-url", default=os.environ.get(PG_URL_ENV, DEFAULT_PG_URL))
    parser.add_argument("--sqlite-dir", type=Path, default=None)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(dir=args.sqlite_dir) as directory:
        urls = {"sqlite": f"sqlite:///{directory}/pages.db", "postgresql": args.pg_url}
        for name in args.backends.split(","):
            results += run_backend(name, urls[name], args.sessions, args.limit, args.reps)
    print(f"{'backend':<11} {'depth':>6} {'median ms':>10} {'p95 ms':>8}")
    for r in results:
        print(f"{r['backend']:<11} {r['depth']:>6.0%} {r['median_ms']:>10.3f} {r['p95_ms']:>8.3f}")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
