"""Pydantic AI: an agent's ``message_history`` to and from sqlmemory, losslessly.

Needs ``pip install 'sqlmemory[pydantic-ai]'`` (``pydantic-ai-slim``). The guide is
``docs/integrations/pydantic-ai.md``.

A ``ModelRequest`` becomes one message per part: a system prompt a ``system`` message, a user
prompt a ``user`` message (text, images and documents as blocks, so their bytes are stored
once, by reference), a tool return or a retry that answers a call a ``tool`` message (a
retry or a failed call with :attr:`~sqlmemory.Message.is_error`). A ``ModelResponse``
becomes one ``assistant`` message: text, thinking and tool calls as blocks, in order, so a
window never separates a call from its result. Whatever has no common meaning (timestamps,
usage, model and provider names, run ids, part fields, parts of other kinds) is kept
under the ``"pydantic_ai"`` key of ``extras``, so :func:`to_pydantic_ai` gives back
messages that ``ModelMessagesTypeAdapter`` dumps exactly as the originals.

Messages from other sources (another framework, a provider format) become requests and
responses too; an item only another provider understands is dropped with a
:class:`~sqlmemory.formats.DroppedContentWarning`.
"""

from __future__ import annotations

import base64
import binascii
import json
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats import DroppedContentWarning
from sqlmemory.formats._converting import items_of
from sqlmemory.integrations._pydantic_ai_usage import response_usage, usage_fields
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

try:
    from pydantic import ValidationError
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
    )
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.pydantic_ai needs pydantic-ai: pip install 'sqlmemory[pydantic-ai]'"
    ) from exc

__all__ = ["PYDANTIC_AI", "from_pydantic_ai", "to_pydantic_ai"]

PYDANTIC_AI = "pydantic_ai"
"""The key of this adapter's part of ``extras``, and the ``provider`` of its opaque blocks."""

_NO_PARTS = {"pydantic_ai": "no parts"}
"""The payload that stands for a request or a response without parts."""
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_DOCUMENT_TYPES = frozenset({"application/pdf", "text/plain"})
_ERROR_OUTCOMES = frozenset({"failed", "denied", "retried"})


# -- from Pydantic AI ----------------------------------------------------------------------


def from_pydantic_ai(messages: Iterable[ModelMessage]) -> list[Message]:
    """sqlmemory messages of a Pydantic AI message history, ready to store.

    Examples:
        >>> from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart
        >>> history = [ModelRequest.user_text_prompt("Hi!"), ModelResponse([TextPart("Hello.")])]
        >>> [(m.role.value, m.text_content()) for m in from_pydantic_ai(history)]
        [('user', 'Hi!'), ('assistant', 'Hello.')]

    Raises:
        ConversionError: a value that is not a ``ModelMessage`` list; the message names
            the index.
    """
    history = items_of(messages, "messages", noun="messages")
    for index, item in enumerate(history):
        if not isinstance(item, (ModelRequest, ModelResponse)):
            raise ConversionError(
                f"message {index}: expected a ModelRequest or a ModelResponse, "
                f"got {type(item).__name__}"
            )
    try:
        dumped = ModelMessagesTypeAdapter.dump_python(history, mode="json")
    except Exception as exc:  # a part holding what Pydantic cannot serialise
        raise ConversionError(f"messages cannot be dumped: {exc}") from None
    out: list[Message] = []
    for index, message in enumerate(dumped):
        try:
            out.extend(_from_one(message))
        except InvalidMessageError as exc:
            raise ConversionError(f"message {index}: {exc}") from None
    return out


def _from_one(message: dict[str, Any]) -> list[Message]:
    parts = message.pop("parts")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise InvalidMessageError("its parts are not a list of parts")
    if message.get("kind") == "response":
        return [_response(parts, message)]
    made = [_request_part(part) for part in parts] or [
        Message.user(OpaqueBlock(PYDANTIC_AI, _NO_PARTS))
    ]
    first = made[0]
    own = {**_own(first.extras), "request": message}
    made[0] = _with_own(first, own)
    return made


def _own(extras: Mapping[str, Any]) -> Mapping[str, Any]:
    own = extras.get(PYDANTIC_AI)
    return own if isinstance(own, Mapping) else {}


def _with_own(message: Message, own: Mapping[str, Any]) -> Message:
    return Message(
        message.role,
        message.content,
        tool_call_id=message.tool_call_id,
        id=message.id,
        is_error=message.is_error,
        extras={**message.extras, PYDANTIC_AI: own},
    )


def _rest(part: Mapping[str, Any], *taken: str) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k not in taken}


def _request_part(part: dict[str, Any]) -> Message:
    kind = part.get("part_kind")
    try:
        if kind == "system-prompt":
            return Message.system(_text(part), extras=_extras(_rest(part, "content")))
        if kind == "user-prompt":
            return _user_prompt(part)
        if kind in ("tool-return", "retry-prompt") and part.get("tool_name") is not None:
            return _tool_result(part)
        if kind == "retry-prompt" and isinstance(part.get("content"), str):
            return Message.user(part["content"], extras=_extras(_rest(part, "content")))
    except InvalidMessageError:
        pass  # kept verbatim below
    return Message.user(OpaqueBlock(PYDANTIC_AI, part))


def _text(part: Mapping[str, Any]) -> str:
    """The text ``content`` of a part, which a changed part may lack."""
    content = part.get("content")
    if not isinstance(content, str):
        raise InvalidMessageError(f"a {part.get('part_kind')} part's content is not a string")
    return content


def _extras(own: Mapping[str, Any]) -> dict[str, Any]:
    return {PYDANTIC_AI: {"part": own}}


def _user_prompt(part: dict[str, Any]) -> Message:
    content = part.get("content")
    rest = _rest(part, "content")
    if isinstance(content, str):
        return Message.user(content, extras=_extras(rest))
    if not isinstance(content, list):
        raise InvalidMessageError("a user prompt's content is neither a string nor a list")
    rest["content"] = "list"
    return Message.user([_user_item(item) for item in content], extras=_extras(rest))


def _user_item(item: Any) -> Block:
    if isinstance(item, str):
        return TextBlock(item)
    if isinstance(item, Mapping):
        try:
            block = _source_block(item)
        except (InvalidMessageError, binascii.Error, ValueError, TypeError):
            block = None
        if block is not None:
            return block
    return OpaqueBlock(PYDANTIC_AI, {"item": item})


def _source_block(item: Mapping[str, Any]) -> Block | None:
    kind, media_type = item.get("kind"), item.get("media_type")
    if kind == "binary" and media_type in _IMAGE_TYPES | _DOCUMENT_TYPES:
        data = _b64(item["data"])
        cls = ImageBlock if media_type in _IMAGE_TYPES else DocumentBlock
        return cls(data, media_type, extras={PYDANTIC_AI: _rest(item, "data")})
    url = item.get("url")
    if kind in ("image-url", "document-url") and isinstance(url, str):
        if url[:5].lower() == "data:":
            return None  # a data: URL is kept as written
        cls = ImageBlock if kind == "image-url" else DocumentBlock
        known = media_type if media_type in (_IMAGE_TYPES | _DOCUMENT_TYPES) else None
        return cls(url=url, media_type=known, extras={PYDANTIC_AI: _rest(item, "url")})
    return None


def _b64(text: str) -> bytes:
    """Bytes of Pydantic's base64 (URL-safe or standard)."""
    if "-" in text or "_" in text:
        return base64.urlsafe_b64decode(text)
    return base64.b64decode(text, validate=True)


def _tool_result(part: dict[str, Any]) -> Message:
    content = part["content"]
    rest = _rest(part, "content", "tool_call_id")
    if isinstance(content, str):
        text = content
    else:
        try:
            text = json.dumps(content, ensure_ascii=False)
        except ValueError as exc:  # an int too long to write out, say
            raise InvalidMessageError(f"a tool return's content is not JSON: {exc}") from None
        rest["content"] = content
    is_error = part["part_kind"] == "retry-prompt" or part.get("outcome") in _ERROR_OUTCOMES
    return Message.tool(part["tool_call_id"], text, is_error=is_error, extras=_extras(rest))


def _response(parts: list[dict[str, Any]], fields: dict[str, Any]) -> Message:
    own = {"response": fields}
    usage = response_usage(fields)
    try:
        blocks = [_response_block(p) for p in parts]
        return Message.assistant(blocks, extras={PYDANTIC_AI: own}, usage=usage)
    except InvalidMessageError:
        # Nothing a provider would read (no parts, empty text), or a call id used twice:
        # kept verbatim, part by part.
        blocks = [OpaqueBlock(PYDANTIC_AI, p) for p in parts] or [
            OpaqueBlock(PYDANTIC_AI, _NO_PARTS)
        ]
        return Message.assistant(blocks, extras={PYDANTIC_AI: own}, usage=usage)


def _response_block(part: dict[str, Any]) -> Block:
    kind = part.get("part_kind")
    if kind == "text":
        return TextBlock(_text(part), extras={PYDANTIC_AI: _rest(part, "content")})
    if kind == "thinking":
        return ThinkingBlock(_text(part), extras={PYDANTIC_AI: _rest(part, "content")})
    if kind == "tool-call":
        return _tool_call(part)
    return OpaqueBlock(PYDANTIC_AI, part)


def _tool_call(part: dict[str, Any]) -> ToolCall:
    args = part.get("args")
    rest = _rest(part, "tool_call_id", "tool_name", "args")
    call_id, name = part.get("tool_call_id"), part.get("tool_name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise InvalidMessageError("a tool call needs a tool_call_id and a tool_name")
    if isinstance(args, str):
        return ToolCall(call_id, name, arguments_text=args, extras={PYDANTIC_AI: rest})
    if args is None:
        rest["args"] = None
    return ToolCall(call_id, name, args, extras={PYDANTIC_AI: rest})


# -- to Pydantic AI ------------------------------------------------------------------------


def to_pydantic_ai(messages: Iterable[Message]) -> list[ModelMessage]:
    """A Pydantic AI message history of sqlmemory messages, for ``message_history=``.

    Messages read by :func:`from_pydantic_ai` come back as they were; consecutive
    system, user and tool messages from elsewhere make one ``ModelRequest``, and each
    assistant message one ``ModelResponse``.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> history = to_pydantic_ai([
        ...     Message.user("What is 6 x 7?"),
        ...     Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6, "b": 7})]),
        ...     Message.tool("c1", "42"),
        ... ])
        >>> [(m.kind, [p.part_kind for p in m.parts]) for m in history]
        [('request', ['user-prompt']), ('response', ['tool-call']), ('request', ['tool-return'])]

    Raises:
        ConversionError: ``messages`` is not a list of :class:`~sqlmemory.Message`, or
            parts that Pydantic AI refuses.
    """
    messages = items_of(messages, "messages", single=(Message,), noun="messages")
    out: list[dict[str, Any]] = []
    request: dict[str, Any] | None = None
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise ConversionError(
                f"message {index}: expected a sqlmemory Message, got {type(message).__name__}"
            )
        own = _own(message.extras)
        if message.role is Role.ASSISTANT:
            request = None
            out.append(_response_dict(message, own, names))
            continue
        if request is None or "request" in own:
            request = {**_own_field(own, "request", {"kind": "request"}), "parts": []}
            out.append(request)
        part = _request_part_dict(message, own, names)
        if part is not None:
            request["parts"].append(part)
    try:
        return ModelMessagesTypeAdapter.validate_python(out)
    except ValidationError as exc:
        raise ConversionError(f"pydantic-ai refuses the messages: {exc}") from None


def _own_field(own: Mapping[str, Any], key: str, default: dict[str, Any]) -> dict[str, Any]:
    """``own[key]`` thawed, or ``default`` when it is missing or no mapping (hand-made extras)."""
    value = own.get(key)
    return thaw_json(value) if isinstance(value, Mapping) else default


def _opaque(block: Block) -> dict[str, Any] | None:
    """The part or item an opaque block of ours holds; ``None`` for others' (dropped)."""
    if isinstance(block, OpaqueBlock) and block.provider == PYDANTIC_AI:
        if block.payload == _NO_PARTS:
            return None
        payload: dict[str, Any] = thaw_json(block.payload)
        return payload
    what = f"a {block.provider} item" if isinstance(block, OpaqueBlock) else f"a {block.kind} block"
    warnings.warn(
        f"{what} dropped: pydantic_ai cannot carry it", DroppedContentWarning, stacklevel=5
    )
    return None


def _response_dict(
    message: Message, own: Mapping[str, Any], names: dict[str, str]
) -> dict[str, Any]:
    response = usage_fields(message.usage, _own_field(own, "response", {"kind": "response"}))
    parts: list[dict[str, Any]] = []
    for block in message.content:
        part = _response_part(block)
        if part is not None:
            parts.append(part)
        if isinstance(block, ToolCall):
            names[block.id] = block.name
    return {**response, "parts": parts}


def _response_part(block: Block) -> dict[str, Any] | None:
    rest = thaw_json(_own(block.extras))
    if isinstance(block, TextBlock):
        return {"part_kind": "text", **rest, "content": block.text}
    if isinstance(block, ThinkingBlock):
        part = {"part_kind": "thinking", **rest, "content": block.thinking}
        return part
    if isinstance(block, ToolCall):
        args: Any = block.arguments_text
        if args is None:
            args = rest.pop("args") if "args" in rest else thaw_json(block.arguments)
        return {
            "part_kind": "tool-call",
            **rest,
            "tool_name": block.name,
            "args": args,
            "tool_call_id": block.id,
        }
    return _opaque(block)


def _request_part_dict(
    message: Message, own: Mapping[str, Any], names: Mapping[str, str]
) -> dict[str, Any] | None:
    rest = _own_field(own, "part", {})
    role = message.role
    only = message.content[0] if len(message.content) == 1 else None
    if isinstance(only, OpaqueBlock) and "item" not in only.payload:
        return _opaque(only)  # a whole part kept verbatim
    if role is Role.TOOL:
        return _tool_part(message, rest, names)
    text = message.text_content()
    if role in (Role.SYSTEM, Role.DEVELOPER):
        return {"part_kind": "system-prompt", **rest, "content": text}
    if rest.get("part_kind") == "retry-prompt":
        return {**rest, "content": text}
    listed = rest.pop("content", None) == "list"
    items = [i for i in (_user_content(b) for b in message.content) if i is not None]
    content: Any = items
    if not listed and len(items) == 1 and isinstance(items[0], str):
        content = items[0]
    return {"part_kind": "user-prompt", **rest, "content": content}


def _tool_part(message: Message, rest: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    content = rest.pop("content") if "content" in rest else message.text_content()
    kind = rest.pop("part_kind", "retry-prompt" if message.is_error else "tool-return")
    name = rest.pop("tool_name", names.get(str(message.tool_call_id), "unknown_tool"))
    return {
        "part_kind": kind,
        **rest,
        "tool_name": name,
        "content": content,
        "tool_call_id": message.tool_call_id,
    }


def _user_content(block: Block) -> Any:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, (ImageBlock, DocumentBlock)):
        rest = thaw_json(_own(block.extras))
        if block.data is not None:
            return {"kind": "binary", **rest, "data": block.data, "media_type": block.media_type}
        if block.url is not None:
            kind = "image-url" if isinstance(block, ImageBlock) else "document-url"
            return {"kind": kind, **rest, "url": block.url}
    if isinstance(block, OpaqueBlock) and block.provider == PYDANTIC_AI:
        return thaw_json(block.payload).get("item")
    return _opaque(block)
