"""``erase_owner``: one owner's sessions deleted in bounded transactions.

The front door calls :func:`erase_batch` again and again, each call its own transaction,
until it reports that the owner has no session left. A batch deletes up to
:data:`ERASE_SESSIONS` whole sessions holding at most :data:`ERASE_MESSAGES` messages
between them; a session larger than that loses its oldest :data:`ERASE_MESSAGES`
messages per batch until it fits. So no transaction holds more than a bounded number of
rows, however much the owner had, and a run that dies half-way (a killed process, a lost
connection) left whole batches behind: running it again finishes the work.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, and_, delete, select

from sqlmemory.storage.sql.record_queries import delete_locked
from sqlmemory.storage.sql.schema import messages_table, sessions_table
from sqlmemory.storage.sql.session_lock import lock_existing, record_change, sweep_blobs

__all__ = ["ERASE_MESSAGES", "ERASE_SESSIONS", "erase_batch"]

ERASE_SESSIONS = 100
"""The most sessions one batch of ``erase_owner`` deletes."""
ERASE_MESSAGES = 5_000
"""The most messages one batch of ``erase_owner`` deletes (a larger session goes in parts)."""

_session = sessions_table.c


def erase_batch(conn: Connection, owner: str, now: datetime) -> tuple[int, bool]:
    """Delete one batch of ``owner``'s sessions; returns how many sessions went, and
    whether the owner had none left to delete.

    The candidates are the owner's least recently updated sessions (a range of the
    ``(owner, updated_at, session_id)`` index); they are locked in sorted id order and
    checked again under the lock, so a session handed to another owner meanwhile stays.
    """
    candidates = conn.execute(
        select(_session.session_id, _session.message_count)
        .where(_session.owner == owner)
        .order_by(_session.updated_at, _session.session_id)
        .limit(ERASE_SESSIONS)
    ).all()
    if not candidates:
        return 0, True
    picked: list[str] = []
    held = 0
    for sid, count in candidates:
        if picked and held + count > ERASE_MESSAGES:
            break
        picked.append(sid)
        held += count
    if held > ERASE_MESSAGES:
        return _erase_oldest(conn, picked[0], owner, now), False
    return delete_locked(conn, picked, _session.owner == owner), False


def _erase_oldest(conn: Connection, sid: str, owner: str, now: datetime) -> int:
    """Delete the oldest :data:`ERASE_MESSAGES` messages of ``owner``'s large session ``sid``
    under its lock, with the blobs only they referenced; the number of sessions deleted:
    1 if what is left fits a batch after all, else 0.

    The blobs go in the same transaction, as after an ``evict``: a run killed after this
    batch leaves a shorter session that is whole, not bytes that no block references.
    """
    if not lock_existing(conn, sid, owner):
        return 0
    seq = messages_table.c.seq
    boundary = conn.scalar(
        select(seq)
        .where(messages_table.c.session_id == sid)
        .order_by(seq)
        .offset(ERASE_MESSAGES)
        .limit(1)
    )
    if boundary is None:  # it shrank meanwhile
        return delete_locked(conn, [sid], _session.owner == owner)
    deleted = conn.execute(
        delete(messages_table).where(and_(messages_table.c.session_id == sid, seq < boundary))
    ).rowcount
    record_change(conn, sid, _session.message_count - deleted, now, (None, None))
    sweep_blobs(conn, sid)
    return 0
