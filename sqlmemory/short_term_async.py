"""AsyncShortTermMemory: one session of a storage, with a window policy.

This file is the single source of :mod:`sqlmemory.short_term` (``AsyncShortTermMemory``
becomes ``ShortTermMemory``): ``tools/generate_sync.py`` writes that file from this one.
"""

from __future__ import annotations

from sqlmemory.policy import NoOp, Policy
from sqlmemory.storage.base_async import AsyncStorage
from sqlmemory.storage.checks import check_session_id
from sqlmemory.types import Message

__all__ = ["AsyncShortTermMemory"]


class AsyncShortTermMemory:
    """A conversation's memory: append what happens, read the window to send.

    Examples:
        >>> from sqlmemory import AsyncSqlStorage, FixedWindow
        >>> storage = AsyncSqlStorage.from_url("sqlite+aiosqlite://")
        >>> AsyncShortTermMemory(storage, "chat-1", FixedWindow(10)).policy
        FixedWindow(n=10)

    Args:
        storage: where the messages live.
        session_id: the conversation.
        policy: the window :meth:`messages` returns (every message by default).
    """

    def __init__(
        self, storage: AsyncStorage, session_id: str, policy: Policy | None = None
    ) -> None:
        self.storage = storage
        self.session_id = check_session_id(session_id)
        self.policy: Policy = policy if policy is not None else NoOp()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r}, {self.session_id!r}, {self.policy!r})"

    async def append(self, *messages: Message) -> None:
        """Add messages at the end of the conversation, atomically."""
        await self.storage.append(self.session_id, *messages)

    async def messages(self) -> list[Message]:
        """The policy's window of the conversation, oldest first."""
        return await self.storage.load(self.session_id, self.policy)
