"""Content parts of OpenAI Responses messages and tool outputs, to blocks and back.

``input_text``, ``output_text`` and ``refusal`` parts become :class:`TextBlock`,
``input_image`` an :class:`ImageBlock`, ``input_file`` a :class:`DocumentBlock`; each
block keeps the part's shell (its ``type`` and the fields the block does not hold) in
``extras["openai_responses"]["part"]``. A part the model cannot hold (an unknown type,
a file of another media type) becomes an :class:`OpaqueBlock` marked as a part, at its
place (``docs/providers.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import OPENAI_RESPONSES, format_extras, where
from sqlmemory.formats._shells import merge, same, split
from sqlmemory.types import Block, DocumentBlock, ImageBlock, OpaqueBlock, TextBlock
from sqlmemory.types._fields import b64_encode
from sqlmemory.types._json import FrozenDict, check_str, thaw_json

__all__ = ["PART", "block_to_part", "check_keys", "part_to_block"]

PART = "part"
"""The key of a block's own extras holding the shell of the content part it came from."""

_TEXT_TYPES = frozenset({"input_text", "output_text", "refusal"})

# The field order of the SDK's models, which ``model_dump`` follows.
_SDK_ORDER: dict[str, tuple[str, ...]] = {
    "input_text": ("text", "type", "prompt_cache_breakpoint"),
    "output_text": ("annotations", "text", "type", "logprobs"),
    "refusal": ("refusal", "type"),
    "input_image": ("detail", "type", "file_id", "image_url", "prompt_cache_breakpoint"),
    "input_file": (
        "type",
        "detail",
        "file_data",
        "file_id",
        "file_url",
        "filename",
        "prompt_cache_breakpoint",
    ),
}


def check_keys(data: Mapping[str, Any], index: int, field: str) -> None:
    """Refuse keys that are no provider field names (not strings, or starting with ``_``)."""
    for key in data:
        if not isinstance(key, str) or key.startswith("_"):
            prefix = f"{field}." if field else ""
            raise ConversionError(f"{where(index, f'{prefix}{key}')}: not a field name")


def _text(part: Mapping[str, Any], key: str, index: int, field: str) -> str:
    value = part.get(key)
    if not isinstance(value, str):
        raise ConversionError(f"{where(index, f'{field}.{key}')}: expected a string")
    return value


def _optional_str(part: Mapping[str, Any], key: str, index: int, field: str) -> str | None:
    value = part.get(key)
    if value is not None and not isinstance(value, str):
        raise ConversionError(f"{where(index, f'{field}.{key}')}: expected a string or null")
    return value


def _read(part: Mapping[str, Any], kind: str, index: int, field: str) -> Block | None:
    """The block of a part, or ``None`` when the model cannot hold it."""
    if kind in _TEXT_TYPES:
        return TextBlock(_text(part, "refusal" if kind == "refusal" else "text", index, field))
    if kind == "input_image":
        url = _optional_str(part, "image_url", index, field)
        file_id = _optional_str(part, "file_id", index, field)
        detail = _optional_str(part, "detail", index, field)
        try:
            return ImageBlock(url=url, file_id=file_id, detail=detail)
        except InvalidMessageError:
            return None
    if kind == "input_file":
        data = _optional_str(part, "file_data", index, field)
        url = _optional_str(part, "file_url", index, field)
        file_id = _optional_str(part, "file_id", index, field)
        title = _optional_str(part, "filename", index, field)
        if data is not None and url is not None:
            return None
        try:
            return DocumentBlock(
                url=data if data is not None else url, file_id=file_id, title=title
            )
        except InvalidMessageError:
            return None
    return None


def part_to_block(part: Any, index: int, field: str) -> Block:
    """The block of content part ``part`` (at ``field`` of item ``index``).

    Raises:
        ConversionError: the part is no object, has no string ``type``, or a field the
            block needs has the wrong type.
    """
    if type(part) is not dict and not isinstance(part, Mapping):
        raise ConversionError(f"{where(index, field)}: expected an object")
    check_keys(part, index, field)
    kind = part.get("type")
    if not isinstance(kind, str):
        raise ConversionError(f"{where(index, f'{field}.type')}: expected a string")
    if kind in _TEXT_TYPES:
        # Text is built once, with its shell: its fields are known from the part alone.
        key = "refusal" if kind == "refusal" else "text"
        try:
            text = check_str(_text(part, key, index, field), "TextBlock.text")
            shell = split(part, {key: text}, _SDK_ORDER[kind], keep=("type",))
            block: Block | None = TextBlock(text, extras={OPENAI_RESPONSES: {PART: shell}})
        except InvalidMessageError as exc:
            raise ConversionError(f"{where(index, field)}: {exc}") from None
        if same(block_to_part(block, "input_text"), part):  # type: ignore[arg-type]
            return block  # type: ignore[return-value]
        block = None
    else:
        block = _read(part, kind, index, field)
    if block is not None:
        shell = split(part, _fields(block, kind, native=False), _SDK_ORDER[kind], keep=("type",))
        try:
            block = dataclasses.replace(block, extras={OPENAI_RESPONSES: {PART: shell}})
        except InvalidMessageError as exc:
            raise ConversionError(f"{where(index, field)}: {exc}") from None
        if same(block_to_part(block, "input_text"), part):
            return block
    try:
        return OpaqueBlock(OPENAI_RESPONSES, part, extras={OPENAI_RESPONSES: {PART: {}}})
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index, field)}: {exc}") from None


def _source(block: ImageBlock | DocumentBlock, data_key: str, url_key: str) -> dict[str, Any]:
    if block.data is not None:
        return {data_key: f"data:{block.media_type};base64,{b64_encode(block.data)}"}
    if block.url is not None:
        return {url_key: block.url}
    return {"file_id": block.file_id}


def _fields(block: Block, kind: str, *, native: bool) -> dict[str, Any]:
    """The part fields a block gives (all but ``type``); ``native`` blocks came from no part."""
    if isinstance(block, TextBlock):
        out: dict[str, Any] = {"refusal" if kind == "refusal" else "text": block.text}
        if native and kind == "output_text":
            out["annotations"] = []
        return out
    if isinstance(block, ImageBlock):
        out = _source(block, "image_url", "image_url")
        detail = block.detail if block.detail is not None or not native else "auto"
        if detail is not None:
            out["detail"] = detail
        return out
    if isinstance(block, DocumentBlock):
        out = _source(block, "file_data", "file_url")
        if block.title is not None:
            out["filename"] = block.title
        return out
    return {}


_NATIVE_TYPES = {TextBlock: "", ImageBlock: "input_image", DocumentBlock: "input_file"}


def block_to_part(block: Block, text_type: str) -> dict[str, Any] | None:
    """The content part of ``block``; ``None`` for a block no part carries.

    A block read from a part is merged back into its shell; another is written as a part
    of its kind, text as ``text_type`` (``input_text`` or ``output_text``).
    """
    own = block.extras.get(OPENAI_RESPONSES)
    if type(own) is not FrozenDict:
        own = format_extras(block.extras, OPENAI_RESPONSES)
    if type(block) is TextBlock:
        found = own.get(PART)
        if type(found) is FrozenDict:
            kind = found.get("type")
            if type(kind) is str:
                key = "refusal" if kind == "refusal" else "text"
                return merge(found, {key: block.text}, _SDK_ORDER.get(kind, ()))
    if isinstance(block, OpaqueBlock):
        if block.provider == OPENAI_RESPONSES and PART in own:
            payload: dict[str, Any] = thaw_json(block.payload)
            return payload
        return None
    native_type = _NATIVE_TYPES.get(type(block))
    if native_type is None:
        return None
    found = own.get(PART)
    shell: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    native = not isinstance(found, Mapping)
    if native:
        shell = {"type": native_type or text_type}
    kind = str(shell.get("type"))
    return merge(shell, _fields(block, kind, native=native), _SDK_ORDER.get(kind, ()))
