"""``_splice``'s SQL: a span of a session's messages taken by position under its lock.

A plain function over a ``Connection``, like :mod:`~sqlmemory.storage.sql.deletes`; the
front door runs it in one transaction (the rules: :class:`~sqlmemory.storage.joint.Splice`).
The session's lock comes first, then its record; the plan decides from that record, so
the positions it names cannot move before the commit: a concurrent append waits on the
lock, and a delete by position never removes a message it did not mean.
"""

from __future__ import annotations

import functools
from datetime import datetime

from sqlalchemy import Connection, Executable, Integer, bindparam, delete, select, update

from sqlmemory._gc import gc_paused
from sqlmemory.storage.joint import CheckedChange, SplicePlan, splice_of
from sqlmemory.storage.records import check_metadata, metadata_json
from sqlmemory.storage.sql import writes
from sqlmemory.storage.sql.codec import SEQ, EncodedMessage
from sqlmemory.storage.sql.joint_writes import locked_record
from sqlmemory.storage.sql.reads import build_messages, fetch_rows
from sqlmemory.storage.sql.schema import MESSAGE_COLUMNS, messages_table, sessions_table
from sqlmemory.storage.sql.session_lock import (
    delete_session,
    later,
    record_change,
    sweep_blobs,
)
from sqlmemory.types import DocumentBlock, ImageBlock, Message

__all__ = ["splice"]


@functools.cache
def _span_statement() -> Executable:
    return (
        select(*MESSAGE_COLUMNS)
        .where(messages_table.c.session_id == bindparam("sid"))
        .order_by(messages_table.c.seq)
        .offset(bindparam("start", type_=Integer))
        .limit(bindparam("n", type_=Integer))
    )


def _holds_bytes(messages: list[Message]) -> bool:
    return any(
        isinstance(b, (ImageBlock, DocumentBlock)) and b.data is not None
        for m in messages
        for b in m.content
    )


def splice(
    conn: Connection,
    sid: str,
    plan: SplicePlan,
    encoded: list[EncodedMessage],
    now: datetime,
    owner: str | None = None,
    idempotent: bool = False,
) -> list[Message]:
    """Lock the session (creating it when there are messages to append), let ``plan``
    decide from its record, take its span (deleting it when the plan says so), append
    ``encoded`` and store the plan's metadata; returns the messages taken.

    Raises:
        SessionOwnerError: messages to append to a session of another owner.
        DuplicateMessageError: an appended id is stored with different content.
        TypeError, ValueError: the plan's result, or its metadata, is refused.
    """
    change = CheckedChange(sid, [], None, bool(encoded), owner)
    info = locked_record(conn, change, now)
    start, stop, span = splice_of(plan, info)
    metadata = None if span.metadata is None else check_metadata(span.metadata)
    if info is None:
        return []
    taken: list[Message] = []
    if stop > start:
        with gc_paused():  # as a whole history's read: many small objects, no cycles
            params = {"sid": sid, "start": start, "n": stop - start}
            rows = fetch_rows(conn, _span_statement(), params)
            taken = build_messages(conn, sid, rows)
        if span.delete and rows:
            first, last = rows[0][SEQ], rows[-1][SEQ]
            conn.execute(
                delete(messages_table).where(
                    messages_table.c.session_id == sid, messages_table.c.seq.between(first, last)
                )
            )
            if len(rows) == info.message_count and not encoded:
                delete_session(conn, sid)
                return taken
            if _holds_bytes(taken):
                sweep_blobs(conn, sid)
            count = sessions_table.c.message_count - len(rows)
            record_change(conn, sid, count, now, (None, None))
    if encoded:
        append = writes.append_idempotent if idempotent else writes.append
        append(conn, sid, encoded, now, owner)
    if metadata is not None:
        conn.execute(
            update(sessions_table)
            .where(sessions_table.c.session_id == sid)
            .values(
                metadata_json=metadata_json(metadata),
                updated_at=later(sessions_table.c.updated_at, now),
            )
        )
    return taken
