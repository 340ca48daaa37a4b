"""Writing messages as Chat Completions message params.

A message read from Chat comes back exactly as it was read (its layout is in the
``openai_chat`` part of ``extras``); a message from elsewhere becomes the plainest valid
param, and what Chat cannot carry is left out and reported (``docs/providers.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmemory.formats._converting import OPENAI_CHAT, format_extras
from sqlmemory.formats._openai_chat_layout import arrange
from sqlmemory.formats._openai_chat_read import (
    CALL_ORDER,
    CUSTOM_ORDER,
    FILE_ORDER,
    FUNCTION_ORDER,
    IMAGE_ORDER,
    MESSAGE_ORDER,
    PART_ORDER,
    data_url,
)
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
from sqlmemory.types._json import thaw_json

__all__ = ["Writer"]

CHAT = OPENAI_CHAT
_SPEAKERS = {
    Role.SYSTEM: "system",
    Role.DEVELOPER: "developer",
    Role.USER: "user",
    Role.DOCUMENT: "user",
}
DEFAULT_FILENAME = "document.pdf"
"""The file name sent with PDF bytes that have no title: Chat asks for one."""


def _describe(block: Block) -> str:
    if isinstance(block, ThinkingBlock):
        return "a thinking block"
    if isinstance(block, RedactedThinkingBlock):
        return "a redacted thinking block"
    if isinstance(block, OpaqueBlock):
        return f"an opaque {block.provider} item ({block.payload.get('type', 'untyped')})"
    if isinstance(block, (ImageBlock, DocumentBlock)):
        source = "bytes" if block.data is not None else "URL" if block.url else "file id"
        return (
            f"an {block.kind} by {source}" if block.kind == "image" else f"a document by {source}"
        )
    return f"a {block.kind} block"


def _text_part(block: TextBlock, role: str) -> dict[str, Any]:
    own = format_extras(block.extras, CHAT)
    if own.get("type") == "refusal" and role == "assistant":
        return arrange({"type": "refusal", "refusal": block.text}, own, PART_ORDER)
    return arrange({"type": "text", "text": block.text}, own, PART_ORDER)


def _image_part(block: ImageBlock) -> dict[str, Any] | None:
    own = format_extras(block.extras, CHAT)
    if block.data is not None:
        saved = own.get("url")
        url = saved if isinstance(saved, str) else data_url(block)
    elif block.url is not None:
        url = block.url
    else:
        return None
    inner: dict[str, Any] = {"url": url}
    if block.detail is not None:
        inner["detail"] = block.detail
    inner = arrange(inner, own.get("image_url") or {}, IMAGE_ORDER)
    return arrange({"type": "image_url", "image_url": inner}, own, PART_ORDER)


def _document_part(block: DocumentBlock) -> dict[str, Any] | None:
    own = format_extras(block.extras, CHAT)
    saved = own.get("file")
    inner: dict[str, Any] = {}
    if block.title is not None:
        inner["filename"] = block.title
    if block.data is not None:
        if saved is None and block.media_type == "text/plain":
            try:
                return {"type": "text", "text": block.data.decode("utf-8")}
            except UnicodeDecodeError:
                return None
        if saved is None and "filename" not in inner:
            inner["filename"] = DEFAULT_FILENAME
        original = own.get("file_data")
        inner["file_data"] = original if isinstance(original, str) else data_url(block)
    elif block.file_id is not None:
        inner["file_id"] = block.file_id
    else:
        return None
    inner = arrange(inner, saved if isinstance(saved, Mapping) else {}, FILE_ORDER)
    return arrange({"type": "file", "file": inner}, own, PART_ORDER)


def _call(call: ToolCall) -> dict[str, Any]:
    own = format_extras(call.extras, CHAT)
    kind, order = (
        ("custom", CUSTOM_ORDER) if own.get("type") == "custom" else ("function", FUNCTION_ORDER)
    )
    inner = arrange({"name": call.name, order[1]: call.arguments_json}, own.get(kind) or {}, order)
    return arrange({"id": call.id, "type": kind, kind: inner}, own, CALL_ORDER)


def _content(parts: list[dict[str, Any]], own: Mapping[str, Any]) -> str | list[dict[str, Any]]:
    """A string for one plain text part (unless Chat sent a list), else the parts."""
    only = parts[0] if len(parts) == 1 and not own.get("parts") else {}
    if only.keys() == {"type", "text"} and only["type"] == "text":
        text: str = only["text"]
        return text
    return parts


class Writer:
    """Writes one list of messages, collecting what is left out for one warning each."""

    def __init__(self) -> None:
        self.dropped: list[str] = []
        self._dropped_calls: set[str] = set()

    def message(self, message: Message, index: int) -> dict[str, Any] | None:
        """The param of ``message``, or ``None`` when nothing of it can be sent."""
        if len(message.content) == 1:
            whole = message.content[0]
            if (
                isinstance(whole, OpaqueBlock)
                and whole.provider == CHAT
                and format_extras(whole.extras, CHAT).get("field") == "message"
            ):
                param: dict[str, Any] = thaw_json(whole.payload)
                return param
        if message.role is Role.ASSISTANT:
            return self._assistant(message, index)
        if message.role is Role.TOOL:
            return self._tool(message, index)
        return self._speaker(message, index)

    def _drop(self, index: int, what: str) -> None:
        self.dropped.append(f"message {index}: {what}")

    def _part(self, block: Block, role: str, index: int) -> dict[str, Any] | None:
        """The content part of ``block`` in a ``role`` message, or ``None`` (reported)."""
        part: dict[str, Any] | None = None
        if isinstance(block, TextBlock):
            part = _text_part(block, role)
        elif role == "user" and isinstance(block, ImageBlock):
            part = _image_part(block)
        elif role == "user" and isinstance(block, DocumentBlock):
            part = _document_part(block)
        elif (
            role == "user"
            and isinstance(block, OpaqueBlock)
            and block.provider == CHAT
            and not format_extras(block.extras, CHAT)
        ):
            part = thaw_json(block.payload)
        if part is None:
            if isinstance(block, OpaqueBlock) and block.call_id is not None:
                self._dropped_calls.add(block.call_id)
            where = "" if role in ("user", "assistant") else f" in a {role} message"
            self._drop(index, _describe(block) + where)
        return part

    def _speaker(self, message: Message, index: int) -> dict[str, Any] | None:
        role = _SPEAKERS[message.role]
        own = format_extras(message.extras, CHAT)
        parts = [p for b in message.content if (p := self._part(b, role, index)) is not None]
        if not parts:
            self._drop(index, f"a {message.role.value} message with nothing Chat can carry")
            return None
        return arrange({"role": role, "content": _content(parts, own)}, own, MESSAGE_ORDER)

    def _tool(self, message: Message, index: int) -> dict[str, Any] | None:
        call_id = message.tool_call_id
        assert call_id is not None  # noqa: S101 - a tool message always answers a call
        if call_id in self._dropped_calls:
            self._drop(index, f"the result of {call_id!r}, whose call was left out")
            return None
        own = format_extras(message.extras, CHAT)
        parts: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(_text_part(block, "tool"))
            else:
                self._drop(index, _describe(block) + " in a tool result")
        if message.is_error:
            self._drop(index, "the is_error flag of a tool result")
        if own.get("role") == "function":
            values: dict[str, Any] = {"role": "function"}
            if parts:
                values["content"] = "".join(p.get("text", "") for p in parts)
            return arrange(values, own, MESSAGE_ORDER)
        content: str | list[dict[str, Any]] = _content(parts, own) if parts else ""
        if not parts and own.get("parts"):
            content = []
        values = {"role": "tool", "tool_call_id": call_id, "content": content}
        return arrange(values, own, MESSAGE_ORDER)

    def _assistant(self, message: Message, index: int) -> dict[str, Any] | None:
        own = format_extras(message.extras, CHAT)
        values: dict[str, Any] = {"role": "assistant"}
        parts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolCall):
                self._tool_call(block, values, calls)
            elif not self._assistant_field(block, values):
                part = self._part(block, "assistant", index)
                if part is not None:
                    parts.append(part)
        if parts or own.get("parts"):
            values["content"] = _content(parts, own)
        if calls:
            values["tool_calls"] = calls
        if len(values) == 1:
            self._drop(index, "an assistant message with nothing Chat can carry")
            return None
        return arrange(values, own, MESSAGE_ORDER)

    @staticmethod
    def _tool_call(block: ToolCall, values: dict[str, Any], calls: list[dict[str, Any]]) -> None:
        """A tool call into ``tool_calls``, or the deprecated ``function_call`` it came from."""
        saved = format_extras(block.extras, CHAT)
        if saved.get("field") == "function_call" and "function_call" not in values:
            values["function_call"] = arrange(
                {"name": block.name, "arguments": block.arguments_json}, saved, FUNCTION_ORDER
            )
        else:
            calls.append(_call(block))

    @staticmethod
    def _assistant_field(block: Block, values: dict[str, Any]) -> bool:
        """Put a block that was an assistant message's ``refusal`` or ``audio`` back there."""
        mark = format_extras(block.extras, CHAT).get("field")
        if isinstance(block, TextBlock) and mark == "refusal" and "refusal" not in values:
            values["refusal"] = block.text
            return True
        if isinstance(block, OpaqueBlock) and block.provider == CHAT and mark == "audio":
            values["audio"] = thaw_json(block.payload)
            return True
        return False
