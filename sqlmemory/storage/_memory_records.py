"""The in-memory storage's sessions, records and owners: the state every method shares.

:class:`MemoryRecords` holds the dicts and the lock of an :class:`~sqlmemory.InMemoryStorage`,
the scope of an owned view (``owned_by``), and the methods of session records
(``sessions``, ``session_info``, ``update_session``, ``list_sessions``, ``prune``,
``erase_owner``); :mod:`sqlmemory.storage.memory` adds the messages.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlmemory.errors import SessionOwnerError
from sqlmemory.storage.checks import DEFAULT_MAX_BLOB_BYTES, check_prefix, check_session_id
from sqlmemory.storage.owners import (
    NOBODY,
    check_owner,
    check_owner_change,
    check_owner_filter,
    owner_filter,
    refuse,
)
from sqlmemory.storage.records import (
    DEFAULT_PAGE_LIMIT,
    UNSET,
    SessionInfo,
    SessionPage,
    Unset,
    check_limit,
    check_metadata,
    check_title,
    cutoff_of,
    decode_cursor,
    page_of,
)
from sqlmemory.types import Message, utc_now

__all__ = ["MemoryRecords"]

S = TypeVar("S", bound="MemoryRecords")


class MemoryRecords:
    """Sessions in dicts behind one lock, with their records, scoped to an owner or not.

    Args:
        max_blob_bytes: the largest image or document accepted, in bytes (20 MiB).
    """

    def __init__(self, *, max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES) -> None:
        self.max_blob_bytes = max_blob_bytes
        self._sessions: dict[str, list[Message]] = {}
        self._clocks: dict[str, datetime] = {}
        self._records: dict[str, SessionInfo] = {}
        """Every existing session's record; its ``message_count`` is filled in on read."""
        self._lock = threading.Lock()
        self._owner: str | None = None

    def __repr__(self) -> str:
        scope = "" if self._owner is None else f", owner={self._owner!r}"
        return f"{type(self).__name__}(sessions={len(self._records)}{scope})"

    @property
    def owner(self) -> str | None:
        """The owner this storage is scoped to (:meth:`owned_by`); ``None``: unscoped."""
        return self._owner

    def owned_by(self: S, owner: str) -> S:
        """This storage scoped to ``owner``: the same sessions, but only ``owner``'s exist.

        A session first written through it belongs to ``owner``; a write to a session of
        another owner (or of none) raises :class:`~sqlmemory.errors.SessionOwnerError`
        and writes nothing (``docs/many-users.md``).

        Examples:
            >>> from sqlmemory import InMemoryStorage, Message
            >>> storage = InMemoryStorage()
            >>> alice = storage.owned_by("alice")
            >>> alice.append("chat-1", Message.user("Hi"))
            >>> storage.owned_by("bob").load("chat-1"), alice.count("chat-1")
            ([], 1)
            >>> storage.session_info("chat-1").owner
            'alice'

        Raises:
            TypeError, InvalidSessionIdError: a bad owner.
            SessionOwnerError: this storage is scoped to another owner already.
        """
        owner = check_owner(owner)
        if self._owner is not None and owner != self._owner:
            raise SessionOwnerError(
                f"this storage is scoped to owner {self._owner!r}, not {owner!r}"
            )
        scoped = copy.copy(self)  # the dicts and the lock are shared
        scoped._owner = owner
        return scoped

    def _visible(self, session_id: str) -> bool:
        """Whether the session exists for this storage's scope (the lock is held)."""
        if self._owner is None:
            return session_id in self._records
        record = self._records.get(session_id)
        return record is not None and record.owner == self._owner

    def _claim(self, session_id: str) -> None:
        """Before a write that creates or changes the session (the lock is held): refuse
        a session of another owner, or of none, through a scoped storage."""
        if self._owner is None:
            return
        record = self._records.get(session_id)
        if record is not None and record.owner != self._owner:
            raise refuse(session_id, self._owner)

    def _drop(self, session_id: str) -> list[Message]:
        """Delete the session, its clock and its record; returns its messages."""
        self._clocks.pop(session_id, None)
        self._records.pop(session_id, None)
        return self._sessions.pop(session_id, [])

    def _touch(self, session_id: str, **changes: Any) -> None:
        """Record a write that changed the session (the lock is held): its clock moves."""
        now = utc_now()
        record = self._records.get(session_id)
        if record is None:
            record = SessionInfo(session_id, now, now, 0, owner=self._owner)
        now = max(now, record.updated_at)
        self._records[session_id] = dataclasses.replace(record, updated_at=now, **changes)

    def sessions(self, prefix: str | None = None, *, owner: str | None = None) -> list[str]:
        """Session ids (sorted), optionally only those starting with ``prefix``, and only
        ``owner``'s.

        Raises:
            TypeError: ``prefix`` is neither ``None`` nor a ``str``.
        """
        check_prefix(prefix)
        wanted = owner_filter(self._owner, check_owner_filter(owner))
        with self._lock:
            ids = [i for i, r in self._records.items() if wanted is None or r.owner == wanted]
        return sorted(i for i in ids if prefix is None or i.startswith(prefix))

    def _info(self, session_id: str) -> SessionInfo | None:
        record = self._records.get(session_id)
        if record is None or not self._visible(session_id):
            return None
        count = len(self._sessions.get(session_id, ()))
        return dataclasses.replace(record, message_count=count)

    def session_info(self, session_id: str) -> SessionInfo | None:
        """The session's record, or ``None`` when the session does not exist."""
        check_session_id(session_id)
        with self._lock:
            return self._info(session_id)

    def update_session(
        self,
        session_id: str,
        *,
        title: str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
        owner: str | Unset | None = UNSET,
    ) -> None:
        """Set the session's title, metadata and/or owner, creating its record if needed.

        An argument left out keeps its stored value; ``None`` clears it. Through a scoped
        storage, ``owner`` can only be its own.
        """
        check_session_id(session_id)
        changes: dict[str, Any] = {}
        if title is not UNSET:
            changes["title"] = check_title(title)
        if metadata is not UNSET:
            changes["metadata"] = check_metadata(metadata)
        if owner is not UNSET:
            changes["owner"] = check_owner_change(self._owner, session_id, owner)
        with self._lock:
            self._claim(session_id)
            self._touch(session_id, **changes)

    def list_sessions(
        self,
        prefix: str | None = None,
        *,
        owner: str | None = None,
        limit: int = DEFAULT_PAGE_LIMIT,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of session records, the most recently updated first; only ``owner``'s
        if given."""
        check_prefix(prefix)
        wanted = owner_filter(self._owner, check_owner_filter(owner))
        check_limit(limit)
        after = None if cursor is None else decode_cursor(cursor)
        with self._lock:
            infos = [self._info(sid) for sid in self._records]
        found = sorted(
            (
                i
                for i in infos
                if i is not None
                and (wanted is None or i.owner == wanted)
                and (prefix is None or i.session_id.startswith(prefix))
                and (after is None or (i.updated_at, i.session_id) < after)
            ),
            key=lambda i: (i.updated_at, i.session_id),
            reverse=True,
        )
        return page_of(found[: limit + 1], limit)

    def prune(self, older_than: datetime | timedelta) -> int:
        """Delete every session not updated since ``older_than``; the number deleted."""
        cutoff = cutoff_of(older_than, utc_now())
        with self._lock:
            old = [
                sid
                for sid, r in self._records.items()
                if r.updated_at < cutoff and self._visible(sid)
            ]
            for sid in old:
                self._drop(sid)
        return len(old)

    def erase_owner(self, owner: str) -> int:
        """Delete every session of ``owner`` with all it holds; the number deleted.

        Examples:
            >>> from sqlmemory import InMemoryStorage, Message
            >>> storage = InMemoryStorage()
            >>> storage.owned_by("alice").append("chat-1", Message.user("Hi"))
            >>> storage.erase_owner("alice"), storage.sessions()
            (1, [])

        Raises:
            TypeError, InvalidSessionIdError: a bad owner.
        """
        wanted = owner_filter(self._owner, check_owner(owner))
        if wanted == NOBODY:
            return 0
        with self._lock:
            theirs = [sid for sid, r in self._records.items() if r.owner == wanted]
            for sid in theirs:
                self._drop(sid)
        return len(theirs)
