"""The rows of an agent's reply (texts and tool calls), built without the general encoder.

:func:`~sqlmemory.storage.sql.codec.encode_message` asks every block for its row through
a table of kinds, estimates tokens by walking the blocks again, finds the visible text in
a third walk, and writes each call's arguments as JSON twice more after the digest did:
about 19 µs a tool call, four times a text's. A message whose blocks are texts and tool
calls, none with extras, and which has no metadata, provider extras or usage (an
assistant's reply that calls tools, a text of several blocks) has nothing else in it:
:func:`simple_rows` walks its blocks once and writes each call's arguments once.

``tests/unit/test_plain_rows.py`` holds these rows to the general encoder's, for any
message.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

from sqlmemory.policy.tokens import TOKENS_PER_MESSAGE, utf8_size
from sqlmemory.storage.search_rules import visible_text_of
from sqlmemory.storage.sql.base64_text import FLAG
from sqlmemory.storage.sql.usage_rows import NO_USAGE
from sqlmemory.types import Message, TextBlock, ToolCall
from sqlmemory.types._canonical import texts_and_calls
from sqlmemory.types._json import dump_json

__all__ = ["BLOCK_KEYS", "call_value", "simple_rows"]

BLOCK_KEYS = (
    "kind",
    "text",
    "signature",
    "media_type",
    "url",
    "file_id",
    "title",
    "detail",
    "width",
    "height",
    "blob_sha256",
    "call_id",
    "name",
    "value_json",
    "extras_json",
)
"""Every column of a block row but its key: each row names them all (one executemany)."""


def call_value(call: ToolCall) -> tuple[str | None, str]:
    """The ``value_json`` column of ``call``'s block row (its ``text`` column holds its
    ``arguments_text``), and the arguments as sent (:attr:`ToolCall.arguments_json`)."""
    arguments, text = call.arguments, call.arguments_text
    if arguments is None:
        return "null", text  # type: ignore[return-value] # the text alone was given
    # Arguments parsed from their text are not stored twice: NULL means "the text's".
    dumped = dump_json(arguments)
    return (None if dumped == text else dumped), (dumped if text is None else text)


def _call_row(call: ToolCall, position: int) -> tuple[dict[str, Any], int]:
    """The block row of ``call`` at ``position``, and its token estimate."""
    row: dict[str, Any] = dict.fromkeys(BLOCK_KEYS)
    row["position"], row["kind"], row[FLAG] = position, "tool_call", False
    row["call_id"], row["name"], row["text"] = call.id, call.name, call.arguments_text
    row["value_json"], sent = call_value(call)
    return row, utf8_size(call.name + sent) // 4


def _json_list(strings: list[str]) -> str:
    """What ``json.dumps(strings)`` writes (ASCII, ``", "`` between items), without
    making an encoder."""
    return "[" + ", ".join(map(encode_basestring_ascii, strings)) + "]"


def _text_row(block: TextBlock, position: int) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(BLOCK_KEYS)
    row["position"], row["kind"], row[FLAG] = position, "text", False
    row["text"] = block.text
    return row


def simple_rows(
    message: Message, digest: Callable[[Message], str], max_tokens: int
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The message row and block rows of ``message`` when it is made of
    :func:`~sqlmemory.types._canonical.texts_and_calls` (else ``None``); its ``digest``
    from the given function, its estimate at most ``max_tokens``. The first block stays
    in the message row when it is a text."""
    content = texts_and_calls(message)
    if content is None:
        return None
    inline = bool(content) and type(content[0]) is TextBlock
    tokens = TOKENS_PER_MESSAGE
    texts: list[str] = []
    calls: list[str] = []
    blocks: list[dict[str, Any]] = []
    for position, block in enumerate(content):
        if type(block) is TextBlock:
            texts.append(block.text)
            tokens += utf8_size(block.text) // 4
            if position or not inline:
                blocks.append(_text_row(block, position))
        else:
            row, call_tokens = _call_row(block, position)  # type: ignore[arg-type]
            blocks.append(row)
            calls.append(block.id)  # type: ignore[union-attr]
            tokens += call_tokens
    role = message.role._value_  # Enum.value is a property: four times slower
    row = {
        "message_id": message.id,
        "role": role,
        "tool_call_id": message.tool_call_id,
        "text": texts[0] if inline else None,
        "n_blocks": len(blocks),
        "call_ids": _json_list(calls) if calls else None,
        "metadata_json": None,
        "extras_json": None,
        "is_error": message.is_error,
        "digest": digest(message),
        "tokens": min(tokens, max_tokens),
        FLAG: False,  # the writes set it on PostgreSQL, for text that holds NUL
        **NO_USAGE,
        "search_text": visible_text_of(role, texts),
    }
    return row, blocks
