"""The store of LlamaIndex's ``Memory``: an ``AsyncDBChatStore`` over a sqlmemory storage.

``Memory`` keeps a FIFO queue of active messages and archives the oldest ones when the
queue passes its token limit (``archive_oldest_messages``), handing them to its memory
blocks. Archived messages are always the oldest of a session, so the status is one number
kept in the session's metadata (:data:`ARCHIVED_KEY`): how many messages at the head are
archived. Every method that reads or changes that number does it in one transaction
under the session's lock (``_splice``), so archiving, deleting by position and reading
the active queue never see a half-done write of another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus

from sqlmemory.integrations._llama_index_convert import (
    check_index,
    from_llama_index,
    one,
    to_llama_index,
)
from sqlmemory.integrations._llama_index_io import Bridge
from sqlmemory.storage.joint import Splice, SplicePlan
from sqlmemory.storage.records import SessionInfo

__all__ = ["ARCHIVED_KEY", "SqlMemoryDBChatStore"]

ARCHIVED_KEY = "llama_index_archived"
"""The session metadata key holding how many of its oldest messages are archived."""


def _state(info: SessionInfo | None) -> tuple[int, int, dict[str, Any]]:
    """The session's message count, archived count (never past the count: a message
    deleted by other means) and metadata."""
    if info is None:
        return 0, 0, {}
    archived = info.metadata.get(ARCHIVED_KEY, 0)
    if isinstance(archived, bool) or not isinstance(archived, int):
        archived = 0
    return info.message_count, min(max(archived, 0), info.message_count), dict(info.metadata)


def _with(metadata: dict[str, Any], archived: int) -> dict[str, Any]:
    metadata[ARCHIVED_KEY] = archived
    return metadata


def _span(status: MessageStatus | None, count: int, archived: int) -> tuple[int, int]:
    if status is None:
        return 0, count
    if MessageStatus(status) is MessageStatus.ARCHIVED:
        return 0, archived
    return archived, count


def _read(status: MessageStatus | None, limit: int | None, offset: int | None) -> SplicePlan:
    def plan(info: SessionInfo | None) -> Splice:
        count, archived, _ = _state(info)
        start, stop = _span(status, count, archived)
        start += max(offset or 0, 0)
        return Splice(start, stop if limit is None else min(stop, start + max(limit, 0)))

    return plan


def _add(status: MessageStatus, n: int) -> SplicePlan:
    def plan(info: SessionInfo | None) -> Splice:
        count, archived, metadata = _state(info)
        if MessageStatus(status) is MessageStatus.ACTIVE:
            return Splice()
        if archived != count:
            raise ValueError(
                "archived messages are the oldest of a session: none can be added after active ones"
            )
        return Splice(metadata=_with(metadata, archived + n))

    return plan


def _replace(status: MessageStatus, n: int) -> SplicePlan:
    def plan(info: SessionInfo | None) -> Splice:
        count, _, metadata = _state(info)
        archived = n if MessageStatus(status) is MessageStatus.ARCHIVED else 0
        return Splice(0, count, delete=True, metadata=_with(metadata, archived))

    return plan


def _delete(status: MessageStatus | None) -> SplicePlan:
    def plan(info: SessionInfo | None) -> Splice:
        count, archived, metadata = _state(info)
        start, stop = _span(status, count, archived)
        left = archived if start > 0 else archived - min(archived, stop)
        return Splice(start, stop, delete=True, metadata=_with(metadata, left))

    return plan


def _delete_at(idx: int) -> SplicePlan:
    def plan(info: SessionInfo | None) -> Splice:
        count, archived, metadata = _state(info)
        at = idx + count if idx < 0 else idx
        if not 0 <= at < count:
            return Splice()
        left = archived - 1 if at < archived else archived
        return Splice(at, at + 1, delete=True, metadata=_with(metadata, left))

    return plan


def _oldest(n: int, archive: bool) -> SplicePlan:
    def plan(info: SessionInfo | None) -> Splice:
        count, archived, metadata = _state(info)
        stop = min(count, archived + max(n, 0))
        if archive:
            return Splice(archived, stop, metadata=_with(metadata, stop))
        return Splice(archived, stop, delete=True)

    return plan


class SqlMemoryDBChatStore(AsyncDBChatStore):
    """The store of LlamaIndex's ``Memory`` kept in a sqlmemory storage: one session per key.

    The one-line swap for ``SQLAlchemyChatStore``:
    ``Memory.from_defaults(session_id=..., chat_store=SqlMemoryDBChatStore(storage))``.
    Active and archived messages are one history, the archived ones its oldest (their
    number in the session's metadata, :data:`ARCHIVED_KEY`). Every method is async; over
    a sync storage each call runs in a worker thread.

    Examples:
        >>> import asyncio
        >>> from llama_index.core.llms import ChatMessage
        >>> from llama_index.core.memory import Memory
        >>> from sqlmemory import InMemoryStorage
        >>> store = SqlMemoryDBChatStore(InMemoryStorage())
        >>> memory = Memory.from_defaults(session_id="chat-1", chat_store=store)
        >>> memory.put(ChatMessage(role="user", content="hi"))
        >>> [m.content for m in memory.get()], asyncio.run(store.count_messages("chat-1"))
        (['hi'], 1)

    Args:
        storage: a sqlmemory storage or an owned view of one, as for
            :class:`~sqlmemory.integrations.llama_index.SqlMemoryChatStore`.

    Raises:
        TypeError: ``storage`` is not a sqlmemory storage.
    """

    _bridge: Bridge = PrivateAttr()

    def __init__(self, storage: Any) -> None:
        super().__init__()
        self._bridge = Bridge(storage)

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the store under."""
        return "SqlMemoryDBChatStore"

    @property
    def storage(self) -> Any:
        """The sqlmemory storage the messages are kept in."""
        return self._bridge.storage

    async def _splice(self, key: str, plan: Callable[..., Splice], *messages: Any) -> Any:
        return await self._bridge.run("_splice", key, plan, list(messages))

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        """The key's messages of ``status`` (all when ``None``) oldest first, from
        ``offset`` on, at most ``limit``."""
        return to_llama_index(await self._splice(key, _read(status, limit, offset)))

    async def count_messages(
        self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE
    ) -> int:
        """How many of the key's messages have ``status`` (all when ``None``)."""
        count, archived, _ = _state(await self._bridge.run("session_info", key))
        start, stop = _span(status, count, archived)
        return stop - start

    async def add_message(
        self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Append ``message``; an archived one only while no message is active."""
        await self.add_messages(key, [message], status)

    async def add_messages(
        self,
        key: str,
        messages: list[ChatMessage],
        status: MessageStatus = MessageStatus.ACTIVE,
    ) -> None:
        """Append ``messages``, all or none; archived ones only while none is active.

        Raises:
            ValueError: archived messages after active ones (nothing is written).
        """
        new = from_llama_index(messages)
        if MessageStatus(status) is MessageStatus.ACTIVE:
            await self._bridge.run("append", key, *new)
        else:
            await self._splice(key, _add(status, len(new)), *new)

    async def set_messages(
        self,
        key: str,
        messages: list[ChatMessage],
        status: MessageStatus = MessageStatus.ACTIVE,
    ) -> None:
        """Replace the key's messages with ``messages``, all of ``status``, in one
        transaction."""
        new = from_llama_index(messages)
        await self._splice(key, _replace(status, len(new)), *new)

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Delete and return the message at list index ``idx`` of all the key's messages
        (negative: from the end); ``None`` when there is none."""
        return one(await self._splice(key, _delete_at(check_index(idx))))

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        """Delete the key's messages of ``status`` (all when ``None``)."""
        if status is None:
            await self._bridge.run("clear", key)
        else:
            await self._splice(key, _delete(status))

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Delete the ``n`` oldest active messages and return them."""
        return to_llama_index(await self._splice(key, _oldest(check_index(n), archive=False)))

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        """Archive the ``n`` oldest active messages and return them."""
        return to_llama_index(await self._splice(key, _oldest(check_index(n), archive=True)))

    async def get_keys(self) -> list[str]:
        """The keys (session ids) that hold messages, sorted."""
        return list(await self._bridge.run("sessions"))
