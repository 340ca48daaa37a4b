"""The JSON Schema of the wire form, built from the model's own constants.

Public as :data:`sqlmemory.wire.MESSAGE_JSON_SCHEMA`; ``docs/contract/messages.md``
describes the form. Every schema is inline (no ``$ref``), so the whole can be embedded in
an OpenAPI document, whose ``#`` is not this schema's root.
"""

from __future__ import annotations

import copy
from typing import Any

from sqlmemory.types.blocks import (
    DOCUMENT_MEDIA_TYPES,
    IMAGE_DETAILS,
    IMAGE_MEDIA_TYPES,
    MAX_ID_LENGTH,
)
from sqlmemory.types.calls import MAX_PROVIDER_LENGTH
from sqlmemory.types.token_usage import TOKEN_FIELDS

__all__ = ["build_message_schema"]

_ROLES = ["system", "developer", "user", "assistant", "tool", "document"]


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null``: an optional field may be given as ``null``, as if absent."""
    return {"anyOf": [schema, {"type": "null"}]}


def _id(description: str) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_ID_LENGTH,
        "description": description,
    }


_EXTRAS = _nullable(
    {"type": "object", "description": "Provider fields with no common meaning, verbatim."}
)
_BASE64 = {
    "type": "string",
    "contentEncoding": "base64",
    "pattern": "^[A-Za-z0-9+/]*={0,2}$",
    "description": "The bytes, standard base64.",
}
_URL = {
    "type": "string",
    "pattern": "^([hH][tT][tT][pP][sS]?://|[dD][aA][tT][aA]:)",
    "description": "An http(s) URL (a reference), or a data: URL (read as bytes).",
}
_SOURCES = [{"required": [source]} for source in ("data", "url", "file_id")]


def _block(kind: str, title: str, properties: dict[str, Any], **rules: Any) -> dict[str, Any]:
    return {
        "title": title,
        "type": "object",
        "properties": {"kind": {"const": kind}, **properties, "extras": _EXTRAS},
        "required": ["kind", *rules.pop("required", [])],
        "additionalProperties": False,
        **rules,
    }


def _media(media_types: frozenset[str], **more: Any) -> dict[str, Any]:
    return {
        "media_type": _nullable({"enum": sorted(media_types)}),
        "data": _BASE64,
        "url": _URL,
        "file_id": _id("A provider's id of an uploaded file."),
        **more,
    }


def _tool_call(*, kind_required: bool) -> dict[str, Any]:
    schema = _block(
        "tool_call",
        "ToolCall",
        {
            "id": _id("The call's id, which a tool message answers."),
            "name": {"type": "string", "minLength": 1},
            "arguments": _nullable({"type": "object"}),
            "arguments_text": _nullable(
                {"type": "string", "description": "The arguments as sent, byte for byte."}
            ),
        },
        required=["id", "name"],
    )
    if not kind_required:  # version 1's tool calls have no kind
        schema["required"] = ["id", "name"]
    return schema


def _blocks() -> list[dict[str, Any]]:
    return [
        _block("text", "TextBlock", {"text": {"type": "string"}}, required=["text"]),
        _block(
            "image",
            "ImageBlock",
            _media(
                IMAGE_MEDIA_TYPES,
                detail=_nullable({"enum": sorted(IMAGE_DETAILS)}),
                width=_nullable({"type": "integer", "minimum": 1, "maximum": 65_535}),
                height=_nullable({"type": "integer", "minimum": 1, "maximum": 65_535}),
            ),
            oneOf=_SOURCES,
            dependentRequired={"data": ["media_type"]},
        ),
        _block(
            "document",
            "DocumentBlock",
            _media(DOCUMENT_MEDIA_TYPES, title=_nullable({"type": "string"})),
            oneOf=_SOURCES,
            dependentRequired={"data": ["media_type"]},
        ),
        _block(
            "thinking",
            "ThinkingBlock",
            {"thinking": {"type": "string"}, "signature": _nullable({"type": "string"})},
            required=["thinking"],
        ),
        _block(
            "redacted_thinking",
            "RedactedThinkingBlock",
            {"data": {"type": "string"}},
            required=["data"],
        ),
        _tool_call(kind_required=True),
        _block(
            "opaque",
            "OpaqueBlock",
            {
                "provider": {"type": "string", "minLength": 1, "maxLength": MAX_PROVIDER_LENGTH},
                "payload": {"type": "object", "description": "The provider's item, verbatim."},
                "call_id": _nullable(_id("The id a later tool message answers.")),
            },
            required=["provider", "payload"],
        ),
    ]


_COUNT = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
_USAGE = {
    "type": "object",
    "title": "Usage",
    "description": "The model that produced the message and its token counts.",
    "properties": {
        "model": _nullable(_id("The model's name as the provider gave it.")),
        **{name: _COUNT for name in TOKEN_FIELDS},
    },
    "additionalProperties": False,
}


def build_message_schema() -> dict[str, Any]:
    """The JSON Schema of a message's wire form, versions 1 and 2 (nothing shared)."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "sqlmemory message",
        "description": "A message in sqlmemory's wire form (Message.to_dict).",
        "type": "object",
        "properties": {
            "v": {"enum": [1, 2], "description": "The wire version; 2 when absent."},
            "id": _nullable(_id("Unique within a session; a new UUID when absent.")),
            "role": {"enum": _ROLES},
            "content": {"type": "array", "items": {"oneOf": _blocks()}},
            "tool_calls": {
                "type": "array",
                "description": "Version 1: tool calls, read after the content.",
                "items": _tool_call(kind_required=False),
            },
            "tool_call_id": _nullable(_id("For a tool message: the call it answers.")),
            "is_error": _nullable({"type": "boolean"}),
            "metadata": _nullable({"type": "object"}),
            "extras": _EXTRAS,
            "recorded_at": _nullable({"type": "string", "format": "date-time"}),
            "usage": _nullable(_USAGE),
        },
        "required": ["role", "content"],
        "additionalProperties": False,
    }
    return copy.deepcopy(schema)  # the pieces above are shared module values
