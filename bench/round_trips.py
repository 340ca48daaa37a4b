#!/usr/bin/env python
"""The round trips each storage call makes, per backend: statements and transaction control.

A round trip is a request the client sends and waits on: a statement, a ``BEGIN``, a
``COMMIT`` or ``ROLLBACK``, a pool's ping. :class:`RoundTrips` counts them from
SQLAlchemy's events on the storage's engine (``before_cursor_execute``, ``begin``,
``commit``, ``rollback`` and the pool's checkouts), knowing what each driver really sends:

- PostgreSQL (psycopg, asyncpg): a transaction's ``BEGIN`` is a request of its own,
  sent before its first statement; a connection in ``AUTOCOMMIT`` sends none, and its
  ``COMMIT`` and ``ROLLBACK`` send nothing.
- MySQL/MariaDB (PyMySQL, aiomysql): the server starts a transaction by itself with
  the first statement (no ``BEGIN``); ``COMMIT`` and ``ROLLBACK`` are sent.
- SQLite: no network; ``BEGIN`` (sqlmemory sends it itself, none for a one-statement
  read), each statement, ``COMMIT`` and ``ROLLBACK`` are calls into the library.
- A pool with ``pool_pre_ping`` pings each connection it hands out (one round trip).

``python bench/round_trips.py`` prints the counts of :data:`OPERATIONS` on each backend
it can reach (``--pg-url``, ``--mysql-url``; ``$SQLMEMORY_BENCH_POSTGRES_URL`` and
``$SQLMEMORY_BENCH_MYSQL_URL``) and writes them to ``bench/results-round-trips.json``;
``tests/integration/test_round_trips.py`` pins them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from PIL import Image

from sqlmemory import FixedWindow, ImageBlock, Message, SqlStorage, ToolCall
from sqlmemory.migrate import upgrade

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_JSON = BENCH_DIR / "results-round-trips.json"
CONTROL = ("BEGIN", "COMMIT", "ROLLBACK")


class RoundTrips:
    """Counts the round trips of the calls made on ``engine`` (sync, or an async engine's
    ``sync_engine``) while :meth:`counting`; :attr:`log` says what each one was.

    Examples:
        >>> engine = sa.create_engine("sqlite://")
        >>> trips = RoundTrips(engine)
        >>> with trips.counting(), engine.connect() as conn:
        ...     _ = conn.exec_driver_sql("SELECT 1")
        >>> trips.count
        1
    """

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        self.log: list[str] = []
        self._on = False

    @property
    def count(self) -> int:
        return len(self.log)

    @contextmanager
    def counting(self) -> Iterator[RoundTrips]:
        """Count from now until the block ends (the log starts empty)."""
        self.log = []
        listeners: list[tuple[Any, str, Callable[..., None]]] = [
            (self.engine, "before_cursor_execute", self._statement),
            (self.engine, "begin", self._begin),
            (self.engine, "commit", self._end("COMMIT")),
            (self.engine, "rollback", self._end("ROLLBACK")),
            (self.engine.pool, "checkout", self._checkout),
        ]
        for target, name, fn in listeners:
            sa.event.listen(target, name, fn)
        try:
            yield self
        finally:
            for target, name, fn in listeners:
                sa.event.remove(target, name, fn)

    def _statement(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        words = statement.lstrip("( \n").split(None, 3)
        self.log.append(" ".join(words[:3]))

    def _autocommit(self, conn: sa.Connection) -> bool:
        level = conn.get_execution_options().get("isolation_level")
        return level == "AUTOCOMMIT"

    def _begin(self, conn: sa.Connection) -> None:
        if self.dialect == "postgresql" and not self._autocommit(conn):
            self.log.append("BEGIN")
        elif self.dialect == "sqlite":
            from sqlmemory.storage.sql.engine import ONE_STATEMENT_OPTION

            if not conn.get_execution_options().get(ONE_STATEMENT_OPTION, False):
                self.log.append("BEGIN")

    def _end(self, what: str) -> Callable[[sa.Connection], None]:
        def ended(conn: sa.Connection) -> None:
            if self.dialect == "postgresql" and self._autocommit(conn):
                return
            if self.dialect == "sqlite":
                from sqlmemory.storage.sql.engine import ONE_STATEMENT_OPTION

                if conn.get_execution_options().get(ONE_STATEMENT_OPTION, False):
                    return
            self.log.append(what)

        return ended

    def _checkout(self, dbapi_connection: Any, record: Any, proxy: Any) -> None:
        if getattr(self.engine.pool, "_pre_ping", False):
            self.log.append("ping")


def noise_png(seed: int, side: int = 16) -> bytes:
    """A small PNG of deterministic noise (distinct bytes per ``seed``)."""
    data = bytes((seed * 7919 + i * 104729) % 256 for i in range(side * side * 3))
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), data).save(out, "PNG")
    return out.getvalue()


def tool_turn(tag: str, seed: int) -> list[Message]:
    """A user message with an image, a tool call and its result: blocks and blobs."""
    call = ToolCall(id=f"call-{tag}", name="lookup", arguments={"q": tag})
    image = ImageBlock(data=noise_png(seed), media_type="image/png")
    return [
        Message.user([f"look at {tag}", image]),
        Message.assistant(f"checking {tag}", tool_calls=[call]),
        Message.tool(call.id, f"found {tag}"),
    ]


OPERATIONS = (
    "append_one",
    "append_batch",
    "image_window_read",
    "window_read",
    "full_read",
    "save",
    "first_save",
    "pop",
)
"""The calls counted, each on a session that holds history already (the steady state):
``append_one`` one text message, ``append_batch`` a user message with an image, a tool
call and its result (messages, blocks and a blob), ``image_window_read``
``load(sid, FixedWindow(5))`` holding that image, ``window_read``
``load(sid, FixedWindow(20))`` of text messages, ``full_read`` ``load(sid)`` of the same,
``save`` the history read plus one message (after a save of the history read),
``first_save`` three messages saved to a session that has none, ``pop`` the newest
message."""


def _first(sid: str) -> list[Message]:
    return [Message.user(f"first {sid}"), Message.assistant("hello"), Message.user("next")]


def measure(storage: Any, sid: str, engine: sa.Engine | None = None) -> dict[str, dict[str, Any]]:
    """Each of :data:`OPERATIONS` once on ``sid`` (filled first, uncounted), its count
    and what each round trip was. ``engine``: where ``storage``'s statements run (its
    ``sync_engine`` for an async storage); ``storage.engine`` by default."""
    trips = RoundTrips(engine if engine is not None else storage.engine)
    storage.append(sid, *(Message.user(f"filler {i}") for i in range(40)))
    storage.load(sid, FixedWindow(5))  # the schema check, and a pool connection, made
    calls: dict[str, Callable[[], Any]] = {
        "append_one": lambda: storage.append(sid, Message.user("one more")),
        "append_batch": lambda: storage.append(sid, *tool_turn(sid, 1)),
        "image_window_read": lambda: storage.load(sid, FixedWindow(5)),
        "window_read": lambda: storage.load(sid, FixedWindow(20)),
        "full_read": lambda: storage.load(sid),
        "save": lambda: storage.save(sid, [*storage.load(sid), Message.user("saved")]),
        "first_save": lambda: storage.save(f"{sid}/new", _first(sid)),
        "pop": lambda: storage.pop(sid),
    }
    found: dict[str, dict[str, Any]] = {}
    for name in OPERATIONS:
        if name == "window_read":
            storage.append(sid, *(Message.user(f"text {i}") for i in range(20)))
        if name == "save":
            # The steady state of an application saving its conversation every turn:
            # this storage saved the session last.
            history = storage.load(sid)
            storage.save(sid, history)
            with trips.counting():
                storage.save(sid, [*history, Message.user("saved")])
        else:
            with trips.counting():
                calls[name]()
        found[name] = {"count": trips.count, "log": list(trips.log)}
    return found


def _urls(args: argparse.Namespace) -> dict[str, str]:
    urls = {"sqlite": f"sqlite:///{tempfile.mkdtemp(prefix='sqlmemory-trips-')}/trips.db"}
    if args.pg_url:
        urls["postgresql"] = args.pg_url
    if args.mysql_url:
        urls["mysql"] = args.mysql_url
    return urls


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-url", default=os.environ.get("SQLMEMORY_BENCH_POSTGRES_URL"))
    parser.add_argument("--mysql-url", default=os.environ.get("SQLMEMORY_BENCH_MYSQL_URL"))
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--verbose", action="store_true", help="what each round trip was")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"operations": {}, "skipped": {}}
    for backend, url in _urls(args).items():
        try:
            upgrade(url)
            storage = SqlStorage.from_url(url)
        except Exception as exc:  # an unreachable server: say so, go on
            report["skipped"][backend] = f"{type(exc).__name__}: {exc}".splitlines()[0]
            continue
        sid = f"bench-trips-{uuid.uuid4().hex[:10]}"
        try:
            report["operations"][backend] = measure(storage, sid)
        finally:
            storage.clear(sid)
            storage.close()
    backends = list(report["operations"])
    print(f"{'operation':14}" + "".join(f"{b:>12}" for b in backends))
    for name in OPERATIONS:
        counts = [report["operations"][b][name]["count"] for b in backends]
        print(f"{name:14}" + "".join(f"{c:>12}" for c in counts))
        if args.verbose:
            for b in backends:
                print(f"    {b}: {' | '.join(report['operations'][b][name]['log'])}")
    for backend, reason in report["skipped"].items():
        print(f"{backend} not run: {reason}")
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
