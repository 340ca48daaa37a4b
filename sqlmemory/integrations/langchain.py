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

import base64
import binascii
import inspect
import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats import DroppedContentWarning
from sqlmemory.formats._converting import items_of
from sqlmemory.policy import Policy
from sqlmemory.storage import Storage
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        ChatMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from pydantic import ValidationError
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.langchain needs langchain-core: pip install 'sqlmemory[langchain]'"
    ) from exc

__all__ = ["LANGCHAIN", "SqlMemoryChatHistory", "from_langchain", "to_langchain"]

LANGCHAIN = "langchain"
"""The key of this adapter's part of ``extras``, and the ``provider`` of its opaque blocks."""

_ROLE_OF_TYPE = {"human": Role.USER, "ai": Role.ASSISTANT, "system": Role.SYSTEM}
_MESSAGE_FIELDS = ("name", "additional_kwargs", "response_metadata")
_FIELD_TYPES: dict[str, type] = {"name": str, "additional_kwargs": dict, "response_metadata": dict}
_BLOCK_META = frozenset({"type", "text", "base64", "url", "file_id", "mime_type"})


# -- from LangChain ------------------------------------------------------------------------


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
            (content that is neither a string nor a list of strings and dicts), or an
            empty message; the message names the index.
    """
    messages = items_of(messages, "messages", single=(BaseMessage,), noun="messages")
    out: list[Message] = []
    for index, message in enumerate(messages):
        if not isinstance(message, BaseMessage):
            raise ConversionError(
                f"message {index}: expected a langchain BaseMessage, got {type(message).__name__}"
            )
        try:
            out.append(_from_one(message))
        except InvalidMessageError as exc:
            raise ConversionError(f"message {index}: {exc}") from None
    return out


def _from_one(message: BaseMessage) -> Message:
    role, own = _role_of(message)
    blocks = _blocks_of(message.content, own)
    if isinstance(message, AIMessage):
        blocks.extend(_calls_of(message, blocks))
        if message.usage_metadata is not None:
            own["usage_metadata"] = dict(_checked(message.usage_metadata, dict, "usage_metadata"))
    for name in _MESSAGE_FIELDS:
        value = getattr(message, name)
        if value:
            own[name] = _checked(value, _FIELD_TYPES[name], name)
    if message.id is None:
        own["id"] = None
    tool_call_id = None
    is_error = False
    if isinstance(message, ToolMessage):
        tool_call_id = message.tool_call_id
        is_error = message.status == "error"
        if message.artifact is not None:
            _keep_artifact(message.artifact, own)
    elif role is not Role.TOOL and not any(not _blank(b) for b in blocks):
        raise InvalidMessageError(f"an empty {message.type} message cannot be stored")
    return Message(
        role,
        blocks,
        tool_call_id=tool_call_id,
        id=message.id,
        is_error=is_error,
        extras={LANGCHAIN: own} if own else None,
    )


def _checked(value: Any, kind: type, what: str) -> Any:
    """``value`` when it is a ``kind``, as LangChain's own validation would have it."""
    if not isinstance(value, kind):
        raise InvalidMessageError(f"{what} must be a {kind.__name__}, not {type(value).__name__}")
    return value


def _keep_artifact(artifact: Any, own: dict[str, Any]) -> None:
    """Keep a tool's ``artifact`` when it is JSON; other objects are dropped with a warning."""
    try:
        json.dumps(artifact, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        warnings.warn(
            f"a ToolMessage artifact of type {type(artifact).__name__} dropped: it is not JSON",
            DroppedContentWarning,
            stacklevel=5,
        )
        return
    own["artifact"] = artifact


def _blank(block: Block) -> bool:
    return isinstance(block, TextBlock) and not block.text


def _role_of(message: BaseMessage) -> tuple[Role, dict[str, Any]]:
    """The role of ``message``, and the start of its extras (the class, when it says more)."""
    if isinstance(message, ToolMessage):
        return Role.TOOL, {}
    if isinstance(message, ChatMessage):
        name = _checked(message.role, str, "a ChatMessage's role")
        try:
            role = Role(name)
        except ValueError:
            raise InvalidMessageError(
                f"a ChatMessage of role {name!r} has no sqlmemory role"
            ) from None
        if role is Role.TOOL:
            raise InvalidMessageError(
                "a ChatMessage of role 'tool' answers no call: use ToolMessage"
            )
        return role, {"type": "chat"}
    role_of_type = _ROLE_OF_TYPE.get(message.type) if isinstance(message.type, str) else None
    if role_of_type is None or not isinstance(message, (HumanMessage, AIMessage, SystemMessage)):
        raise InvalidMessageError(f"a {type(message).__name__} cannot be stored")
    return role_of_type, {}


def _blocks_of(content: str | list[str | dict[Any, Any]], own: dict[str, Any]) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    blocks = [_block_of(item) for item in _checked(content, list, "content")]
    if len(blocks) <= 1 and all(type(b) is TextBlock and not b.extras for b in blocks):
        # Read back, one bare text block (or none) would be string content.
        own["content"] = "blocks"
    return blocks


def _block_of(item: str | dict[Any, Any]) -> Block:
    if isinstance(item, str):
        return TextBlock(item, extras={LANGCHAIN: {"plain": True}})
    kind = _checked(item, dict, "a content block").get("type")
    rest = {k: v for k, v in item.items() if k not in _BLOCK_META}
    extras = {LANGCHAIN: rest} if rest else {}
    try:
        if kind == "text" and isinstance(item.get("text"), str):
            return TextBlock(item["text"], extras=extras)
        if kind == "reasoning" and isinstance(item.get("reasoning", ""), str):
            rest.pop("reasoning", None)
            if "reasoning" not in item:
                rest["reasoning"] = None
            return ThinkingBlock(item.get("reasoning", ""), extras={LANGCHAIN: rest})
        if kind == "tool_call":
            return _call_of(item, in_content=True)
        if kind in ("image", "file"):
            return _source_block(kind, item, rest)
    except (InvalidMessageError, ConversionError, TypeError):
        pass  # kept verbatim below
    return OpaqueBlock(LANGCHAIN, item)


def _source_block(kind: str, item: Mapping[str, Any], rest: dict[str, Any]) -> Block:
    """An image or a file block: bytes (``base64``), a URL or a file id."""
    data = None
    if "base64" in item:
        try:
            data = base64.b64decode(item["base64"], validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise TypeError("not base64") from None
        if base64.b64encode(data).decode("ascii") != item["base64"]:
            raise TypeError("base64 that does not come back as written")
    url = item.get("url")
    if isinstance(url, str) and url[:5].lower() == "data:":
        raise TypeError("a data: URL, kept verbatim")
    extras = {LANGCHAIN: rest} if rest else {}
    cls = ImageBlock if kind == "image" else DocumentBlock
    return cls(data, item.get("mime_type"), url, item.get("file_id"), extras=extras)


def _call_of(item: Mapping[str, Any], *, in_content: bool = False) -> ToolCall:
    call_id, name, args = item.get("id"), item.get("name"), item.get("args")
    if not isinstance(call_id, str):
        raise ConversionError("a tool call without an id cannot be stored")
    rest = {k: v for k, v in item.items() if k not in ("id", "name", "args", "type")}
    if in_content:
        rest["in_content"] = True
    if item.get("type") == "invalid_tool_call":
        rest["invalid"] = True
        return ToolCall(
            call_id,
            name if isinstance(name, str) and name else "?",
            arguments_text=args if isinstance(args, str) else None,
            extras={LANGCHAIN: {**rest, "name": name, "args": args}},
        )
    if not isinstance(name, str) or not isinstance(args, Mapping):
        raise ConversionError(f"tool call {call_id!r} needs a name and args as a dict")
    return ToolCall(call_id, name, args, extras={LANGCHAIN: rest} if rest else {})


def _calls_of(message: AIMessage, blocks: Sequence[Block]) -> list[ToolCall]:
    """The tool calls of ``message`` that its content does not hold already, in order."""
    in_content = {b.id for b in blocks if isinstance(b, ToolCall)}
    calls: list[ToolCall] = []
    for call in _checked(message.tool_calls, list, "tool_calls"):
        call_id = _checked(call, dict, "a tool call").get("id")
        if not isinstance(call_id, str) or call_id not in in_content:
            calls.append(_call_of(call))
    for invalid in _checked(message.invalid_tool_calls, list, "invalid_tool_calls"):
        if _checked(invalid, dict, "an invalid tool call").get("id") is None:
            raise ConversionError("an invalid tool call without an id cannot be stored")
        calls.append(_call_of(invalid))
    return calls


# -- to LangChain --------------------------------------------------------------------------


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
            out.append(_to_one(message))
        except (ValidationError, TypeError, AttributeError) as exc:  # LangChain refuses it
            raise ConversionError(f"message {index}: langchain refuses it: {exc}") from None
    return out


def _to_one(message: Message) -> BaseMessage:
    own = _own(message.extras)
    content = _content_of(message, own)
    fields: dict[str, Any] = {
        "content": content,
        "id": own.get("id", message.id),
        **{name: _thaw(own[name]) for name in _MESSAGE_FIELDS if name in own},
    }
    role = message.role
    if own.get("type") == "chat" or role in (Role.DEVELOPER, Role.DOCUMENT):
        return ChatMessage(role=role.value, **fields)
    if role is Role.TOOL:
        status = "error" if message.is_error else "success"
        if "artifact" in own:
            fields["artifact"] = _thaw(own["artifact"])
        return ToolMessage(tool_call_id=message.tool_call_id, status=status, **fields)
    if role is Role.ASSISTANT:
        calls, invalid = _lc_calls(message.tool_calls)
        usage = own.get("usage_metadata")
        return AIMessage(
            tool_calls=calls,
            invalid_tool_calls=invalid,
            usage_metadata=_thaw(usage) if usage is not None else None,
            **fields,
        )
    if role is Role.SYSTEM:
        return SystemMessage(**fields)
    return HumanMessage(**fields)


def _own(extras: Mapping[str, Any]) -> Mapping[str, Any]:
    own = extras.get(LANGCHAIN)
    return own if isinstance(own, Mapping) else {}


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def _content_of(message: Message, own: Mapping[str, Any]) -> str | list[str | dict[Any, Any]]:
    items: list[str | dict[Any, Any]] = []
    bare = own.get("content") != "blocks"
    for block in message.content:
        if isinstance(block, ToolCall):
            if _own(block.extras).get("in_content"):
                items.append(_call_block(block))
                bare = False
            continue
        item = _item_of(block)
        if item is None:
            continue
        bare = bare and type(block) is TextBlock and not block.extras
        items.append(item)
    if bare and len(items) <= 1:
        first = items[0] if items else ""
        return first if isinstance(first, str) else str(first["text"])
    return items


def _item_of(block: Block) -> str | dict[str, Any] | None:
    own = dict(_thaw(_own(block.extras)))
    if isinstance(block, TextBlock):
        if own.get("plain"):
            return block.text
        return {"type": "text", "text": block.text, **own}
    if isinstance(block, ThinkingBlock):
        item: dict[str, Any] = {"type": "reasoning"}
        if own.pop("reasoning", "") is not None:
            item["reasoning"] = block.thinking
        return {**item, **own}
    if isinstance(block, (ImageBlock, DocumentBlock)):
        return _source_item(block, own)
    if isinstance(block, OpaqueBlock) and block.provider == LANGCHAIN:
        payload: dict[str, Any] = _thaw(block.payload)
        return payload
    what = block.provider if isinstance(block, OpaqueBlock) else "redacted"
    assert isinstance(block, (OpaqueBlock, RedactedThinkingBlock))  # noqa: S101 - the union's rest
    warnings.warn(
        f"a {what} {block.kind} block dropped: langchain cannot carry it",
        DroppedContentWarning,
        stacklevel=4,
    )
    return None


def _source_item(block: ImageBlock | DocumentBlock, own: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "image" if isinstance(block, ImageBlock) else "file"}
    if block.data is not None:
        item["base64"] = base64.b64encode(block.data).decode("ascii")
    elif block.url is not None:
        item["url"] = block.url
    else:
        item["file_id"] = block.file_id
    if block.media_type is not None:
        item["mime_type"] = block.media_type
    return {**item, **own}


def _call_block(call: ToolCall) -> dict[str, Any]:
    own = {k: v for k, v in _thaw(_own(call.extras)).items() if k != "in_content"}
    args = _thaw(call.arguments) if call.arguments is not None else {}
    return {"type": "tool_call", "id": call.id, "name": call.name, "args": args, **own}


def _lc_calls(calls: Sequence[ToolCall]) -> tuple[list[Any], list[Any]]:
    valid: list[Any] = []
    invalid: list[Any] = []
    for call in calls:
        own = dict(_thaw(_own(call.extras)))
        own.pop("in_content", None)
        if own.pop("invalid", False):
            invalid.append({"type": "invalid_tool_call", "id": call.id, **own})
            continue
        args = _thaw(call.arguments) if call.arguments is not None else {}
        valid.append({"name": call.name, "args": args, "id": call.id, "type": "tool_call", **own})
    return valid, invalid


# -- the chat history ----------------------------------------------------------------------


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
