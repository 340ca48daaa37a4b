"""The statements of ``compact``: a snapshot read, then a replacement guarded by it.

``compact`` runs in two transactions with the caller's summarizer between them, outside
both: :func:`read_history` reads the history and the fingerprint of its rows (seq, id and
content digest of each message) in one snapshot; :func:`replace_older` takes the
session's lock, checks the fingerprint is still the stored one, and only then deletes the
older messages and writes the summary in their place. Any write in between (an append, a
pop, a save, another compaction, a clear) changes the fingerprint, so the replacement
raises :class:`~sqlmemory.errors.ConflictError` and writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, delete

from sqlmemory.errors import ConflictError
from sqlmemory.storage.compaction import CompactionPlan
from sqlmemory.storage.sql import reads
from sqlmemory.storage.sql.codec import EncodedMessage
from sqlmemory.storage.sql.save_plan import StoredMessage
from sqlmemory.storage.sql.schema import messages_table
from sqlmemory.storage.sql.session_lock import lock_existing, record_change, sweep_blobs
from sqlmemory.storage.sql.writes import insert_messages, stored_messages
from sqlmemory.types import Message

__all__ = ["read_history", "replace_older"]


def read_history(
    conn: Connection, sid: str, owner: str | None = None
) -> tuple[list[Message], list[StoredMessage]]:
    """The whole history and the fingerprint of its rows, from one snapshot (nothing of a
    session that is not ``owner``'s, when given)."""
    history = reads.read_all(conn, sid, owner)
    if not history:
        return [], []
    return history, stored_messages(conn, sid)


def _fingerprint(rows: Sequence[StoredMessage]) -> list[tuple[int, str, str]]:
    return [(r.seq, r.message_id, r.digest) for r in rows]


def replace_older(
    conn: Connection,
    sid: str,
    expected: Sequence[StoredMessage],
    plan: CompactionPlan,
    summary: Sequence[EncodedMessage],
    now: datetime,
    owner: str | None = None,
) -> None:
    """Replace the rows ``expected[plan.head:plan.cut]`` with ``summary``, under the lock.

    The summary takes the highest seqs of the range it replaces (there are at least as
    many), so it sits where the older messages were: after the pinned head, before the
    kept messages, whose rows are not touched. Every summary message carries its own
    ``recorded_at``. The session's record gets its new message count, updated ``now``.

    Raises:
        ConflictError: the stored rows are not ``expected`` any more; nothing written.
            A session no longer ``owner``'s (when given) has changed too.
    """
    if not lock_existing(conn, sid, owner) or _fingerprint(stored_messages(conn, sid)) != (
        _fingerprint(expected)
    ):
        raise ConflictError(f"session {sid!r} changed while compacting; nothing was written")
    replaced = expected[plan.head : plan.cut]
    first, last = replaced[0].seq, replaced[-1].seq
    seq = messages_table.c.seq
    conn.execute(
        delete(messages_table).where(messages_table.c.session_id == sid, seq >= first, seq <= last)
    )
    stamp = replaced[-1].recorded_at
    insert_messages(conn, sid, summary, last - len(summary) + 1, stamp)
    sweep_blobs(conn, sid)
    count = len(expected) - len(replaced) + len(summary)
    record_change(conn, sid, count, now, (None, None))
