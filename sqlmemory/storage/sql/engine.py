"""Per-dialect engine set-up the storages need, applied to engines callers pass in."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, event

__all__ = ["RETRY_DELAYS", "SQLITE_BUSY_TIMEOUT_MS", "WRITE_OPTION", "configure_engine"]

RETRY_DELAYS = (0.005, 0.02, 0.05, 0.1, 0.2)
"""Seconds to wait before each new attempt of a write that hit a deadlock."""

WRITE_OPTION = "sqlmemory_write"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def _sqlite_begin(conn: Connection) -> None:
    # The driver's own transaction handling is off (isolation_level = None), so BEGIN is
    # ours to send: IMMEDIATE for writes takes the write lock up front, so two writers
    # never both read and then fail to upgrade (SQLITE_BUSY without waiting).
    dbapi = conn.connection.dbapi_connection
    info = conn.connection.info
    if not info.get("sqlmemory_ready"):
        assert dbapi is not None  # noqa: S101
        dbapi.isolation_level = None
        conn.exec_driver_sql("PRAGMA foreign_keys=ON")
        conn.exec_driver_sql(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if conn.exec_driver_sql("PRAGMA journal_mode").scalar() != "memory":
            conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        info["sqlmemory_ready"] = True
    write = conn.get_execution_options().get(WRITE_OPTION, False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _sqlite_connect(dbapi_connection: Any, connection_record: Any) -> None:
    dbapi_connection.isolation_level = None


def configure_engine(engine: Engine) -> None:
    """Make ``engine`` behave as the storage needs; idempotent.

    SQLite: WAL journal, a busy timeout, foreign keys on, and transactions that begin
    ``IMMEDIATE`` for writes (``BEGIN`` for reads). Other backends need nothing.
    """
    if engine.dialect.name != "sqlite":
        return
    if not event.contains(engine, "begin", _sqlite_begin):
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
