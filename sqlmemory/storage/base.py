"""The storage protocol, the bound session views, and the checks every storage shares."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from sqlmemory.errors import BlobTooLargeError, DuplicateMessageError, InvalidSessionIdError
from sqlmemory.policy import Policy
from sqlmemory.types import DocumentBlock, ImageBlock, Message

__all__ = [
    "DEFAULT_MAX_BLOB_BYTES",
    "RETRY_DELAYS",
    "AsyncSessionView",
    "AsyncStorage",
    "SessionView",
    "Storage",
    "check_messages",
    "check_session_id",
    "same_content",
]

DEFAULT_MAX_BLOB_BYTES = 20 * 1024 * 1024
RETRY_DELAYS = (0.005, 0.02, 0.05, 0.1, 0.2)
"""Seconds to wait before each new attempt of a write that hit a deadlock."""
MAX_SESSION_ID_LENGTH = 255


def check_session_id(session_id: object) -> str:
    """Return ``session_id`` if it is a valid id, else raise.

    Raises:
        TypeError: it is not a ``str``.
        InvalidSessionIdError: it is empty, over 255 characters, has leading or trailing
            whitespace, holds control characters or a lone surrogate.
    """
    if not isinstance(session_id, str):
        raise TypeError(f"session id must be a str, not {type(session_id).__name__}")
    if not session_id:
        raise InvalidSessionIdError("session id must not be empty")
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        raise InvalidSessionIdError(f"session id is longer than {MAX_SESSION_ID_LENGTH} characters")
    if session_id != session_id.strip():
        raise InvalidSessionIdError("session id has leading or trailing whitespace")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in session_id):
        raise InvalidSessionIdError("session id holds a control character or a lone surrogate")
    return session_id


def same_content(a: Message, b: Message) -> bool:
    """Whether two messages are the same message (``recorded_at`` aside)."""
    return (
        a.id == b.id
        and a.role == b.role
        and a.content == b.content
        and a.tool_calls == b.tool_calls
        and a.tool_call_id == b.tool_call_id
        and a.metadata == b.metadata
    )


def check_messages(messages: Iterable[object], max_blob_bytes: int) -> list[Message]:
    """Validate a batch at the storage boundary and drop exact repeats of an id.

    Raises:
        InvalidMessageError: an item is not a :class:`Message`.
        BlobTooLargeError: image or document bytes exceed ``max_blob_bytes``.
        DuplicateMessageError: one id appears twice with different content.
    """
    from sqlmemory.errors import InvalidMessageError

    batch: list[Message] = []
    seen: dict[str, Message] = {}
    for message in messages:
        if not isinstance(message, Message):
            raise InvalidMessageError(f"expected a Message, got {type(message).__name__}")
        for block in message.content:
            data = block.data if isinstance(block, (ImageBlock, DocumentBlock)) else None
            if data is not None and len(data) > max_blob_bytes:
                raise BlobTooLargeError(
                    f"{block.kind} of {len(data)} bytes exceeds the limit of "
                    f"{max_blob_bytes} bytes"
                )
        earlier = seen.get(message.id)
        if earlier is not None:
            if not same_content(earlier, message):
                raise DuplicateMessageError(
                    f"message id {message.id!r} appears twice with different content"
                )
            continue
        seen[message.id] = message
        batch.append(message)
    return batch


@runtime_checkable
class Storage(Protocol):
    """Where sessions' messages live (see SPEC section 3)."""

    def append(self, session_id: str, *messages: Message) -> None: ...
    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]: ...
    def save(self, session_id: str, messages: Sequence[Message]) -> None: ...
    def recent(self, session_id: str, n: int) -> list[Message]: ...
    def evict(self, session_id: str, keep: int) -> int: ...
    def clear(self, session_id: str) -> int: ...
    def count(self, session_id: str) -> int: ...
    def sessions(self, prefix: str | None = None) -> list[str]: ...


@runtime_checkable
class AsyncStorage(Protocol):
    """The same as :class:`Storage`, every method a coroutine."""

    async def append(self, session_id: str, *messages: Message) -> None: ...
    async def load(self, session_id: str, policy: Policy | None = None) -> list[Message]: ...
    async def save(self, session_id: str, messages: Sequence[Message]) -> None: ...
    async def recent(self, session_id: str, n: int) -> list[Message]: ...
    async def evict(self, session_id: str, keep: int) -> int: ...
    async def clear(self, session_id: str) -> int: ...
    async def count(self, session_id: str) -> int: ...
    async def sessions(self, prefix: str | None = None) -> list[str]: ...


class SessionView:
    """One session of a storage: the storage's methods without the session id."""

    def __init__(self, storage: Storage, session_id: str) -> None:
        self.storage = storage
        self.session_id = check_session_id(session_id)

    def __repr__(self) -> str:
        return f"SessionView({self.storage!r}, {self.session_id!r})"

    def append(self, *messages: Message) -> None:
        self.storage.append(self.session_id, *messages)

    def load(self, policy: Policy | None = None) -> list[Message]:
        return self.storage.load(self.session_id, policy)

    def save(self, messages: Sequence[Message]) -> None:
        self.storage.save(self.session_id, messages)

    def recent(self, n: int) -> list[Message]:
        return self.storage.recent(self.session_id, n)

    def evict(self, keep: int) -> int:
        return self.storage.evict(self.session_id, keep)

    def clear(self) -> int:
        return self.storage.clear(self.session_id)

    def count(self) -> int:
        return self.storage.count(self.session_id)


class AsyncSessionView:
    """One session of an async storage: its coroutines without the session id."""

    def __init__(self, storage: AsyncStorage, session_id: str) -> None:
        self.storage = storage
        self.session_id = check_session_id(session_id)

    def __repr__(self) -> str:
        return f"AsyncSessionView({self.storage!r}, {self.session_id!r})"

    async def append(self, *messages: Message) -> None:
        await self.storage.append(self.session_id, *messages)

    async def load(self, policy: Policy | None = None) -> list[Message]:
        return await self.storage.load(self.session_id, policy)

    async def save(self, messages: Sequence[Message]) -> None:
        await self.storage.save(self.session_id, messages)

    async def recent(self, n: int) -> list[Message]:
        return await self.storage.recent(self.session_id, n)

    async def evict(self, keep: int) -> int:
        return await self.storage.evict(self.session_id, keep)

    async def clear(self) -> int:
        return await self.storage.clear(self.session_id)

    async def count(self) -> int:
        return await self.storage.count(self.session_id)
