"""The writes that delete: ``evict``, ``pop`` and ``clear``, as plain functions over a
``Connection``.

Each takes the session's lock (:mod:`~sqlmemory.storage.sql.session_lock`) before it
reads or deletes anything, and finds nothing to do when the session has no record. A
write that leaves the session without messages deletes it, record and all. ``pop`` can
put messages in place of the one it deletes, through
:func:`~sqlmemory.storage.sql.writes.append`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, bindparam, delete, func, select

from sqlmemory.storage.sql import reads
from sqlmemory.storage.sql.codec import SEQ, encode_message
from sqlmemory.storage.sql.schema import MESSAGE_COLUMNS, messages_table, sessions_table
from sqlmemory.storage.sql.session_lock import (
    delete_session,
    lock_existing,
    record_change,
    sweep_blobs,
)
from sqlmemory.storage.sql.writes import append
from sqlmemory.types import DocumentBlock, ImageBlock, Message, Role

__all__ = ["clear", "evict", "pop"]


def evict(conn: Connection, sid: str, keep: int, now: datetime, owner: str | None = None) -> int:
    """Delete the oldest messages so at most ``keep`` remain, never leaving a tool
    message at the head; returns how many were deleted (none from a session that is
    not ``owner``'s, when given)."""
    if not lock_existing(conn, sid, owner):
        return 0
    # No session holds 2**62 messages; a larger keep keeps them all, and would overflow
    # the 64-bit OFFSET of every backend.
    keep = min(keep, 2**62)
    boundary = conn.scalar(
        select(messages_table.c.seq)
        .where(messages_table.c.session_id == sid)
        .order_by(messages_table.c.seq.desc())
        .offset(keep)
        .limit(1)
    )
    if boundary is None:
        return 0
    start = conn.scalar(
        select(func.min(messages_table.c.seq)).where(
            messages_table.c.session_id == sid,
            messages_table.c.seq > boundary,
            messages_table.c.role != Role.TOOL.value,
        )
    )
    if start is None:
        return delete_session(conn, sid)
    deleted = conn.execute(
        delete(messages_table).where(
            messages_table.c.session_id == sid, messages_table.c.seq < start
        )
    ).rowcount
    sweep_blobs(conn, sid)
    count = sessions_table.c.message_count - deleted
    record_change(conn, sid, count, now, (None, None))
    return int(deleted)


@functools.cache
def _locked_newest_statement() -> Select[Any]:
    """The session's row with its two newest message rows (none: one row of NULLs), as
    one locking read."""
    session, message = sessions_table.c, messages_table.c
    return (
        select(session.owner, *MESSAGE_COLUMNS)
        .select_from(
            sessions_table.outerjoin(messages_table, message.session_id == session.session_id)
        )
        .where(session.session_id == bindparam("sid"))
        .order_by(message.seq.desc())
        .limit(2)
        .with_for_update()
    )


def _lock_with_newest(
    conn: Connection, sid: str, owner: str | None
) -> tuple[bool, tuple[int, Message, bool] | None]:
    """MySQL/MariaDB: lock the session's row and read its newest message in one
    statement, a round trip less than :func:`lock_existing` then
    :func:`~sqlmemory.storage.sql.reads.newest`. A locking read waits for the lock and
    then reads the newest committed rows (not a snapshot older than the lock), as InnoDB
    runs every ``FOR UPDATE``. Returns whether the session exists (for ``owner``, when
    given: another owner's is locked and reported absent), and what ``newest`` returns."""
    rows = conn.execute(_locked_newest_statement(), {"sid": sid}).all()
    if not rows or (owner is not None and rows[0][0] != owner):
        return False, None
    stored = [row[1:] for row in rows if row[1 + SEQ] is not None]
    if not stored:
        return True, None
    message = reads.build_messages(conn, sid, stored[:1])[0]
    return True, (int(stored[0][SEQ]), message, len(stored) > 1)


def _holds_bytes(message: Message) -> bool:
    """Whether ``message`` references blob bytes (an image or document given as data)."""
    return any(
        isinstance(b, (ImageBlock, DocumentBlock)) and b.data is not None for b in message.content
    )


def pop(
    conn: Connection,
    sid: str,
    now: datetime,
    keep: Callable[[Message], Sequence[Message]] | None = None,
    owner: str | None = None,
) -> Message | None:
    """Delete the newest message under the session's lock and return it; ``None`` if empty.

    Exactly one message goes, whatever its group. Popping the last message deletes the
    session, as ``evict`` does. With ``keep``, the messages ``keep(popped)`` returns are
    appended in its place in the same transaction (the OpenAI Agents session's
    ``pop_item`` keeps the other outputs of a response so): no other writer's messages
    can come between, and a failure leaves the session as it was. A session that is not
    ``owner``'s (when given) is left as it is: ``None``.
    """
    if conn.dialect.name in ("mysql", "mariadb"):
        exists, found = _lock_with_newest(conn, sid, owner)
        if not exists:
            return None
    elif lock_existing(conn, sid, owner):
        found = reads.newest(conn, sid)
    else:
        return None
    if found is None:
        return None
    seq, message, older = found
    kept = [] if keep is None else [encode_message(m) for m in keep(message)]
    if not older and not kept:
        delete_session(conn, sid)
        return message
    conn.execute(
        delete(messages_table).where(
            messages_table.c.session_id == sid, messages_table.c.seq == seq
        )
    )
    if kept:
        append(conn, sid, kept, now, owner)  # the bytes the kept blocks share are still stored
    if _holds_bytes(message):
        sweep_blobs(conn, sid)
    record_change(conn, sid, sessions_table.c.message_count - 1, now, (None, None))
    return message


def clear(conn: Connection, sid: str, owner: str | None = None) -> int:
    """Delete the session, its messages, blocks and blobs; returns messages deleted (none
    of a session that is not ``owner``'s, when given).

    The session's lock comes first: deleting rows before it would race a concurrent
    append (a deadlock, or blobs deleted under the blocks it is inserting).
    """
    if not lock_existing(conn, sid, owner):
        return 0
    return delete_session(conn, sid)
