#!/usr/bin/env python
"""Benchmark: ``fork`` of a long session with images, beside the raw driver and the peer.

From the repository root, after ``pip install -e '.[dev,bench]'``::

    python bench/fork.py                  # 10,000 messages, SQLite, PostgreSQL, MariaDB
    python bench/fork.py --quick          # 400 messages, a check that it runs

For each backend it stores one session of ``--messages`` messages, user and assistant in
turn, every fifth user message with an image of its own (noise, about 1.7 KB), then
times, interleaved and in an order that rotates every repetition:

- ``sqlmemory``: ``SqlStorage.fork(source, new)``, the whole history;
- ``raw``: the same copy by the raw driver (``sqlite3``, ``psycopg``, ``pymysql``) on the
  same tables, with nothing around it: one transaction of four ``INSERT ... SELECT``
  (the session's row, its blob rows, message rows and block rows);
- on SQLite, the OpenAI Agents SDK's ``AdvancedSQLiteSession.create_branch_from_turn``
  (the one peer that branches a conversation), over a session of the same number of
  items with the same images as ``input_image`` data URLs, branched at its last turn.

Every fork goes to a new id (the forks stay until the end, so every contender meets the
same growing tables). The table shows medians and p95 in milliseconds and each median
over the raw driver's. The SQLite file is fresh; on a server (``--pg-url``,
``--mysql-url``; defaults ``$SQLMEMORY_BENCH_POSTGRES_URL`` / ``$SQLMEMORY_BENCH_MYSQL_URL``)
the schema is upgraded if needed and the sessions, named ``bench-fork-<run id>-...``, are
deleted at the end. Give it a database no test is using.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from corpus import noise_png  # noqa: E402
from machine import machine_info  # noqa: E402

from sqlmemory import ImageBlock, Message, SqlStorage, TextBlock, migrate  # noqa: E402
from sqlmemory.storage.sql.schema import (  # noqa: E402
    blobs_table,
    blocks_table,
    messages_table,
)

DEFAULTS = {
    "postgresql": (
        "SQLMEMORY_BENCH_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    ),
    "mysql": (
        "SQLMEMORY_BENCH_MYSQL_URL",
        "mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4",
    ),
}
DEFAULT_JSON = BENCH_DIR / "results-fork.json"
IMAGE_EVERY = 5
"""Every fifth user message carries an image of its own."""
APPEND_BATCH = 500


def history(n: int, seed: int = 7) -> list[Message]:
    """``n`` messages, user and assistant in turn; every fifth user message with an image."""
    rng = random.Random(seed)
    messages = []
    for i in range(n):
        text = f"message {i}: " + " ".join(
            rng.choice(["lorem", "ipsum", "dolor"]) for _ in range(30)
        )
        if i % 2:
            messages.append(Message.assistant(text))
        elif (i // 2) % IMAGE_EVERY == 0:
            picture = ImageBlock(noise_png(rng, 24), "image/png")
            messages.append(Message.user([TextBlock(text), picture]))
        else:
            messages.append(Message.user(text))
    return messages


def _columns(table: sa.Table) -> str:
    return ", ".join(c.name for c in table.columns if c.name != "session_id")


def raw_statements(mark: str) -> list[str]:
    """The raw copy: four ``INSERT ... SELECT`` with ``mark`` placeholders (new id, source)."""
    blobs, messages, blocks = (_columns(t) for t in (blobs_table, messages_table, blocks_table))
    record = "next_seq, last_recorded_at, created_at, updated_at, message_count, text_base64"
    p = mark
    return [
        f"INSERT INTO sqlmemory_sessions (session_id, {record}) "
        f"SELECT {p}, {record} FROM sqlmemory_sessions WHERE session_id = {p}",
        f"INSERT INTO sqlmemory_blobs (session_id, {blobs}) "
        f"SELECT {p}, {blobs} FROM sqlmemory_blobs WHERE session_id = {p}",
        f"INSERT INTO sqlmemory_messages (session_id, {messages}) "
        f"SELECT {p}, {messages} FROM sqlmemory_messages WHERE session_id = {p}",
        f"INSERT INTO sqlmemory_blocks (session_id, {blocks}) "
        f"SELECT {p}, {blocks} FROM sqlmemory_blocks WHERE session_id = {p}",
    ]


class Raw:
    """The raw driver's copy on one DBAPI connection, autocommit off."""

    def __init__(self, url: str) -> None:
        # An engine of its own without a pool: the connection is the driver's, as we set it.
        self.engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        self.dialect = self.engine.dialect.name
        self.proxy = self.engine.raw_connection()
        self.conn: Any = self.proxy.driver_connection
        if self.dialect == "sqlite":
            self.conn.isolation_level = None  # we send BEGIN ourselves
        self.statements = raw_statements("?" if self.dialect == "sqlite" else "%s")

    def fork(self, source: str, new: str) -> None:
        cur = self.conn.cursor()
        if self.dialect == "sqlite":
            cur.execute("BEGIN IMMEDIATE")
        for statement in self.statements:
            cur.execute(statement, (new, source))
        if self.dialect == "sqlite":
            cur.execute("COMMIT")
        else:
            self.conn.commit()
        cur.close()

    def close(self) -> None:
        self.proxy.close()
        self.engine.dispose()


class Peer:
    """``AdvancedSQLiteSession`` of the OpenAI Agents SDK, filled like the source."""

    def __init__(self, path: str, messages: list[Message]) -> None:
        from agents.extensions.memory.advanced_sqlite_session import AdvancedSQLiteSession

        self.loop = asyncio.new_event_loop()
        self.session = AdvancedSQLiteSession(session_id="bench", db_path=path, create_tables=True)
        items = [self._item(m) for m in messages]
        for start in range(0, len(items), APPEND_BATCH):
            self.loop.run_until_complete(
                self.session.add_items(items[start : start + APPEND_BATCH])
            )
        self.turn = self.loop.run_until_complete(self.session.get_conversation_turns())[-1]["turn"]
        self.items = len(items)

    @staticmethod
    def _item(message: Message) -> dict[str, Any]:
        if message.role.value == "assistant":
            return {"role": "assistant", "content": message.text_content()}
        content: list[dict[str, Any]] = [{"type": "input_text", "text": message.text_content()}]
        for block in message.content:
            if isinstance(block, ImageBlock) and block.data is not None:
                data = base64.b64encode(block.data).decode("ascii")
                content.append(
                    {
                        "type": "input_image",
                        "image_url": f"data:image/png;base64,{data}",
                        "detail": "auto",
                    }
                )
        return {"role": "user", "content": content}

    def branch(self, n: int) -> None:
        self.loop.run_until_complete(self.session.create_branch_from_turn(self.turn, f"b{n}"))

    def back(self) -> None:
        self.loop.run_until_complete(self.session.switch_to_branch("main"))

    def close(self) -> None:
        self.session.close()
        self.loop.close()


def summarize(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(ordered),
        "p95_ms": ordered[max(int(len(ordered) * 0.95 + 0.999) - 1, 0)],
        "n": len(ordered),
    }


def timed(
    contenders: dict[str, tuple[Callable[[int], Any], Callable[[int], Any]]], reps: int, warmup: int
) -> dict[str, list[float]]:
    """Run each contender's ``(op, after)`` once per rep, in a rotating order; only ``op``
    is timed (``after`` puts things back, untimed)."""
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(warmup + reps):
        for j in range(len(names)):
            name = names[(i + j) % len(names)]
            op, after = contenders[name]
            start = time.perf_counter()
            op(i)
            elapsed = (time.perf_counter() - start) * 1000.0
            after(i)
            if i >= warmup:
                samples[name].append(elapsed)
    return samples


def run_backend(
    backend: str, url: str, messages: list[Message], reps: int, warmup: int
) -> dict[str, Any]:
    run = uuid.uuid4().hex[:8]
    source = f"bench-fork-{run}-source"
    migrate.upgrade(url)
    engine = sa.create_engine(url)
    storage = SqlStorage(engine)
    raw = Raw(url)
    peer: Peer | None = None
    try:
        for start in range(0, len(messages), APPEND_BATCH):
            storage.append(source, *messages[start : start + APPEND_BATCH])
        nothing = lambda i: None  # noqa: E731
        contenders: dict[str, tuple[Callable[[int], Any], Callable[[int], Any]]] = {
            "sqlmemory": (lambda i: storage.fork(source, f"bench-fork-{run}-ours-{i}"), nothing),
            "raw": (lambda i: raw.fork(source, f"bench-fork-{run}-raw-{i}"), nothing),
        }
        if backend == "sqlite":
            try:
                peer = Peer(
                    str(Path(url.removeprefix("sqlite:///")).with_suffix(".peer.db")), messages
                )
            except ImportError as exc:
                print(f"  AdvancedSQLiteSession left out: {exc}")
            else:
                contenders["AdvancedSQLiteSession"] = (peer.branch, lambda i: peer.back())  # type: ignore[union-attr]
        samples = timed(contenders, reps, warmup)
        copied = storage.load(f"bench-fork-{run}-ours-0")
        if len(copied) != len(messages) or storage.load(f"bench-fork-{run}-raw-0") != copied:
            raise RuntimeError("a fork does not hold the source's messages")
        with engine.connect() as conn:
            images = conn.scalar(
                sa.select(sa.func.count())
                .select_from(blobs_table)
                .where(blobs_table.c.session_id == source)
            )
        result: dict[str, Any] = {
            "messages": len(messages),
            "images": images,
            "contenders": {name: summarize(s) for name, s in samples.items()},
        }
        if peer is not None:
            result["peer_items"] = peer.items
        return result
    finally:
        raw.close()
        if peer is not None:
            peer.close()
        for sid in storage.sessions(prefix=f"bench-fork-{run}-"):
            storage.clear(sid)
        engine.dispose()


def render(results: dict[str, Any]) -> str:
    lines = [
        f"{'backend':<12}{'contender':<24}{'median ms':>11}{'p95 ms':>10}{'x raw':>8}",
    ]
    for backend, found in results["backends"].items():
        raw = found["contenders"]["raw"]["median_ms"]
        for name, stats in found["contenders"].items():
            ratio = stats["median_ms"] / raw
            lines.append(
                f"{backend:<12}{name:<24}{stats['median_ms']:>11.1f}{stats['p95_ms']:>10.1f}{ratio:>8.2f}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--backends", default="sqlite,postgresql,mysql")
    parser.add_argument("--pg-url", default=os.environ.get(*DEFAULTS["postgresql"]))
    parser.add_argument("--mysql-url", default=os.environ.get(*DEFAULTS["mysql"]))
    parser.add_argument("--sqlite-dir", default=None)
    parser.add_argument("--json", default=str(DEFAULT_JSON))
    parser.add_argument("--quick", action="store_true", help="400 messages, 3 reps: a check")
    args = parser.parse_args(argv)
    if args.quick:
        args.messages, args.reps, args.warmup = 400, 3, 1
    messages = history(args.messages)
    results: dict[str, Any] = {"machine": machine_info(), "backends": {}}
    with tempfile.TemporaryDirectory(dir=args.sqlite_dir) as tmp:
        urls = {
            "sqlite": f"sqlite:///{tmp}/fork.db",
            "postgresql": args.pg_url,
            "mysql": args.mysql_url,
        }
        for backend in args.backends.split(","):
            print(f"{backend}: {args.messages} messages ...", flush=True)
            try:
                results["backends"][backend] = run_backend(
                    backend, urls[backend], messages, args.reps, args.warmup
                )
            except sa.exc.OperationalError as exc:
                print(f"  {backend} left out: cannot connect ({exc.orig})")
    print(render(results))
    Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
