"""A session's history read, changed and written back in one transaction, under its lock.

The write behind an adapter that amends stored messages from what it knows only later
(the OpenAI Agents session's ``store_run_usage``: a run's usage on the messages holding
its output): a ``load`` then a ``save`` would be two transactions, and an append landing
between them would be lost to the ``save``. Here the session's row is locked first and
the history read after it (on MySQL, that read is the transaction's first plain read, so
its snapshot already includes every write the lock waited for); the changed history is
then written as ``save`` writes it, only from the first message that differs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from sqlalchemy import Connection

from sqlmemory.storage.checks import check_messages
from sqlmemory.storage.sql import reads, writes
from sqlmemory.storage.sql.session_lock import lock_existing
from sqlmemory.types import Message

__all__ = ["rewrite"]

T = TypeVar("T")

Change = Callable[[list[Message]], tuple[list[Message], T]]
"""Given the stored history, the history to store and what the caller returns. It must
not do I/O and may run more than once (a transaction retried after a deadlock)."""


def rewrite(
    conn: Connection,
    sid: str,
    change: Change[T],
    max_blob_bytes: int,
    now: datetime,
    owner: str | None = None,
) -> T:
    """Lock the session, read its history, and store ``change(history)``'s history when
    it differs; returns what ``change`` returned. A session that does not exist (for
    ``owner``) is left absent: ``change`` sees ``[]`` and nothing is written."""
    if not lock_existing(conn, sid, owner):
        return change([])[1]
    history = reads.read_all(conn, sid, owner)
    updated, result = change(history)
    if updated != history:
        writes.save(conn, sid, check_messages(updated, max_blob_bytes), now, owner)
    return result
