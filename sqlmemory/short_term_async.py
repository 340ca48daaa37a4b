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

    The window is the policy's: a window that keeps the system prompt and starts at a
    user message, the shape most chat requests want, is
    ``FixedWindow(n, keep_system=True, start_on="user")`` (or a ``TokenWindow``).

    Examples:
        >>> from sqlmemory import AsyncSqlStorage, FixedWindow
        >>> storage = AsyncSqlStorage.from_url("sqlite+aiosqlite://")
        >>> AsyncShortTermMemory(storage, "chat-1", FixedWindow(10)).policy
        FixedWindow(n=10)
        >>> AsyncShortTermMemory(storage, "chat-1", FixedWindow(10, keep_system=True)).policy
        FixedWindow(n=10, keep_system=True)

    Args:
        storage: where the messages live.
        session_id: the conversation.
        policy: the window :meth:`messages` returns (every message by default).

    Raises:
        InvalidSessionIdError: a bad session id (``TypeError`` for a non-``str``).
        TypeError: ``policy`` is not a policy (it has no ``apply`` method).
    """

    def __init__(
        self, storage: AsyncStorage, session_id: str, policy: Policy | None = None
    ) -> None:
        if policy is not None and (
            isinstance(policy, type) or not callable(getattr(policy, "apply", None))
        ):
            raise TypeError(
                f"policy must be a Policy (an object with an apply method), not {policy!r}"
            )
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
