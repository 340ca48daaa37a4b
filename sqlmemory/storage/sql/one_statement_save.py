"""PostgreSQL: a ``save`` that only adds messages, in one statement.

The usual ``save`` (:func:`~sqlmemory.storage.sql.writes.save`) takes the lock, learns
from it how much of the history the last save left (its hash chain), then writes: five
round trips with ``BEGIN`` and ``COMMIT``. When the caller's storage saved this session
last with ``known`` messages, and the new history extends them, the statement of
:mod:`~sqlmemory.storage.sql.one_statement_append` does it in one, in autocommit, with an
update of the session's row as its lock: it allocates the seqs, stores the new chain and
count, and returns a row only if the stored chain is still the one over the first
``known`` messages given. Otherwise (another writer came between) it returns none, so
writes nothing, and the caller saves the usual way. Under ``READ COMMITTED`` an update
that waited for another writer's lock checks its condition again on the row that writer
left, so a concurrent write is never overwritten.

Examples:
    >>> from sqlmemory.types import Message
    >>> history = [Message.user("hi"), Message.assistant("hello")]
    >>> grows(history, 1)
    True
    >>> grows(history, 2)  # nothing new: the usual save decides
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, update

from sqlmemory.storage.sql.codec import encode_message, history_digest, time_is_stored
from sqlmemory.storage.sql.one_statement_append import append_statement, fits
from sqlmemory.storage.sql.schema import sessions_table
from sqlmemory.storage.sql.session_lock import later
from sqlmemory.types import Message

__all__ = ["grows", "save_grown"]


def _save_lock() -> Any:
    """The update that locks the session's row if the last save left the chain ``:before``
    over ``:known`` messages; it records the chain ``:after`` over ``:total``."""
    session = sessions_table.c
    return (
        update(sessions_table)
        .where(
            session.session_id == bindparam("sid"),
            session.history_digest == bindparam("before"),
            session.history_len == bindparam("known"),
        )
        .values(
            next_seq=session.next_seq + bindparam("k"),
            last_recorded_at=later(session.last_recorded_at, bindparam("now")),
            history_digest=bindparam("after"),
            history_len=bindparam("total"),
            message_count=bindparam("total"),
            updated_at=later(session.updated_at, bindparam("now")),
        )
        .returning(session.next_seq, session.last_recorded_at)
        .cte("lock")
    )


def grows(messages: Sequence[Message], known: int) -> bool:
    """Whether ``messages`` can be saved as ``known`` kept plus the rest added: more than
    ``known`` of them, and no time given that may differ from a stored one."""
    return len(messages) > known and all(time_is_stored(m) for m in messages)


def save_grown(
    conn: Connection, sid: str, messages: Sequence[Message], known: int, now: datetime
) -> bool:
    """Save ``messages`` as the first ``known`` stored ones plus the rest, in one statement
    (``conn`` in autocommit); ``False``, with nothing written, when the stored history is
    not the one the last save left with ``known`` messages (or the rest is too large for
    one statement). A stored message id raises ``IntegrityError``, nothing written."""
    encoded = [encode_message(m) for m in messages[known:]]
    if not fits(encoded):
        return False
    statement, params = append_statement(sid, encoded, _save_lock)
    params.update(
        before=history_digest(messages, known),
        known=known,
        after=history_digest(messages, len(messages)),
        total=len(messages),
        now=now,
    )
    return bool(conn.execute(statement, params).all())
