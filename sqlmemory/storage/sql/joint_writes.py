"""``update_together``'s SQL: several sessions locked, checked and written in one transaction.

A plain function over a ``Connection``, like :mod:`~sqlmemory.storage.sql.writes`; the
front door runs it in one transaction (``docs/contract/storage.md``, joint writes; the
rules are :mod:`sqlmemory.storage.joint`). Each session's lock is the one every write
takes (:mod:`~sqlmemory.storage.sql.session_lock`), taken in sorted id order, and its
record is read only once the lock is held, so what a ``metadata`` function sees no other
writer changes before the commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, bindparam, select, update

from sqlmemory.storage.joint import CheckedChange, new_metadata
from sqlmemory.storage.records import SessionInfo, metadata_json
from sqlmemory.storage.sql import writes
from sqlmemory.storage.sql.record_queries import RECORD_COLUMNS, record_of
from sqlmemory.storage.sql.schema import sessions_table
from sqlmemory.storage.sql.session_lock import later, lock_session

__all__ = ["locked_record", "update_together"]

_LOCK_RECORD = (
    select(*RECORD_COLUMNS).where(sessions_table.c.session_id == bindparam("sid")).with_for_update()
)


def locked_record(conn: Connection, change: CheckedChange, now: datetime) -> SessionInfo | None:
    """Lock the change's session (creating its record when the change may) and read its
    record under that lock; ``None`` when it does not exist for the change's owner."""
    sid = change.session_id
    if change.create:
        lock_session(conn, sid, 0, now, now, keep_history=True, owner=change.owner)
    # A locking read, also once the upsert holds the lock: on MySQL's REPEATABLE READ a
    # plain SELECT reads the snapshot the transaction's first read fixed (an earlier
    # change's record, before this session's lock was granted), and a metadata function
    # would then merge into state another writer has replaced since: a lost update.
    # SQLite's write lock is held, and FOR UPDATE is not sent there.
    row = conn.execute(_LOCK_RECORD, {"sid": sid}).first()
    if row is None or (change.owner is not None and row.owner != change.owner):
        return None
    return record_of(row._mapping)


def update_together(
    conn: Connection, changes: Sequence[CheckedChange], now: datetime, idempotent: bool = False
) -> None:
    """Lock each session of ``changes`` (sorted by id), call its ``metadata`` function on
    the locked record, append its messages and store its new metadata.

    Messages are inserted as new (a stored id makes the unique index raise, and the caller
    runs the whole call again with ``idempotent``, which skips what is stored already), as
    ``append`` does.

    Raises:
        SessionOwnerError: a session is not the change's owner's (nothing is written:
            the caller's transaction rolls back).
        DuplicateMessageError: a message id is stored with different content. Whatever
            a ``metadata`` function raised is raised as it is.
    """
    for change in changes:
        info = locked_record(conn, change, now)
        metadata = new_metadata(change, info)
        if info is None:
            continue
        if change.encoded:
            append = writes.append_idempotent if idempotent else writes.append
            append(conn, change.session_id, change.encoded, now, change.owner)
        if metadata is not None:
            conn.execute(
                update(sessions_table)
                .where(sessions_table.c.session_id == change.session_id)
                .values(
                    metadata_json=metadata_json(metadata),
                    updated_at=later(sessions_table.c.updated_at, now),
                )
            )
