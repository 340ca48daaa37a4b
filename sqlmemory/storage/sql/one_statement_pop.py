"""PostgreSQL: a ``pop`` in one statement, when no other writer comes between.

The usual ``pop`` (:func:`~sqlmemory.storage.sql.deletes.pop`) locks the session's row,
reads the newest message, deletes it and updates the row: six round trips with ``BEGIN``
and ``COMMIT``. Here one statement, in autocommit, reads the two newest message rows
(with the newest one's block rows) and the session row's version (its ``xmin``, the
transaction that wrote it), and deletes the newest message only through an update of
the session row on the condition that its version is still the one read.

A statement reads one snapshot, taken before it waits for any lock, so the rows it read
may be older than the lock it gets: another writer may have appended or deleted
meanwhile. Every write of a session's messages first locks the session's row and
updates it (the count, the clock), which gives the row a new version. Under ``READ
COMMITTED`` an update that finds its row changed by a writer committed since the
snapshot (or that waited for one) checks its condition again on the row that writer
left: the version differs, so nothing is written, and the caller pops the usual way. When
the version is unchanged no write came between, and the newest message read is the
newest message stored.

It also leaves to the usual pop a session holding one message (its record goes too), a
newest message holding image or document bytes (their blobs may need sweeping), and a
session that is not the caller's owner's (the usual pop reports it empty).
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Executable,
    Select,
    and_,
    bindparam,
    delete,
    exists,
    func,
    literal_column,
    null,
    select,
    update,
)

from sqlmemory.storage.sql import reads, tail_reads
from sqlmemory.storage.sql.codec import MESSAGE_FIELDS
from sqlmemory.storage.sql.schema import blocks_table, messages_table, sessions_table
from sqlmemory.storage.sql.session_lock import changed_record
from sqlmemory.types import Message

__all__ = ["pop_in_one_statement"]


@functools.cache
def _statement(owned: bool) -> Executable:
    session = sessions_table.c
    version: Select[Any] = select(literal_column("xmin").label("version")).where(
        session.session_id == bindparam("sid")
    )
    if owned:
        # Not ``:owner``: a parameter named as a column of the updated table would be
        # set on it by SQLAlchemy.
        version = version.where(session.owner == bindparam("view_owner"))
    snap = version.cte("snap")
    message = messages_table.c
    two = (
        select(message.seq)
        .where(message.session_id == bindparam("sid"))
        .order_by(message.seq.desc())
        .limit(2)
        .cte("two")
    )
    newest = select(func.max(two.c.seq)).scalar_subquery()
    holds_bytes = exists().where(
        blocks_table.c.session_id == bindparam("sid"),
        blocks_table.c.seq == newest,
        blocks_table.c.blob_sha256.is_not(None),
    )
    lock = (
        update(sessions_table)
        .where(
            session.session_id == bindparam("sid"),
            literal_column("xmin") == select(snap.c.version).scalar_subquery(),
            select(func.count()).select_from(two).scalar_subquery() == 2,
            ~holds_bytes,
        )
        .values(changed_record(session.message_count - 1, bindparam("now"), (null(), null())))
        .returning(session.session_id)
        .cte("lock")
    )
    gone = (
        delete(messages_table)
        .where(
            and_(message.session_id == bindparam("sid"), message.seq == newest),
            exists(select(lock.c.session_id)),
        )
        .returning(message.seq)
        .cte("gone")
    )
    first_page, _ = reads.page_statements()
    if owned:
        first_page = first_page.where(exists(select(snap.c.version)))
    page = tail_reads.with_blocks(first_page, "postgresql")
    popped = select(func.count()).select_from(gone).scalar_subquery().label("popped")
    return page.add_columns(popped).add_cte(snap, two, lock, gone)


def pop_in_one_statement(
    conn: Connection, sid: str, now: datetime, owner: str | None = None
) -> Message | None:
    """Pop the newest message of ``sid`` in one statement (``conn`` in autocommit) if no
    other writer comes between; ``None``, with nothing written, otherwise (and for what
    the usual pop does: see the module)."""
    params: dict[str, Any] = {"sid": sid, "page": 1, "now": now}
    if owner is not None:
        params["view_owner"] = owner
    found = conn.execute(_statement(owner is not None), params).all()
    if not found or not found[0][-1]:
        return None
    blocks: reads.BlockRows = {}
    rows = tail_reads.split_rows([r[:-1] for r in found], len(MESSAGE_FIELDS), blocks)
    return reads.build_messages(conn, sid, rows, blocks)[0]
