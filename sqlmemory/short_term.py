"""ShortTermMemory: one session of a storage, with a window policy.

Generated from ``sqlmemory/short_term_async.py``
by ``tools/generate_sync.py``: edit that file, never this one.
"""

from __future__ import annotations

from sqlmemory.policy import NoOp, Policy
from sqlmemory.storage.base import Storage
from sqlmemory.storage.checks import check_session_id
from sqlmemory.types import Message

__all__ = ["ShortTermMemory"]


class ShortTermMemory:
    """A conversation's memory: append what happens, read the window to send.

    The window is the policy's: a window that keeps the system prompt and starts at a
    user message, the shape most chat requests want, is
    ``FixedWindow(n, keep_system=True, start_on="user")`` (or a ``TokenWindow``).

    Examples:
        >>> from sqlmemory import SqlStorage, FixedWindow
        >>> storage = SqlStorage.from_url("sqlite://")
        >>> ShortTermMemory(storage, "chat-1", FixedWindow(10)).policy
        FixedWindow(n=10)
        >>> ShortTermMemory(storage, "chat-1", FixedWindow(10, keep_system=True)).policy
        FixedWindow(n=10, keep_system=True)

    Args:
        storage: where the messages live.
        session_id: the conversation.
        policy: the window :meth:`messages` returns (every message by default).

    Raises:
        InvalidSessionIdError: a bad session id (``TypeError`` for a non-``str``).
        TypeError: ``policy`` is not a policy (it has no ``apply`` method).
    """

    def __init__(self, storage: Storage, session_id: str, policy: Policy | None = None) -> None:
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

    def append(self, *messages: Message) -> None:
        """Add messages at the end of the conversation, atomically."""
        self.storage.append(self.session_id, *messages)

    def messages(self) -> list[Message]:
        """The policy's window of the conversation, oldest first."""
        return self.storage.load(self.session_id, self.policy)
