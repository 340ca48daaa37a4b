"""LangChain messages read into sqlmemory messages: the inside of :func:`from_langchain`.

What has a common meaning becomes sqlmemory's own (roles, standard content blocks, tool
calls, a ``ToolMessage``'s status); the rest is kept under ``extras["langchain"]``
(:data:`LANGCHAIN`), laid out as :mod:`sqlmemory.integrations._langchain_write` reads it
back. A field of the wrong type, as LangChain's own validation would refuse it, raises
:class:`~sqlmemory.errors.InvalidMessageError`, which :func:`from_langchain` names with the
message's index.
"""

from __future__ import annotations

import base64
import binascii
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic import ValidationError

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats import DroppedContentWarning
from sqlmemory.integrations._langchain_usage import usage_of
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

__all__ = ["LANGCHAIN", "MESSAGE_FIELDS", "message_of"]

LANGCHAIN = "langchain"
"""The key of this adapter's part of ``extras``, and the ``provider`` of its opaque blocks."""

MESSAGE_FIELDS = ("name", "additional_kwargs", "response_metadata")
"""The fields of every LangChain message kept, when set, under their own names."""

_ROLE_OF_TYPE = {"human": Role.USER, "ai": Role.ASSISTANT, "system": Role.SYSTEM}
_FIELD_TYPES: dict[str, type] = {"name": str, "additional_kwargs": dict, "response_metadata": dict}
_BLOCK_META = frozenset({"type", "text", "base64", "url", "file_id", "mime_type"})


def message_of(message: BaseMessage) -> Message:
    """The sqlmemory message of one LangChain message.

    Raises:
        InvalidMessageError: a field LangChain would refuse, or a message sqlmemory cannot
            hold.
        ConversionError: a tool call without an id, or without a name and args.
    """
    role, own = _role_of(message)
    blocks = _blocks_of(message.content, own)
    usage = None
    if isinstance(message, AIMessage):
        blocks.extend(_calls_of(message, blocks))
        if message.usage_metadata is not None:
            own["usage_metadata"] = _usage_of(message.usage_metadata)
            metadata = _checked(message.response_metadata, dict, "response_metadata")
            usage = usage_of(own["usage_metadata"], metadata)
    for name in MESSAGE_FIELDS:
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
        usage=usage,
    )


def _checked(value: Any, kind: type, what: str) -> Any:
    """``value`` when it is a ``kind``, as LangChain's own validation would have it."""
    if not isinstance(value, kind):
        raise InvalidMessageError(f"{what} must be a {kind.__name__}, not {type(value).__name__}")
    return value


def _usage_of(value: Any) -> dict[str, Any]:
    """``usage_metadata`` as read, when LangChain's own validation accepts it: it is given
    back to ``AIMessage`` as it is, so what LangChain would refuse then is refused now."""
    usage = dict(_checked(value, dict, "usage_metadata"))
    try:
        AIMessage("", usage_metadata=usage)
    except ValidationError as exc:
        problems = "; ".join(_problem(error["loc"][1:], error["msg"]) for error in exc.errors())
        raise InvalidMessageError(f"usage_metadata is refused by langchain: {problems}") from None
    except (ValueError, TypeError, AttributeError) as exc:  # LangChain's other refusals
        raise InvalidMessageError(
            f"usage_metadata is refused by langchain ({type(exc).__name__})"
        ) from None
    return usage


def _problem(where: tuple[int | str, ...], what: str) -> str:
    """One of pydantic's errors, without the value at fault (which may be huge)."""
    path = ".".join(str(part)[:40] for part in where)
    return f"{path}: {what}" if path else what


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
