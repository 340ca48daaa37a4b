"""LangChain: langchain-core messages to and from sqlmemory, and a chat history over a storage.

Needs ``pip install 'sqlmemory[langchain]'`` (``langchain-core``). The guide is
``docs/integrations/langchain.md``.

- :func:`from_langchain` reads ``BaseMessage`` values: string or block content (LangChain's
  standard blocks: text, image, file, reasoning, tool calls), ``AIMessage.tool_calls`` and
  its invalid tool calls, a ``ToolMessage`` and its ``status`` (``"error"`` is
  :attr:`~sqlmemory.Message.is_error`). What has no common meaning (ids, names,
  ``additional_kwargs``, ``response_metadata``, ``usage_metadata``, an ``artifact``, block
  fields, blocks of other kinds) is kept under the ``"langchain"`` key of ``extras``.
- :func:`to_langchain` gives them back equal to what was read (string content comes back as
  a string, block lists as block lists), and turns messages from other sources into the
  standard blocks.
- :class:`SqlMemoryChatHistory` is a ``BaseChatMessageHistory`` over a storage, for code
  that uses ``RunnableWithMessageHistory``; it can read a window (``policy=``) that never
  separates a tool call from its result.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import items_of
from sqlmemory.policy import Policy
from sqlmemory.storage import Storage
from sqlmemory.types import Message

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import BaseMessage
    from pydantic import ValidationError
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.langchain needs langchain-core: pip install 'sqlmemory[langchain]'"
    ) from exc

# After the check above, which names the extra to install: both import langchain-core.
from sqlmemory.integrations._langchain_read import LANGCHAIN, message_of
from sqlmemory.integrations._langchain_write import langchain_message_of

__all__ = ["LANGCHAIN", "SqlMemoryChatHistory", "from_langchain", "to_langchain"]


def from_langchain(messages: Iterable[BaseMessage]) -> list[Message]:
    """sqlmemory messages of LangChain messages, ready to store.

    Examples:
        >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        >>> history = from_langchain([
        ...     HumanMessage("What is 6 x 7?"),
        ...     AIMessage("", tool_calls=[{"name": "mul", "args": {"a": 6, "b": 7}, "id": "c1"}]),
        ...     ToolMessage("42", tool_call_id="c1"),
        ... ])
        >>> [(m.role.value, m.text_content()) for m in history]
        [('user', 'What is 6 x 7?'), ('assistant', ''), ('tool', '42')]
        >>> history[1].tool_calls[0].arguments
        FrozenDict({'a': 6, 'b': 7})

    Raises:
        ConversionError: a value that is no ``BaseMessage``, a message kind sqlmemory cannot
            hold (``RemoveMessage``, a ``ChatMessage`` of an unknown role), a tool call
            without an id, fields that are not JSON or not of their LangChain type
            (content that is neither a string nor a list of strings and dicts, a
            ``usage_metadata`` LangChain's validation refuses), or an empty message; the
            message names the index.
    """
    messages = items_of(messages, "messages", single=(BaseMessage,), noun="messages")
    out: list[Message] = []
    for index, message in enumerate(messages):
        if not isinstance(message, BaseMessage):
            raise ConversionError(
                f"message {index}: expected a langchain BaseMessage, got {type(message).__name__}"
            )
        try:
            out.append(message_of(message))
        except InvalidMessageError as exc:
            raise ConversionError(f"message {index}: {exc}") from None
    return out


def to_langchain(messages: Iterable[Message]) -> list[BaseMessage]:
    """LangChain messages of sqlmemory messages: what :func:`from_langchain` read, equal.

    Messages from other sources get LangChain's standard content blocks; an item that only
    another provider understands (its opaque items, redacted thinking) is dropped with a
    :class:`~sqlmemory.formats.DroppedContentWarning`.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> to_langchain([Message.user("hi"), Message.tool("c1", "oops", is_error=True)])
        ... # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
        [HumanMessage(content='hi', ...), ToolMessage(content='oops', ..., status='error')]

    Raises:
        ConversionError: ``messages`` is not a list of :class:`~sqlmemory.Message`, or a
            message whose ``extras["langchain"]`` LangChain refuses (an ``additional_kwargs``
            that is no dict, say); the message names the index.
    """
    messages = items_of(messages, "messages", single=(Message,), noun="messages")
    out: list[BaseMessage] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise ConversionError(
                f"message {index}: expected a sqlmemory Message, got {type(message).__name__}"
            )
        try:
            out.append(langchain_message_of(message))
        except (ValidationError, TypeError, AttributeError) as exc:  # LangChain refuses it
            raise ConversionError(f"message {index}: langchain refuses it: {exc}") from None
    return out


class SqlMemoryChatHistory(BaseChatMessageHistory):
    """A LangChain chat history kept in a sqlmemory storage, one session per history.

    Messages are stored through :func:`from_langchain` and read back through
    :func:`to_langchain`; with a ``policy`` (a :class:`~sqlmemory.FixedWindow`, a
    :class:`~sqlmemory.TokenWindow`) only the window is read, in SQL, and it never sends a
    tool result without its call.

    Examples:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from sqlmemory import InMemoryStorage
        >>> history = SqlMemoryChatHistory("chat-1", InMemoryStorage())
        >>> history.add_messages([HumanMessage("hi"), AIMessage("hello!")])
        >>> [m.content for m in history.messages]
        ['hi', 'hello!']

    Args:
        session_id: the session the history lives in.
        storage: a sync storage: :class:`~sqlmemory.SqlStorage` (or an
            :class:`~sqlmemory.InMemoryStorage`).
        policy: the window that :attr:`messages` reads; all messages when ``None``.

    Raises:
        TypeError: ``storage`` is not a sync sqlmemory storage (an
            :class:`~sqlmemory.AsyncSqlStorage`, say).
    """

    def __init__(self, session_id: str, storage: Storage, *, policy: Policy | None = None) -> None:
        load = getattr(storage, "load", None)
        if not callable(load) or inspect.iscoroutinefunction(load):
            raise TypeError(
                "storage must be a sync sqlmemory storage (SqlStorage, InMemoryStorage), "
                f"not {type(storage).__name__}"
            )
        self.session_id = session_id
        self.storage = storage
        self.policy = policy

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The stored messages (the window of ``policy`` when one is set), oldest first."""
        return to_langchain(self.storage.load(self.session_id, self.policy))

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one transaction (all or none)."""
        self.storage.append(self.session_id, *from_langchain(messages))

    def clear(self) -> None:
        """Delete the session's messages."""
        self.storage.clear(self.session_id)
