"""``update_together`` of :class:`~sqlmemory.InMemoryStorage`: the joint write, all or none.

Under the storage's one lock, each change's session is looked up (or created, with the
change's owner), its ``metadata`` function called with the record, its messages appended
and its metadata stored. The touched sessions are copied first and put back when anything
raises, so a refused call leaves every session as it was (the rules:
:mod:`sqlmemory.storage.joint`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlmemory.storage.joint import CheckedChange, SplicePlan, new_metadata, splice_of
from sqlmemory.storage.owners import refuse
from sqlmemory.storage.records import SessionInfo, check_metadata
from sqlmemory.types import Message, utc_now

if TYPE_CHECKING:
    from sqlmemory.storage.memory import InMemoryStorage

__all__ = ["splice", "update_together"]


def _record(storage: InMemoryStorage, change: CheckedChange) -> SessionInfo | None:
    """The change's session record as the change sees it (the lock is held), created
    when missing and the change may create it; ``None`` when absent for its owner."""
    sid = change.session_id
    record = storage._records.get(sid)
    if record is not None and change.owner is not None and record.owner != change.owner:
        if change.create:
            raise refuse(sid, change.owner)
        return None
    if record is None:
        if not change.create:
            return None
        now = utc_now()
        record = SessionInfo(sid, now, now, 0, owner=change.owner)
        storage._records[sid] = record
    return dataclasses.replace(record, message_count=len(storage._sessions.get(sid, ())))


def update_together(storage: InMemoryStorage, changes: Sequence[CheckedChange]) -> None:
    """Apply ``changes`` (checked, sorted) to ``storage`` in one step, or none of them."""
    with storage._lock:
        ids = [c.session_id for c in changes]
        saved: list[Any] = [
            (storage._sessions.get(i), storage._records.get(i), storage._clocks.get(i)) for i in ids
        ]
        try:
            for change in changes:
                info = _record(storage, change)
                metadata = new_metadata(change, info)
                if info is None:
                    continue
                storage._append_locked(change.session_id, change.messages)
                if metadata is not None:
                    storage._touch(change.session_id, metadata=metadata)
        except BaseException:
            for sid, (messages, record, clock) in zip(ids, saved, strict=True):
                for store, value in (
                    (storage._sessions, messages),
                    (storage._records, record),
                    (storage._clocks, clock),
                ):
                    if value is None:
                        store.pop(sid, None)
                    else:
                        store[sid] = value
            raise


def splice(
    storage: InMemoryStorage, sid: str, plan: SplicePlan, batch: Sequence[Message]
) -> list[Message]:
    """``_splice`` of ``storage`` (the rules: :class:`~sqlmemory.storage.joint.Splice`),
    under its lock; a refused plan or append leaves the session as it was."""
    with storage._lock:
        if batch:
            storage._claim(sid)
        info = storage._records.get(sid) if storage._visible(sid) else None
        if info is not None:
            count = len(storage._sessions.get(sid, ()))
            info = dataclasses.replace(info, message_count=count)
        start, stop, span = splice_of(plan, info)
        metadata = None if span.metadata is None else check_metadata(span.metadata)
        if info is None and not batch:
            return []
        saved: list[Any] = [
            storage._sessions.get(sid),
            storage._records.get(sid),
            storage._clocks.get(sid),
        ]
        history = storage._history(sid)
        taken = history[start:stop]
        try:
            if span.delete and taken:
                storage._sessions[sid] = history[:start] + history[stop:]
                storage._touch(sid)
            storage._append_locked(sid, batch)
            if metadata is not None:
                storage._touch(sid, metadata=metadata)
        except BaseException:
            stores: list[Any] = [storage._sessions, storage._records, storage._clocks]
            for store, value in zip(stores, saved, strict=True):
                if value is None:
                    store.pop(sid, None)
                else:
                    store[sid] = value
            raise
        if not storage._sessions.get(sid):
            storage._drop(sid)
        return taken
