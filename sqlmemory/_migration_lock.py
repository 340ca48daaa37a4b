"""How a migration holds its database: one migration at a time, SQLite set up for it.

:func:`migration_connection` yields a connection in the transaction a migration runs in.
With ``lock``, that transaction holds the database's migration lock (a PostgreSQL advisory
lock, MySQL ``GET_LOCK``, a SQLite ``EXCLUSIVE`` transaction), so migrations started from
many processes at once run one after the other. On SQLite the connection is prepared for
batch mode (:func:`sqlite_migration_mode`), and :func:`switch_to_wal` leaves the file in
WAL mode after an upgrade.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from sqlmemory._migration_urls import EngineOrUrl, migration_engine
from sqlmemory.errors import StorageError, translate_db_errors

__all__ = [
    "MIGRATION_LOCK_KEY",
    "MIGRATION_LOCK_WAIT",
    "migration_connection",
    "mysql_migration_lock",
    "sqlite_migration_mode",
    "switch_to_wal",
]

MIGRATION_LOCK_KEY = 0x73716C6D656D6F72
"""The PostgreSQL advisory lock key that migrations hold (the bytes of ``"sqlmemor"``)."""
MIGRATION_LOCK_WAIT = 600
"""Seconds a migration waits for another process's migration (MySQL ``GET_LOCK``)."""


@contextmanager
def sqlite_migration_mode(connection: sa.Connection) -> Iterator[None]:
    """On SQLite, set the connection up for a migration and restore it afterwards.

    - Foreign key enforcement off: batch mode rebuilds a table by copying it and dropping
      the original, and with enforcement on, that ``DROP`` deletes the rows of the tables
      referencing it through ``ON DELETE CASCADE``. The pragma is ignored inside a
      transaction, so it is set before the migration's transaction begins.
    - The driver's own transaction handling off: by default pysqlite opens a transaction
      only before data changes, so ``CREATE TABLE`` would commit on its own and a failed
      migration leave half a schema. :func:`migration_connection` sends ``BEGIN`` itself
      instead (the SQLAlchemy "pysqlite serializable" recipe).
    """
    if connection.dialect.name != "sqlite":
        yield
        return
    # An empty transaction first: an engine's "begin" hooks (the storages' among them) may
    # set pragmas up when a connection is first used, which would undo ours.
    with connection.begin():
        pass
    driver: Any = connection.connection.driver_connection
    # Driver-level calls: their errors are not wrapped by SQLAlchemy, so wrap them here.
    driver_error: type[Exception] = connection.dialect.loaded_dbapi.Error
    try:
        foreign_keys = bool(driver.execute("PRAGMA foreign_keys").fetchone()[0])
        isolation_level = driver.isolation_level
        driver.execute("PRAGMA foreign_keys = OFF")
        driver.isolation_level = None
    except driver_error as exc:
        raise StorageError(f"cannot prepare the SQLite connection: {exc}") from exc
    try:
        yield
    finally:
        try:
            driver.isolation_level = isolation_level
            if foreign_keys:
                driver.execute("PRAGMA foreign_keys = ON")
        except driver_error as exc:  # the connection is unusable: drop it from the pool
            connection.invalidate(exc)


@contextmanager
def mysql_migration_lock(connection: sa.Connection, lock: bool) -> Iterator[None]:
    """On MySQL/MariaDB, hold ``GET_LOCK`` (named after the database) around the block.

    A session-level lock, taken before the migration's transaction begins so that its
    first read already sees what a migration that held the lock before committed; it
    survives the implicit commits of MySQL's DDL.
    """
    if not lock or connection.dialect.name not in ("mysql", "mariadb"):
        yield
        return
    name = "CONCAT('sqlmemory_migrate.', DATABASE())"
    got = connection.exec_driver_sql(f"SELECT GET_LOCK({name}, {MIGRATION_LOCK_WAIT})").scalar()
    connection.commit()
    if got != 1:
        raise StorageError(
            f"another process held the sqlmemory migration lock for {MIGRATION_LOCK_WAIT} s; "
            "check for a migration that hangs, then run the upgrade again"
        )
    try:
        yield
    finally:
        try:
            connection.exec_driver_sql(f"SELECT RELEASE_LOCK({name})")
            connection.commit()
        except sa.exc.SQLAlchemyError:  # a dead connection released it with itself
            pass


def switch_to_wal(connection: sa.Connection) -> None:
    """Leave a SQLite file in WAL mode, waiting (up to the busy timeout) while it is busy."""
    from sqlmemory.storage.sql.engine import SQLITE_BUSY_TIMEOUT_MS

    driver: Any = connection.connection.driver_connection
    driver_error: type[Exception] = connection.dialect.loaded_dbapi.Error
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            if driver.execute("PRAGMA journal_mode").fetchone()[0] in ("wal", "memory"):
                return
            driver.execute("PRAGMA journal_mode=WAL")
            return
        except driver_error as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise StorageError(f"cannot switch the SQLite file to WAL: {exc}") from exc
        time.sleep(0.02)


@contextmanager
def migration_connection(
    engine_or_url: EngineOrUrl, action: str, *, lock: bool = False
) -> Iterator[sa.Connection]:
    """Yield a connection in a transaction committed when the block succeeds.

    With ``lock``, the transaction holds the database's migration lock, so migrations
    started from many processes at once run one after the other (each finds the
    revision the previous one left): a PostgreSQL advisory lock, MySQL ``GET_LOCK``, a
    SQLite ``EXCLUSIVE`` transaction. Database errors become :class:`StorageError`
    (:func:`~sqlmemory.errors.translate_db_errors`, naming ``action``).
    """
    with (
        translate_db_errors(action),
        migration_engine(engine_or_url) as engine,
        engine.connect() as connection,
        sqlite_migration_mode(connection),
        mysql_migration_lock(connection, lock),
    ):
        if lock and connection.dialect.name == "sqlite":
            from sqlmemory.storage.sql.engine import WRITE_OPTION

            # A storage's "begin" hook on this engine then sends BEGIN IMMEDIATE.
            connection.execution_options(**{WRITE_OPTION: True})
        with connection.begin():
            if connection.dialect.name == "sqlite":
                driver: Any = connection.connection.driver_connection
                if not driver.in_transaction:  # an engine's "begin" hook may have sent it
                    connection.exec_driver_sql("BEGIN EXCLUSIVE" if lock else "BEGIN")
            if lock and connection.dialect.name == "postgresql":
                connection.execute(
                    sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                )
            yield connection
