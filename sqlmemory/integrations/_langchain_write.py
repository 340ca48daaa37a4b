"""sqlmemory messages written as LangChain messages: the inside of :func:`to_langchain`.

A message read by :mod:`sqlmemory.integrations._langchain_read` comes back equal, from
what it kept under ``extras["langchain"]``; a message from another source gets LangChain's
standard content blocks, and what only another provider understands is dropped with a
:class:`~sqlmemory.formats.DroppedContentWarning`. What LangChain refuses raises its own
errors (pydantic's ``ValidationError``, ``TypeError``), which :func:`to_langchain` names
with the message's index.
"""

from __future__ import annotations

import base64
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

from sqlmemory.formats import DroppedContentWarning
from sqlmemory.integrations._langchain_read import LANGCHAIN, MESSAGE_FIELDS
from sqlmemory.integrations._langchain_usage import model_name_of, usage_metadata_of
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

__all__ = ["langchain_message_of"]


def langchain_message_of(message: Message) -> BaseMessage:
    """The LangChain message of one sqlmemory message (LangChain validates it)."""
    own = _own(message.extras)
    content = _content_of(message, own)
    fields: dict[str, Any] = {
        "content": content,
        "id": own.get("id", message.id),
        **{name: _thaw(own[name]) for name in MESSAGE_FIELDS if name in own},
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
        if usage is None and message.usage is not None:
            # Usage read by another converter: LangChain's form of it, and the model.
            usage = usage_metadata_of(message.usage)
            fields["response_metadata"] = model_name_of(
                message.usage, fields.get("response_metadata", {})
            )
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
