"""Every statement that writes, as plain functions over a ``Connection``.

Both front doors run these: the sync storage inside ``engine.begin()``, the async one
through ``AsyncConnection.run_sync``. None of them commits: each public write is one
transaction around one call. Every write takes the session's lock (an upsert of its
``sqlmemory_sessions`` row) before it reads or deletes anything.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Executable,
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import mysql, postgresql, sqlite

from sqlmemory.errors import DuplicateMessageError
from sqlmemory.storage.sql import base64_text, reads
from sqlmemory.storage.sql.codec import EncodedMessage, encode_message, history_digest
from sqlmemory.storage.sql.save_plan import SessionLock, StoredMessage, plan_save
from sqlmemory.storage.sql.schema import blobs_table, blocks_table, messages_table, sessions_table
from sqlmemory.types import DocumentBlock, ImageBlock, Message, Role

__all__ = ["append_fresh", "append_idempotent", "clear", "evict", "pop", "save"]

# Statements are immutable values; building them once saves their construction and
# cache-key work on every call.
INSERT_MESSAGE = insert(messages_table)
INSERT_BLOCK = insert(blocks_table)
INSERT_BLOB = insert(blobs_table)


def _later(stored: Any, new: Any) -> Any:
    """SQL for the later of two times: a session's clocks never go backwards."""
    return case((stored > new, stored), else_=new)


@functools.cache
def _lock_statements(dialect: str, keep_history: bool) -> tuple[Executable, Executable | None]:
    """The session upsert of ``dialect`` (and, where it cannot RETURN, the read after it).

    ``keep_history`` says whether the session's history chain survives (``save``, which
    sets it itself once it knows the history it leaves, and ``update_session``) or is
    cleared (an append, which also counts its messages on the record and moves its
    ``updated_at``). A new record starts with ``k`` messages, updated now.
    Built once: constructing SQLAlchemy statements costs more than sending them.
    """
    values: dict[str, Any] = {
        "session_id": bindparam("sid"),
        "next_seq": bindparam("k") + 1,
        "last_recorded_at": bindparam("clock"),
        "created_at": bindparam("now"),
        "updated_at": bindparam("now"),
        "message_count": bindparam("k"),
    }
    session = sessions_table.c
    cleared: dict[str, Any] = {}
    if not keep_history:
        # An append: the record counts the new messages and its clock moves.
        cleared = {
            "history_digest": None,
            "history_len": None,
            "message_count": session.message_count + bindparam("k"),
            "updated_at": _later(session.updated_at, bindparam("now")),
        }
    returned = (
        session.next_seq,
        session.last_recorded_at,
        session.history_digest,
        session.history_len,
    )
    if dialect in ("mysql", "mariadb"):
        my = mysql.insert(sessions_table).values(values)
        upsert = my.on_duplicate_key_update(
            next_seq=session.next_seq + bindparam("k"),
            last_recorded_at=case(
                (session.last_recorded_at > my.inserted.last_recorded_at, session.last_recorded_at),
                else_=my.inserted.last_recorded_at,
            ),
            **cleared,
        )
        read = select(*returned).where(session.session_id == bindparam("sid"))
        return upsert, read
    insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
    ins = insert_of(sessions_table).values(values)
    upsert_returning = ins.on_conflict_do_update(
        index_elements=[session.session_id],
        set_={
            "next_seq": session.next_seq + bindparam("k"),
            "last_recorded_at": case(
                (
                    session.last_recorded_at > ins.excluded.last_recorded_at,
                    session.last_recorded_at,
                ),
                else_=ins.excluded.last_recorded_at,
            ),
            **cleared,
        },
    ).returning(*returned)
    return upsert_returning, None


def _lock_session(
    conn: Connection,
    sid: str,
    k: int,
    clock: datetime,
    now: datetime,
    *,
    keep_history: bool = False,
) -> SessionLock:
    """Take the session's lock, creating its row if needed, and allocate ``k`` seqs.

    The upsert takes the row lock in the same statement on every backend, so concurrent
    writers of one session queue here while writers of other sessions never meet. The
    session's history chain is cleared unless ``keep_history``. ``clock`` is the store's
    stamp for the messages, ``now`` the wall clock (the record's ``updated_at``).
    """
    upsert, read = _lock_statements(conn.dialect.name, keep_history)
    params: dict[str, Any] = {"sid": sid, "k": k, "clock": clock, "now": now}
    result = conn.execute(upsert, params)
    row = (conn.execute(read, params) if read is not None else result).one()
    return SessionLock(int(row[0]) - k, row[1], row[2], row[3])


def _remember_history(conn: Connection, sid: str, digest: str | None, length: int | None) -> None:
    """Set (or with ``None``, clear) the session's history digest."""
    conn.execute(
        update(sessions_table)
        .where(sessions_table.c.session_id == sid)
        .values(history_digest=digest, history_len=length)
    )


def _set_session(
    conn: Connection,
    sid: str,
    next_seq: int,
    clock: datetime,
    history: tuple[str, int],
    now: datetime,
) -> None:
    """Record on the locked session row the seqs used, the clock and the history chain
    that a save left, with its message count and ``updated_at``."""
    conn.execute(
        update(sessions_table)
        .where(sessions_table.c.session_id == sid)
        .values(
            next_seq=next_seq,
            last_recorded_at=clock,
            history_digest=history[0],
            history_len=history[1],
            message_count=history[1],
            updated_at=_later(sessions_table.c.updated_at, now),
        )
    )


def _record_change(
    conn: Connection, sid: str, count: Any, now: datetime, history: tuple[str | None, int | None]
) -> None:
    """After a write that changed the session's messages: its record's message count
    (``count``, a number or SQL), ``updated_at`` and history chain."""
    conn.execute(
        update(sessions_table)
        .where(sessions_table.c.session_id == sid)
        .values(
            message_count=count,
            updated_at=_later(sessions_table.c.updated_at, now),
            history_digest=history[0],
            history_len=history[1],
        )
    )


def _lock_existing(conn: Connection, sid: str) -> bool:
    """Lock the session's row if it exists (SQLite's write lock is already held)."""
    found = conn.execute(
        select(sessions_table.c.session_id)
        .where(sessions_table.c.session_id == sid)
        .with_for_update()
    ).first()
    return found is not None


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


def _insert_messages(
    conn: Connection,
    sid: str,
    encoded: Sequence[EncodedMessage],
    first_seq: int,
    stamp: datetime,
) -> None:
    """Insert the rows of ``encoded`` at seqs from ``first_seq`` on, blobs first (once each).

    A message without a ``recorded_at`` of its own gets ``stamp``.
    """
    _insert_blobs(conn, sid, encoded)
    message_rows: list[dict[str, Any]] = []
    block_rows: list[dict[str, Any]] = []
    for offset, e in enumerate(encoded):
        seq = first_seq + offset
        recorded = e.message.recorded_at or stamp
        message_rows.append({**e.row, "session_id": sid, "seq": seq, "recorded_at": recorded})
        block_rows.extend({**block, "session_id": sid, "seq": seq} for block in e.blocks)
    if conn.dialect.name == "postgresql":
        base64_text.escape(message_rows, base64_text.MESSAGE_TEXT)
        base64_text.escape(block_rows, base64_text.BLOCK_TEXT)
    conn.execute(INSERT_MESSAGE, message_rows)
    if block_rows:
        conn.execute(INSERT_BLOCK, block_rows)


def _append(conn: Connection, sid: str, encoded: Sequence[EncodedMessage], now: datetime) -> None:
    """Take the lock, allocating seqs for ``encoded``, and insert their rows.

    Only the store's own stamp (``now``) moves the session clock: a caller-supplied
    ``recorded_at`` (an import, perhaps far in the future) is stored as given and never
    pins the stamps of later messages.
    """
    lock = _lock_session(conn, sid, len(encoded), now, now)
    _insert_messages(conn, sid, encoded, lock.first_seq, lock.stamp)


def append_fresh(
    conn: Connection, sid: str, encoded: Sequence[EncodedMessage], now: datetime
) -> None:
    """Append messages assumed new; a stored id makes the unique index raise.

    This is the fast path: no read before the insert. The caller falls back to
    :func:`append_idempotent` on an integrity error.
    """
    _append(conn, sid, encoded, now)


def append_idempotent(
    conn: Connection, sid: str, encoded: Sequence[EncodedMessage], now: datetime
) -> None:
    """Append messages, skipping those stored already with the same content.

    Raises:
        DuplicateMessageError: an id is stored with different content (nothing written).
    """
    if _lock_existing(conn, sid):
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
        _append(conn, sid, encoded, now)


def _sweep_blobs(conn: Connection, sid: str) -> None:
    """Delete the session's blobs that no block references any more."""
    conn.execute(
        delete(blobs_table).where(
            blobs_table.c.session_id == sid,
            ~exists().where(
                blocks_table.c.session_id == blobs_table.c.session_id,
                blocks_table.c.blob_sha256 == blobs_table.c.sha256,
            ),
        )
    )


def _stored_messages(conn: Connection, sid: str) -> list[StoredMessage]:
    columns = messages_table.c
    rows = conn.execute(
        select(columns.seq, columns.message_id, columns.digest, columns.recorded_at)
        .where(columns.session_id == sid)
        .order_by(columns.seq)
    )
    return [StoredMessage(*row) for row in rows]


def save(conn: Connection, sid: str, messages: Sequence[Message], now: datetime) -> None:
    """Make the session's history ``messages``, writing only from the first difference.

    Takes the session's lock once, decides with :func:`plan_save` (reading the stored ids
    and digests only when the hash chain cannot vouch for them), then deletes and inserts
    what the plan says. A history that grew by k messages inserts k messages, and only
    the messages written are encoded.
    """
    lock = _lock_session(conn, sid, 0, now, now, keep_history=True)
    plan = plan_save(messages, lock, None)
    if plan is None:
        plan = plan_save(messages, lock, _stored_messages(conn, sid))
        assert plan is not None  # noqa: S101 - the stored messages always decide
    if plan.clear:
        _delete_session(conn, sid)
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
        _insert_messages(conn, sid, [encode_message(m) for m in written], first_seq, stamp)
        _set_session(conn, sid, first_seq + len(written), stamp, after, now)
    elif plan.delete_from_seq is not None:
        _record_change(conn, sid, len(messages), now, after)
    else:
        _remember_history(conn, sid, *after)
    if plan.delete_from_seq is not None:
        _sweep_blobs(conn, sid)


def evict(conn: Connection, sid: str, keep: int, now: datetime) -> int:
    """Delete the oldest messages so at most ``keep`` remain, never leaving a tool
    message at the head; returns how many were deleted."""
    if not _lock_existing(conn, sid):
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
        return _delete_session(conn, sid)
    deleted = conn.execute(
        delete(messages_table).where(
            messages_table.c.session_id == sid, messages_table.c.seq < start
        )
    ).rowcount
    _sweep_blobs(conn, sid)
    count = sessions_table.c.message_count - deleted
    _record_change(conn, sid, count, now, (None, None))
    return int(deleted)


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
) -> Message | None:
    """Delete the newest message under the session's lock and return it; ``None`` if empty.

    Exactly one message goes, whatever its group. Popping the last message deletes the
    session, as ``evict`` does. With ``keep``, the messages ``keep(popped)`` returns are
    appended in its place in the same transaction (the OpenAI Agents session's
    ``pop_item`` keeps the other outputs of a response so): no other writer's messages
    can come between, and a failure leaves the session as it was.
    """
    if not _lock_existing(conn, sid):
        return None
    found = reads.newest(conn, sid)
    if found is None:
        return None
    seq, message, older = found
    kept = [] if keep is None else [encode_message(m) for m in keep(message)]
    if not older and not kept:
        _delete_session(conn, sid)
        return message
    conn.execute(
        delete(messages_table).where(
            messages_table.c.session_id == sid, messages_table.c.seq == seq
        )
    )
    if kept:
        _append(conn, sid, kept, now)  # the bytes the kept blocks share are still stored
    if _holds_bytes(message):
        _sweep_blobs(conn, sid)
    _record_change(conn, sid, sessions_table.c.message_count - 1, now, (None, None))
    return message


def _delete_session(conn: Connection, sid: str) -> int:
    """Delete the session, its messages, blocks and blobs; returns messages deleted."""
    deleted = conn.execute(
        delete(messages_table).where(messages_table.c.session_id == sid)
    ).rowcount
    conn.execute(delete(sessions_table).where(sessions_table.c.session_id == sid))
    return int(deleted)


def clear(conn: Connection, sid: str) -> int:
    """Delete the session, its messages, blocks and blobs; returns messages deleted.

    The session's lock comes first: deleting rows before it would race a concurrent
    append (a deadlock, or blobs deleted under the blocks it is inserting).
    """
    if not _lock_existing(conn, sid):
        return 0
    return _delete_session(conn, sid)
