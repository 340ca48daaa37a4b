"""Token costs: the default heuristic and the ``Tokenizer`` type (``docs/contract/windows.md``)."""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlmemory.types import (
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
)
from sqlmemory.types._json import dump_json

__all__ = [
    "TOKENS_PER_MESSAGE",
    "UNKNOWN_IMAGE_TOKENS",
    "Tokenizer",
    "estimate_tokens",
    "image_tokens",
    "utf8_size",
]

Tokenizer = Callable[[Message], int]
"""Counts the tokens a message costs in a model request."""

UNKNOWN_IMAGE_TOKENS = 2500
TOKENS_PER_MESSAGE = 4


def utf8_size(text: str) -> int:
    """The UTF-8 bytes of ``text``, what the estimate counts, without encoding an ASCII
    text (as many bytes as characters; ``str.isascii`` reads a flag)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def image_tokens(width: int | None, height: int | None) -> int:
    """Tokens of an image of the given size (2500 when the size is unknown)."""
    if not width or not height:
        return UNKNOWN_IMAGE_TOKENS
    return math.ceil(width / 64) * math.ceil(height / 64) * 170


def estimate_tokens(message: Message) -> int:
    """The default heuristic token cost of ``message`` (``docs/contract/windows.md``).

    4 per message; text and thinking: UTF-8 bytes // 4; images: 170 per started 64x64
    tile of the size read from the header (2500 when unknown); documents: bytes // 1500
    (0 for a document by reference, whose size is unknown); tool calls: UTF-8 bytes of
    name + arguments text // 4; redacted thinking and opaque items: UTF-8 bytes of their
    data or JSON payload // 4.

    Examples:
        >>> estimate_tokens(Message.user("twelve bytes"))  # 4 + 12 // 4
        7
    """
    total = TOKENS_PER_MESSAGE
    for block in message.content:
        if isinstance(block, TextBlock):
            total += utf8_size(block.text) // 4
        elif isinstance(block, ImageBlock):
            total += image_tokens(block.width, block.height)
        elif isinstance(block, DocumentBlock):
            total += len(block.data) // 1500 if block.data is not None else 0
        elif isinstance(block, ThinkingBlock):
            total += len(block.thinking.encode("utf-8")) // 4
        elif isinstance(block, RedactedThinkingBlock):
            total += len(block.data.encode("utf-8")) // 4
        elif isinstance(block, OpaqueBlock):
            total += len(dump_json(block.payload).encode("utf-8")) // 4
    for call in message.tool_calls:
        total += utf8_size(call.name + call.arguments_json) // 4
    return total
