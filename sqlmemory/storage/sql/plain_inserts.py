"""SQLite: a batch of texts alone inserted from their plain values, without a row dict.

A text alone is encoded as the values that differ from one such message to the next
(:data:`~sqlmemory.storage.sql.plain_rows.PLAIN_COLUMNS`). On SQLite's driver path
(nothing watches the engine's cursor events: :func:`~sqlmemory.storage.sql.driver_sql.
is_watched`) a batch made only of them goes to the driver as positional rows built from
those tuples: the ``INSERT`` is the one Core compiles for the columns given (a column
``NULL`` in every row left out, as :func:`~sqlmemory.storage.sql.driver_sql.bound_keys`
leaves it out of the row dicts), and every value goes through its column type's bind
processor, once for the values the batch shares (the session, the stamp, the flags).

Building a dict of 22 keys per message, then finding the keys ``None`` in every row and
taking each dict apart again, was about 2.5 µs of the 13 µs a message of a batch cost on
SQLite. ``tests/unit/test_plain_inserts.py`` holds what this stores to what the row dicts
store, for any batch of texts alone.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Connection, Dialect, insert

from sqlmemory.storage.sql.driver_sql import compiled_statement, is_watched, run_rows
from sqlmemory.storage.sql.plain_rows import PLAIN_COLUMNS
from sqlmemory.storage.sql.schema import messages_table

if TYPE_CHECKING:
    from sqlmemory.storage.sql.codec import EncodedMessage
    from sqlmemory.types import Message

__all__ = ["insert_plain"]

_INSERT = insert(messages_table)
_SHARED = ("session_id", "n_blocks", "text_base64")
"""The columns every row of a batch of texts alone has the same value in, first in the
values a row is taken from; then its ``seq`` and ``recorded_at``, then its plain values."""
_SOURCES = (*_SHARED, "seq", "recorded_at", *PLAIN_COLUMNS)
_SEQ, _TIME = len(_SHARED), len(_SHARED) + 1
_ONCE = (*range(len(_SHARED)), _TIME)
"""The sources whose processed value is made once a batch: the shared ones, the stamp."""
_OPTIONAL = ("tool_call_id", "search_text")
"""Plain columns left out of the statement when ``None`` in every row."""
_OPTIONAL_AT = tuple(PLAIN_COLUMNS.index(name) for name in _OPTIONAL)


class _Plan(NamedTuple):
    """How a batch's rows are made: the statement, what picks a row's values from its
    sources in the statement's order, and the bind processors by source position."""

    sql: str
    pick: Callable[[Sequence[Any]], tuple[Any, ...]]
    shared: tuple[Callable[[Any], Any] | None, ...]
    time: Callable[[Any], Any] | None
    per_row: tuple[tuple[int, Callable[[Any], Any]], ...]


@functools.lru_cache(maxsize=16)
def _plan(dialect: Dialect, given: tuple[bool, ...]) -> _Plan | None:
    """The plan for a batch in which the optional columns are ``given`` (not ``None`` in
    some row) or not; ``None`` when Core's statement needs a value none of the sources
    holds (a column default it would fill)."""
    left_out = {name for name, present in zip(_OPTIONAL, given, strict=True) if not present}
    keys = tuple(name for name in _SOURCES if name not in left_out)
    compiled = compiled_statement(_INSERT, dialect, keys)
    if compiled is None or compiled.fixed:
        return None
    at = {name: i for i, name in enumerate(_SOURCES)}
    process = {at[name]: p for name, p in zip(compiled.names, compiled.binds, strict=True)}
    return _Plan(
        compiled.sql,
        operator.itemgetter(*(at[name] for name in compiled.names)),
        tuple(process.get(i) for i in range(len(_SHARED))),
        process.get(_TIME),
        tuple((i, p) for i, p in sorted(process.items()) if p and i not in _ONCE),
    )


def insert_plain(
    conn: Connection,
    sid: str,
    encoded: Sequence[EncodedMessage],
    first_seq: int,
    stamp: datetime,
) -> list[tuple[int, EncodedMessage]]:
    """Insert the rows of the texts alone among ``encoded``, at seqs from ``first_seq``
    on, when ``conn`` is SQLite's unwatched; the messages left to insert, with their seqs
    (all of them elsewhere).

    A message without a ``recorded_at`` of its own gets ``stamp``.
    """
    numbered = list(enumerate(encoded, first_seq))
    if conn.dialect.name != "sqlite" or is_watched(conn):
        return numbered
    plain = [(seq, e.message, e.plain) for seq, e in numbered if e.plain is not None]
    if not plain:
        return numbered
    given = tuple(any(values[i] is not None for _, _, values in plain) for i in _OPTIONAL_AT)
    plan = _plan(conn.dialect, given)
    if plan is None:
        return numbered
    run_rows(conn, plan.sql, _rows(plan, sid, plain, stamp))
    if len(plain) == len(numbered):
        return []
    return [(seq, e) for seq, e in numbered if e.plain is None]


def _rows(
    plan: _Plan, sid: str, plain: list[tuple[int, Message, tuple[Any, ...]]], stamp: datetime
) -> list[tuple[Any, ...]]:
    """The rows of the texts alone ``plain`` (each with its seq, message and plain
    values), in the statement's order, bound."""
    shared = tuple(
        v if p is None else p(v) for v, p in zip((sid, 0, False), plan.shared, strict=True)
    )
    bind_time = plan.time or _same
    stamped = bind_time(stamp)
    pick = plan.pick
    # A processor's result depends on its value alone: each is run once per value.
    per_row: list[tuple[int, Callable[[Any], Any], dict[Any, Any]]] = [
        (i, process, {}) for i, process in plan.per_row
    ]
    rows = []
    for seq, message, values in plain:
        own = message.recorded_at
        sources: Any = (*shared, seq, stamped if own is None else bind_time(own), *values)
        if per_row:
            sources = list(sources)
            for i, process, done in per_row:
                value = sources[i]
                found = done.get(value, _NOT_YET)
                if found is _NOT_YET:
                    found = done[value] = process(value)
                sources[i] = found
        rows.append(pick(sources))
    return rows


_NOT_YET = object()


def _same(value: Any) -> Any:
    return value
