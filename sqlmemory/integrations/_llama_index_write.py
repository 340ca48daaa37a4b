"""sqlmemory messages written as LlamaIndex chat messages: the inside of ``to_llama_index``.

The message is written as the JSON dump of a ``ChatMessage`` (what
:mod:`._llama_index_read` reads), which LlamaIndex then validates: what was read comes back
equal, and messages from other sources get LlamaIndex's blocks (tool calls as
``ToolCallBlock`` where the installed version has it, else OpenAI-style
``additional_kwargs["tool_calls"]``). What LlamaIndex has no block for (redacted thinking,
another provider's opaque items, an image known only by a provider's file id) is dropped
with a :class:`~sqlmemory.formats.DroppedContentWarning`.
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Mapping
from typing import Any

from sqlmemory.formats import DroppedContentWarning
from sqlmemory.formats._converting import format_extras
from sqlmemory.integrations._llama_index_read import LLAMA_INDEX, PLACEHOLDER, ROLE_NAMES
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

__all__ = ["dump_of"]


def _own(extras: Mapping[str, Any]) -> dict[str, Any]:
    return dict(thaw_json(format_extras(extras, LLAMA_INDEX)))


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _drop(what: str) -> None:
    warnings.warn(f"LlamaIndex has no block for {what}: dropped", DroppedContentWarning, 2)


def _media(block: ImageBlock | DocumentBlock, kind: str) -> dict[str, Any] | None:
    if block.data is None and block.url is None:
        _drop(f"an {kind} known only by its file id")
        return None
    if isinstance(block, ImageBlock):
        fields = {"image": _b64(block.data), "image_mimetype": block.media_type}
        fields["detail"] = block.detail
    else:
        fields = {"data": _b64(block.data), "document_mimetype": block.media_type}
        fields["title"] = block.title
    return {"block_type": kind, **fields, "url": block.url, **_own(block.extras)}


def _call(call: ToolCall, tool_call_blocks: bool) -> tuple[str, dict[str, Any]]:
    """Where the call goes (``"blocks"`` or ``"additional_kwargs"``) and its dump there."""
    own = _own(call.extras)
    if own.pop("source", None) == "additional_kwargs" or not tool_call_blocks:
        function = {"name": call.name, "arguments": call.arguments_json}
        return "kwargs", {"id": call.id, "type": "function", "function": function, **own}
    arguments: Any = call.arguments_text
    if arguments is None:
        arguments = thaw_json(call.arguments)
    dump = {"block_type": "tool_call", "tool_call_id": call.id, "tool_name": call.name}
    return "blocks", {**dump, "tool_kwargs": arguments, **own}


def _block(block: Block) -> dict[str, Any] | None:
    """The dump of a block other than a tool call; ``None`` for one dropped."""
    if isinstance(block, TextBlock):
        return {"block_type": "text", "text": block.text, **_own(block.extras)}
    if isinstance(block, ImageBlock):
        return _media(block, "image")
    if isinstance(block, DocumentBlock):
        return _media(block, "document")
    if isinstance(block, ThinkingBlock):
        return {"block_type": "thinking", "content": block.thinking, **_own(block.extras)}
    if isinstance(block, OpaqueBlock) and block.provider == LLAMA_INDEX:
        payload = thaw_json(block.payload)
        return None if payload == PLACEHOLDER else dict(payload)
    owner = f" of {block.provider}" if isinstance(block, OpaqueBlock) else ""
    _drop(f"a {block.kind} block{owner}")
    return None


def dump_of(message: Message, tool_call_blocks: bool) -> dict[str, Any]:
    """The ``ChatMessage`` dump of ``message``; ``tool_call_blocks``: whether the installed
    LlamaIndex has ``ToolCallBlock`` (else calls go to ``additional_kwargs``)."""
    own = _own(message.extras)
    kwargs: dict[str, Any] = dict(own.get("additional_kwargs") or {})
    if message.role is Role.TOOL:
        kwargs["tool_call_id"] = message.tool_call_id
    blocks: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            where, dump = _call(block, tool_call_blocks)
            (blocks if where == "blocks" else calls).append(dump)
            continue
        found = _block(block)
        if found is not None:
            blocks.append(found)
    if calls:
        kwargs["tool_calls"] = calls
    role = own.get("role") or ROLE_NAMES[message.role]
    return {"role": role, "additional_kwargs": kwargs, "blocks": blocks}
