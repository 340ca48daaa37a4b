"""Reading a message's wire form: version 2, and version 1 with its separate ``tool_calls``.

Errors name the field at fault (``message.content[2].data is not valid base64``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import check_keys, optional_field, required_field, shown
from sqlmemory.types.calls import ToolCall
from sqlmemory.types.content import block_from_dict
from sqlmemory.types.token_usage import Usage

MessageT = TypeVar("MessageT")

__all__ = ["READ_VERSIONS", "message_from_dict"]

READ_VERSIONS = (1, 2)
"""The wire versions :func:`message_from_dict` reads."""

_KEYS = frozenset(
    {
        "v",
        "id",
        "role",
        "content",
        "tool_calls",  # version 1: the calls, after the content
        "tool_call_id",
        "is_error",
        "metadata",
        "extras",
        "recorded_at",
        "usage",
    }
)


def _recorded_at(data: Mapping[str, Any]) -> datetime | None:
    recorded = optional_field(data, "recorded_at", "message", str)
    if recorded is None:
        return None
    try:
        return datetime.fromisoformat(recorded)
    except ValueError:
        raise InvalidMessageError("message.recorded_at is not an ISO 8601 datetime") from None


def message_from_dict(cls: Callable[..., MessageT], data: Mapping[str, Any]) -> MessageT:
    """The message of a wire form; see :meth:`Message.from_dict`."""
    if not isinstance(data, Mapping):
        raise InvalidMessageError("message must be a JSON object")
    check_keys(data, _KEYS, "message")
    version = data.get("v", READ_VERSIONS[-1])
    if type(version) is not int or version not in READ_VERSIONS:
        raise InvalidMessageError(f"message.v {shown(version)} is not a supported version")
    content = required_field(data, "content", "message", list)
    calls = optional_field(data, "tool_calls", "message", list) or []
    blocks = [block_from_dict(b, f"message.content[{i}]") for i, b in enumerate(content)]
    blocks.extend(ToolCall.from_dict(c, f"message.tool_calls[{i}]") for i, c in enumerate(calls))
    usage = data.get("usage")
    message_id = None
    if data.get("id") is not None:
        message_id = required_field(data, "id", "message", str)
    return cls(
        required_field(data, "role", "message", str),
        blocks,
        tool_call_id=optional_field(data, "tool_call_id", "message", str),
        metadata=optional_field(data, "metadata", "message", Mapping),
        id=message_id,
        recorded_at=_recorded_at(data),
        is_error=optional_field(data, "is_error", "message", bool) or False,
        extras=optional_field(data, "extras", "message", Mapping),
        usage=None if usage is None else Usage.from_dict(usage, "message.usage"),
    )
