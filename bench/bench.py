#!/usr/bin/env python
"""sqlmemory against the raw driver, side by side, on SQLite and PostgreSQL.

Run from the repository root after ``pip install -e '.[dev]'``::

    python bench/bench.py

Every timed operation is measured with ``time.perf_counter`` after a warm-up, sqlmemory
and the raw driver interleaved rep by rep (so background load hits both alike), and
reported as the median and p95 in milliseconds plus the ratio of the medians
(sqlmemory / raw). bench/README.md says what each scenario measures and what the raw
side does.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import io
import json
import math
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

import sqlmemory
from sqlmemory import FixedWindow, ImageBlock, Message, SqlStorage, TokenWindow, estimate_tokens
from sqlmemory.migrate import upgrade

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = REPO_ROOT / "bench" / "results.json"
DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_URL_ENV = "SQLMEMORY_BENCH_POSTGRES_URL"
BACKENDS = ("sqlite", "postgresql")
RAW_TABLE = "bench_raw"
RAW_IMAGE_TABLE = "bench_raw_img"
SQLITE_BUSY_TIMEOUT_MS = 30_000  # what sqlmemory sets on its own SQLite connections

SCENARIOS = (
    "append_one",
    "append_batch",
    "window_read",
    "full_read",
    "resave",
    "image_window_read",
)


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much work each scenario does; :data:`FULL` is the default run."""

    append_one: int = 500
    append_warmup: int = 20
    batches: int = 20
    batch_size: int = 100
    batch_warmup: int = 2
    window_sessions: tuple[int, ...] = (1_000, 10_000, 100_000)
    window: int = 20
    window_reps: int = 200
    window_warmup: int = 20
    full_read: int = 10_000
    full_reps: int = 20
    full_warmup: int = 3
    resave_turns: int = 200
    resave_tail: int = 20
    image_messages: int = 1_000
    image_every: int = 5
    image_side: int = 128  # 128 x 128 RGB noise: a PNG of about 49 KiB
    image_reps: int = 200
    image_warmup: int = 20
    fill_batch: int = 5_000


FULL = Sizes()
QUICK = Sizes(
    append_one=50,
    append_warmup=5,
    batches=5,
    batch_size=20,
    batch_warmup=1,
    window_sessions=(100, 1_000, 5_000),
    window_reps=30,
    window_warmup=5,
    full_read=1_000,
    full_reps=5,
    full_warmup=1,
    resave_turns=30,
    resave_tail=5,
    image_messages=100,
    image_reps=20,
    image_warmup=3,
    image_side=64,
    fill_batch=1_000,
)


# -- statistics -----------------------------------------------------------------------


def summarize(samples_ms: Sequence[float]) -> dict[str, Any]:
    """Median, nearest-rank p95, min and count of samples in milliseconds."""
    ordered = sorted(samples_ms)
    p95 = ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]
    return {
        "median_ms": statistics.median(ordered),
        "p95_ms": p95,
        "min_ms": ordered[0],
        "n": len(ordered),
    }


def rotating(fns: Sequence[Callable[[int], object]], reps: int, warmup: int) -> list[list[float]]:
    """Time each of ``fns`` once per rep, in an order that rotates with every rep.

    Returns one list of samples (ms) per function; warm-up reps are not recorded. Running
    the contenders in the same loop makes background load hit them alike, and rotating
    the order means none always runs on a cache another just warmed.
    """
    samples: list[list[float]] = [[] for _ in fns]
    clock = time.perf_counter
    k = len(fns)
    for i in range(warmup + reps):
        for j in range(k):
            index = (i + j) % k
            start = clock()
            fns[index](i)
            elapsed = (clock() - start) * 1000.0
            if i >= warmup:
                samples[index].append(elapsed)
    return samples


def interleaved(
    ours: Callable[[int], object],
    raw: Callable[[int], object],
    reps: int,
    warmup: int,
) -> tuple[list[float], list[float]]:
    """Time ``ours(i)`` and ``raw(i)`` alternately (see :func:`rotating`)."""
    mine, theirs = rotating((ours, raw), reps, warmup)
    return mine, theirs


# -- test data ------------------------------------------------------------------------

_WORD_LINES = (
    "the agent calls a tool and reads the result before it answers the user with a short",
    "summary of what changed in the repository since the last deploy including failing",
    "tests flaky network retries database migrations cache invalidation and metrics",
)
WORDS = tuple(" ".join(_WORD_LINES).split())


class Corpus:
    """Deterministic message texts (80 to 400 characters), alternating user/assistant."""

    def __init__(self, seed: int = 1234) -> None:
        self.rng = random.Random(seed)

    def text(self) -> str:
        target = self.rng.randint(80, 400)
        words: list[str] = []
        size = 0
        while size < target:
            word = self.rng.choice(WORDS)
            words.append(word)
            size += len(word) + 1
        return " ".join(words)

    def rows(self, n: int) -> list[tuple[str, str]]:
        """``n`` (role, text) pairs, a user message first."""
        return [("user" if i % 2 == 0 else "assistant", self.text()) for i in range(n)]


def to_message(role: str, text: str) -> Message:
    return Message.user(text) if role == "user" else Message.assistant(text)


def noise_png(rng: random.Random, side: int) -> bytes:
    """A PNG of random RGB noise, so it does not compress (about 3 * side**2 bytes)."""
    from PIL import Image

    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def chunks(seq: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


def size_label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


# -- the raw side ---------------------------------------------------------------------


class RawDriver:
    """The raw driver on a minimal table: one connection, autocommit off.

    The SQL is written once with ``?`` placeholders; PostgreSQL's are ``%s``.
    """

    placeholder = "?"
    name = ""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.cur = conn.cursor()

    def q(self, sql: str) -> str:
        return sql.replace("?", self.placeholder)

    # Dialect hooks.
    def ddl(self) -> list[str]:
        raise NotImplementedError

    def begin_write(self) -> None:
        """Open the write transaction before a read-then-write (SQLite: BEGIN IMMEDIATE)."""

    def stamp(self, value: datetime) -> Any:
        return value

    def unstamp(self, value: Any) -> datetime:
        return value  # type: ignore[no-any-return]

    # Setup.
    def create_tables(self) -> None:
        self.drop_tables()
        for statement in self.ddl():
            self.cur.execute(statement)
        self.conn.commit()

    def drop_tables(self) -> None:
        for table in (RAW_TABLE, RAW_IMAGE_TABLE):
            self.cur.execute(f"DROP TABLE IF EXISTS {table}")
        self.conn.commit()

    # The operations timed against sqlmemory.
    def append_one(self, sid: str, role: str, text: str) -> None:
        """One message, one transaction: seq = max + 1 in the INSERT itself."""
        self.cur.execute(
            self.q(
                f"INSERT INTO {RAW_TABLE} (session_id, seq, role, content, created_at) "
                f"SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM {RAW_TABLE} "
                "WHERE session_id = ?"
            ),
            (sid, role, text, self.stamp(now_utc()), sid),
        )
        self.conn.commit()

    def append_many(self, sid: str, rows: Sequence[tuple[str, str]]) -> None:
        """Messages in one transaction: read max(seq) once, then executemany."""
        self.begin_write()
        self.cur.execute(
            self.q(f"SELECT COALESCE(MAX(seq), 0) FROM {RAW_TABLE} WHERE session_id = ?"),
            (sid,),
        )
        base = int(self.cur.fetchone()[0])
        stamp = self.stamp(now_utc())
        self.cur.executemany(
            self.q(
                f"INSERT INTO {RAW_TABLE} (session_id, seq, role, content, created_at) "
                "VALUES (?, ?, ?, ?, ?)"
            ),
            [(sid, base + 1 + i, role, text, stamp) for i, (role, text) in enumerate(rows)],
        )
        self.conn.commit()

    def fill(self, sid: str, rows: Sequence[tuple[str, str]], batch: int) -> None:
        """Untimed: the session's rows, seq 1..n, committed every ``batch`` rows."""
        stamp = self.stamp(now_utc())
        sql = self.q(
            f"INSERT INTO {RAW_TABLE} (session_id, seq, role, content, created_at) "
            "VALUES (?, ?, ?, ?, ?)"
        )
        for start in range(0, len(rows), batch):
            self.cur.executemany(
                sql,
                [
                    (sid, start + i + 1, role, text, stamp)
                    for i, (role, text) in enumerate(rows[start : start + batch])
                ],
            )
            self.conn.commit()

    def window(self, sid: str, n: int) -> list[dict[str, Any]]:
        """The newest ``n`` rows, oldest first, as dicts."""
        self.cur.execute(
            self.q(
                f"SELECT seq, role, content, created_at FROM {RAW_TABLE} "
                "WHERE session_id = ? ORDER BY seq DESC LIMIT ?"
            ),
            (sid, n),
        )
        rows = self.cur.fetchall()
        self.conn.commit()
        unstamp = self.unstamp
        return [
            {"seq": seq, "role": role, "content": content, "created_at": unstamp(created)}
            for seq, role, content, created in reversed(rows)
        ]

    def full(self, sid: str) -> list[dict[str, Any]]:
        """The whole session, oldest first, as dicts."""
        self.cur.execute(
            self.q(
                f"SELECT seq, role, content, created_at FROM {RAW_TABLE} "
                "WHERE session_id = ? ORDER BY seq"
            ),
            (sid,),
        )
        rows = self.cur.fetchall()
        self.conn.commit()
        unstamp = self.unstamp
        return [
            {"seq": seq, "role": role, "content": content, "created_at": unstamp(created)}
            for seq, role, content, created in rows
        ]

    def fill_images(
        self, sid: str, rows: Sequence[tuple[str, str, bytes | None]], batch: int
    ) -> None:
        stamp = self.stamp(now_utc())
        sql = self.q(
            f"INSERT INTO {RAW_IMAGE_TABLE} "
            "(session_id, seq, role, content, created_at, media_type, image) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)"
        )
        for start in range(0, len(rows), batch):
            self.cur.executemany(
                sql,
                [
                    (
                        sid,
                        start + i + 1,
                        role,
                        text,
                        stamp,
                        "image/png" if image is not None else None,
                        image,
                    )
                    for i, (role, text, image) in enumerate(rows[start : start + batch])
                ],
            )
            self.conn.commit()

    def image_window(self, sid: str, n: int) -> list[dict[str, Any]]:
        self.cur.execute(
            self.q(
                f"SELECT seq, role, content, created_at, media_type, image "
                f"FROM {RAW_IMAGE_TABLE} WHERE session_id = ? ORDER BY seq DESC LIMIT ?"
            ),
            (sid, n),
        )
        rows = self.cur.fetchall()
        self.conn.commit()
        unstamp = self.unstamp
        return [
            {
                "seq": seq,
                "role": role,
                "content": content,
                "created_at": unstamp(created),
                "media_type": media_type,
                "image": bytes(image) if image is not None else None,
            }
            for seq, role, content, created, media_type, image in reversed(rows)
        ]

    def close(self) -> None:
        self.conn.close()


class RawSqlite(RawDriver):
    """sqlite3 with the settings sqlmemory uses: WAL, BEGIN IMMEDIATE for writes,
    the same busy timeout, ``synchronous`` left at its default (FULL)."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        # isolation_level="IMMEDIATE": the module opens BEGIN IMMEDIATE before DML itself.
        conn = sqlite3.connect(path, isolation_level="IMMEDIATE")
        conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        super().__init__(conn)

    def ddl(self) -> list[str]:
        return [
            f"CREATE TABLE {RAW_TABLE} (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
            "role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, "
            "PRIMARY KEY (session_id, seq))",
            f"CREATE TABLE {RAW_IMAGE_TABLE} (session_id TEXT NOT NULL, "
            "seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, "
            "created_at TEXT NOT NULL, media_type TEXT, image BLOB, "
            "PRIMARY KEY (session_id, seq))",
        ]

    def begin_write(self) -> None:
        # The module's implicit BEGIN comes only before DML; the max(seq) read must be
        # inside the write transaction too.
        self.cur.execute("BEGIN IMMEDIATE")

    def stamp(self, value: datetime) -> Any:
        return value.isoformat()

    def unstamp(self, value: Any) -> datetime:
        return datetime.fromisoformat(value)

    def settings(self) -> dict[str, Any]:
        return {
            "journal_mode": self.conn.execute("PRAGMA journal_mode").fetchone()[0],
            "synchronous": self.conn.execute("PRAGMA synchronous").fetchone()[0],
            "busy_timeout": self.conn.execute("PRAGMA busy_timeout").fetchone()[0],
        }


class RawPostgres(RawDriver):
    """psycopg 3, autocommit off (every statement inside BEGIN ... COMMIT), server-side
    parameters, prepared automatically after psycopg's default 5 executions."""

    name = "postgresql"
    placeholder = "%s"

    def __init__(self, conninfo: str) -> None:
        import psycopg

        super().__init__(psycopg.connect(conninfo, autocommit=False, connect_timeout=5))

    def ddl(self) -> list[str]:
        return [
            f"CREATE TABLE {RAW_TABLE} (session_id text NOT NULL, seq bigint NOT NULL, "
            "role text NOT NULL, content text NOT NULL, created_at timestamptz NOT NULL, "
            "PRIMARY KEY (session_id, seq))",
            f"CREATE TABLE {RAW_IMAGE_TABLE} (session_id text NOT NULL, seq bigint NOT NULL, "
            "role text NOT NULL, content text NOT NULL, created_at timestamptz NOT NULL, "
            "media_type text, image bytea, PRIMARY KEY (session_id, seq))",
        ]

    def settings(self) -> dict[str, Any]:
        out = {}
        for name in ("server_version", "synchronous_commit", "fsync", "shared_buffers"):
            self.cur.execute(f"SHOW {name}")
            out[name] = self.cur.fetchone()[0]
        self.conn.commit()
        return out


# -- one backend's run ----------------------------------------------------------------


@dataclasses.dataclass
class Backend:
    name: str
    engine: sa.Engine
    raw: RawDriver
    info: dict[str, Any]
    cleanup: list[Callable[[], None]] = dataclasses.field(default_factory=list)


def pg_conninfo(url: str) -> str:
    """The libpq URI of a SQLAlchemy PostgreSQL URL (driver name dropped)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def open_sqlite(directory: Path | None) -> Backend:
    tmp = Path(tempfile.mkdtemp(prefix="sqlmemory-bench-", dir=directory))
    path = tmp / "bench.db"
    engine = sa.create_engine(f"sqlite+pysqlite:///{path}")
    upgrade(engine)
    raw = RawSqlite(path)
    info: dict[str, Any] = {
        "path": str(path),
        "filesystem": filesystem_of(tmp),
        "sqlite_version": sqlite3.sqlite_version,
        "raw": raw.settings(),
    }
    SqlStorage(engine)  # configures the engine's connections (WAL, busy timeout, BEGIN)
    with engine.connect() as conn:
        info["sqlmemory"] = {
            "journal_mode": conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
            "synchronous": conn.exec_driver_sql("PRAGMA synchronous").scalar(),
            "busy_timeout": conn.exec_driver_sql("PRAGMA busy_timeout").scalar(),
        }
    backend = Backend("sqlite", engine, raw, info)
    backend.cleanup.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    return backend


def open_postgres(url: str) -> Backend:
    raw = RawPostgres(pg_conninfo(url))
    engine = sa.create_engine(url)
    upgrade(engine)
    return Backend("postgresql", engine, raw, {"url": safe_url(url), **raw.settings()})


def safe_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


class Run:
    """One backend's scenarios; every sqlmemory session it makes is cleared at the end."""

    def __init__(self, backend: Backend, sizes: Sizes, run_id: str, log: Callable[[str], None]):
        self.b = backend
        self.sizes = sizes
        self.run_id = run_id
        self.log = log
        self.storage = SqlStorage(backend.engine)
        self.raw = backend.raw
        self.sessions: list[str] = []
        self.results: list[dict[str, Any]] = []
        self.corpus = Corpus()

    def sid(self, what: str) -> str:
        sid = f"bench-{self.run_id}-{what}"
        self.sessions.append(sid)
        return sid

    def record(
        self,
        scenario: str,
        label: str,
        ours: Sequence[float],
        raw: Sequence[float] | None,
        **extra: Any,
    ) -> dict[str, Any]:
        mine = summarize(ours)
        theirs = summarize(raw) if raw is not None else None
        entry: dict[str, Any] = {
            "scenario": scenario,
            "label": label,
            "backend": self.b.name,
            "sqlmemory": mine,
            "raw": theirs,
            "ratio": mine["median_ms"] / theirs["median_ms"] if theirs else None,
            **extra,
        }
        self.results.append(entry)
        return entry

    def fill(self, sid: str, rows: Sequence[tuple[str, str]]) -> list[Message]:
        """Untimed: the same rows into sqlmemory (large batch appends) and the raw table.

        Returns the newest ``window`` messages given to sqlmemory.
        """
        batch = self.sizes.fill_batch
        last: list[Message] = []
        for part in chunks(rows, batch):
            last = [to_message(role, text) for role, text in part]
            self.storage.append(sid, *last)
        self.raw.fill(sid, rows, batch)
        return last[-self.sizes.window :]

    # -- scenarios ---------------------------------------------------------------------

    def append_one(self) -> None:
        s = self.sizes
        sid = self.sid("append-one")
        rows = self.corpus.rows(s.append_warmup + s.append_one)
        messages = [to_message(role, text) for role, text in rows]
        storage, raw = self.storage, self.raw
        ours, theirs = interleaved(
            lambda i: storage.append(sid, messages[i]),
            lambda i: raw.append_one(sid, *rows[i]),
            s.append_one,
            s.append_warmup,
        )
        self.check_counts(sid, len(rows))
        self.record("append_one", f"append_one x{s.append_one}", ours, theirs)

    def append_batch(self) -> None:
        s = self.sizes
        sid = self.sid("append-batch")
        total = s.batch_warmup + s.batches
        rows = self.corpus.rows(total * s.batch_size)
        batches = list(chunks(rows, s.batch_size))
        messages = [[to_message(role, text) for role, text in b] for b in batches]
        storage, raw = self.storage, self.raw
        ours, theirs = interleaved(
            lambda i: storage.append(sid, *messages[i]),
            lambda i: raw.append_many(sid, batches[i]),
            s.batches,
            s.batch_warmup,
        )
        self.check_counts(sid, len(rows))
        self.record("append_batch", f"append_batch {s.batches}x{s.batch_size}", ours, theirs)

    def windows_and_full(self) -> None:
        s = self.sizes
        storage, raw = self.storage, self.raw
        full_sid: str | None = None
        sessions: list[tuple[int, str, int]] = []  # (messages, sid, token budget)
        for n in s.window_sessions:
            sid = self.sid(f"window-{n}")
            start = time.perf_counter()
            newest = self.fill(sid, self.corpus.rows(n))
            self.log(f"  filled {n:,} messages in {time.perf_counter() - start:.1f}s")
            if n == s.full_read:
                full_sid = sid
            # The exact cost of the newest `window` messages: TokenWindow picks just them.
            sessions.append((n, sid, sum(estimate_tokens(m) for m in newest)))
        for variant in ("FixedWindow", "TokenWindow"):
            # Every session size and the raw reads run in one rotating loop, so the
            # 100k / 1k ratio compares reads made under the same conditions.
            fns: list[Callable[[int], object]] = []
            policies = []
            for _n, sid, budget in sessions:
                policy = FixedWindow(s.window) if variant == "FixedWindow" else TokenWindow(budget)
                got = storage.load(sid, policy)
                self.check_same(got, raw.window(sid, s.window))
                policies.append((policy, len(got)))
                fns.append(lambda _i, policy=policy, sid=sid: storage.load(sid, policy))
                fns.append(lambda _i, sid=sid: raw.window(sid, s.window))
            gc.collect()
            samples = rotating(fns, s.window_reps, s.window_warmup)
            for k, (n, _sid, _budget) in enumerate(sessions):
                policy, returned = policies[k]
                self.record(
                    "window_read",
                    f"window_read {variant} @{size_label(n)}",
                    samples[2 * k],
                    samples[2 * k + 1],
                    variant=variant,
                    messages=n,
                    returned=returned,
                    policy=repr(policy),
                )
        if full_sid is None:
            full_sid = self.sid("full")
            self.fill(full_sid, self.corpus.rows(s.full_read))
        got = storage.load(full_sid)
        expected = raw.full(full_sid)
        self.check_same(got, expected)
        gc.collect()
        sid = full_sid
        ours, theirs = interleaved(
            lambda _i: storage.load(sid),
            lambda _i: raw.full(sid),
            s.full_reps,
            s.full_warmup,
        )
        self.record(
            "full_read",
            f"full_read @{size_label(s.full_read)}",
            ours,
            theirs,
            messages=s.full_read,
        )

    def resave(self, append_one_median: float | None) -> None:
        s = self.sizes
        sid = self.sid("resave")
        rows = self.corpus.rows(2 * s.resave_turns)
        history: list[Message] = []
        storage, raw = self.storage, self.raw

        def ours(turn: int) -> None:
            history.extend(to_message(role, text) for role, text in rows[2 * turn : 2 * turn + 2])
            storage.save(sid, history)

        # The raw application keeps its history in memory too and persists the new pair.
        def theirs(turn: int) -> None:
            raw.append_many(sid, rows[2 * turn : 2 * turn + 2])

        mine, raw_times = interleaved(ours, theirs, s.resave_turns, 0)
        self.check_counts(sid, len(rows))
        tail = s.resave_tail
        entry = self.record(
            "resave",
            f"resave @turn{s.resave_turns} (last {tail})",
            mine[-tail:],
            raw_times[-tail:],
            turns=s.resave_turns,
            first_turns=summarize(mine[:tail]),
        )
        if append_one_median:
            entry["vs_append_one"] = entry["sqlmemory"]["median_ms"] / append_one_median

    def image_window(self) -> None:
        s = self.sizes
        sid = self.sid("images")
        rng = random.Random(99)
        texts = self.corpus.rows(s.image_messages)
        raw_rows: list[tuple[str, str, bytes | None]] = []
        messages: list[Message] = []
        image_bytes = 0
        for i, (role, text) in enumerate(texts):
            if i % s.image_every == s.image_every - 1:
                png = noise_png(rng, s.image_side)
                image_bytes += len(png)
                raw_rows.append(("user", text, png))
                messages.append(Message.user([text, ImageBlock(data=png, media_type="image/png")]))
            else:
                raw_rows.append((role, text, None))
                messages.append(to_message(role, text))
        for part in chunks(messages, 100):
            self.storage.append(sid, *part)
        self.raw.fill_images(sid, raw_rows, 100)
        storage, raw = self.storage, self.raw
        policy = FixedWindow(s.window)
        got = storage.load(sid, policy)
        expected = raw.image_window(sid, s.window)
        images = sum(1 for m in got for b in m.content if isinstance(b, ImageBlock))
        if [m.content[0].text for m in got] != [r["content"] for r in expected] or images != sum(
            1 for r in expected if r["image"] is not None
        ):
            raise AssertionError("sqlmemory and raw disagree on the image window")
        gc.collect()
        ours, theirs = interleaved(
            lambda _i: storage.load(sid, policy),
            lambda _i: raw.image_window(sid, s.window),
            s.image_reps,
            s.image_warmup,
        )
        self.record(
            "image_window_read",
            f"image_window_read FixedWindow @{size_label(s.image_messages)}",
            ours,
            theirs,
            messages=s.image_messages,
            images_in_session=s.image_messages // s.image_every,
            images_in_window=images,
            mean_image_bytes=image_bytes // max(len(texts) // s.image_every, 1),
        )

    # -- checks and cleanup -------------------------------------------------------------

    def check_counts(self, sid: str, expected: int) -> None:
        got = self.storage.count(sid)
        if got != expected:
            raise AssertionError(f"{sid}: sqlmemory holds {got} messages, expected {expected}")

    @staticmethod
    def check_same(got: Sequence[Message], expected: Sequence[dict[str, Any]]) -> None:
        """Both sides returned the same messages (same texts, same roles, same order)."""
        ours = [(m.role.value, m.content[0].text) for m in got]  # type: ignore[union-attr]
        theirs = [(r["role"], r["content"]) for r in expected]
        if ours != theirs:
            raise AssertionError(
                f"sqlmemory returned {len(ours)} messages, raw {len(theirs)}; they differ"
            )

    def clear(self) -> None:
        """Best effort: a failure here must not hide the one that ended the run."""
        for sid in self.sessions:
            try:
                self.storage.clear(sid)
            except Exception as exc:
                self.log(f"{self.b.name}: could not clear {sid}: {exc}")

    def run(self) -> list[dict[str, Any]]:
        name = self.b.name
        try:
            self.log(f"{name}: append_one")
            self.append_one()
            append_one_median = self.results[-1]["sqlmemory"]["median_ms"]
            self.log(f"{name}: append_batch")
            self.append_batch()
            self.log(f"{name}: window_read, full_read")
            self.windows_and_full()
            self.log(f"{name}: resave")
            self.resave(append_one_median)
            self.log(f"{name}: image_window_read")
            self.image_window()
        finally:
            self.clear()
        return self.results


# -- report ---------------------------------------------------------------------------


def derived(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """window_read at the largest session over the smallest, per backend and policy."""
    out = []
    for backend in BACKENDS:
        for variant in ("FixedWindow", "TokenWindow"):
            rows = [
                r
                for r in results
                if r["backend"] == backend
                and r["scenario"] == "window_read"
                and r.get("variant") == variant
            ]
            if len(rows) < 2:
                continue
            small = min(rows, key=lambda r: r["messages"])
            large = max(rows, key=lambda r: r["messages"])
            out.append(
                {
                    "name": (
                        f"window_read {variant} @{size_label(large['messages'])}"
                        f" / @{size_label(small['messages'])}"
                    ),
                    "backend": backend,
                    "variant": variant,
                    "sqlmemory": large["sqlmemory"]["median_ms"] / small["sqlmemory"]["median_ms"],
                    "raw": large["raw"]["median_ms"] / small["raw"]["median_ms"],
                }
            )
    return out


def targets(results: Sequence[dict[str, Any]], scaling: Sequence[dict[str, Any]]) -> list[dict]:
    """The issue's targets, each as measured figure, limit and whether it is met."""
    out: list[dict[str, Any]] = []

    def add(name: str, backend: str, measured: float, limit: float) -> None:
        out.append(
            {
                "target": name,
                "backend": backend,
                "measured": measured,
                "limit": limit,
                "met": measured <= limit,
            }
        )

    for s in scaling:
        add(f"{s['name']} (sqlmemory)", s["backend"], s["sqlmemory"], 1.2)
    for backend in BACKENDS:
        ours = [r for r in results if r["backend"] == backend]
        windows = [r for r in ours if r["scenario"] == "window_read"]
        if windows:
            largest = max(r["messages"] for r in windows)
            for r in windows:
                if r["messages"] == largest:
                    add(f"{r['label']} vs raw", backend, r["ratio"], 2.0)
        limits = {"append_one": 2.5, "append_batch": 1.5, "full_read": 1.5}
        for r in ours:
            if r["scenario"] in limits:
                add(f"{r['scenario']} vs raw", backend, r["ratio"], limits[r["scenario"]])
            if r["scenario"] == "resave" and "vs_append_one" in r:
                add(f"{r['label']} vs append_one", backend, r["vs_append_one"], 3.0)
    return out


def render(report: dict[str, Any]) -> str:
    lines = []
    header = (
        f"{'scenario':<40} {'backend':<10} {'sqlm med':>9} {'sqlm p95':>9} "
        f"{'raw med':>9} {'raw p95':>9} {'ratio':>7}"
    )
    lines += [header, "-" * len(header)]
    for r in report["results"]:
        raw = r["raw"] or {}
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        lines.append(
            f"{r['label']:<40} {r['backend']:<10} {r['sqlmemory']['median_ms']:>9.3f} "
            f"{r['sqlmemory']['p95_ms']:>9.3f} {raw.get('median_ms', float('nan')):>9.3f} "
            f"{raw.get('p95_ms', float('nan')):>9.3f} {ratio:>7}"
        )
    lines.append("(times in ms; ratio = sqlmemory median / raw median)")
    if report["scaling"]:
        lines += ["", "history-length scaling (median at largest / median at smallest):"]
        for s in report["scaling"]:
            lines.append(
                f"  {s['name']:<42} {s['backend']:<10} sqlmemory {s['sqlmemory']:.2f}x"
                f"   raw {s['raw']:.2f}x"
            )
    resaves = [r for r in report["results"] if "vs_append_one" in r]
    if resaves:
        lines += ["", "resave at the last turn / append_one (sqlmemory medians):"]
        for r in resaves:
            lines.append(
                f"  {r['backend']:<10} {r['sqlmemory']['median_ms']:.3f} ms -> "
                f"{r['vs_append_one']:.2f}x append_one  (first {r['first_turns']['n']} turns:"
                f" {r['first_turns']['median_ms']:.3f} ms)"
            )
    if report["targets"]:
        lines += ["", "targets (issue 5, item 6):"]
        for t in report["targets"]:
            mark = "met " if t["met"] else "MISS"
            lines.append(
                f"  [{mark}] {t['target']:<52} {t['backend']:<10} "
                f"{t['measured']:.2f}x (limit {t['limit']}x)"
            )
    for backend, reason in report["skipped"].items():
        lines.append(f"\n{backend} skipped: {reason}")
    return "\n".join(lines)


# -- machine --------------------------------------------------------------------------


def git(*args: str) -> str | None:
    try:
        done = subprocess.run(  # noqa: S603 - fixed arguments, no shell
            ["git", "-C", str(REPO_ROOT), *args],  # noqa: S607 - git from PATH
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def filesystem_of(path: Path) -> str | None:
    """The type of the filesystem holding ``path`` (from /proc/mounts; Linux only)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    best, kind = "", None
    target = str(path.resolve())
    for line in mounts:
        parts = line.split()
        if len(parts) < 3 or len(parts[1]) < len(best):
            continue
        if target == parts[1] or target.startswith(parts[1].rstrip("/") + "/"):
            best, kind = parts[1], parts[2]
    return kind


def machine_info() -> dict[str, Any]:
    cpu = None
    memory = None
    with_proc = Path("/proc/cpuinfo")
    if with_proc.exists():
        for line in with_proc.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = line.split(":", 1)[1].strip()
                break
    status = git("status", "--porcelain", "--", "sqlmemory", "migrations")
    versions: dict[str, str | None] = {
        "sqlalchemy": sa.__version__,
        "sqlite": sqlite3.sqlite_version,
    }
    try:
        import psycopg

        versions["psycopg"] = psycopg.__version__
    except ImportError:
        versions["psycopg"] = None
    return {
        "when": now_utc().isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "memory": memory,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sqlmemory": sqlmemory.__version__,
        "sqlmemory_commit": git("rev-parse", "HEAD"),
        "sqlmemory_dirty": bool(status) if status is not None else None,
        "versions": versions,
    }


# -- entry points ---------------------------------------------------------------------


def run(
    sizes: Sizes,
    backends: Sequence[str],
    pg_url: str,
    json_path: Path | None,
    sqlite_dir: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every scenario on each backend in ``backends``; returns (and writes) the report."""
    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    run_id = uuid.uuid4().hex[:10]
    report: dict[str, Any] = {
        "machine": machine_info(),
        "sizes": dataclasses.asdict(sizes),
        "backends": {},
        "results": [],
        "skipped": {},
    }
    started = time.perf_counter()
    for name in backends:
        try:
            backend = open_sqlite(sqlite_dir) if name == "sqlite" else open_postgres(pg_url)
        except Exception as exc:  # an unreachable server: say so and go on without it
            if name == "sqlite":
                raise
            first_line = (str(exc).strip().splitlines() or [""])[0]
            reason = f"{safe_url(pg_url)} unreachable ({type(exc).__name__}: {first_line})"
            say(f"{name}: {reason}; running without it")
            report["skipped"][name] = reason
            continue
        report["backends"][name] = backend.info
        try:
            backend.raw.create_tables()
            report["results"] += Run(backend, sizes, run_id, say).run()
        finally:
            try:
                backend.raw.conn.rollback()
                backend.raw.drop_tables()
            except Exception as exc:
                say(f"{name}: could not drop the raw tables: {exc}")
            finally:
                backend.raw.close()
                backend.engine.dispose()
                for step in backend.cleanup:
                    step()
    report["scaling"] = derived(report["results"])
    report["targets"] = targets(report["results"], report["scaling"])
    report["seconds"] = round(time.perf_counter() - started, 1)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--backends",
        default=",".join(BACKENDS),
        help="comma-separated subset of sqlite,postgresql (default: both)",
    )
    parser.add_argument(
        "--pg-url",
        default=os.environ.get(PG_URL_ENV) or DEFAULT_PG_URL,
        help=f"SQLAlchemy URL of the PostgreSQL database (default: ${PG_URL_ENV} or "
        f"{DEFAULT_PG_URL})",
    )
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, help=f"where to write results ({DEFAULT_JSON})"
    )
    parser.add_argument(
        "--sqlite-dir", type=Path, default=None, help="directory for the SQLite file (a temp dir)"
    )
    args = parser.parse_args(argv)
    names = [b.strip().lower() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(names) - set(BACKENDS))
    if unknown or not names:
        parser.error(f"--backends takes a subset of {','.join(BACKENDS)}; got {args.backends!r}")
    args.backend_list = names
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    report = run(sizes, args.backend_list, args.pg_url, args.json, args.sqlite_dir)
    m = report["machine"]
    print(
        f"\nsqlmemory {m['sqlmemory']} @ {(m['sqlmemory_commit'] or '?')[:12]}"
        f"{' (+local changes)' if m['sqlmemory_dirty'] else ''}; {m['python']}; "
        f"{m['platform']}; {m['cpu_count']} CPUs ({m['cpu']})"
    )
    for name, info in report["backends"].items():
        version = info.get("sqlite_version") or info.get("server_version")
        print(f"{name}: {version}")
    print()
    print(render(report))
    print(f"\n{report['seconds']} s; results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
