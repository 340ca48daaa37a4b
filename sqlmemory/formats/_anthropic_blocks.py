"""Anthropic content blocks to blocks and back.

``text``, ``image``, ``document``, ``thinking``, ``redacted_thinking`` and ``tool_use``
blocks are read into the model's blocks, their fields with no common meaning kept in the
block's ``extras["anthropic"]`` with notes on their form
(:mod:`sqlmemory.formats._anthropic_notes`); any other type, and a source the model has
no meaning for, is kept whole as an :class:`~sqlmemory.types.OpaqueBlock`. Writing a
block merges the kept fields back in, in the noted order, so a block read here is written
back exactly. A ``tool_result`` block is a message of its own
(:mod:`sqlmemory.formats._anthropic_read`).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._anthropic_notes import (
    B64,
    ORDER,
    SOURCE,
    SOURCE_ORDER,
    SOURCE_TYPE,
    as_extras,
    noted_fields,
    own_of,
    reordered,
    with_fields,
)
from sqlmemory.formats._converting import ANTHROPIC, format_extras, plain, warn_dropped
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.types._fields import shown
from sqlmemory.types._json import thaw_json

__all__ = [
    "Fault",
    "build",
    "plain_block",
    "read_block",
    "read_text_block",
    "rest_of",
    "str_field",
    "write_block",
]

# -- reading -------------------------------------------------------------------------------


class Fault(Exception):
    """A malformed field, named relative to the item being read."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field}: {why}" if field else why)
        self.field = field
        self.why = why


def plain_block(item: Any, field: str) -> Mapping[str, Any]:
    """Block ``item`` (at ``field``) as a mapping with a ``type``, else a fault."""
    try:
        block = plain(item, 0)
    except ConversionError:
        raise Fault(field, f"expected a block, got {type(item).__name__}") from None
    if not isinstance(block, Mapping):
        raise Fault(field, f"expected a block, got {type(block).__name__}")
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        raise Fault(f"{field}.type", f"expected a block type, got {shown(kind)}")
    return block


def read_block(item: Any, field: str) -> Block:
    """The block of ``item``, at ``field`` of a turn; a ``tool_result`` is refused."""
    block = plain_block(item, field)
    kind = block["type"]
    reader = _READERS.get(kind)
    if kind == "tool_result":
        raise Fault(f"{field}.type", "a tool_result belongs in a user turn")
    if reader is None:
        return build(lambda: OpaqueBlock(ANTHROPIC, block), field)
    return reader(block, field)


def build(make: Callable[[], Block], field: str) -> Block:
    """The block ``make`` builds; a model error names ``field``."""
    try:
        return make()
    except InvalidMessageError as exc:
        raise Fault(field, str(exc)) from None


def str_field(block: Mapping[str, Any], key: str, field: str) -> str:
    """The string at ``key`` of ``block``, else a fault naming ``field.key``."""
    value = block.get(key)
    if not isinstance(value, str):
        raise Fault(f"{field}.{key}", f"expected a string, got {type(value).__name__}")
    return value


def rest_of(block: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    """The block's keys outside ``known`` (``None`` values included), in order."""
    return {k: v for k, v in block.items() if k not in known}


def _noted(block: Block, original: Mapping[str, Any]) -> Block:
    """``block`` with notes of the key orders it would not write by itself."""
    written = write_block(block)
    notes: dict[str, Any] = {}
    if list(written) != list(original):
        notes[ORDER] = list(original)
    source = original.get("source")
    if isinstance(source, Mapping) and list(written.get("source", ())) != list(source):
        notes[SOURCE_ORDER] = list(source)
    if not notes:
        return block
    own = {**format_extras(block.extras, ANTHROPIC), **notes}
    return dataclasses.replace(block, extras={**block.extras, ANTHROPIC: own})


def read_text_block(block: Any, field: str) -> TextBlock:
    """The text block of ``block`` (of a system prompt, which holds nothing else)."""
    if not isinstance(block, Mapping) or block.get("type") != "text":
        raise Fault(f"{field}.type", "expected a text block")
    text = str_field(block, "text", field)
    own = rest_of(block, ("type", "text"))
    made = build(lambda: TextBlock(text, extras=as_extras(own)), field)
    noted = _noted(made, block)
    assert isinstance(noted, TextBlock)  # noqa: S101 - _noted keeps the block's class
    return noted


def _read_thinking(block: Mapping[str, Any], field: str) -> Block:
    thinking, signature = str_field(block, "thinking", field), str_field(block, "signature", field)
    own = rest_of(block, ("type", "thinking", "signature"))
    made = build(lambda: ThinkingBlock(thinking, signature, extras=as_extras(own)), field)
    return _noted(made, block)


def _read_redacted(block: Mapping[str, Any], field: str) -> Block:
    data = str_field(block, "data", field)
    own = rest_of(block, ("type", "data"))
    return _noted(build(lambda: RedactedThinkingBlock(data, extras=as_extras(own)), field), block)


def _read_tool_use(block: Mapping[str, Any], field: str) -> Block:
    call_id, name = str_field(block, "id", field), str_field(block, "name", field)
    arguments = block.get("input")
    if not isinstance(arguments, Mapping):
        raise Fault(f"{field}.input", f"expected an object, got {type(arguments).__name__}")
    own = rest_of(block, ("type", "id", "name", "input"))
    made = build(lambda: ToolCall(call_id, name, arguments, extras=as_extras(own)), field)
    return _noted(made, block)


def _source_of(block: Mapping[str, Any], field: str) -> tuple[Mapping[str, Any], str]:
    source = block.get("source")
    if not isinstance(source, Mapping):
        raise Fault(f"{field}.source", f"expected an object, got {type(source).__name__}")
    kind = source.get("type")
    if not isinstance(kind, str):
        raise Fault(f"{field}.source.type", f"expected a source type, got {shown(kind)}")
    return source, kind


_SOURCE_KEYS = {
    "base64": ("type", "media_type", "data"),
    "text": ("type", "media_type", "data"),
    "url": ("type", "url"),
    "file": ("type", "file_id"),
}


def _source_fields(
    source: Mapping[str, Any], kind: str, field: str, own: dict[str, Any]
) -> dict[str, Any]:
    """The block fields of a source (``data``, ``media_type``, ``url``, ``file_id``)."""
    known = _SOURCE_KEYS[kind]
    where_ = f"{field}.source"
    fields: dict[str, Any] = {name: str_field(source, name, where_) for name in known[1:]}
    unknown = rest_of(source, known)
    if unknown:
        own[SOURCE] = unknown
    if kind == "text":
        fields["data"] = _utf8(fields["data"], f"{where_}.data")
    elif kind == "base64":
        fields["data"] = _b64_decode(fields["data"], f"{where_}.data", own)
    return fields


def _utf8(text: str, field: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Fault(field, f"holds a lone surrogate at index {exc.start}") from None


def _b64_decode(text: str, field: str, own: dict[str, Any]) -> bytes:
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise Fault(field, "is not valid base64") from None
    if base64.b64encode(data).decode("ascii") != text:
        own[B64] = text
    return data


def _read_image(block: Mapping[str, Any], field: str) -> Block:
    source, kind = _source_of(block, field)
    if kind not in ("base64", "url", "file"):
        return build(lambda: OpaqueBlock(ANTHROPIC, block), field)
    own = rest_of(block, ("type", "source"))
    fields = _source_fields(source, kind, field, own)
    return _noted(build(lambda: ImageBlock(**fields, extras=as_extras(own)), field), block)


def _read_document(block: Mapping[str, Any], field: str) -> Block:
    source, kind = _source_of(block, field)
    if kind not in _SOURCE_KEYS:
        return build(lambda: OpaqueBlock(ANTHROPIC, block), field)
    title = block.get("title")
    own = rest_of(
        block, ("type", "source", "title") if isinstance(title, str) else ("type", "source")
    )
    fields = _source_fields(source, kind, field, own)
    if kind == "base64" and fields["media_type"] == "text/plain":
        own[SOURCE_TYPE] = "base64"
    if isinstance(title, str):
        fields["title"] = title
    return _noted(build(lambda: DocumentBlock(**fields, extras=as_extras(own)), field), block)


_READERS: dict[str, Callable[[Mapping[str, Any], str], Block]] = {
    "text": read_text_block,
    "image": _read_image,
    "document": _read_document,
    "thinking": _read_thinking,
    "redacted_thinking": _read_redacted,
    "tool_use": _read_tool_use,
}


# -- writing ------------------------------------------------------------------------------


def write_block(block: Block) -> dict[str, Any]:
    """The Anthropic block of ``block``: its kept fields merged back, in the noted order."""
    own = own_of(block)
    writer = _WRITERS[block.kind]
    if isinstance(block, OpaqueBlock):
        return writer(block, own)
    return reordered(with_fields(writer(block, own), own), own.get(ORDER))


def _write_opaque(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = thaw_json(block.payload)
    return payload


def _write_text(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "text", "text": block.text}


def _write_thinking(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _write_redacted(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": block.data}


def _write_tool_use(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    arguments = block.arguments
    if arguments is None:
        warn_dropped(f"the arguments of tool call {block.id} (not a JSON object)", ANTHROPIC)
        arguments = {}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": thaw_json(arguments)}


def _write_source(block: ImageBlock | DocumentBlock, own: Mapping[str, Any]) -> dict[str, Any]:
    source: dict[str, Any]
    if block.data is not None and block.media_type == "text/plain" and not own.get(SOURCE_TYPE):
        text = block.data.decode("utf-8")
        source = {"type": "text", "media_type": "text/plain", "data": text}
    elif block.data is not None:
        data = own.get(B64) or base64.b64encode(block.data).decode("ascii")
        source = {"type": "base64", "media_type": block.media_type, "data": data}
    elif block.url is not None:
        source = {"type": "url", "url": block.url}
    else:
        source = {"type": "file", "file_id": block.file_id}
    source.update(noted_fields(own, SOURCE))
    return reordered(source, own.get(SOURCE_ORDER))


def _write_image(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "image", "source": _write_source(block, own)}


def _write_document(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "document", "source": _write_source(block, own)}
    if block.title is not None:
        out["title"] = block.title
    return out


_WRITERS: dict[str, Callable[[Any, Mapping[str, Any]], dict[str, Any]]] = {
    "text": _write_text,
    "image": _write_image,
    "document": _write_document,
    "thinking": _write_thinking,
    "redacted_thinking": _write_redacted,
    "tool_call": _write_tool_use,
    "opaque": _write_opaque,
}
