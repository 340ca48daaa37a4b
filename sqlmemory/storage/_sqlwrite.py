"""Every statement that writes, as plain functions over a Connection (see ``_sqlops``)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

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
from sqlmemory.storage._codec import (
    EncodedMessage,
    digest_of,
    encode_message,
    history_digest,
    time_is_stored,
)
from sqlmemory.storage._tables import BL, B, M, S
from sqlmemory.types import Message, Role

__all__ = ["append_fresh", "append_idempotent", "clear", "evict", "save"]

# Statements are immutable values; building them once saves their construction and
# cache-key work on every call.
INSERT_MESSAGE = insert(M)
INSERT_BLOCK = insert(B)
INSERT_BLOB = insert(BL)


class Lock(NamedTuple):
    """What taking a session's lock tells the writer."""

    first_seq: int
    """The first of the seqs allocated to this writer."""
    stamp: datetime
    """The ``recorded_at`` for new messages: never before any time stored earlier."""
    history_digest: str | None
    """The chain over the stored history as the last save left it, if still valid."""
    history_len: int | None


@functools.cache
def _lock_statements(dialect: str, history: str) -> tuple[Executable, Executable | None]:
    """The session upsert of ``dialect`` (and, where it cannot RETURN, the read after it).

    ``history`` says what becomes of the session's history digest: ``"keep"`` it,
    ``"forget"`` it (writes other than ``save``) or ``"set"`` it to the ``hd``/``hl``
    parameters (``save``, which knows the history it leaves). Built once:
    constructing SQLAlchemy statements costs more than sending them.
    """
    values: dict[str, Any] = {
        "session_id": bindparam("sid"),
        "next_seq": bindparam("k") + 1,
        "last_recorded_at": bindparam("bump"),
        "created_at": bindparam("bump"),
    }
    modes: dict[str, dict[str, Any]] = {
        "keep": {},
        "forget": {"history_digest": None, "history_len": None},
        "set": {"history_digest": bindparam("hd"), "history_len": bindparam("hl")},
    }
    cleared = modes[history]
    returned = (S.c.next_seq, S.c.last_recorded_at, S.c.history_digest, S.c.history_len)
    if dialect in ("mysql", "mariadb"):
        my = mysql.insert(S).values(values)
        upsert = my.on_duplicate_key_update(
            next_seq=S.c.next_seq + bindparam("k"),
            last_recorded_at=case(
                (S.c.last_recorded_at > my.inserted.last_recorded_at, S.c.last_recorded_at),
                else_=my.inserted.last_recorded_at,
            ),
            **cleared,
        )
        read = select(*returned).where(S.c.session_id == bindparam("sid"))
        return upsert, read
    ins = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(S).values(values)
    upsert_returning = ins.on_conflict_do_update(
        index_elements=[S.c.session_id],
        set_={
            "next_seq": S.c.next_seq + bindparam("k"),
            "last_recorded_at": case(
                (S.c.last_recorded_at > ins.excluded.last_recorded_at, S.c.last_recorded_at),
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
    bump: datetime,
    *,
    history: tuple[str, int] | None = None,
    keep_history: bool = False,
) -> Lock:
    """Take the session's lock, creating its row if needed, and allocate ``k`` seqs.

    The upsert takes the row lock in the same statement on every backend, so concurrent
    writers of one session queue here while writers of other sessions never meet. The
    session's history digest is cleared, kept (``keep_history``) or set to ``history``.
    """
    mode = "keep" if keep_history else "set" if history is not None else "forget"
    upsert, read = _lock_statements(conn.dialect.name, mode)
    params: dict[str, Any] = {"sid": sid, "k": k, "bump": bump}
    if history is not None:
        params["hd"], params["hl"] = history
    result = conn.execute(upsert, params)
    row = (conn.execute(read, params) if read is not None else result).one()
    return Lock(int(row[0]) - k, row[1], row[2], row[3])


def _remember_history(conn: Connection, sid: str, digest: str | None, length: int | None) -> None:
    """Set (or with ``None``, clear) the session's history digest."""
    conn.execute(
        update(S)
        .where(S.c.session_id == sid)
        .values(history_digest=digest, history_len=length)
    )


def _lock_existing(conn: Connection, sid: str) -> bool:
    """Lock the session's row if it exists (SQLite's write lock is already held)."""
    found = conn.execute(
        select(S.c.session_id).where(S.c.session_id == sid).with_for_update()
    ).first()
    return found is not None


def _bump(encoded: Sequence[EncodedMessage], now: datetime) -> datetime:
    supplied = [e.message.recorded_at for e in encoded if e.message.recorded_at is not None]
    return max([now, *supplied])


def _write(
    conn: Connection,
    sid: str,
    encoded: Sequence[EncodedMessage],
    now: datetime,
    history: tuple[str, int] | None = None,
) -> None:
    """Allocate seqs for ``encoded`` and insert their rows, blobs first (once each).

    ``history`` is the digest and length of the session's history after the write, when
    the writer (``save``) knows it; otherwise the digest is cleared.
    """
    lock = _lock_session(conn, sid, len(encoded), _bump(encoded, now), history=history)
    first, stamp = lock.first_seq, lock.stamp
    blobs = {b.sha256: b for e in encoded for b in e.blobs}
    if blobs:
        stored = set(
            conn.scalars(
                select(BL.c.sha256).where(BL.c.session_id == sid, BL.c.sha256.in_(list(blobs)))
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
    message_rows: list[dict[str, Any]] = []
    block_rows: list[dict[str, Any]] = []
    for offset, e in enumerate(encoded):
        seq = first + offset
        recorded = e.message.recorded_at or stamp
        message_rows.append({**e.row, "session_id": sid, "seq": seq, "recorded_at": recorded})
        for position, block in enumerate(e.blocks):
            block_rows.append({**block, "session_id": sid, "seq": seq, "position": position})
    conn.execute(INSERT_MESSAGE, message_rows)
    if block_rows:
        conn.execute(INSERT_BLOCK, block_rows)


def append_fresh(
    conn: Connection, sid: str, encoded: Sequence[EncodedMessage], now: datetime
) -> None:
    """Append messages assumed new; a stored id makes the unique index raise.

    This is the fast path: no read before the insert. The caller falls back to
    :func:`append_idempotent` on an integrity error.
    """
    _write(conn, sid, encoded, now)


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
                select(M.c.message_id, M.c.digest).where(
                    M.c.session_id == sid, M.c.message_id.in_(ids)
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
        _write(conn, sid, encoded, now)


def _sweep_blobs(conn: Connection, sid: str) -> None:
    """Delete the session's blobs that no block references any more."""
    conn.execute(
        delete(BL).where(
            BL.c.session_id == sid,
            ~exists().where(B.c.session_id == BL.c.session_id, B.c.blob_sha256 == BL.c.sha256),
        )
    )


def save(conn: Connection, sid: str, messages: Sequence[Message], now: datetime) -> None:
    """Make the session's history ``messages``, writing only from the first difference.

    Stored messages are compared by id, content digest and, where the caller gives one,
    ``recorded_at``; the common prefix stays untouched, so re-saving a history that grew
    by k messages inserts k messages, and only the messages written are encoded. When
    the session was last written by ``save``, the comparison is one hash chain checked
    against the session row, and the stored history is not read at all.
    """
    if not messages:
        clear(conn, sid)
        return
    lock = _lock_session(conn, sid, 0, now, keep_history=True)
    # recorded_at is compared only where the caller gave one that may differ from the
    # stored time (an import); a loaded history that grew never needs it.
    times = not all(time_is_stored(m) for m in messages)
    after = (history_digest(messages, len(messages)), len(messages))
    known = lock.history_len
    if (
        not times
        and known is not None
        and known <= len(messages)
        and lock.history_digest == history_digest(messages, known)
    ):
        if known < len(messages):
            _write(conn, sid, [encode_message(m) for m in messages[known:]], now, after)
        return
    columns = [M.c.seq, M.c.message_id, M.c.digest, *([M.c.recorded_at] if times else [])]
    stored = conn.execute(
        select(*columns).where(M.c.session_id == sid).order_by(M.c.seq)
    ).all()
    same = 0
    for row, message in zip(stored, messages, strict=False):
        if row[1] != message.id or row[2] != digest_of(message):
            break
        if times and message.recorded_at is not None and message.recorded_at != row[3]:
            break
        same += 1
    if same < len(stored):
        conn.execute(delete(M).where(M.c.session_id == sid, M.c.seq >= stored[same][0]))
    if same < len(messages):
        _write(conn, sid, [encode_message(m) for m in messages[same:]], now, after)
    else:
        _remember_history(conn, sid, *after)
    if same < len(stored):
        _sweep_blobs(conn, sid)


def evict(conn: Connection, sid: str, keep: int) -> int:
    """Delete the oldest messages so at most ``keep`` remain, never leaving a tool
    message at the head; returns how many were deleted."""
    if not _lock_existing(conn, sid):
        return 0
    boundary = conn.scalar(
        select(M.c.seq)
        .where(M.c.session_id == sid)
        .order_by(M.c.seq.desc())
        .offset(keep)
        .limit(1)
    )
    if boundary is None:
        return 0
    start = conn.scalar(
        select(func.min(M.c.seq)).where(
            M.c.session_id == sid, M.c.seq > boundary, M.c.role != Role.TOOL.value
        )
    )
    if start is None:
        return clear(conn, sid)
    deleted = conn.execute(delete(M).where(M.c.session_id == sid, M.c.seq < start)).rowcount
    _sweep_blobs(conn, sid)
    _remember_history(conn, sid, None, None)
    return int(deleted)


def clear(conn: Connection, sid: str) -> int:
    """Delete the session, its messages, blocks and blobs; returns messages deleted."""
    deleted = conn.execute(delete(M).where(M.c.session_id == sid)).rowcount
    conn.execute(delete(S).where(S.c.session_id == sid))
    return int(deleted)
