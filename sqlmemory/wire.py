"""The versioned JSON form of messages, for HTTP APIs and queues.

``message_to_dict`` gives plain ``dict``/``list``/``str``/``int`` values that
``json.dumps`` accepts; bytes are base64 and ``recorded_at`` is ISO 8601 in UTC. Reading
it back with ``message_from_dict`` gives an equal message, tool-call argument key order
included. Malformed input raises :class:`~sqlmemory.errors.InvalidMessageError` naming
the field at fault.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlmemory._values import thaw_json
from sqlmemory.errors import InvalidMessageError
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

__all__ = [
    "WIRE_VERSION",
    "message_from_dict",
    "message_to_dict",
    "messages_from_dicts",
    "messages_to_dicts",
]

WIRE_VERSION = 1


def _block_to_dict(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"kind": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"kind": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, DocumentBlock):
        return {
            "kind": "document",
            "media_type": block.media_type,
            "data": base64.b64encode(block.data).decode("ascii"),
            "title": block.title,
        }
    out: dict[str, Any] = {"kind": "image", "media_type": block.media_type}
    if block.data is not None:
        out["data"] = base64.b64encode(block.data).decode("ascii")
    else:
        out["url"] = block.url
    if block.width is not None:
        out["width"] = block.width
    if block.height is not None:
        out["height"] = block.height
    return out


def message_to_dict(message: Message) -> dict[str, Any]:
    """The JSON-ready form of ``message`` (see the module docstring)."""
    return {
        "v": WIRE_VERSION,
        "id": message.id,
        "role": message.role.value,
        "content": [_block_to_dict(b) for b in message.content],
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": thaw_json(c.arguments)}
            for c in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "metadata": thaw_json(message.metadata),
        "recorded_at": message.recorded_at.isoformat() if message.recorded_at else None,
    }


def messages_to_dicts(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """:func:`message_to_dict` of each message."""
    return [message_to_dict(m) for m in messages]


def _field(data: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    if key not in data:
        raise InvalidMessageError(f"{where}.{key} is missing")
    value = data[key]
    if not isinstance(value, kind):
        raise InvalidMessageError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


def _optional(data: Mapping[str, Any], key: str, where: str, kind: type) -> Any:
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        raise InvalidMessageError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


def _b64(value: str, where: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidMessageError(f"{where} is not valid base64") from None


def _block_from_dict(data: Any, where: str) -> Block:
    if not isinstance(data, Mapping):
        raise InvalidMessageError(f"{where} must be an object")
    kind = _field(data, "kind", where, str)
    try:
        if kind == "text":
            return TextBlock(_field(data, "text", where, str))
        if kind == "thinking":
            return ThinkingBlock(
                _field(data, "thinking", where, str), _optional(data, "signature", where, str)
            )
        if kind == "document":
            return DocumentBlock(
                _b64(_field(data, "data", where, str), f"{where}.data"),
                _field(data, "media_type", where, str),
                _optional(data, "title", where, str),
            )
        if kind == "image":
            raw = _optional(data, "data", where, str)
            return ImageBlock(
                _b64(raw, f"{where}.data") if raw is not None else None,
                _field(data, "media_type", where, str),
                _optional(data, "url", where, str),
                width=_optional(data, "width", where, int),
                height=_optional(data, "height", where, int),
            )
    except InvalidMessageError as exc:
        if str(exc).startswith(where):
            raise
        raise InvalidMessageError(f"{where}: {exc}") from None
    raise InvalidMessageError(f"{where}.kind {kind!r} is not a block kind")


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Rebuild a message from :func:`message_to_dict` output.

    Raises:
        InvalidMessageError: a field is missing, of the wrong type or invalid; the
            message names it.
    """
    if not isinstance(data, Mapping):
        raise InvalidMessageError("message must be a JSON object")
    version = data.get("v", WIRE_VERSION)
    if version != WIRE_VERSION:
        raise InvalidMessageError(f"message.v {version!r} is not a supported version")
    content = _field(data, "content", "message", list)
    calls = _optional(data, "tool_calls", "message", list) or []
    tool_calls = []
    for i, call in enumerate(calls):
        where = f"message.tool_calls[{i}]"
        if not isinstance(call, Mapping):
            raise InvalidMessageError(f"{where} must be an object")
        try:
            tool_calls.append(
                ToolCall(
                    _field(call, "id", where, str),
                    _field(call, "name", where, str),
                    _optional(call, "arguments", where, Mapping) or {},
                )
            )
        except InvalidMessageError as exc:
            raise InvalidMessageError(f"{where}: {exc}") from None
    recorded = _optional(data, "recorded_at", "message", str)
    recorded_at = None
    if recorded is not None:
        try:
            recorded_at = datetime.fromisoformat(recorded)
        except ValueError:
            raise InvalidMessageError("message.recorded_at is not an ISO 8601 datetime") from None
    kwargs: dict[str, Any] = {}
    if data.get("id") is not None:
        kwargs["id"] = _field(data, "id", "message", str)
    return Message(
        role=_field(data, "role", "message", str),
        content=tuple(_block_from_dict(b, f"message.content[{i}]") for i, b in enumerate(content)),
        tool_calls=tuple(tool_calls),
        tool_call_id=_optional(data, "tool_call_id", "message", str),
        metadata=_optional(data, "metadata", "message", Mapping) or {},
        recorded_at=recorded_at,
        **kwargs,
    )


def messages_from_dicts(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """:func:`message_from_dict` of each item; errors name the item's index."""
    if isinstance(items, (str, bytes, Mapping)):
        raise InvalidMessageError("messages must be a JSON array")
    result = []
    for i, item in enumerate(items):
        try:
            result.append(message_from_dict(item))
        except InvalidMessageError as exc:
            raise InvalidMessageError(f"[{i}] {exc}") from None
    return result
