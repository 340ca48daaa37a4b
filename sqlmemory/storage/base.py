"""The async storage protocol and the bound view of one session of an async storage.

Generated from ``sqlmemory/storage/base_async.py``
by ``tools/generate_sync.py``: edit that file, never this one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from sqlmemory.policy import Policy
from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.compaction import DEFAULT_KEEP, Summarizer
from sqlmemory.storage.records import DEFAULT_PAGE_LIMIT, UNSET, SessionInfo, SessionPage, Unset
from sqlmemory.storage.search_results import SearchPage
from sqlmemory.storage.search_rules import DEFAULT_MARKERS
from sqlmemory.storage.usage_report import UsageReport
from sqlmemory.types import Message

__all__ = ["SessionView", "Storage"]


@runtime_checkable
class Storage(Protocol):
    """Where sessions' messages live: the methods every storage has.

    The contract of each method, and of the errors it raises, is
    ``docs/contract/storage.md``; one test suite holds every storage to it.

    Examples:
        >>> from sqlmemory import SqlStorage
        >>> issubclass(SqlStorage, Storage)
        True
    """

    def append(self, session_id: str, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none."""
        ...

    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The whole history oldest first (``[]`` if unknown), or ``policy``'s window."""
        ...

    def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the whole history with ``messages``; ``[]`` clears it."""
        ...

    def recent(self, session_id: str, n: int) -> list[Message]:
        """At most the newest ``n`` messages, in whole groups, newest last."""
        ...

    def evict(self, session_id: str, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; the number deleted."""
        ...

    def clear(self, session_id: str) -> int:
        """Delete the session and all it owns; the number of messages deleted."""
        ...

    def pop(self, session_id: str) -> Message | None:
        """Remove and return the newest message; ``None`` when the session is empty."""
        ...

    def compact(
        self, session_id: str, summarize: Summarizer, *, keep: Policy = DEFAULT_KEEP
    ) -> int:
        """Replace the messages older than ``keep``'s window with ``summarize(older)``,
        unless the session changed meanwhile; the number of messages replaced."""
        ...

    def count(self, session_id: str) -> int:
        """The number of messages in the session."""
        ...

    def sessions(self, prefix: str | None = None, *, owner: str | None = None) -> list[str]:
        """The stored session ids, sorted; only those starting with ``prefix`` if given,
        and only ``owner``'s if given."""
        ...

    def session_info(self, session_id: str) -> SessionInfo | None:
        """The session's record, or ``None`` when the session does not exist."""
        ...

    def update_session(
        self,
        session_id: str,
        *,
        title: str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
        owner: str | Unset | None = UNSET,
    ) -> None:
        """Set the session's title, metadata and/or owner; left out: unchanged; ``None``:
        cleared."""
        ...

    def list_sessions(
        self,
        prefix: str | None = None,
        *,
        owner: str | None = None,
        limit: int = DEFAULT_PAGE_LIMIT,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of session records, the most recently updated first."""
        ...

    def prune(self, older_than: datetime | timedelta) -> int:
        """Delete every session not updated since ``older_than``; the number deleted."""
        ...

    def owned_by(self, owner: str) -> Storage:
        """This storage scoped to ``owner``: other owners' sessions do not exist in it."""
        ...

    def erase_owner(self, owner: str) -> int:
        """Delete every session of ``owner`` with all it holds; the number deleted."""
        ...

    def fork(self, session_id: str, new_session_id: str, *, at: str | None = None) -> SessionInfo:
        """Copy the session up to and including the message ``at`` (all of it when
        ``None``) into the new session ``new_session_id``; the new session's record."""
        ...

    def branches(self, session_id: str) -> list[SessionInfo]:
        """The sessions forked from ``session_id``, oldest first."""
        ...

    def usage(
        self,
        session_id: str | None = None,
        *,
        owner: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> UsageReport:
        """What the messages carrying a usage add up to: of one session, of ``owner``'s
        sessions, or of all, recorded at or after ``since`` and before ``until``."""
        ...

    def search(
        self,
        query: str,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        markers: tuple[str, str] = DEFAULT_MARKERS,
    ) -> SearchPage:
        """The messages whose visible text matches ``query`` (every word, ``"phrases"``
        in order, the last word as a prefix), best first, a page at a time; of every
        session, of ``owner``'s or of one session."""
        ...


class SessionView:
    """One session of a storage: the storage's methods without the session id.

    Examples:
        >>> from sqlmemory import SqlStorage
        >>> view = SqlStorage.from_url("sqlite://").session("chat-1")
        >>> view.session_id
        'chat-1'

    Args:
        storage: the storage the session lives in.
        session_id: the session; checked when the view is made.
    """

    def __init__(self, storage: Storage, session_id: str) -> None:
        self.storage = storage
        self.session_id = check_session_id(session_id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r}, {self.session_id!r})"

    def append(self, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none."""
        self.storage.append(self.session_id, *messages)

    def load(self, policy: Policy | None = None) -> list[Message]:
        """The whole history oldest first, or ``policy``'s window."""
        return self.storage.load(self.session_id, policy)

    def save(self, messages: Sequence[Message]) -> None:
        """Replace the whole history with ``messages``; ``[]`` clears it."""
        self.storage.save(self.session_id, messages)

    def recent(self, n: int) -> list[Message]:
        """At most the newest ``n`` messages, in whole groups, newest last."""
        return self.storage.recent(self.session_id, n)

    def evict(self, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; the number deleted."""
        return self.storage.evict(self.session_id, keep)

    def clear(self) -> int:
        """Delete the session and all it owns; the number of messages deleted."""
        return self.storage.clear(self.session_id)

    def pop(self) -> Message | None:
        """Remove and return the newest message; ``None`` when the session is empty."""
        return self.storage.pop(self.session_id)

    def compact(self, summarize: Summarizer, *, keep: Policy = DEFAULT_KEEP) -> int:
        """Replace the messages older than ``keep``'s window with ``summarize(older)``,
        unless the session changed meanwhile; the number of messages replaced."""
        return self.storage.compact(self.session_id, summarize, keep=keep)

    def count(self) -> int:
        """The number of messages in the session."""
        return self.storage.count(self.session_id)

    def session_info(self) -> SessionInfo | None:
        """The session's record, or ``None`` when the session does not exist."""
        return self.storage.session_info(self.session_id)

    def update_session(
        self,
        *,
        title: str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
        owner: str | Unset | None = UNSET,
    ) -> None:
        """Set the session's title, metadata and/or owner; left out: unchanged; ``None``:
        cleared."""
        self.storage.update_session(self.session_id, title=title, metadata=metadata, owner=owner)

    def fork(self, new_session_id: str, *, at: str | None = None) -> SessionInfo:
        """Copy the session up to and including the message ``at`` (all of it when
        ``None``) into the new session ``new_session_id``; the new session's record."""
        return self.storage.fork(self.session_id, new_session_id, at=at)

    def branches(self) -> list[SessionInfo]:
        """The sessions forked from this one, oldest first."""
        return self.storage.branches(self.session_id)
