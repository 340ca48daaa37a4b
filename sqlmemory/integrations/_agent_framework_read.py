"""Microsoft Agent Framework messages read into sqlmemory messages.

Each ``Message`` is read from its own ``to_dict()`` (what the framework persists of it):
its role, text, reasoning, function calls, images and documents become sqlmemory blocks;
a ``tool`` message of function results becomes one sqlmemory tool message per result (so
windows keep every result with its call); usage contents become
:attr:`~sqlmemory.Message.usage`. What has no common meaning (the message's fields, a
content's ``additional_properties``, ids, annotations, contents of other kinds) is kept
under the ``"agent_framework"`` key of ``extras``, so the write side gives back a message
whose ``to_dict()`` equals the original's.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from sqlmemory.errors import InvalidMessageError
from sqlmemory.formats._converting import format_extras
from sqlmemory.types import (
    DOCUMENT_MEDIA_TYPES,
    IMAGE_MEDIA_TYPES,
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)

__all__ = ["AGENT_FRAMEWORK", "NO_CONTENTS", "USAGE_COUNTS", "data_uri", "messages_of"]

AGENT_FRAMEWORK = "agent_framework"
"""The key of this adapter's part of ``extras``, and the ``provider`` of its opaque blocks."""

NO_CONTENTS = {"agent_framework": "no contents"}
"""The payload that stands for a message without contents (sqlmemory needs one block)."""

USAGE_COUNTS = {
    "input_tokens": "input_token_count",
    "output_tokens": "output_token_count",
    "cache_read_tokens": "cache_read_input_token_count",
    "cache_write_tokens": "cache_creation_input_token_count",
    "reasoning_tokens": "reasoning_output_token_count",
}
""":class:`~sqlmemory.Usage` counts by the ``UsageDetails`` keys that hold them."""

_ROLES = {"user": Role.USER, "system": Role.SYSTEM, "assistant": Role.ASSISTANT}


def messages_of(dumped: dict[str, Any]) -> list[Message]:
    """The sqlmemory messages of one framework message, given as its ``to_dict()``.

    Raises:
        InvalidMessageError: a value sqlmemory cannot hold (not JSON, a count out of range).
    """
    contents = dumped.pop("contents", None)
    if not isinstance(contents, list) or not all(isinstance(c, dict) for c in contents):
        raise InvalidMessageError("its contents are not a list of contents")
    if dumped.get("role") == "tool" and contents and all(_is_result(c) for c in contents):
        return _tool_results(contents, dumped)
    own: dict[str, Any] = {"message": dumped}
    usages = [(i, c) for i, c in enumerate(contents) if c.get("type") == "usage"]
    if usages:
        own["usage"] = [{"at": i, "content": c} for i, c in usages]
    rest = [c for c in contents if c.get("type") != "usage"]
    return [_message(dumped.get("role"), rest, own, _usage_sum([c for _, c in usages]))]


def _message(
    role: Any, contents: list[dict[str, Any]], own: dict[str, Any], usage: Usage | None
) -> Message:
    found = _ROLES.get(role) if isinstance(role, str) else None
    try:
        if found is None:
            raise InvalidMessageError(f"role {role!r} has no sqlmemory twin")
        blocks = [_block(c, found) for c in contents]
        return Message(found, blocks, extras={AGENT_FRAMEWORK: own}, usage=usage)
    except InvalidMessageError:
        # A role sqlmemory lacks, a message of no contents, a call id used twice: kept
        # verbatim, content by content (the role comes back from extras).
        opaque = [OpaqueBlock(AGENT_FRAMEWORK, c) for c in contents] or [
            OpaqueBlock(AGENT_FRAMEWORK, NO_CONTENTS)
        ]
        kept = Role.ASSISTANT if found is Role.ASSISTANT else Role.USER
        return Message(kept, opaque, extras={AGENT_FRAMEWORK: own}, usage=usage)


def _with_own(message: Message, own: Mapping[str, Any]) -> Message:
    return Message(
        message.role,
        message.content,
        tool_call_id=message.tool_call_id,
        is_error=message.is_error,
        extras={**message.extras, AGENT_FRAMEWORK: own},
        usage=message.usage,
    )


def _rest(content: Mapping[str, Any], *taken: str) -> dict[str, Any]:
    return {k: v for k, v in content.items() if k not in taken}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _usage_sum(contents: list[dict[str, Any]]) -> Usage | None:
    """The sum of usage contents; ``None`` when there are none."""
    if not contents:
        return None
    total = Usage()
    for content in contents:
        details = content.get("usage_details")
        details = details if isinstance(details, Mapping) else {}
        counts = {ours: _count(details.get(theirs)) for ours, theirs in USAGE_COUNTS.items()}
        total = total + Usage(None, **counts)
    return total


def _is_result(content: Mapping[str, Any]) -> bool:
    return content.get("type") == "function_result" and isinstance(content.get("call_id"), str)


def _tool_results(contents: list[dict[str, Any]], dumped: dict[str, Any]) -> list[Message]:
    """One tool message per result; the first keeps the framework message's fields."""
    results = [_tool_result(c) for c in contents]
    results[0] = _with_own(
        results[0], {**format_extras(results[0].extras, AGENT_FRAMEWORK), "message": dumped}
    )
    return results


def _tool_result(content: dict[str, Any]) -> Message:
    rest = _rest(content, "call_id", "result")
    result = content.get("result")
    if isinstance(result, str):
        text = result
    else:
        rest["result"] = result  # None too: a result that is absent comes back absent
        try:
            text = "" if result is None else json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise InvalidMessageError(f"a function result is not JSON: {exc}") from None
    is_error = "exception" in content
    own = {"content": rest}
    return Message.tool(content["call_id"], text, is_error=is_error, extras={AGENT_FRAMEWORK: own})


def _block(content: dict[str, Any], role: Role) -> Block:
    kind = content.get("type")
    try:
        if kind == "text" and isinstance(content.get("text"), str):
            return TextBlock(content["text"], extras={AGENT_FRAMEWORK: _rest(content, "text")})
        if role is Role.ASSISTANT:
            block = _assistant_block(content)
            if block is not None:
                return block
        if kind in ("data", "uri"):
            block = _source_block(content)
            if block is not None:
                return block
    except (InvalidMessageError, binascii.Error, ValueError):
        pass  # kept verbatim below
    return OpaqueBlock(AGENT_FRAMEWORK, content)


def _assistant_block(content: dict[str, Any]) -> Block | None:
    kind = content.get("type")
    if kind == "text_reasoning" and isinstance(content.get("text"), str):
        return ThinkingBlock(content["text"], extras={AGENT_FRAMEWORK: _rest(content, "text")})
    if kind != "function_call":
        return None
    call_id, name = content.get("call_id"), content.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        return None
    rest = _rest(content, "call_id", "name", "arguments")
    arguments = content.get("arguments")
    if isinstance(arguments, str):
        return ToolCall(call_id, name, arguments_text=arguments, extras={AGENT_FRAMEWORK: rest})
    if isinstance(arguments, Mapping):
        return ToolCall(call_id, name, arguments, extras={AGENT_FRAMEWORK: rest})
    rest["arguments"] = arguments  # None: none were given
    return ToolCall(call_id, name, extras={AGENT_FRAMEWORK: rest})


def data_uri(data: bytes, media_type: str) -> str:
    """The ``data:`` URI the framework writes for bytes of ``media_type``."""
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _source_block(content: dict[str, Any]) -> Block | None:
    uri, media_type = content.get("uri"), content.get("media_type")
    if not isinstance(uri, str) or not isinstance(media_type, str):
        return None
    cls: type[ImageBlock | DocumentBlock]
    if media_type in IMAGE_MEDIA_TYPES:
        cls = ImageBlock
    elif media_type in DOCUMENT_MEDIA_TYPES:
        cls = DocumentBlock
    else:
        return None
    rest = _rest(content, "uri", "media_type")
    if content.get("type") == "uri":
        if uri[:5].lower() == "data:":
            return None
        return cls(url=uri, media_type=media_type, extras={AGENT_FRAMEWORK: rest})
    prefix = f"data:{media_type};base64,"
    if not uri.startswith(prefix):
        return None
    data = base64.b64decode(uri[len(prefix) :], validate=True)
    if data_uri(data, media_type) != uri:
        return None  # written otherwise than the framework writes it: kept as written
    return cls(data, media_type, extras={AGENT_FRAMEWORK: rest})
