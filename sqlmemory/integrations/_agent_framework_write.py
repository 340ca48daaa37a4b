"""sqlmemory messages written as Microsoft Agent Framework message dicts.

The inverse of :mod:`~sqlmemory.integrations._agent_framework_read`: messages it read
come back as dicts equal to the framework's ``to_dict()`` of the originals (the tool
messages of one framework message joined again); messages from other sources become the
framework's text, reasoning, function call, function result, data and URI contents. An
item that only another provider understands is dropped with a
:class:`~sqlmemory.formats.DroppedContentWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from sqlmemory.formats import DroppedContentWarning
from sqlmemory.formats._converting import format_extras
from sqlmemory.integrations._agent_framework_read import AGENT_FRAMEWORK, NO_CONTENTS, data_uri
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
from sqlmemory.types._json import thaw_json

__all__ = ["message_dicts"]

_AF_ROLES = {
    Role.USER: "user",
    Role.SYSTEM: "system",
    Role.DEVELOPER: "system",
    Role.ASSISTANT: "assistant",
    Role.TOOL: "tool",
}


def message_dicts(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The framework message dicts (``Message.from_dict`` input) of sqlmemory messages.

    A tool message with no message fields of its own (one read from the second result of
    a framework message on, or one from another source) joins the framework tool message
    before it, as the framework puts parallel results together.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        own = format_extras(message.extras, AGENT_FRAMEWORK)
        contents = _contents(message, own)
        previous = out[-1] if out else None
        if (
            message.role is Role.TOOL
            and "message" not in own
            and previous is not None
            and previous.get("role") == "tool"
        ):
            previous["contents"].extend(contents)
            continue
        base = _own_field(own, "message", {"role": _AF_ROLES[message.role]})
        out.append({**base, "contents": contents})
    return out


def _own_field(own: Mapping[str, Any], key: str, default: dict[str, Any]) -> dict[str, Any]:
    """``own[key]`` thawed, or ``default`` when it is missing or no mapping (hand-made extras)."""
    value = own.get(key)
    return thaw_json(value) if isinstance(value, Mapping) else default


def _contents(message: Message, own: Mapping[str, Any]) -> list[dict[str, Any]]:
    if message.role is Role.TOOL:
        return [_result(message, own)]
    contents = [c for c in (_content(b) for b in message.content) if c is not None]
    usages = own.get("usage")
    if isinstance(usages, (list, tuple)):
        for entry in usages:
            if isinstance(entry, Mapping) and isinstance(entry.get("at"), int):
                contents.insert(entry["at"], thaw_json(entry.get("content")))
    return contents


def _result(message: Message, own: Mapping[str, Any]) -> dict[str, Any]:
    rest = _own_field(own, "content", {})
    text = message.text_content()
    dropped = [b for b in message.content if not isinstance(b, TextBlock)]
    for block in dropped:
        _dropped(block)
    result = rest.pop("result") if "result" in rest else text
    content = {"type": "function_result", **rest, "call_id": message.tool_call_id}
    if result is not None:
        content["result"] = result
    if message.is_error and "exception" not in content:
        content["exception"] = text or "error"
    return content


def _content(block: Block) -> dict[str, Any] | None:
    rest = thaw_json(format_extras(block.extras, AGENT_FRAMEWORK))
    if isinstance(block, TextBlock):
        return {"type": "text", **rest, "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "text_reasoning", **rest, "text": block.thinking}
    if isinstance(block, ToolCall):
        arguments: Any = block.arguments_text
        if arguments is None:
            arguments = rest.pop("arguments") if "arguments" in rest else thaw_json(block.arguments)
        content = {"type": "function_call", **rest, "call_id": block.id, "name": block.name}
        if arguments is not None:
            content["arguments"] = arguments
        return content
    if isinstance(block, (ImageBlock, DocumentBlock)):
        return _source(block, rest)
    if isinstance(block, OpaqueBlock) and block.provider == AGENT_FRAMEWORK:
        return None if block.payload == NO_CONTENTS else thaw_json(block.payload)
    _dropped(block)
    return None


def _source(block: ImageBlock | DocumentBlock, rest: dict[str, Any]) -> dict[str, Any] | None:
    media = {} if block.media_type is None else {"media_type": block.media_type}
    if block.data is not None and block.media_type is not None:
        return {"type": "data", **rest, "uri": data_uri(block.data, block.media_type), **media}
    if block.url is not None:
        return {"type": "uri", **rest, "uri": block.url, **media}
    if block.file_id is not None:
        return {"type": "hosted_file", **rest, "file_id": block.file_id, **media}
    _dropped(block)
    return None


def _dropped(block: Block) -> None:
    what = f"a {block.provider} item" if isinstance(block, OpaqueBlock) else f"a {block.kind} block"
    warnings.warn(
        f"{what} dropped: {AGENT_FRAMEWORK} cannot carry it", DroppedContentWarning, stacklevel=6
    )
