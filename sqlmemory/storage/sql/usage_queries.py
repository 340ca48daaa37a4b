"""The usage totals in SQL: one ``SUM ... GROUP BY`` statement, no message loaded.

The statement reads the messages that carry a usage (``usage_input_tokens IS NOT NULL``)
of one session, of one owner's sessions (joined from ``sqlmemory_sessions``, where the
owner lives, through its owner index), or of all, between two ``recorded_at`` times,
through the index ``ix_sqlmemory_messages_usage`` on ``(session_id, recorded_at)``
(partial on PostgreSQL and SQLite), and returns one row per model.

Sums never overflow silently. PostgreSQL's ``sum(bigint)`` is ``numeric`` and
MySQL/MariaDB's ``SUM`` is ``DECIMAL``: exact past 2**63-1. SQLite's ``sum()`` of
integers raises on overflow, so there each count is summed in two halves, its high and
its low 32 bits, put together in Python: exact as long as fewer than 2**31 messages are
counted (past that SQLite raises, which is a ``StorageError``).
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, bindparam, func, select

from sqlmemory.storage.sql.schema import messages_table, sessions_table
from sqlmemory.storage.sql.usage_rows import USAGE_COLUMN_OF

__all__ = ["usage_groups", "usage_statement"]

_LOW_BITS = 2**32 - 1
_COUNTS = [messages_table.c[column] for column in USAGE_COLUMN_OF.values()]
_MODEL = messages_table.c.usage_model
_HAS_USAGE = messages_table.c.usage_input_tokens.is_not(None)  # schema.HAS_USAGE: the index's


def _sums(split: bool) -> list[ColumnElement[Any]]:
    if not split:
        return [func.sum(column) for column in _COUNTS]
    sums: list[ColumnElement[Any]] = []
    for column in _COUNTS:
        sums.append(func.sum(column.op(">>")(32)))
        sums.append(func.sum(column.op("&")(_LOW_BITS)))
    return sums


@functools.lru_cache(maxsize=64)
def _statement(
    sqlite: bool, by_session: bool, by_owner: bool, since: bool, until: bool
) -> Select[Any]:
    """The statement of one combination of filters, built once: its values are bound."""
    statement = select(_MODEL, func.count(), *_sums(sqlite)).where(_HAS_USAGE)
    if by_owner:
        statement = statement.join(
            sessions_table, sessions_table.c.session_id == messages_table.c.session_id
        ).where(sessions_table.c.owner == bindparam("owner"))
    if by_session:
        statement = statement.where(messages_table.c.session_id == bindparam("session_id"))
    if since:
        statement = statement.where(messages_table.c.recorded_at >= bindparam("since"))
    if until:
        statement = statement.where(messages_table.c.recorded_at < bindparam("until"))
    return statement.group_by(_MODEL)


def usage_statement(
    dialect: str,
    session_id: str | None,
    owner: str | None,
    since: datetime | None,
    until: datetime | None,
) -> tuple[Select[Any], dict[str, Any]]:
    """The statement of the totals, ``(model, messages, *sums)`` per model, and the
    values of its parameters.

    On SQLite each count is two sums (its high and its low 32 bits, see the module).
    """
    values = {"session_id": session_id, "owner": owner, "since": since, "until": until}
    params = {name: value for name, value in values.items() if value is not None}
    flags = (session_id is not None, owner is not None, since is not None, until is not None)
    return _statement(dialect == "sqlite", *flags), params


def usage_groups(
    conn: Connection,
    session_id: str | None,
    owner: str | None,
    since: datetime | None,
    until: datetime | None,
) -> list[tuple[Any, ...]]:
    """The totals per model, as ``(model, messages, *counts)`` rows of exact ints.

    ``owner`` limits them to that owner's sessions (an owned view passes its own).
    """
    dialect = conn.dialect.name
    statement, params = usage_statement(dialect, session_id, owner, since, until)
    rows = conn.execute(statement, params).all()
    if dialect != "sqlite":
        return [(row[0], *(int(value) for value in row[1:])) for row in rows]
    joined = []
    for model, count, *halves in rows:
        counts = [(high << 32) + low for high, low in zip(halves[::2], halves[1::2], strict=True)]
        joined.append((model, count, *counts))
    return joined
