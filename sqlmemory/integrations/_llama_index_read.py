"""LlamaIndex chat messages read into sqlmemory messages: the inside of ``from_llama_index``.

The message is read from its JSON dump (``ChatMessage.model_dump(mode="json")``), the form
LlamaIndex's own SQL store keeps, so every block type of every supported version reads the
same way. What has a common meaning becomes sqlmemory's own: the roles, text, image,
document and thinking blocks, tool calls (``ToolCallBlock`` and the OpenAI-style
``additional_kwargs["tool_calls"]``), the ``tool_call_id`` of a tool result, token counts.
The rest is kept under the ``"llama_index"`` key of the message's or the block's
``extras`` (:data:`LLAMA_INDEX`), laid out as :mod:`._llama_index_write` reads it back; a
block of another kind (audio, video, a cache point, a citation) is an
:class:`~sqlmemory.OpaqueBlock` holding its dump.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
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
    Usage,
)

__all__ = ["LLAMA_INDEX", "PLACEHOLDER", "ROLE_NAMES", "message_of"]

LLAMA_INDEX = "llama_index"
"""The key of this adapter's part of ``extras``, and the ``provider`` of its opaque blocks."""
PLACEHOLDER = {"empty": True}
"""The payload of the opaque block that stands in a message with no content (sqlmemory
stores no empty message; LlamaIndex has some): dropped when read back."""
ROLE_NAMES = {
    Role.SYSTEM: "system",
    Role.DEVELOPER: "developer",
    Role.USER: "user",
    Role.ASSISTANT: "assistant",
    Role.TOOL: "tool",
}
"""The LlamaIndex role of each sqlmemory role."""
_ROLES = {
    "system": Role.SYSTEM,
    "developer": Role.DEVELOPER,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "model": Role.ASSISTANT,
    "chatbot": Role.ASSISTANT,
}
_SOURCE = "additional_kwargs"
"""A call's ``extras["llama_index"]["source"]``: read from ``additional_kwargs``."""


def _rest(dump: Mapping[str, Any], used: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a block dump not mapped to sqlmemory's, those set only."""
    return {k: v for k, v in dump.items() if k not in used and k != "block_type" and v is not None}


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConversionError(f"expected base64 text, got {type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ConversionError("image or document data is not base64") from None


def _extras(rest: Mapping[str, Any]) -> dict[str, Any]:
    return {LLAMA_INDEX: dict(rest)} if rest else {}


def _text(dump: Mapping[str, Any], assistant: bool) -> Block | None:
    if not isinstance(dump.get("text"), str):
        return None
    return TextBlock(dump["text"], extras=_extras(_rest(dump, ("text",))))


def _image(dump: Mapping[str, Any], assistant: bool) -> Block | None:
    if not (dump.get("image") or dump.get("url")):
        return None
    return ImageBlock(
        data=_bytes(dump.get("image")),
        media_type=dump.get("image_mimetype"),
        url=dump.get("url"),
        detail=dump.get("detail"),
        extras=_extras(_rest(dump, ("image", "url", "image_mimetype", "detail"))),
    )


def _document(dump: Mapping[str, Any], assistant: bool) -> Block | None:
    if not (dump.get("data") or dump.get("url")):
        return None
    return DocumentBlock(
        data=_bytes(dump.get("data")),
        media_type=dump.get("document_mimetype"),
        url=dump.get("url"),
        title=dump.get("title"),
        extras=_extras(_rest(dump, ("data", "url", "document_mimetype", "title"))),
    )


def _thinking(dump: Mapping[str, Any], assistant: bool) -> Block | None:
    if not isinstance(dump.get("content"), str) or not dump["content"]:
        return None
    rest = _rest(dump, ("content",))
    if rest.get("additional_information") == {}:
        del rest["additional_information"]
    return ThinkingBlock(dump["content"], extras=_extras(rest))


def _tool_call(dump: Mapping[str, Any], assistant: bool) -> Block | None:
    if not assistant or not isinstance(dump.get("tool_call_id"), str):
        return None
    arguments = dump.get("tool_kwargs")
    extras = _extras(_rest(dump, ("tool_call_id", "tool_name", "tool_kwargs")))
    if isinstance(arguments, str):
        return ToolCall(
            dump["tool_call_id"], dump["tool_name"], arguments_text=arguments, extras=extras
        )
    return ToolCall(dump["tool_call_id"], dump["tool_name"], arguments, extras=extras)


_READERS = {
    "text": _text,
    "image": _image,
    "document": _document,
    "thinking": _thinking,
    "tool_call": _tool_call,
}
"""sqlmemory's block of a block dump, by its ``block_type``; ``None`` when none holds it
whole (an image with only a local path, a tool call without an id)."""


def _blocks_of(dumps: list[Any], assistant: bool) -> list[Block]:
    blocks: list[Block] = []
    for dump in dumps:
        if not isinstance(dump, Mapping):
            raise ConversionError(f"a block dump must be an object, not {type(dump).__name__}")
        reader = _READERS.get(str(dump.get("block_type")))
        try:
            block = None if reader is None else reader(dump, assistant)
        except (InvalidMessageError, TypeError, KeyError):
            block = None  # a field sqlmemory's block refuses: kept whole below
        blocks.append(block if block is not None else OpaqueBlock(LLAMA_INDEX, dict(dump)))
    return blocks


def _openai_call(item: Any, seen: set[str]) -> ToolCall | None:
    """One OpenAI-style call of ``additional_kwargs["tool_calls"]``; ``None`` when it is of
    another shape, or its id is taken."""
    function = item.get("function") if isinstance(item, Mapping) else None
    if (
        not isinstance(function, Mapping)
        or set(function) != {"name", "arguments"}
        or item.get("type") != "function"
        or not isinstance(item.get("id"), str)
        or item["id"] in seen
        or not isinstance(function["name"], str)
        or not isinstance(function["arguments"], str)
    ):
        return None
    own = {k: v for k, v in item.items() if k not in ("id", "type", "function")}
    try:
        return ToolCall(
            item["id"],
            function["name"],
            arguments_text=function["arguments"],
            extras={LLAMA_INDEX: {"source": _SOURCE, **own}},
        )
    except InvalidMessageError:
        return None


def _openai_calls(kwargs: dict[str, Any], blocks: list[Block]) -> list[ToolCall]:
    """The OpenAI-style ``tool_calls`` of ``additional_kwargs`` as tool calls, taken out of
    ``kwargs``; none (and ``kwargs`` left as it is) when any is of another shape."""
    items = kwargs.get("tool_calls")
    if not isinstance(items, list) or not items:
        return []
    seen = {b.id for b in blocks if isinstance(b, ToolCall)}
    calls: list[ToolCall] = []
    for item in items:
        call = _openai_call(item, seen)
        if call is None:
            return []
        seen.add(call.id)
        calls.append(call)
    del kwargs["tool_calls"]
    return calls


def _usage_of(kwargs: Mapping[str, Any]) -> Usage | None:
    """Token counts an LLM left in ``additional_kwargs`` (OpenAI's ``prompt_tokens`` and
    ``completion_tokens``, or a ``usage`` object of either provider's names)."""
    usage = kwargs.get("usage")
    counts = usage if isinstance(usage, Mapping) else kwargs
    pairs = (("prompt_tokens", "completion_tokens"), ("input_tokens", "output_tokens"))
    for names in pairs:
        found = [counts.get(n) for n in names]
        if any(isinstance(n, int) and not isinstance(n, bool) for n in found):
            numbers = [n if isinstance(n, int) and not isinstance(n, bool) else 0 for n in found]
            model = kwargs.get("model")
            try:
                return Usage(model if isinstance(model, str) else None, *numbers)
            except InvalidMessageError:
                return None  # counts out of range: kept in the kwargs only
    return None


def message_of(dump: Mapping[str, Any]) -> Message:
    """The sqlmemory message of one ``ChatMessage`` dump.

    Raises:
        ConversionError: a dump that is not of a chat message's shape, block data that is
            not base64.
        InvalidMessageError: a message sqlmemory cannot hold.
    """
    role_name = dump.get("role")
    kwargs = dump.get("additional_kwargs")
    dumps = dump.get("blocks")
    if not isinstance(role_name, str) or not isinstance(kwargs, dict):
        raise ConversionError("not a LlamaIndex chat message")
    if not isinstance(dumps, list):
        raise ConversionError("not a LlamaIndex chat message")
    kwargs = dict(kwargs)
    own: dict[str, Any] = {}
    tool_call_id = kwargs.get("tool_call_id")
    if role_name in ("tool", "function") and isinstance(tool_call_id, str) and tool_call_id:
        role = Role.TOOL
        del kwargs["tool_call_id"]
    else:
        role = _ROLES.get(role_name, Role.USER)
        tool_call_id = None
    if ROLE_NAMES[role] != role_name:
        own["role"] = role_name
    blocks = _blocks_of(dumps, role is Role.ASSISTANT)
    usage = None
    if role is Role.ASSISTANT:
        blocks.extend(_openai_calls(kwargs, blocks))
        usage = _usage_of(kwargs)
    if kwargs:
        own["additional_kwargs"] = kwargs
    if role is not Role.TOOL and all(isinstance(b, TextBlock) and not b.text for b in blocks):
        blocks.append(OpaqueBlock(LLAMA_INDEX, PLACEHOLDER))
    return Message(
        role,
        blocks,
        tool_call_id=tool_call_id,
        extras={LLAMA_INDEX: own} if own else None,
        usage=usage,
    )
