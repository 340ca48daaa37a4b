"""The writes that insert: appends and ``save``, as plain functions over a ``Connection``.

Both front doors run these: the sync storage inside ``engine.begin()``, the async one
through ``AsyncConnection.run_sync``. None of them commits: each public write is one
transaction around one call. Every write takes the session's lock first
(:mod:`~sqlmemory.storage.sql.session_lock`, which also keeps the session's record);
``evict``, ``pop`` and ``clear`` are in :mod:`~sqlmemory.storage.sql.deletes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from sqlmemory.errors import DuplicateMessageError
from sqlmemory.storage.sql import base64_text
from sqlmemory.storage.sql.codec import EncodedMessage, encode_message
from sqlmemory.storage.sql.driver_sql import run_statement
from sqlmemory.storage.sql.history_chain import history_digest
from sqlmemory.storage.sql.plain_inserts import insert_plain
from sqlmemory.storage.sql.save_plan import StoredMessage, plan_save
from sqlmemory.storage.sql.schema import blobs_table, blocks_table, messages_table
from sqlmemory.storage.sql.session_lock import (
    delete_session,
    lock_existing,
    lock_session,
    record_change,
    remember_history,
    set_session,
    sweep_blobs,
)
from sqlmemory.types import Message

__all__ = [
    "append",
    "append_fresh",
    "append_idempotent",
    "insert_messages",
    "save",
    "stored_messages",
]

# Statements are immutable values; building them once saves their construction and
# cache-key work on every call.
INSERT_MESSAGE = insert(messages_table)
INSERT_BLOCK = insert(blocks_table)
INSERT_BLOB = insert(blobs_table)


def _insert_blobs(conn: Connection, sid: str, encoded: Sequence[EncodedMessage]) -> None:
    """Insert the bytes ``encoded`` references that the session does not hold yet."""
    blobs = {b.sha256: b for e in encoded for b in e.blobs}
    if not blobs:
        return
    stored = set(
        conn.scalars(
            select(blobs_table.c.sha256).where(
                blobs_table.c.session_id == sid, blobs_table.c.sha256.in_(list(blobs))
            )
        )
    )
    missing = [
        {
            "session_id": sid,
            "sha256": b.sha256,
            "data": b.data,
            "size": len(b.data),
            "width": b.width,
            "height": b.height,
        }
        for sha, b in blobs.items()
        if sha not in stored
    ]
    if missing:
        conn.execute(INSERT_BLOB, missing)


def insert_messages(
    conn: Connection,
    sid: str,
    encoded: Sequence[EncodedMessage],
    first_seq: int,
    stamp: datetime,
) -> None:
    """Insert the rows of ``encoded`` at seqs from ``first_seq`` on, blobs first (once each).

    A message without a ``recorded_at`` of its own gets ``stamp``.
    """
    # SQLite inserts the texts alone from their values (plain_inserts.py); the rest here.
    rest = insert_plain(conn, sid, encoded, first_seq, stamp)
    if not rest:
        return
    _insert_blobs(conn, sid, [e for _, e in rest])
    # PostgreSQL escapes the text of the rows it sends (base64_text), so it sends copies;
    # elsewhere a message row gets its place in the row the encoder made for this write.
    copied = conn.dialect.name == "postgresql"
    message_rows: list[dict[str, Any]] = []
    block_rows: list[dict[str, Any]] = []
    for seq, e in rest:
        row = dict(e.row) if copied else e.row
        row["session_id"], row["seq"] = sid, seq
        row["recorded_at"] = e.message.recorded_at or stamp
        message_rows.append(row)
        if e.blocks:
            block_rows.extend({**block, "session_id": sid, "seq": seq} for block in e.blocks)
    if copied:
        base64_text.escape(message_rows, base64_text.MESSAGE_TEXT)
        base64_text.escape(block_rows, base64_text.BLOCK_TEXT)
    run_statement(conn, INSERT_MESSAGE, message_rows, bare_insert=True)
    if block_rows:
        run_statement(conn, INSERT_BLOCK, block_rows, bare_insert=True)


def append(
    conn: Connection,
    sid: str,
    encoded: Sequence[EncodedMessage],
    now: datetime,
    owner: str | None = None,
) -> None:
    """Take the lock, allocating seqs for ``encoded``, and insert their rows.

    Only the store's own stamp (``now``) moves the session clock: a caller-supplied
    ``recorded_at`` (an import, perhaps far in the future) is stored as given and never
    pins the stamps of later messages. With ``owner``, the session must be (or becomes)
    ``owner``'s (:func:`~sqlmemory.storage.sql.session_lock.lock_session`).
    """
    lock = lock_session(conn, sid, len(encoded), now, now, owner=owner)
    insert_messages(conn, sid, encoded, lock.first_seq, lock.stamp)


def append_fresh(
    conn: Connection,
    sid: str,
    encoded: Sequence[EncodedMessage],
    now: datetime,
    owner: str | None = None,
) -> None:
    """Append messages assumed new; a stored id makes the unique index raise.

    This is the fast path: no read before the insert. The caller falls back to
    :func:`append_idempotent` on an integrity error.
    """
    append(conn, sid, encoded, now, owner)


def append_idempotent(
    conn: Connection,
    sid: str,
    encoded: Sequence[EncodedMessage],
    now: datetime,
    owner: str | None = None,
) -> None:
    """Append messages, skipping those stored already with the same content.

    A session not ``owner``'s is never read: the append then fails on the lock, whether
    or not it holds the messages.

    Raises:
        DuplicateMessageError: an id is stored with different content (nothing written).
        SessionOwnerError: the session is not ``owner``'s (nothing written).
    """
    if lock_existing(conn, sid, owner):
        ids = [e.message.id for e in encoded]
        stored = {
            message_id: digest
            for message_id, digest in conn.execute(
                select(messages_table.c.message_id, messages_table.c.digest).where(
                    messages_table.c.session_id == sid, messages_table.c.message_id.in_(ids)
                )
            )
        }
        fresh = []
        for e in encoded:
            digest = stored.get(e.message.id)
            if digest is None:
                fresh.append(e)
            elif digest != e.digest:
                raise DuplicateMessageError(
                    f"message id {e.message.id!r} is stored with different content"
                )
        encoded = fresh
    if encoded:
        append(conn, sid, encoded, now, owner)


def stored_messages(conn: Connection, sid: str) -> list[StoredMessage]:
    """The seq, id, digest and ``recorded_at`` of every stored message, oldest first."""
    columns = messages_table.c
    rows = conn.execute(
        select(columns.seq, columns.message_id, columns.digest, columns.recorded_at)
        .where(columns.session_id == sid)
        .order_by(columns.seq)
    )
    return [StoredMessage(*row) for row in rows]


def save(
    conn: Connection,
    sid: str,
    messages: Sequence[Message],
    now: datetime,
    owner: str | None = None,
) -> None:
    """Make the session's history ``messages``, writing only from the first difference.

    Takes the session's lock once, decides with :func:`plan_save` (reading the stored ids
    and digests only when the hash chain cannot vouch for them), then deletes and inserts
    what the plan says. A history that grew by k messages inserts k messages, and only
    the messages written are encoded. With ``owner``, the session must be (or becomes)
    ``owner``'s.
    """
    lock = lock_session(conn, sid, 0, now, now, keep_history=True, owner=owner)
    plan = plan_save(messages, lock, None)
    if plan is None:
        plan = plan_save(messages, lock, stored_messages(conn, sid))
        assert plan is not None  # noqa: S101 - the stored messages always decide
    if plan.clear:
        delete_session(conn, sid)
        return
    if plan.delete_from_seq is not None:
        conn.execute(
            delete(messages_table).where(
                messages_table.c.session_id == sid, messages_table.c.seq >= plan.delete_from_seq
            )
        )
    written = messages[plan.keep :]
    after = (history_digest(messages, len(messages)), len(messages))
    if written:
        first_seq = lock.first_seq
        stamp = max(lock.stamp, now)
        insert_messages(conn, sid, [encode_message(m) for m in written], first_seq, stamp)
        set_session(conn, sid, first_seq + len(written), stamp, after, now)
    elif plan.delete_from_seq is not None:
        record_change(conn, sid, len(messages), now, after)
    else:
        remember_history(conn, sid, *after)
    if plan.delete_from_seq is not None:
        sweep_blobs(conn, sid)
