"""Google ADK events to sqlmemory messages and back, losslessly.

An event becomes one message, or more when it answers tool calls: its parts run in order
into a message of the event's author (``user`` for the user, ``assistant`` for an agent),
and each function response with an id becomes a ``tool`` message of its own (the call
it answers is a :class:`~sqlmemory.ToolCall` of an earlier message), so the windows of the
rest of sqlmemory keep calls with their results. Text is a :class:`~sqlmemory.TextBlock`
(a thought a :class:`~sqlmemory.ThinkingBlock`), inline images and PDF or text files are
:class:`~sqlmemory.ImageBlock` / :class:`~sqlmemory.DocumentBlock` bytes (stored once, by
reference), ``http(s)`` file references are those blocks by URL; any other part (code,
audio, a call without an id) is an :class:`~sqlmemory.OpaqueBlock` of provider ``"adk"``
holding the part as ADK dumps it.

Whatever has no sqlmemory field is kept under the ``"adk"`` key of ``extras``: on the
first message of the event, the event as ``Event.model_dump(mode="json",
exclude_none=True)`` gives it (actions, state delta, usage metadata, ids, the exact
timestamp...) without its parts, the content's role and how many parts it has; on each
block, the part's other fields. :func:`events_of` puts them back, so an event read back
dumps exactly as the one stored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
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
from sqlmemory.types._json import thaw_json

__all__ = ["ADK", "event_messages", "events_of", "is_event_start"]

ADK = "adk"
"""The key of the adapter's part of ``extras``, and the ``provider`` of its opaque blocks."""
_NO_PARTS = {ADK: "no parts"}
"""The payload of the block that stands in for an event without parts."""
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})


def event_messages(event: Any) -> list[Message]:
    """The messages of one ADK ``Event``, ready to store (the first one carries the event).

    Raises:
        ConversionError: the event cannot be dumped, or holds what sqlmemory cannot store
            (an id it refuses, a timestamp out of range, values JSON cannot hold).
    """
    try:
        data = event.model_dump(mode="json", exclude_none=True)
        parts = list(event.content.parts or ()) if event.content is not None else []
        type(event).model_validate(data)  # what is stored must read back
    except Exception as exc:  # a changed object: pydantic's and ADK's errors alike
        raise ConversionError(f"event: ADK cannot dump it ({type(exc).__name__})") from None
    try:
        return _messages(data, parts)
    except InvalidMessageError as exc:
        raise ConversionError(f"event {str(data.get('id'))[:80]!r}: {exc}") from None


def _messages(data: dict[str, Any], parts: list[Any]) -> list[Message]:
    event_id = data.get("id")
    if not isinstance(event_id, str):
        raise InvalidMessageError("an event id must be a str")
    recorded_at = _recorded_at(data.get("timestamp"))
    role = Role.USER if data.get("author") == "user" else Role.ASSISTANT
    usage = _usage(data) if role is Role.ASSISTANT else None
    head: dict[str, Any] = {"event": data}
    content = data.pop("content", None)
    dumped: list[dict[str, Any]] = []
    if content is not None:
        had_parts = content.get("parts") is not None
        dumped = content.pop("parts", None) or []
        head["content"] = content
        if had_parts:
            head["parts"] = len(dumped)
    messages: list[Message] = []
    blocks: list[Block] = []

    def flush(final: bool) -> None:
        if blocks or (final and not messages):
            content = blocks or [OpaqueBlock(ADK, _NO_PARTS)]
            k = len(messages)
            used = usage if k == 0 else None
            messages.append(_message(role, content, event_id, k, recorded_at, head, used))
            blocks.clear()

    for index, part in enumerate(dumped):
        answer = _tool_answer(part, parts[index] if index < len(parts) else None)
        if answer is None:
            blocks.append(_block(part, parts[index] if index < len(parts) else None, role))
            continue
        flush(False)
        call_id, block = answer
        extras = _extras(head) if not messages else {ADK: {"continues": len(messages)}}
        messages.append(
            Message.tool(
                call_id,
                [block],
                id=_id(event_id, len(messages)),
                recorded_at=recorded_at,
                extras=extras,
            )
        )
    flush(True)
    return messages


_USAGE_COUNTS = {
    "input_tokens": ("prompt_token_count",),
    "output_tokens": ("candidates_token_count", "thoughts_token_count"),
    "cache_read_tokens": ("cached_content_token_count",),
    "reasoning_tokens": ("thoughts_token_count",),
}
"""Each :class:`~sqlmemory.Usage` count as the sum of Gemini's ``usage_metadata`` fields:
``thoughts_token_count`` is apart from ``candidates_token_count`` there, and is in
``output_tokens`` here (the convention of ``Usage``)."""


def _usage(data: dict[str, Any]) -> Usage | None:
    """The event's ``usage_metadata`` (and ``model_version``) as a :class:`Usage`;
    ``None`` for an event without one."""
    metadata = data.get("usage_metadata")
    if not isinstance(metadata, dict):
        return None
    counts = {
        name: sum(_token_count(metadata.get(key), key) for key in keys)
        for name, keys in _USAGE_COUNTS.items()
    }
    model = data.get("model_version")
    return Usage(model if isinstance(model, str) and model else None, **counts)


def _token_count(value: object, key: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMessageError(f"usage_metadata.{key} must be an int")
    return value


def _extras(head: dict[str, Any]) -> dict[str, Any]:
    return {ADK: head}


def _message(
    role: Role,
    content: list[Block],
    event_id: str,
    k: int,
    recorded_at: datetime,
    head: dict[str, Any],
    usage: Usage | None = None,
) -> Message:
    extras = _extras(head) if k == 0 else {ADK: {"continues": k}}
    return Message(
        role, content, id=_id(event_id, k), recorded_at=recorded_at, extras=extras, usage=usage
    )


def _id(event_id: str, k: int) -> str:
    """The id of the event's ``k``-th message: the event's id, then ``id#1``, ``id#2``..."""
    return event_id if k == 0 else f"{event_id}#{k}"


def _recorded_at(timestamp: object) -> datetime:
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)):
        raise InvalidMessageError("an event timestamp must be a number")
    try:
        return datetime.fromtimestamp(timestamp, timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise InvalidMessageError(f"event timestamp {timestamp!r} is out of range") from None


def _without(mapping: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k not in keys}


def _tool_answer(part: dict[str, Any], source: Any) -> tuple[str, Block] | None:
    """The tool message of a function response part with an id: its call id and block."""
    response = part.get("function_response")
    if not isinstance(response, dict):
        return None
    call_id = response.get("id")
    if not isinstance(call_id, str) or "response" not in response:
        return None
    try:
        text = json.dumps(response["response"], ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        raise InvalidMessageError("a function response JSON cannot hold") from None
    kept = {"part": _without(part, "function_response")}
    kept["function_response"] = _without(response, "id", "response")
    return call_id, TextBlock(text, extras={ADK: kept})


def _block(part: dict[str, Any], source: Any, role: Role) -> Block:
    """The block of one part; an :class:`OpaqueBlock` holding the part when no other fits."""
    try:
        block = _typed_block(part, source, role)
    except InvalidMessageError:
        block = None
    return block if block is not None else OpaqueBlock(ADK, part)


def _typed_block(part: dict[str, Any], source: Any, role: Role) -> Block | None:
    if "function_call" in part:
        return _call(part, role)
    if "inline_data" in part:
        blob = part["inline_data"]
        data = getattr(getattr(source, "inline_data", None), "data", None)
        mime = blob.get("mime_type")
        if not isinstance(data, bytes) or not data:
            return None
        extras = {ADK: {"part": _without(part, "inline_data"), "blob": _without(blob, "data")}}
        if mime in _IMAGE_TYPES:
            return ImageBlock(data, mime, extras=extras)
        if mime in _DOCUMENT_TYPES:
            return DocumentBlock(data, mime, extras=extras)
        return None
    if "file_data" in part:
        file = part["file_data"]
        uri, mime = file.get("file_uri"), file.get("mime_type")
        if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
            return None
        extras = {ADK: {"part": _without(part, "file_data"), "file": _without(file, "file_uri")}}
        if mime in _IMAGE_TYPES:
            return ImageBlock(url=uri, media_type=mime, extras=extras)
        if mime in _DOCUMENT_TYPES:
            return DocumentBlock(url=uri, media_type=mime, extras=extras)
        return None
    if isinstance(part.get("text"), str):
        extras = {ADK: {"part": _without(part, "text")}}
        if part.get("thought") is True:
            return ThinkingBlock(part["text"], extras=extras)
        return TextBlock(part["text"], extras=extras)
    return None


def _call(part: dict[str, Any], role: Role) -> Block | None:
    call = part["function_call"]
    call_id, name = call.get("id"), call.get("name")
    if role is not Role.ASSISTANT or not isinstance(call_id, str) or not isinstance(name, str):
        return None
    args = call.get("args")
    kept: dict[str, Any] = {
        "part": _without(part, "function_call"),
        "call": _without(call, "id", "name", "args"),
    }
    if not isinstance(args, dict):
        if args is not None:
            return None
        kept["no_args"] = True
    return ToolCall(call_id, name, args or {}, extras={ADK: kept})


# -- back to events ------------------------------------------------------------------------


def is_event_start(message: Message) -> bool:
    """Whether ``message`` starts an event: it carries one, or is no part of one (a
    message stored by other means is an event of its own)."""
    own = message.extras.get(ADK)
    return not isinstance(own, dict) or "continues" not in own


def events_of(messages: Sequence[Message], event_class: Any) -> list[Any]:
    """The ADK events stored as ``messages`` (whole events, oldest first).

    Raises:
        ConversionError: stored extras that ADK refuses (written by hand).
    """
    events: list[Any] = []
    group: list[Message] = []
    for message in messages:
        if is_event_start(message) and group:
            events.append(_event(group, event_class))
            group = []
        group.append(message)
    if group:
        events.append(_event(group, event_class))
    return events


def _event(group: list[Message], event_class: Any) -> Any:
    head = group[0].extras.get(ADK)
    if not isinstance(head, dict) or "event" not in head:
        from sqlmemory.integrations._adk_foreign import foreign_event

        return foreign_event(group[0], event_class)
    data = dict(thaw_json(head["event"]))
    parts: list[Any] = []
    for message in group:
        for block in message.content:
            parts.append(_part(block, message))
    if "content" in head:
        content = dict(thaw_json(head["content"]))
        if "parts" in head:
            count = head["parts"]
            content["parts"] = parts[:count] if isinstance(count, int) else parts
        data["content"] = content
    try:
        return event_class.model_validate(data)
    except Exception as exc:  # pydantic's ValidationError, or what a validator raised
        raise ConversionError(
            f"message {group[0].id!r}: ADK refuses the stored event ({type(exc).__name__})"
        ) from None


def _part(block: Block, message: Message) -> dict[str, Any]:
    kept = thaw_json(block.extras.get(ADK, {}))
    kept = kept if isinstance(kept, dict) else {}
    part = dict(kept.get("part", {})) if isinstance(kept.get("part"), dict) else {}
    if message.role is Role.TOOL:
        return {"function_response": _response(block, message, kept), **part}
    if isinstance(block, OpaqueBlock):
        return dict(thaw_json(block.payload))
    if isinstance(block, ToolCall):
        call = {"id": block.id, "name": block.name, **(kept.get("call") or {})}
        if not kept.get("no_args"):
            call["args"] = thaw_json(block.arguments)
        return {"function_call": call, **part}
    if isinstance(block, (ImageBlock, DocumentBlock)):
        return {**_media(block, kept), **part}
    if isinstance(block, ThinkingBlock):
        return {"text": block.thinking, **part}
    if isinstance(block, TextBlock):
        return {"text": block.text, **part}
    return part


def _response(block: Block, message: Message, kept: dict[str, Any]) -> dict[str, Any]:
    response = dict(kept.get("function_response") or {})
    text = block.text if isinstance(block, TextBlock) else ""
    try:
        response["response"] = json.loads(text)
    except ValueError:
        response["response"] = {"output": text}
    response["id"] = message.tool_call_id
    return response


def _media(block: ImageBlock | DocumentBlock, kept: dict[str, Any]) -> dict[str, Any]:
    if block.data is not None:
        blob = {**(kept.get("blob") or {}), "data": block.data, "mime_type": block.media_type}
        return {"inline_data": blob}
    return {"file_data": {**(kept.get("file") or {}), "file_uri": block.url}}
