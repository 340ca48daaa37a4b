"""How ``save`` turns the stored history into the given one: a pure decision.

No SQL here. :func:`plan_save` compares the given messages with what the session's lock
told (the hash chain of the last save) or, when that cannot vouch for them, with the
stored ids and digests, and names what to keep, delete and write.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from sqlmemory.storage.sql.codec import digest_of, time_is_stored
from sqlmemory.storage.sql.history_chain import history_digest
from sqlmemory.types import Message

__all__ = ["SavePlan", "SessionLock", "StoredMessage", "plan_save"]


class SessionLock(NamedTuple):
    """What taking a session's lock tells the writer."""

    first_seq: int
    """The first of the seqs allocated to this writer."""
    stamp: datetime
    """The ``recorded_at`` for new messages: never before any time stored earlier."""
    history_digest: str | None
    """The chain over the stored history as the last save left it, if still valid."""
    history_len: int | None
    """How many messages ``history_digest`` covers."""


class StoredMessage(NamedTuple):
    """What ``save`` compares of a stored message."""

    seq: int
    message_id: str
    digest: str
    recorded_at: datetime


class SavePlan(NamedTuple):
    """What ``save`` does to make the stored history equal the given one."""

    keep: int
    """How many stored messages stay as they are: the common prefix."""
    delete_from_seq: int | None = None
    """Delete the stored messages from this seq on (the first difference), if any."""
    clear: bool = False
    """The new history is empty: delete the session."""


def plan_save(
    messages: Sequence[Message],
    lock: SessionLock,
    stored: Sequence[StoredMessage] | None,
) -> SavePlan | None:
    """Decide how ``save`` turns the stored history into ``messages``; pure.

    Stored messages are compared by id, content digest and, where the caller gives one
    that may differ from the stored time (an import), ``recorded_at``. When the session
    was last written by ``save``, the hash chain on the lock decides without ``stored``;
    otherwise this returns ``None`` until it is given the stored messages.
    """
    if not messages:
        return SavePlan(keep=0, clear=True)
    times = not all(time_is_stored(m) for m in messages)
    known = lock.history_len
    if (
        not times
        and known is not None
        and known <= len(messages)
        and lock.history_digest == history_digest(messages, known)
    ):
        return SavePlan(keep=known)
    if stored is None:
        return None
    same = 0
    for row, message in zip(stored, messages, strict=False):
        if row.message_id != message.id or row.digest != digest_of(message):
            break
        if times and message.recorded_at is not None and message.recorded_at != row.recorded_at:
            break
        same += 1
    if same == len(stored):
        return SavePlan(keep=same)
    return SavePlan(keep=same, delete_from_seq=stored[same].seq)
