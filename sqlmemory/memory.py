"""ShortTermMemory: one session of a storage with a window policy applied at read time."""

from __future__ import annotations

from sqlmemory.policy import NoOp, Policy
from sqlmemory.storage.base import AsyncStorage, Storage, check_session_id
from sqlmemory.types import Message

__all__ = ["AsyncShortTermMemory", "ShortTermMemory"]


class ShortTermMemory:
    """A conversation's memory: append what happens, read the window to send.

    Args:
        storage: where the messages live.
        session_id: the conversation.
        policy: the window :meth:`messages` returns (every message by default).
    """

    def __init__(self, storage: Storage, session_id: str, policy: Policy | None = None) -> None:
        self.storage = storage
        self.session_id = check_session_id(session_id)
        self.policy: Policy = policy if policy is not None else NoOp()

    def __repr__(self) -> str:
        return f"ShortTermMemory({self.storage!r}, {self.session_id!r}, {self.policy!r})"

    def append(self, *messages: Message) -> None:
        """Add messages at the end of the conversation, atomically."""
        self.storage.append(self.session_id, *messages)

    def messages(self) -> list[Message]:
        """The policy's window of the conversation, oldest first."""
        return self.storage.load(self.session_id, self.policy)


class AsyncShortTermMemory:
    """:class:`ShortTermMemory` over an async storage."""

    def __init__(
        self, storage: AsyncStorage, session_id: str, policy: Policy | None = None
    ) -> None:
        self.storage = storage
        self.session_id = check_session_id(session_id)
        self.policy: Policy = policy if policy is not None else NoOp()

    def __repr__(self) -> str:
        return f"AsyncShortTermMemory({self.storage!r}, {self.session_id!r}, {self.policy!r})"

    async def append(self, *messages: Message) -> None:
        """Add messages at the end of the conversation, atomically."""
        await self.storage.append(self.session_id, *messages)

    async def messages(self) -> list[Message]:
        """The policy's window of the conversation, oldest first."""
        return await self.storage.load(self.session_id, self.policy)
