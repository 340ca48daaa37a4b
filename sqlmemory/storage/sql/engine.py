"""Per-dialect engine set-up the storages need, applied to engines callers pass in."""

from __future__ import annotations

import random
import sqlite3
import time
from typing import Any

from sqlalchemy import Connection, Engine, event
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.util import await_only

from sqlmemory.errors import StorageError, is_transient

__all__ = [
    "IDEMPOTENT",
    "MAX_TRANSIENT_RETRIES",
    "ONE_STATEMENT_OPTION",
    "READY",
    "SQLITE_BUSY_TIMEOUT_MS",
    "WRITE_OPTION",
    "Retries",
    "configure_engine",
    "send_control",
]

MAX_TRANSIENT_RETRIES = 10
"""How many times a transaction the database rolled back (deadlock, serialization
failure, lock wait timeout) is run again before the caller gets a ``StorageError``."""
_FIRST_DELAY = 0.01
_MAX_DELAY = 0.5

IDEMPOTENT = frozenset({"append", "save"})
"""The writes run again after a dead connection even if their commit may have happened:
a second append of the same messages, or a second save of the same history, writes
nothing (``docs/contract/persistence.md``, idempotency)."""

WRITE_OPTION = "sqlmemory_write"
ONE_STATEMENT_OPTION = "sqlmemory_one_statement"
"""SQLite: a read of one SELECT, sent without BEGIN (the statement is its own snapshot)."""
SQLITE_BUSY_TIMEOUT_MS = 30_000
READY = "sqlmemory_ready"
"""The key of a SQLite driver connection's ``info`` once it is set up (pragmas, WAL)."""


class Retries:
    """When a failed transaction runs again, and after how long (one per public call).

    - A deadlock, serialization failure or lock wait timeout (the database rolled the
      whole transaction back) is run again after a jittered, doubling delay, at most
      :data:`MAX_TRANSIENT_RETRIES` times; then a :class:`~sqlmemory.errors.StorageError`
      says what happened and what to do.
    - A call whose connection died (server restart, failover, idle timeout: what a ping
      before every call would have found, for a round trip per call) runs once more, at
      once, on a fresh connection: a read; a write that failed before its ``COMMIT`` was
      sent (the server rolled it back); and an append or a save whatever failed, since
      running one again after a commit whose answer was lost writes nothing more
      (:data:`IDEMPOTENT`). Any other write whose commit was in flight is raised: it
      may have happened.
    - Anything else is raised as it is.

    Examples:
        >>> retries = Retries("load", write=False)
        >>> retries.transient
        0
    """

    def __init__(self, action: str, *, write: bool) -> None:
        self.action = action
        self.write = write
        self.transient = 0
        self.reconnected = False

    def delay_after(self, exc: DBAPIError, committing: bool = False) -> float:
        """Seconds to wait before the next attempt after ``exc``; raises when none is due.

        ``committing``: ``exc`` came once the work was done, from its ``COMMIT``.
        """
        if is_transient(exc):
            self.transient += 1
            if self.transient > MAX_TRANSIENT_RETRIES:
                raise StorageError(
                    f"{self.action} failed: the database rolled the transaction back "
                    f"{self.transient} times in a row (deadlock, serialization failure or "
                    f"lock wait timeout; last: {exc.orig}). Nothing was written. Retry the "
                    "call later (a retried append is a no-op for what is stored already); "
                    "if it keeps happening, fewer concurrent writers per session or a "
                    "longer lock wait timeout on the server help"
                ) from exc
            ceiling: float = min(_MAX_DELAY, _FIRST_DELAY * 2.0 ** (self.transient - 1))
            return ceiling * random.uniform(0.5, 1.5)  # noqa: S311 - jitter, not secrecy
        if exc.connection_invalidated and not self.reconnected and self._rerunnable(committing):
            self.reconnected = True
            return 0.0
        raise exc

    def _rerunnable(self, committing: bool) -> bool:
        return not self.write or not committing or self.action in IDEMPOTENT


def _sqlite_begin(conn: Connection) -> None:
    # The driver's own transaction handling is off (isolation_level = None), so BEGIN is
    # ours to send: IMMEDIATE for writes takes the write lock up front, so two writers
    # never both read and then fail to upgrade (SQLITE_BUSY without waiting).
    dbapi = conn.connection.dbapi_connection
    info = conn.connection.info
    if not info.get(READY):
        assert dbapi is not None  # noqa: S101
        dbapi.isolation_level = None
        conn.exec_driver_sql("PRAGMA foreign_keys=ON")
        conn.exec_driver_sql(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if conn.exec_driver_sql("PRAGMA journal_mode").scalar() not in ("memory", "wal"):
            _switch_to_wal(conn)
        info[READY] = True
    options = conn.get_execution_options()
    if options.get(ONE_STATEMENT_OPTION, False):
        return
    send_control(conn, "BEGIN IMMEDIATE" if options.get(WRITE_OPTION, False) else "BEGIN")


def send_control(conn: Connection, sql: str) -> None:
    """``sql`` on the driver's connection, as SQLAlchemy begins a transaction on other
    databases (no cursor events): one call into ``sqlite3``, and through ``aiosqlite``
    one hand-off to its thread where a cursor takes three (open, execute, close). A
    failure is wrapped as SQLAlchemy wraps the driver's errors."""
    driver = conn.connection.driver_connection
    assert driver is not None  # noqa: S101 - a connection being begun is open
    try:
        if isinstance(driver, sqlite3.Connection):
            driver.execute(sql)
        else:  # aiosqlite, run from SQLAlchemy's greenlet
            await_only(driver.execute(sql))
    except sqlite3.Error as exc:
        raise DBAPIError.instance(sql, None, exc, sqlite3.Error) from exc


def _switch_to_wal(conn: Connection) -> None:
    """``PRAGMA journal_mode=WAL``, waiting for a busy database like any other statement.

    Switching the journal mode needs the database to itself, and SQLite answers "database
    is locked" at once, without its busy handler, while another connection writes: so
    the pragma is tried again until the busy timeout has passed. ``upgrade`` leaves the
    file in WAL mode, so this runs only on a database migrated another way.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            conn.exec_driver_sql("PRAGMA journal_mode=WAL")
            return
        except OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _sqlite_connect(dbapi_connection: Any, connection_record: Any) -> None:
    dbapi_connection.isolation_level = None


def configure_engine(engine: Engine) -> None:
    """Make ``engine`` behave as the storage needs; idempotent.

    SQLite: WAL journal, a busy timeout, foreign keys on, and transactions that begin
    ``IMMEDIATE`` for writes (``BEGIN`` for reads, none for a one-statement read).
    Other backends need nothing.
    """
    if engine.dialect.name != "sqlite":
        return
    if not event.contains(engine, "begin", _sqlite_begin):
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
