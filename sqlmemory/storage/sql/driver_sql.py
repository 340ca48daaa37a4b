"""SQLite: statements compiled once from Core, run on the driver's cursor.

SQLAlchemy's per-call work (an execution context, result metadata built from the
cursor's description, a ``Row`` per row, its events) costs more than SQLite itself on a
windowed read: about 90 µs of a 250 µs ``recent``. When nothing listens to the engine's
cursor events, :func:`driver_rows` and :func:`driver_execute` hand the statement's SQL and
values to the driver's cursor directly; when something does (tracing instrumentation, a
statement counter), they go through SQLAlchemy as any other statement, so every
statement is still seen. Either way a driver error reaches the caller as SQLAlchemy wraps
it (``DBAPIError``), and the statement runs in the connection's transaction, if any.

Examples:
    >>> import sqlalchemy as sa
    >>> engine = sa.create_engine("sqlite://")
    >>> with engine.connect() as conn:
    ...     driver_rows(conn, "SELECT ? + 1", (1,))
    [(2,)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from sqlmemory.storage.sql.engine import READY

__all__ = ["driver_execute", "driver_rows", "is_watched"]


def is_watched(conn: Connection) -> bool:
    """Whether ``conn`` must run its statements through SQLAlchemy: something listens to
    its cursor events (its engine's included), or its driver connection has not been set
    up yet (the engine's ``begin`` hook does that, on the first statement SQLAlchemy runs:
    :func:`~sqlmemory.storage.sql.engine.configure_engine`)."""
    dispatch = conn.dispatch
    if dispatch.before_cursor_execute or dispatch.after_cursor_execute:
        return True
    return conn.dialect.name == "sqlite" and not conn.connection.info.get(READY)


def driver_rows(conn: Connection, sql: str, values: Sequence[Any]) -> list[Any]:
    """The rows of ``sql`` with positional ``values``, as the driver returns them."""
    if is_watched(conn):
        return list(conn.exec_driver_sql(sql, tuple(values)).all())
    cursor = _cursor(conn)
    try:
        cursor.execute(sql, values)
        return list(cursor.fetchall())
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _wrapped(conn, sql, values, exc) from exc
    finally:
        cursor.close()


def driver_execute(conn: Connection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    """``sql`` once per row of ``rows`` (``executemany``), nothing returned."""
    if is_watched(conn):
        conn.exec_driver_sql(sql, [tuple(r) for r in rows])
        return
    cursor = _cursor(conn)
    try:
        cursor.executemany(sql, rows)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _wrapped(conn, sql, rows, exc) from exc
    finally:
        cursor.close()


def _cursor(conn: Connection) -> Any:
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None  # noqa: S101 - a connection in use is open
    return dbapi.cursor()


def _wrapped(conn: Connection, sql: str, params: Any, exc: Exception) -> DBAPIError:
    """``exc`` (a driver error) as SQLAlchemy wraps it: its ``DBAPIError`` subclass."""
    wrapped = DBAPIError.instance(sql, params, exc, conn.dialect.loaded_dbapi.Error)
    return cast(DBAPIError, wrapped)
