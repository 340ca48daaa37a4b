"""LlamaIndex: chat messages to and from sqlmemory, and chat stores over a storage.

Needs ``pip install 'sqlmemory[llama-index]'`` (``llama-index-core``). The guide is
``docs/integrations/llama-index.md``.

- :func:`from_llama_index` reads ``ChatMessage`` values: text, image, document, thinking
  and tool-call blocks, OpenAI-style ``additional_kwargs["tool_calls"]``, the
  ``tool_call_id`` of a tool result and token counts an LLM left in ``additional_kwargs``.
  Everything else (other ``additional_kwargs``, block fields, blocks of other kinds) is kept
  under the ``"llama_index"`` key of ``extras``.
- :func:`to_llama_index` gives them back equal to what was read (their JSON dumps equal),
  and turns messages from other sources into LlamaIndex blocks.
- :class:`SqlMemoryChatStore` is a ``BaseChatStore`` (the store of ``ChatMemoryBuffer``
  and of the agents that take one), sync and async;
  :class:`~sqlmemory.integrations._llama_index_memory.SqlMemoryDBChatStore` is the store of
  the newer ``llama_index.core.memory.Memory``, with its active and archived messages.
"""

from __future__ import annotations

from typing import Any

from sqlmemory.policy import Policy
from sqlmemory.storage.checks import check_policy

try:
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.storage.chat_store.base import BaseChatStore
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.llama_index needs llama-index-core: "
        "pip install 'sqlmemory[llama-index]'"
    ) from exc

# After the check above, which names the extra to install: both import llama-index-core.
from sqlmemory.integrations._llama_index_convert import (
    check_index,
    delete_all,
    delete_at,
    from_llama_index,
    one,
    reusing_ids,
    to_llama_index,
)
from sqlmemory.integrations._llama_index_io import Bridge
from sqlmemory.integrations._llama_index_memory import SqlMemoryDBChatStore
from sqlmemory.integrations._llama_index_read import LLAMA_INDEX

__all__ = [
    "LLAMA_INDEX",
    "SqlMemoryChatStore",
    "SqlMemoryDBChatStore",
    "from_llama_index",
    "to_llama_index",
]


class SqlMemoryChatStore(BaseChatStore):
    """A LlamaIndex chat store kept in a sqlmemory storage: one session per key.

    The one-line swap for ``SimpleChatStore`` or a SQL chat store under
    ``ChatMemoryBuffer.from_defaults(chat_store=..., chat_store_key=...)``. Messages are
    stored through :func:`from_llama_index` and read back through :func:`to_llama_index`.
    Every method has its async twin; how each is served over a sync or an async storage is
    in :mod:`~sqlmemory.integrations._llama_index_io`. Deletes by position
    (``delete_message``) happen in one transaction under the session's lock.

    Examples:
        >>> from llama_index.core.llms import ChatMessage
        >>> from llama_index.core.memory import ChatMemoryBuffer
        >>> from sqlmemory import InMemoryStorage
        >>> store = SqlMemoryChatStore(InMemoryStorage())
        >>> memory = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="chat-1")
        >>> memory.put(ChatMessage(role="user", content="hi"))
        >>> [m.content for m in store.get_messages("chat-1")], store.get_keys()
        (['hi'], ['chat-1'])

    Args:
        storage: a sqlmemory storage (:class:`~sqlmemory.SqlStorage`,
            :class:`~sqlmemory.AsyncSqlStorage`, :class:`~sqlmemory.InMemoryStorage`) or
            an owned view of one (``storage.owned_by(user)``).
        policy: the window ``get_messages`` reads (a :class:`~sqlmemory.TokenWindow`, say),
            in SQL; all messages when ``None``. Positions (``delete_message``) always
            count from the first stored message.

    Raises:
        TypeError: ``storage`` is not a sqlmemory storage, or ``policy`` not a policy.
    """

    _bridge: Bridge = PrivateAttr()
    _policy: Policy | None = PrivateAttr(default=None)

    def __init__(self, storage: Any, *, policy: Policy | None = None) -> None:
        super().__init__()
        check_policy(policy)
        self._bridge = Bridge(storage)
        self._policy = policy

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the store under."""
        return "SqlMemoryChatStore"

    @property
    def storage(self) -> Any:
        """The sqlmemory storage the messages are kept in."""
        return self._bridge.storage

    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        """Replace the key's messages; what they start with that is stored stays as it is."""
        new = from_llama_index(messages)
        stored = self._bridge.call("load", key)
        self._bridge.call("save", key, reusing_ids(new, stored))

    async def aset_messages(self, key: str, messages: list[ChatMessage]) -> None:
        """Async :meth:`set_messages`."""
        new = from_llama_index(messages)
        stored = await self._bridge.run("load", key)
        await self._bridge.run("save", key, reusing_ids(new, stored))

    def get_messages(self, key: str) -> list[ChatMessage]:
        """The key's messages oldest first (the window of ``policy`` when set)."""
        return to_llama_index(self._bridge.call("load", key, self._policy))

    async def aget_messages(self, key: str) -> list[ChatMessage]:
        """Async :meth:`get_messages`."""
        return to_llama_index(await self._bridge.run("load", key, self._policy))

    def add_message(self, key: str, message: ChatMessage) -> None:
        """Append ``message`` to the key's messages."""
        self._bridge.call("append", key, *from_llama_index([message]))

    async def async_add_message(self, key: str, message: ChatMessage) -> None:
        """Async :meth:`add_message`."""
        await self._bridge.run("append", key, *from_llama_index([message]))

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        """Delete the key's messages and return them; ``None`` when there were none."""
        return to_llama_index(self._bridge.call("_splice", key, delete_all)) or None

    async def adelete_messages(self, key: str) -> list[ChatMessage] | None:
        """Async :meth:`delete_messages`."""
        return to_llama_index(await self._bridge.run("_splice", key, delete_all)) or None

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Delete and return the message at list index ``idx`` (negative: from the end);
        ``None`` when there is none. One transaction under the session's lock: the index
        is that of the history as locked."""
        return one(self._bridge.call("_splice", key, delete_at(check_index(idx))))

    async def adelete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Async :meth:`delete_message`."""
        return one(await self._bridge.run("_splice", key, delete_at(check_index(idx))))

    def delete_last_message(self, key: str) -> ChatMessage | None:
        """Delete and return the newest message; ``None`` when there is none."""
        return one([m] if (m := self._bridge.call("pop", key)) is not None else [])

    async def adelete_last_message(self, key: str) -> ChatMessage | None:
        """Async :meth:`delete_last_message`."""
        popped = await self._bridge.run("pop", key)
        return one([popped] if popped is not None else [])

    def get_keys(self) -> list[str]:
        """The keys (session ids) that hold messages, sorted."""
        return list(self._bridge.call("sessions"))

    async def aget_keys(self) -> list[str]:
        """Async :meth:`get_keys`."""
        return list(await self._bridge.run("sessions"))
