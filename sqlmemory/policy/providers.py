"""Token estimators that follow what OpenAI and Anthropic publish (``docs/contract/windows.md``).

The seed heuristic (:func:`~sqlmemory.policy.estimate_tokens`) stays the default: it is
deliberately conservative, and prices a 1920x1080 screenshot at 86,700 tokens. These
estimators price it as the providers do (1,105 for OpenAI at high detail, about 1,600
for Anthropic), so a :class:`~sqlmemory.TokenWindow` with a real budget keeps the history
around an image. Image sizes come from the stored width and height, never from bytes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from sqlmemory.policy._encodings import (
    Encoding,
    EncodingChoice,
    count_text,
    encoding_for_model,
    resolve,
)
from sqlmemory.policy.tokens import TOKENS_PER_MESSAGE, Tokenizer
from sqlmemory.types import DocumentBlock, ImageBlock, Message, TextBlock, ThinkingBlock, ToolCall

__all__ = [
    "ANTHROPIC_UNKNOWN_IMAGE_TOKENS",
    "OPENAI_UNKNOWN_IMAGE_TOKENS",
    "anthropic_image_tokens",
    "anthropic_tokenizer",
    "openai_image_tokens",
    "openai_tokenizer",
]

OPENAI_BASE_TOKENS = 85
OPENAI_TILE_TOKENS = 170
OPENAI_UNKNOWN_IMAGE_TOKENS = OPENAI_BASE_TOKENS + 8 * OPENAI_TILE_TOKENS
"""What an image of unknown size costs OpenAI: the most any image costs at high detail
(after scaling, at most 768 x 2048 pixels: 2 x 4 tiles), so the estimate never falls short."""
OPENAI_TOKENS_PER_MESSAGE = 3
"""OpenAI's published framing of a chat message (besides its role and content)."""
OPENAI_TOKENS_PER_ROLE = 1
"""Every chat role (``system``, ``developer``, ``user``, ``assistant``, ``tool``) is one
token in OpenAI's encodings."""

ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_TOKENS = 1600
ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_UNKNOWN_IMAGE_TOKENS = ANTHROPIC_MAX_TOKENS
"""What an image of unknown size costs Anthropic: the most any image costs."""
ANTHROPIC_DEFAULT_ENCODING = "cl100k_base"
"""Anthropic publishes no tokenizer (only a counting endpoint); this one approximates it."""
PDF_BYTES_PER_TOKEN = 1500
"""The seed's rule for PDFs, kept: no provider publishes one that works without opening
the PDF (both bill each page's extracted text plus an image of the page)."""


def openai_image_tokens(width: int | None, height: int | None, detail: str | None = None) -> int:
    """What OpenAI bills for an image on GPT-4o-class models (tiles of 512 pixels).

    ``detail="low"``: 85. Otherwise (``high``, ``auto`` and ``None`` alike, as OpenAI
    treats ``auto`` for such sizes): the image is scaled down to fit 2048 x 2048, then
    so that its short side is at most 768 pixels, and costs 85 + 170 per 512-pixel tile.
    An unknown size costs :data:`OPENAI_UNKNOWN_IMAGE_TOKENS`.

    Examples:
        >>> openai_image_tokens(1920, 1080), openai_image_tokens(512, 512)
        (1105, 255)
        >>> openai_image_tokens(4000, 3000, detail="low")
        85
    """
    if detail == "low":
        return OPENAI_BASE_TOKENS
    if not width or not height:
        return OPENAI_UNKNOWN_IMAGE_TOKENS
    longest = max(width, height)
    if longest > 2048:
        width, height = max(width * 2048 // longest, 1), max(height * 2048 // longest, 1)
    shortest = min(width, height)
    if shortest > 768:
        width, height = max(width * 768 // shortest, 1), max(height * 768 // shortest, 1)
    tiles = math.ceil(width / 512) * math.ceil(height / 512)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def anthropic_image_tokens(width: int | None, height: int | None) -> int:
    """What Anthropic bills for an image: ``ceil(w * h / 750)`` after scaling down.

    The image keeps its aspect ratio and shrinks until its long side is at most 1568
    pixels and its cost at most 1600 tokens. An unknown size costs
    :data:`ANTHROPIC_UNKNOWN_IMAGE_TOKENS`.

    Examples:
        >>> anthropic_image_tokens(1000, 1000), anthropic_image_tokens(200, 200)
        (1334, 54)
    """
    if not width or not height:
        return ANTHROPIC_UNKNOWN_IMAGE_TOKENS
    longest = max(width, height)
    if longest > ANTHROPIC_MAX_EDGE:
        width = max(width * ANTHROPIC_MAX_EDGE // longest, 1)
        height = max(height * ANTHROPIC_MAX_EDGE // longest, 1)
    most_pixels = ANTHROPIC_MAX_TOKENS * ANTHROPIC_PIXELS_PER_TOKEN
    if width * height > most_pixels:
        scale = math.sqrt(most_pixels / (width * height))
        width, height = max(int(width * scale), 1), max(int(height * scale), 1)
    return min(-(-width * height // ANTHROPIC_PIXELS_PER_TOKEN), ANTHROPIC_MAX_TOKENS)


class _Text:
    """Counts text, loading the encoding only when there is text to count."""

    __slots__ = ("_choice", "_default", "_encoding", "_resolved")

    def __init__(self, choice: EncodingChoice, default: str) -> None:
        self._choice = choice
        self._default = default
        self._encoding: Encoding | None = None
        self._resolved = False

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        if not self._resolved:
            self._encoding = resolve(self._choice, self._default)
            self._resolved = True
        return count_text(self._encoding, text)


@dataclass(frozen=True)
class _ProviderTokenizer:
    """A :data:`~sqlmemory.policy.Tokenizer` following one provider's published rules."""

    provider: str
    model: str | None
    encoding: EncodingChoice = field(default=None, compare=False)

    def __repr__(self) -> str:
        model = f"{self.model!r}" if self.model else ""
        return f"{self.provider}_tokenizer({model})"

    def __call__(self, message: Message) -> int:
        if self.model is None:
            text = _Text(self.encoding, ANTHROPIC_DEFAULT_ENCODING)
            total = TOKENS_PER_MESSAGE
        else:
            text = _Text(self.encoding, encoding_for_model(self.model))
            total = OPENAI_TOKENS_PER_MESSAGE + OPENAI_TOKENS_PER_ROLE
        if message.tool_call_id is not None:
            total += text(message.tool_call_id)
        for block in message.content:
            total += self._block(text, block)
        for call in message.tool_calls:
            total += text(call.id) + text(call.name) + text(call.arguments_json)
        return total

    def _block(self, text: _Text, block: Any) -> int:
        if isinstance(block, TextBlock):
            return text(block.text)
        if isinstance(block, ThinkingBlock):
            return text(block.thinking)
        if isinstance(block, ImageBlock):
            if self.model is None:
                return anthropic_image_tokens(block.width, block.height)
            return openai_image_tokens(block.width, block.height, block.detail)
        if isinstance(block, DocumentBlock):
            data = block.data or b""
            if block.media_type == "text/plain":
                return text(data.decode("utf-8", errors="replace"))
            return len(data) // PDF_BYTES_PER_TOKEN
        if isinstance(block, ToolCall):
            return 0  # counted with the message's tool calls
        # A block this estimator has no rule for (a provider's opaque item, redacted
        # reasoning): its JSON form, counted as text.
        to_dict = getattr(block, "to_dict", None)
        return text(json.dumps(to_dict())) if callable(to_dict) else 0


def openai_tokenizer(model: str = "gpt-4o", *, encoding: EncodingChoice = None) -> Tokenizer:
    """A tokenizer following OpenAI's published rules, for a ``TokenWindow``.

    Per message: 3 tokens of framing, 1 for the role, and the content. Text (and a tool
    message's call id, and each tool call's id, name and argument text) is counted with
    the model's ``tiktoken`` encoding when the ``[tiktoken]`` extra is installed and the
    encoding loads, else as 4 bytes per token. Images follow
    :func:`openai_image_tokens`, from the stored width and height.

    Args:
        model: the OpenAI model; it picks the ``tiktoken`` encoding (``o200k_base`` for
            models ``tiktoken`` does not know).
        encoding: an encoding name, or an encoding object (a ``tiktoken.Encoding``) to
            use instead of the model's, e.g. one built offline.

    Examples:
        >>> from sqlmemory import ImageBlock, TokenWindow
        >>> count = openai_tokenizer("gpt-4o")
        >>> screenshot = ImageBlock(
        ...     url="https://example.com/s.png", media_type="image/png", width=1920, height=1080
        ... )
        >>> count(Message.user(screenshot))  # 3 + the role (1 token) + the image
        1109
        >>> window = TokenWindow(8000, tokenizer=count)
    """
    return _ProviderTokenizer("openai", model, encoding)


def anthropic_tokenizer(*, encoding: EncodingChoice = None) -> Tokenizer:
    """A tokenizer following Anthropic's published rules, for a ``TokenWindow``.

    Images follow :func:`anthropic_image_tokens`, from the stored width and height.
    Anthropic publishes no tokenizer: text is counted with ``tiktoken``'s
    ``cl100k_base`` encoding when the ``[tiktoken]`` extra is installed (an
    approximation), else as 4 bytes per token; each message adds 4 tokens of framing.

    Args:
        encoding: an encoding name, or an encoding object, to count text with instead.

    Examples:
        >>> from sqlmemory import ImageBlock
        >>> count = anthropic_tokenizer()
        >>> photo = ImageBlock(
        ...     url="https://example.com/p.png", media_type="image/png", width=1000, height=1000
        ... )
        >>> count(Message.user(photo))  # 4 + the image
        1338
    """
    return _ProviderTokenizer("anthropic", None, encoding)
