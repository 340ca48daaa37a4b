"""SQLite: statements compiled once from Core, run on the driver's cursor.

SQLAlchemy's per-call work (an execution context, result metadata built from the
cursor's description, a ``Row`` per row, its events) costs more than SQLite itself on a
windowed read: about 90 µs of a 250 µs ``recent``. When nothing listens to the engine's
cursor events, :func:`driver_rows` hands SQL and values to the driver's cursor directly,
and :func:`run_statement` does so for a Core statement (an append's inserts, the session
upsert), compiled once (:func:`compiled_statement`), its values bound and its rows
processed by SQLAlchemy's own type processors. When something does (tracing
instrumentation, a statement counter), they go through SQLAlchemy as any other statement, so every
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

import contextlib
import functools
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, cast

from sqlalchemy import Connection, Dialect, Executable
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.compiler import SQLCompiler

from sqlmemory.storage.sql.engine import READY, send_control

__all__ = [
    "CompiledStatement",
    "bound_keys",
    "compiled_statement",
    "driver_rows",
    "is_watched",
    "read_snapshot",
    "run_rows",
    "run_statement",
]


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


def run_rows(conn: Connection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    """``sql`` with each of ``rows`` (positional values, bound as the driver takes them)
    on the driver's cursor, for a caller that found ``conn`` not :func:`is_watched`."""
    cursor = _cursor(conn)
    try:
        cursor.executemany(sql, rows)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _wrapped(conn, sql, rows, exc) from exc
    finally:
        cursor.close()


@contextlib.contextmanager
def read_snapshot(conn: Connection) -> Iterator[None]:
    """SQLite: the statements run inside on ``conn`` (in autocommit, its transactions
    our own) read one snapshot: a ``BEGIN`` before them and a ``COMMIT`` after, sent on
    the driver's connection as the engine's ``begin`` hook sends its ``BEGIN``, without
    cursor events. In-process, the two cost about a microsecond, less than one statement
    that joins what two plain ones read. After a failure the ``COMMIT`` is not sent:
    returning the connection to the pool rolls it back. Watched, or on a driver
    connection not set up yet (which the first statement through SQLAlchemy does), they
    go through SQLAlchemy as the statements do."""
    send = _execute if is_watched(conn) else send_control
    send(conn, "BEGIN")
    yield
    send(conn, "COMMIT")


def _execute(conn: Connection, sql: str) -> None:
    conn.exec_driver_sql(sql)


def _cursor(conn: Connection) -> Any:
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None  # noqa: S101 - a connection in use is open
    return dbapi.cursor()


def _wrapped(conn: Connection, sql: str, params: Any, exc: Exception) -> DBAPIError:
    """``exc`` (a driver error) as SQLAlchemy wraps it: its ``DBAPIError`` subclass."""
    wrapped = DBAPIError.instance(sql, params, exc, conn.dialect.loaded_dbapi.Error)
    return cast(DBAPIError, wrapped)


@functools.lru_cache(maxsize=128)
def compiled_statement(
    statement: Any, dialect: Dialect, keys: tuple[str, ...]
) -> CompiledStatement | None:
    """``statement`` compiled for ``dialect`` with the parameter ``keys``: its SQL, its
    positional parameters with their bind processors (and the values of the literals it
    binds itself), and its result processors; ``None`` when a parameter it needs is not
    among ``keys`` (a column default SQLAlchemy would fill)."""
    compiled = cast(SQLCompiler, statement.compile(dialect=dialect, column_keys=list(keys)))
    names = tuple(compiled.positiontup or ())
    fixed: dict[str, Any] = {}
    for name in names:
        if name not in keys:
            bind = compiled.binds[name]
            if bind.required or bind.callable is not None:
                return None
            fixed[name] = bind.value  # a literal the statement binds itself
    binds: Mapping[str, Any] = compiled._bind_processors
    processors = tuple(binds.get(n) for n in names)
    results = tuple(
        entry.type._cached_result_processor(dialect, None) for entry in compiled._result_columns
    )
    return CompiledStatement(
        str(compiled),
        names,
        processors,
        results,
        fixed,
        _getter(names),
        tuple((i, p) for i, p in enumerate(processors) if p is not None),
        tuple((i, p) for i, p in enumerate(results) if p is not None),
    )


_NOT_YET = object()


def _getter(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of ``names`` in a mapping, as a tuple (``itemgetter``, in C)."""
    if len(names) == 1:
        name = names[0]
        return lambda params: (params[name],)
    if not names:
        return lambda params: ()
    return operator.itemgetter(*names)


class CompiledStatement(NamedTuple):
    """A statement's SQL for one dialect and what binding and reading it takes: the
    processors of its parameters and result columns, and the positions of those that
    have one (most values need none)."""

    sql: str
    names: tuple[str, ...]
    binds: tuple[Callable[[Any], Any] | None, ...]
    results: tuple[Callable[[Any], Any] | None, ...]
    fixed: dict[str, Any]
    get: Callable[[Mapping[str, Any]], tuple[Any, ...]]
    bound: tuple[tuple[int, Callable[[Any], Any]], ...]
    read: tuple[tuple[int, Callable[[Any], Any]], ...]

    def values(self, params: Mapping[str, Any]) -> tuple[Any, ...] | list[Any]:
        if self.fixed:
            params = {**self.fixed, **params}
        found = self.get(params)
        if not self.bound:
            return found
        values = list(found)
        for i, process in self.bound:
            values[i] = process(values[i])
        return values

    def value_rows(self, rows: Sequence[Mapping[str, Any]]) -> list[Any]:
        """:meth:`values` of each of ``rows``, each processor run once per value object:
        a batch's rows share their stamp and flags, and a processor's result depends on
        its value alone (the rows keep every value alive, so no ``id`` is reused). The
        results are kept by an ``int`` key, not a tuple: no object for the collector to
        count per value."""
        if len(rows) == 1 or not self.bound:
            return [self.values(params) for params in rows]
        done: dict[int, Any] = {}
        width = len(self.names)
        out = []
        for params in rows:
            values = list(self.get({**self.fixed, **params} if self.fixed else params))
            for i, process in self.bound:
                value = values[i]
                key = id(value) * width + i
                found = done.get(key, _NOT_YET)
                if found is _NOT_YET:
                    found = done[key] = process(value)
                values[i] = found
            out.append(values)
        return out

    def row(self, raw: Sequence[Any]) -> Sequence[Any]:
        if not self.read:
            return raw
        values = list(raw)
        for i, process in self.read:
            values[i] = process(values[i])
        return tuple(values)


def bound_keys(params: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The keys of ``params`` (rows of the same keys) that are not ``None`` in every row.

    SQLite's driver binds a ``None`` about 0.7 µs slower than a number (it looks for an
    adapter first): a text alone leaves ten of its 22 columns ``None``, which was half of
    inserting it (100 such rows: 1.4 ms with every column, 0.7 without those).

    Examples:
        >>> bound_keys([{"a": 1, "b": None, "c": None}, {"a": 2, "b": 3, "c": None}])
        ('a', 'b')
    """
    first = params[0]
    nulls = [key for key, value in first.items() if value is None]
    for row in params[1:]:
        if not nulls:
            break
        nulls = [key for key in nulls if row[key] is None]
    return tuple(key for key in first if key not in nulls) if nulls else tuple(first)


def run_statement(
    conn: Connection,
    statement: Executable,
    params: Sequence[Mapping[str, Any]],
    *,
    bare_insert: bool = False,
) -> list[Any]:
    """``statement`` with each of ``params`` (one: ``execute``, more: ``executemany``),
    and the rows it returns, processed as SQLAlchemy processes them.

    SQLite's alone, unwatched and when every parameter is given, on the driver's cursor;
    otherwise through SQLAlchemy. A ``bare_insert`` is an ``insert(table)`` whose columns
    are ``NULL`` when left out (none that a row may leave ``None`` has a default): there
    a key ``None`` in every row is left out of the statement (:func:`bound_keys`)."""
    compiled = None
    if conn.dialect.name == "sqlite" and not is_watched(conn):
        keys = bound_keys(params) if bare_insert else tuple(params[0])
        compiled = compiled_statement(statement, conn.dialect, keys)
    if compiled is None:
        result = conn.execute(statement, list(params) if len(params) > 1 else params[0])
        return list(result.all()) if result.returns_rows else []
    cursor = _cursor(conn)
    try:
        if len(params) == 1:
            cursor.execute(compiled.sql, compiled.values(params[0]))
            return [compiled.row(r) for r in cursor.fetchall()] if cursor.description else []
        cursor.executemany(compiled.sql, compiled.value_rows(params))
        return []
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _wrapped(conn, compiled.sql, params, exc) from exc
    finally:
        cursor.close()
