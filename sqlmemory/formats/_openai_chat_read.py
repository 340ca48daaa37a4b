"""Reading Chat Completions message params (and replies) into messages.

What each key becomes is in ``docs/providers.md`` (OpenAI Chat Completions); every key the
model does not hold is kept in the ``openai_chat`` part of ``extras`` with the key order
(:mod:`sqlmemory.formats._openai_chat_layout`), so :mod:`._openai_chat_write` rebuilds the
item exactly.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import OPENAI_CHAT, plain, where
from sqlmemory.formats._openai_chat_layout import checked_json, layout, plain_object
from sqlmemory.formats._usage_read import CHAT_USAGE, read_usage
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    Role,
    TextBlock,
    ToolCall,
)
from sqlmemory.types._fields import shown
from sqlmemory.types._message_checks import copy_unchecked

__all__ = [
    "CALL_ORDER",
    "FILE_ORDER",
    "IMAGE_ORDER",
    "MESSAGE_ORDER",
    "PART_ORDER",
    "Reader",
    "data_url",
]

CHAT = OPENAI_CHAT
MESSAGE_ORDER = (
    "role",
    "tool_call_id",
    "content",
    "refusal",
    "audio",
    "tool_calls",
    "function_call",
)
"""The default key order of a message the writer builds."""
PART_ORDER = ("type", "text", "refusal", "image_url", "file")
IMAGE_ORDER = ("url", "detail")
FILE_ORDER = ("filename", "file_data", "file_id")
CALL_ORDER = ("id", "type", "function", "custom")
FUNCTION_ORDER = ("name", "arguments")
CUSTOM_ORDER = ("name", "input")
DETAILS = ("auto", "low", "high", "original")

_ROLES = {
    "system": Role.SYSTEM,
    "developer": Role.DEVELOPER,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "tool": Role.TOOL,
    "function": Role.TOOL,
}
_PART_TYPES = {
    "system": ("text",),
    "developer": ("text",),
    "tool": ("text",),
    "user": ("text", "image_url", "input_audio", "file"),
    "assistant": ("text", "refusal"),
}


def data_url(block: ImageBlock | DocumentBlock) -> str:
    """The ``data:`` URL of a block's bytes, as the writer sends it."""
    assert block.data is not None  # noqa: S101 - called for blocks holding bytes only
    return f"data:{block.media_type};base64,{base64.b64encode(block.data).decode('ascii')}"


def _own(extras: Mapping[str, Any]) -> dict[str, Any]:
    return {CHAT: extras} if extras else {}


def _text(value: Any, index: int, field: str) -> str:
    if not isinstance(value, str):
        raise ConversionError(f"{where(index, field)}: expected a string, got {_name(value)}")
    return value


def _name(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


class Reader:
    """Reads one list of messages; remembers the last deprecated ``function_call``, which
    the ``function`` message after it answers."""

    def __init__(self) -> None:
        self._function_call_id: str | None = None

    def message(self, raw: Any, index: int) -> Message:
        """The message of item ``index``."""
        item = plain(raw, index)
        if not isinstance(item, Mapping):
            raise ConversionError(f"{where(index)}: expected an object, got {_name(item)}")
        if "choices" in item and "role" not in item:
            return self._completion(item, index)
        role = item.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise ConversionError(
                f"{where(index, 'role')}: {shown(role)} is not one of {sorted(_ROLES)}"
            )
        try:
            if role == "assistant":
                return self._assistant(item, index)
            if role == "tool":
                return self._tool(item, index)
            if role == "function":
                return self._function(item, index)
            return self._speaker(item, role, index)
        except InvalidMessageError as exc:
            raise ConversionError(f"{where(index)}: {exc}") from None

    def _completion(self, item: Mapping[str, Any], index: int) -> Message:
        """The message of a whole ``ChatCompletion``, with its usage and model."""
        choices = item["choices"]
        if not isinstance(choices, list) or len(choices) != 1:
            found = len(choices) if isinstance(choices, list) else _name(choices)
            raise ConversionError(
                f"{where(index, 'choices')}: a completion must hold exactly one choice, "
                f"not {found} (read each choice's message alone)"
            )
        choice = plain(choices[0], index)
        if not isinstance(choice, Mapping) or "message" not in choice:
            raise ConversionError(f"{where(index, 'choices[0].message')}: missing")
        message = self.message(choice["message"], index)

        def fail(field: str, why: str) -> ConversionError:
            return ConversionError(f"{where(index, field)}: {why}")

        usage = read_usage(item, CHAT_USAGE, fail)
        return message if usage is None else copy_unchecked(Message, message, usage=usage)

    # -- messages -----------------------------------------------------------------------

    def _speaker(self, item: Mapping[str, Any], role: str, index: int) -> Message:
        """A system, developer or user message: content is required."""
        if "content" not in item or item["content"] is None:
            raise ConversionError(f"{where(index, 'content')}: missing")
        blocks, parts = self._content(item["content"], role, index)
        if not any(not isinstance(b, TextBlock) or b.text for b in blocks):
            # Chat takes it; the model holds no empty message: kept whole, for Chat only.
            whole = OpaqueBlock(
                CHAT, checked_json(item, index, "message"), extras=_own({"field": "message"})
            )
            return Message(_ROLES[role], [whole])
        extras = self._message_layout(item, {"role", "content"}, parts, index)
        return Message(_ROLES[role], blocks, extras=_own(extras))

    def _tool(self, item: Mapping[str, Any], index: int) -> Message:
        call_id = item.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise ConversionError(f"{where(index, 'tool_call_id')}: expected a non-empty string")
        if "content" not in item or item["content"] is None:
            raise ConversionError(f"{where(index, 'content')}: missing")
        blocks, parts = self._content(item["content"], "tool", index)
        read = {"role", "tool_call_id", "content"}
        extras = self._message_layout(item, read, parts, index)
        return Message(Role.TOOL, blocks, tool_call_id=call_id, extras=_own(extras))

    def _function(self, item: Mapping[str, Any], index: int) -> Message:
        """The deprecated ``function`` role: the result of the last ``function_call``."""
        _text(item.get("name"), index, "name")
        content = item.get("content")
        blocks: list[Block] = []
        read = {"role"}
        if isinstance(content, str):
            blocks.append(TextBlock(content))
            read.add("content")
        elif content is not None:
            raise ConversionError(f"{where(index, 'content')}: expected a string or null")
        extras = {"role": "function", **self._message_layout(item, read, False, index)}
        # The call it answers has no id in this format; a fresh one keeps them paired.
        call_id = self._function_call_id or _new_call_id()
        return Message(Role.TOOL, blocks, tool_call_id=call_id, extras=_own(extras))

    def _assistant(self, item: Mapping[str, Any], index: int) -> Message:
        blocks: list[Block] = []
        read = {"role"}
        parts = False
        content = item.get("content")
        if isinstance(content, str) or (isinstance(content, (list, tuple)) and content):
            blocks, parts = self._content(content, "assistant", index)
            read.add("content")
        elif content is not None and not isinstance(content, (list, tuple)):
            raise ConversionError(f"{where(index, 'content')}: expected a string, parts or null")
        refusal = item.get("refusal")
        if refusal is not None:
            text = _text(refusal, index, "refusal")
            blocks.append(TextBlock(text, extras=_own({"field": "refusal"})))
            read.add("refusal")
        audio = item.get("audio")
        if audio is not None:
            payload = checked_json(plain_object(audio, index, "audio"), index, "audio")
            blocks.append(OpaqueBlock(CHAT, payload, extras=_own({"field": "audio"})))
            read.add("audio")
        calls = item.get("tool_calls")
        if calls is not None and not isinstance(calls, (list, tuple)):
            raise ConversionError(f"{where(index, 'tool_calls')}: expected a list")
        if calls:
            blocks += self._tool_calls(calls, index)
            read.add("tool_calls")
        if item.get("function_call") is not None:
            blocks.append(self._function_call(item["function_call"], index))
            read.add("function_call")
        if not any(not isinstance(b, TextBlock) or b.text for b in blocks):
            raise ConversionError(
                f"{where(index)}: an assistant message needs content, a refusal, audio "
                "or tool calls"
            )
        extras = self._message_layout(item, read, parts, index)
        return Message(Role.ASSISTANT, blocks, extras=_own(extras))

    def _message_layout(
        self, item: Mapping[str, Any], read: set[str], parts: bool, index: int
    ) -> dict[str, Any]:
        extras: dict[str, Any] = {"parts": True} if parts else {}
        extras.update(layout(item, read, MESSAGE_ORDER, index, ""))
        return extras

    # -- content ------------------------------------------------------------------------

    def _content(self, content: Any, role: str, index: int) -> tuple[list[Block], bool]:
        """The blocks of a ``content`` value, and whether it was a list of parts."""
        if isinstance(content, str):
            return [TextBlock(content)], False
        if not isinstance(content, (list, tuple)):
            raise ConversionError(
                f"{where(index, 'content')}: expected a string or a list of parts, "
                f"got {_name(content)}"
            )
        allowed = _PART_TYPES[role]
        return [
            self._part(part, allowed, index, f"content[{j}]") for j, part in enumerate(content)
        ], True

    def _part(self, raw: Any, allowed: tuple[str, ...], index: int, field: str) -> Block:
        part = plain_object(raw, index, field)
        kind = part.get("type")
        if kind not in allowed:
            raise ConversionError(
                f"{where(index, field + '.type')}: {shown(kind)} is not a content part here "
                f"(one of {', '.join(allowed)})"
            )
        if kind == "text" or kind == "refusal":
            text = _text(part.get(kind), index, f"{field}.{kind}")
            extras = {"type": "refusal"} if kind == "refusal" else {}
            extras.update(layout(part, {"type", kind}, PART_ORDER, index, field))
            return TextBlock(text, extras=_own(extras))
        if kind == "image_url":
            return _image(part, index, field)
        if kind == "file":
            return _file(part, index, field)
        return OpaqueBlock(CHAT, checked_json(part, index, field))

    # -- tool calls ---------------------------------------------------------------------

    def _tool_calls(self, calls: Any, index: int) -> list[ToolCall]:
        found: list[ToolCall] = []
        seen: set[str] = set()
        for k, raw in enumerate(calls):
            field = f"tool_calls[{k}]"
            call = plain_object(raw, index, field)
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise ConversionError(f"{where(index, field + '.id')}: expected a non-empty string")
            if call_id in seen:
                raise ConversionError(
                    f"{where(index, field + '.id')}: {shown(call_id)} is repeated"
                )
            seen.add(call_id)
            kind = call.get("type")
            if kind == "function":
                found.append(_call(call, call_id, "function", FUNCTION_ORDER, index, field))
            elif kind == "custom":
                found.append(_call(call, call_id, "custom", CUSTOM_ORDER, index, field))
            else:
                raise ConversionError(
                    f"{where(index, field + '.type')}: {shown(kind)} is not 'function' or 'custom'"
                )
        return found

    def _function_call(self, raw: Any, index: int) -> ToolCall:
        """The deprecated ``function_call``: a tool call with an id of sqlmemory's own."""
        call = plain_object(raw, index, "function_call")
        name = _text(call.get("name"), index, "function_call.name")
        arguments = _text(call.get("arguments"), index, "function_call.arguments")
        extras = {"field": "function_call"}
        extras.update(layout(call, {"name", "arguments"}, FUNCTION_ORDER, index, "function_call"))
        self._function_call_id = _new_call_id()
        return ToolCall(self._function_call_id, name, arguments_text=arguments, extras=_own(extras))


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex}"


def _call(
    call: Mapping[str, Any],
    call_id: str,
    kind: str,
    order: tuple[str, str],
    index: int,
    field: str,
) -> ToolCall:
    """A ``function`` or ``custom`` tool call; a custom call's ``input`` is its argument text."""
    inner_field = f"{field}.{kind}"
    inner = plain_object(call.get(kind), index, inner_field)
    name = _text(inner.get("name"), index, f"{inner_field}.name")
    if not name:
        raise ConversionError(f"{where(index, inner_field + '.name')}: empty")
    text = _text(inner.get(order[1]), index, f"{inner_field}.{order[1]}")
    extras: dict[str, Any] = {"type": "custom"} if kind == "custom" else {}
    extras.update(layout(call, {"id", "type", kind}, CALL_ORDER, index, field))
    inner_layout = layout(inner, set(order), order, index, inner_field)
    if inner_layout:
        extras[kind] = inner_layout
    return ToolCall(call_id, name, arguments_text=text, extras=_own(extras))


def _image(part: Mapping[str, Any], index: int, field: str) -> Block:
    """An ``image_url`` part: bytes from a ``data:`` URL, else an http(s) URL.

    An image the model cannot hold (a media type outside JPEG, PNG, GIF and WebP, bytes
    unlike their type, another URL scheme) is kept as an opaque part, replayed to Chat only.
    """
    inner_field = f"{field}.image_url"
    inner = plain_object(part.get("image_url"), index, inner_field)
    url = _text(inner.get("url"), index, f"{inner_field}.url")
    detail = inner.get("detail")
    if "detail" in inner and detail not in DETAILS:
        raise ConversionError(
            f"{where(index, inner_field + '.detail')}: {shown(detail)} is not one of "
            + ", ".join(DETAILS)
        )
    try:
        block = ImageBlock(url=url, detail=detail)
    except InvalidMessageError:
        return OpaqueBlock(CHAT, checked_json(part, index, field))
    extras = layout(part, {"type", "image_url"}, PART_ORDER, index, field)
    inner_layout = layout(inner, {"url", "detail"}, IMAGE_ORDER, index, inner_field)
    if inner_layout:
        extras["image_url"] = inner_layout
    if block.data is not None and data_url(block) != url:
        extras["url"] = url  # a data: URL written otherwise (line breaks, parameters)
    return (
        ImageBlock(block.data, block.media_type, block.url, detail=detail, extras=_own(extras))
        if extras
        else block
    )


def _file(part: Mapping[str, Any], index: int, field: str) -> Block:
    """A ``file`` part: a PDF or text ``data:`` URL as bytes, or an uploaded file's id.

    Anything else (raw base64 without a media type, another media type, both sources) is
    kept as an opaque part, replayed to Chat only.
    """
    inner_field = f"{field}.file"
    inner = plain_object(part.get("file"), index, inner_field)
    for key in FILE_ORDER:
        if key in inner:
            _text(inner[key], index, f"{inner_field}.{key}")
    file_data, file_id = inner.get("file_data"), inner.get("file_id")
    filename = inner.get("filename")
    try:
        if file_data is not None and file_id is None and file_data[:5].lower() == "data:":
            block = DocumentBlock(url=file_data, title=filename)
        elif file_id is not None and file_data is None:
            block = DocumentBlock(file_id=file_id, title=filename)
        else:
            raise InvalidMessageError("no source the model holds")
    except InvalidMessageError:
        return OpaqueBlock(CHAT, checked_json(part, index, field))
    extras = layout(part, {"type", "file"}, PART_ORDER, index, field)
    # Always there, even empty: it tells the writer not to add a file name of its own.
    extras["file"] = layout(inner, set(FILE_ORDER), FILE_ORDER, index, inner_field)
    if block.data is not None and data_url(block) != file_data:
        extras["file_data"] = file_data
    return DocumentBlock(
        block.data, block.media_type, None, block.file_id, block.title, extras=_own(extras)
    )
