"""The async storage protocol and the bound view of one session of an async storage.

This file is the single source of :mod:`sqlmemory.storage.base` (``AsyncStorage`` and
``AsyncSessionView`` become ``Storage`` and ``SessionView``): ``tools/generate_sync.py``
writes that file from this one, and a test fails when they drift. The methods and their
meaning are ``docs/contract/storage.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from sqlmemory.policy import Policy
from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.compaction import DEFAULT_KEEP, AsyncSummarizer
from sqlmemory.storage.records import DEFAULT_PAGE_LIMIT, UNSET, SessionInfo, SessionPage, Unset
from sqlmemory.storage.search_results import SearchPage
from sqlmemory.storage.search_rules import DEFAULT_MARKERS
from sqlmemory.storage.usage_report import UsageReport
from sqlmemory.types import Message

__all__ = ["AsyncSessionView", "AsyncStorage"]


@runtime_checkable
class AsyncStorage(Protocol):
    """Where sessions' messages live: the methods every storage has.

    The contract of each method, and of the errors it raises, is
    ``docs/contract/storage.md``; one test suite holds every storage to it.

    Examples:
        >>> from sqlmemory import AsyncSqlStorage
        >>> issubclass(AsyncSqlStorage, AsyncStorage)
        True
    """

    async def append(self, session_id: str, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none."""
        ...

    async def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The whole history oldest first (``[]`` if unknown), or ``policy``'s window."""
        ...

    async def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the whole history with ``messages``; ``[]`` clears it."""
        ...

    async def recent(self, session_id: str, n: int) -> list[Message]:
        """At most the newest ``n`` messages, in whole groups, newest last."""
        ...

    async def evict(self, session_id: str, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; the number deleted."""
        ...

    async def clear(self, session_id: str) -> int:
        """Delete the session and all it owns; the number of messages deleted."""
        ...

    async def pop(self, session_id: str) -> Message | None:
        """Remove and return the newest message; ``None`` when the session is empty."""
        ...

    async def compact(
        self, session_id: str, summarize: AsyncSummarizer, *, keep: Policy = DEFAULT_KEEP
    ) -> int:
        """Replace the messages older than ``keep``'s window with ``summarize(older)``,
        unless the session changed meanwhile; the number of messages replaced."""
        ...

    async def count(self, session_id: str) -> int:
        """The number of messages in the session."""
        ...

    async def sessions(self, prefix: str | None = None, *, owner: str | None = None) -> list[str]:
        """The stored session ids, sorted; only those starting with ``prefix`` if given,
        and only ``owner``'s if given."""
        ...

    async def session_info(self, session_id: str) -> SessionInfo | None:
        """The session's record, or ``None`` when the session does not exist."""
        ...

    async def update_session(
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

    async def list_sessions(
        self,
        prefix: str | None = None,
        *,
        owner: str | None = None,
        limit: int = DEFAULT_PAGE_LIMIT,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of session records, the most recently updated first."""
        ...

    async def prune(self, older_than: datetime | timedelta) -> int:
        """Delete every session not updated since ``older_than``; the number deleted."""
        ...

    def owned_by(self, owner: str) -> AsyncStorage:
        """This storage scoped to ``owner``: other owners' sessions do not exist in it."""
        ...

    async def erase_owner(self, owner: str) -> int:
        """Delete every session of ``owner`` with all it holds; the number deleted."""
        ...

    async def fork(
        self, session_id: str, new_session_id: str, *, at: str | None = None
    ) -> SessionInfo:
        """Copy the session up to and including the message ``at`` (all of it when
        ``None``) into the new session ``new_session_id``; the new session's record."""
        ...

    async def branches(self, session_id: str) -> list[SessionInfo]:
        """The sessions forked from ``session_id``, oldest first."""
        ...

    async def usage(
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

    async def search(
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


class AsyncSessionView:
    """One session of a storage: the storage's methods without the session id.

    Examples:
        >>> from sqlmemory import AsyncSqlStorage
        >>> view = AsyncSqlStorage.from_url("sqlite+aiosqlite://").session("chat-1")
        >>> view.session_id
        'chat-1'

    Args:
        storage: the storage the session lives in.
        session_id: the session; checked when the view is made.
    """

    def __init__(self, storage: AsyncStorage, session_id: str) -> None:
        self.storage = storage
        self.session_id = check_session_id(session_id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r}, {self.session_id!r})"

    async def append(self, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none."""
        await self.storage.append(self.session_id, *messages)

    async def load(self, policy: Policy | None = None) -> list[Message]:
        """The whole history oldest first, or ``policy``'s window."""
        return await self.storage.load(self.session_id, policy)

    async def save(self, messages: Sequence[Message]) -> None:
        """Replace the whole history with ``messages``; ``[]`` clears it."""
        await self.storage.save(self.session_id, messages)

    async def recent(self, n: int) -> list[Message]:
        """At most the newest ``n`` messages, in whole groups, newest last."""
        return await self.storage.recent(self.session_id, n)

    async def evict(self, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; the number deleted."""
        return await self.storage.evict(self.session_id, keep)

    async def clear(self) -> int:
        """Delete the session and all it owns; the number of messages deleted."""
        return await self.storage.clear(self.session_id)

    async def pop(self) -> Message | None:
        """Remove and return the newest message; ``None`` when the session is empty."""
        return await self.storage.pop(self.session_id)

    async def compact(self, summarize: AsyncSummarizer, *, keep: Policy = DEFAULT_KEEP) -> int:
        """Replace the messages older than ``keep``'s window with ``summarize(older)``,
        unless the session changed meanwhile; the number of messages replaced."""
        return await self.storage.compact(self.session_id, summarize, keep=keep)

    async def count(self) -> int:
        """The number of messages in the session."""
        return await self.storage.count(self.session_id)

    async def session_info(self) -> SessionInfo | None:
        """The session's record, or ``None`` when the session does not exist."""
        return await self.storage.session_info(self.session_id)

    async def update_session(
        self,
        *,
        title: str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
        owner: str | Unset | None = UNSET,
    ) -> None:
        """Set the session's title, metadata and/or owner; left out: unchanged; ``None``:
        cleared."""
        await self.storage.update_session(
            self.session_id, title=title, metadata=metadata, owner=owner
        )

    async def fork(self, new_session_id: str, *, at: str | None = None) -> SessionInfo:
        """Copy the session up to and including the message ``at`` (all of it when
        ``None``) into the new session ``new_session_id``; the new session's record."""
        return await self.storage.fork(self.session_id, new_session_id, at=at)

    async def branches(self) -> list[SessionInfo]:
        """The sessions forked from this one, oldest first."""
        return await self.storage.branches(self.session_id)
