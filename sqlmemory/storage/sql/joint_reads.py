"""``read_together``'s SQL: one session's messages and several records, from one snapshot.

A plain function over a ``Connection``, run by the front door in one read transaction
(``REPEATABLE READ`` on PostgreSQL, MySQL's default, a SQLite read transaction), so the
records and the messages are of one state of the database: never an event that its
session's record does not count yet. The records come in one statement; the messages
from the tail of the history (:mod:`~sqlmemory.storage.sql.tail_reads`) for a window
policy, and are not read at all for a session that has no record.
"""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import Connection, Select, bindparam, select

from sqlmemory.policy import Policy, TailPolicy
from sqlmemory.storage.joint import JointRead
from sqlmemory.storage.records import SessionInfo
from sqlmemory.storage.sql import reads, tail_reads
from sqlmemory.storage.sql.record_queries import RECORD_COLUMNS, record_of
from sqlmemory.storage.sql.schema import sessions_table

__all__ = ["read_together"]


@functools.cache
def _records_statement(owned: bool) -> Select[Any]:
    session = sessions_table.c
    query = select(*RECORD_COLUMNS).where(session.session_id.in_(bindparam("ids", expanding=True)))
    return query.where(session.owner == bindparam("owner")) if owned else query


def read_together(
    conn: Connection,
    sid: str,
    ids: list[str],
    policy: Policy | None,
    tail: TailPolicy | None,
    owner: str | None = None,
) -> JointRead:
    """The records of ``ids`` (``sid``'s among them) and ``sid``'s messages: ``tail``'s
    window read from the newest rows when given, else the whole history (``policy``
    applied to it); with ``owner``, other owners' sessions read as absent."""
    params: dict[str, Any] = {"ids": ids}
    if owner is not None:
        params["owner"] = owner
    rows = conn.execute(_records_statement(owner is not None), params)
    found = {row.session_id: record_of(row._mapping) for row in rows}
    records: dict[str, SessionInfo | None] = {i: found.get(i) for i in ids}
    if records.get(sid) is None:
        return JointRead([], records)
    if tail is not None:
        messages = tail_reads.read_tail(conn, sid, tail, owner=owner)
        assert messages is not None  # noqa: S101 - only one_statement reads give up
    else:
        messages = reads.read_all(conn, sid, owner)
        if policy is not None:
            messages = policy.apply(messages)
    return JointRead(messages, records)
