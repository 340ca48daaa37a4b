"""Test cases shared by the suites: data, not test bodies.

Messages, histories with their expected windows and evictions, and bad-input tables are
plain values and functions of no storage, so the same cases drive the sync and the async
storage (and could drive any other).
"""

from __future__ import annotations

import base64
import io
import math
import random
import struct
import zlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from PIL import Image

from sqlmemory import (
    DocumentBlock,
    ImageBlock,
    InvalidSessionIdError,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

# --- images and documents ------------------------------------------------------------

PIL_FORMATS = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WEBP",
}


def image_bytes(width: int, height: int, media_type: str = "image/png", seed: int = 0) -> bytes:
    """A real ``width`` x ``height`` image encoded as ``media_type`` by Pillow.

    Different ``seed`` values give different bytes (so different blobs).
    """
    buf = io.BytesIO()
    colour = (200, (30 + seed) % 256, (90 + 7 * seed) % 256)
    Image.new("RGB", (width, height), colour).save(buf, format=PIL_FORMATS[media_type])
    return buf.getvalue()


def noisy_png(width: int, height: int, seed: int = 0) -> bytes:
    """A PNG of random pixels: it does not compress, so its size is about ``3 * w * h``."""
    pixels = random.Random(seed).randbytes(width * height * 3)
    buf = io.BytesIO()
    Image.frombytes("RGB", (width, height), pixels).save(buf, format="PNG")
    return buf.getvalue()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` and that holds no pixel data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IEND", b"")


def image_tokens(width: int, height: int) -> int:
    """The image cost of docs/contract/windows.md, written out independently of the library."""
    return math.ceil(width / 64) * math.ceil(height / 64) * 170


PDF_BYTES = (
    b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
    b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
    b"trailer << /Root 1 0 R >>\n%%EOF\n\x00\xff\xfe binary tail"
)

# --- messages -------------------------------------------------------------------------

NESTED_ARGUMENTS: dict[str, Any] = {
    "zeta": 1,
    "alpha": {"y": [1, {"b": 2, "a": 1.5}], "x": None, "m": True},
    "mid": "ü 😀",
    "beta": [],
}
"""Tool arguments whose keys, at every depth, are not in sorted order."""

METADATA: dict[str, Any] = {"z": 1, "a": {"k2": "v", "k1": [3, 2, 1]}, "trace": "t-1"}

IMPORTED_AT = datetime(2001, 2, 3, 4, 5, 6, 789012, tzinfo=timezone(timedelta(hours=5, minutes=30)))
"""A caller-supplied ``recorded_at`` (an import): microseconds, not in UTC."""


def every_block_kind() -> list[Message]:
    """One history holding every block kind, tool calls, metadata and an import time."""
    images = [
        ImageBlock(image_bytes(65 + i, 40 + i, media_type), media_type)
        for i, media_type in enumerate(sorted(PIL_FORMATS))
    ]
    return [
        Message.system("You are terse.", id="sys"),
        Message.user("plain inline text", id="inline", metadata=METADATA),
        Message.user([TextBlock("look at these"), *images, TextBlock("thanks")], id="images"),
        Message.user(
            ImageBlock(url="https://example.com/a.png", media_type="image/png"), id="url-image"
        ),
        Message.user(
            [
                DocumentBlock(PDF_BYTES, "application/pdf", title="spec.pdf"),
                DocumentBlock("notes, plain ✓\n".encode(), "text/plain"),
                TextBlock("two documents"),
            ],
            id="documents",
        ),
        Message.assistant(
            [ThinkingBlock("let me think", signature="sig-abc=="), ThinkingBlock("no sig")],
            tool_calls=[
                ToolCall("call-1", "search", NESTED_ARGUMENTS),
                ToolCall("call-2", "noop"),
            ],
            id="thinking-and-calls",
        ),
        Message.tool("call-1", [TextBlock("result one"), TextBlock("")], id="tool-1"),
        Message.tool("call-2", "result two", id="tool-2"),
        Message.assistant(tool_calls=[ToolCall("call-3", "ping", {"b": 1, "a": 2})], id="calls"),
        Message.tool("call-3", "pong", id="tool-3"),
        Message.assistant("", tool_calls=[ToolCall("call-4", "f")], id="empty-text-and-call"),
        Message.tool("call-4", "ok", id="tool-4"),
        Message(Role.DOCUMENT, (TextBlock("a document-role message"),), id="doc-role"),
        Message.assistant("imported answer", id="imported", recorded_at=IMPORTED_AT),
    ]


def tool_history() -> list[Message]:
    """A well-formed history of nine messages in six groups.

    Groups: ``[u1] [a1 t1 t2] [a2] [u2] [a3 t3] [a4]``.
    """
    return [
        Message.user("question one", id="u1"),
        Message.assistant(
            tool_calls=[ToolCall("c1", "lookup", {"q": "one"}), ToolCall("c2", "lookup", {})],
            id="a1",
        ),
        Message.tool("c1", "first answer", id="t1"),
        Message.tool("c2", "second answer", id="t2"),
        Message.assistant("answer one", id="a2"),
        Message.user("question two", id="u2"),
        Message.assistant(tool_calls=[ToolCall("c3", "lookup", {"q": "two"})], id="a3"),
        Message.tool("c3", "third answer", id="t3"),
        Message.assistant("answer two", id="a4"),
    ]


def orphan_history() -> list[Message]:
    """A malformed history: a tool message answering no call, between two others."""
    return [
        Message.user("hello", id="o-u1"),
        Message.tool("nobody-called", "stray result", id="o-t1"),
        Message.assistant("hi", id="o-a1"),
        Message.user("bye", id="o-u2"),
    ]


EVICT_CASES: list[tuple[int, int, list[str]]] = [
    # (keep, number deleted, ids left) on tool_history()
    (100, 0, ["u1", "a1", "t1", "t2", "a2", "u2", "a3", "t3", "a4"]),
    (9, 0, ["u1", "a1", "t1", "t2", "a2", "u2", "a3", "t3", "a4"]),
    (8, 1, ["a1", "t1", "t2", "a2", "u2", "a3", "t3", "a4"]),
    (7, 4, ["a2", "u2", "a3", "t3", "a4"]),  # t1, t2 would be orphans at the head
    (6, 4, ["a2", "u2", "a3", "t3", "a4"]),
    (5, 4, ["a2", "u2", "a3", "t3", "a4"]),
    (4, 5, ["u2", "a3", "t3", "a4"]),
    (3, 6, ["a3", "t3", "a4"]),
    (2, 8, ["a4"]),  # t3 would be an orphan at the head
    (1, 8, ["a4"]),
    (0, 9, []),
]

EVICT_ORPHAN_CASES: list[tuple[int, int, list[str]]] = [
    # (keep, number deleted, ids left) on orphan_history()
    (3, 2, ["o-a1", "o-u2"]),
    (2, 2, ["o-a1", "o-u2"]),
    (1, 3, ["o-u2"]),
]

RECENT_CASES: list[tuple[int, list[str]]] = [
    # (n, ids returned) on tool_history()
    (0, []),
    (1, ["a4"]),
    (2, ["a4"]),  # the group [a3 t3] does not fit beside a4
    (3, ["a3", "t3", "a4"]),
    (4, ["u2", "a3", "t3", "a4"]),
    (5, ["a2", "u2", "a3", "t3", "a4"]),
    (7, ["a2", "u2", "a3", "t3", "a4"]),
    (8, ["a1", "t1", "t2", "a2", "u2", "a3", "t3", "a4"]),
    (9, ["u1", "a1", "t1", "t2", "a2", "u2", "a3", "t3", "a4"]),
    (1000, ["u1", "a1", "t1", "t2", "a2", "u2", "a3", "t3", "a4"]),
]

RECENT_ORPHAN_CASES: list[tuple[int, list[str]]] = [
    # (n, ids returned) on orphan_history(): the orphan is never returned
    (2, ["o-a1", "o-u2"]),
    (3, ["o-u1", "o-a1", "o-u2"]),
    (10, ["o-u1", "o-a1", "o-u2"]),
]

FIDELITY_TEXTS: dict[str, str] = {
    "nul": "\x00",
    "nul-inside": "before\x00after\x00",
    "emoji": "😀 4-byte 𝄞 and 🀄",
    "zwj-family": "👩‍👩‍👧‍👦",
    "zwj-mixed": "x👩🏽‍💻y🏳️‍🌈z",
    "trailing-spaces": "ends with spaces   ",
    "leading-spaces": "   starts with spaces",
    "only-spaces": "   ",
    "newlines": "line\r\nwindows\rold mac\nunix\n",
    "combining": "e\u0301 vs \u00e9",
    "bom-and-separators": "\ufeffbom \u2028 \u2029 \u200b",
    "backslashes-quotes": "\\' \" ` \\\\ %s %% _ ; --",
    "control": "\x01\x07\x1b[31m\x7f",
    "max-bmp-and-plane-16": "\uffff \U0010ffff",
}


def fidelity_messages() -> list[Message]:
    """Every fidelity text in each place a text is stored."""
    messages: list[Message] = []
    for name, text in FIDELITY_TEXTS.items():
        messages.append(Message.user(text, id=f"inline:{name}"))
        messages.append(Message.user([TextBlock(text), TextBlock(text)], id=f"blocks:{name}"))
        messages.append(
            Message.assistant(
                [ThinkingBlock(text, signature=text)],
                tool_calls=[ToolCall(f"call:{name}", f"tool {name}", {text: text})],
                metadata={text: [text]},
                id=f"thinking:{name}",
            )
        )
        messages.append(
            Message.tool(
                f"call:{name}",
                [DocumentBlock(text.encode() or b"-", "text/plain", title=text)],
                id=f"document:{name}",
            )
        )
    return messages


BIG_TEXT = ("0123456789abcdef" * 64 + "😀\x00 ") * 9800
"""About 10 MB of UTF-8 (10.1 million bytes), with 4-byte characters and NULs."""

# --- bad input ------------------------------------------------------------------------

_INVALID_SESSION_IDS = [
    "",
    "x" * 256,
    " leading",
    "trailing ",
    "\ttab",
    "newline\n",
    "nul\x00inside",
    "bell\x07",
    "del\x7f",
    "next-line\u0085",
    "lone \ud800 surrogate",
    "newline\ninside",
    "escape\x1binside",
    "   ",
]
_WRONG_TYPE_SESSION_IDS: list[object] = [None, 1, 1.5, b"bytes", ["list"], ("tuple",)]
BAD_SESSION_IDS: list[tuple[object, type[Exception]]] = [
    *((value, InvalidSessionIdError) for value in _INVALID_SESSION_IDS),
    *((value, TypeError) for value in _WRONG_TYPE_SESSION_IDS),
]
"""Session ids the storage boundary refuses, and the error each gets."""

GOOD_SESSION_IDS: list[str] = [
    "'; DROP TABLE x;--",
    "' OR '1'='1",
    'robert"); DROP TABLE sqlmemory_messages;--',
    "x" * 255,
    "😀" * 255,
    "inner space and ünïcödé",
    "100%_done\\",
    "a b",
    "user@example.com/chat#1",
    "会话",
]
"""Session ids that are valid, however hostile they look."""

BAD_COUNTS: list[tuple[object, type[Exception]]] = [
    (-1, ValueError),
    (-100, ValueError),
    (-(2**63), ValueError),
    (True, TypeError),
    (False, TypeError),
    (1.0, TypeError),
    (2.5, TypeError),
    ("3", TypeError),
    (None, TypeError),
]
"""Bad ``n`` of ``recent`` and ``keep`` of ``evict``."""

NOT_MESSAGES: list[object] = [
    "a string",
    {"role": "user", "content": "hi"},
    None,
    TextBlock("a block"),
    42,
]


def _bad_message_builders() -> dict[str, Callable[[], object]]:
    png = image_bytes(2, 2)
    return {
        "unknown role": lambda: Message("wizard", "hi"),  # type: ignore[arg-type]
        "user without content": lambda: Message.user(""),
        "user with empty block list": lambda: Message.user([]),
        "system without content": lambda: Message.system(""),
        "developer without content": lambda: Message.developer(""),
        "is_error on an assistant message": lambda: Message(Role.ASSISTANT, "x", is_error=True),
        "is_error not a bool": lambda: Message.tool("c1", "x", is_error=1),  # type: ignore[arg-type]
        "tool call inside a user message": lambda: Message.user(["see", ToolCall("c1", "f")]),
        "call id of an opaque item on a user message": lambda: Message.user(
            OpaqueBlock("openai", {"type": "computer_call_output"}, call_id="c1")
        ),
        "a tool call id twice, once opaque": lambda: Message.assistant(
            [ToolCall("c1", "f"), OpaqueBlock("openai", {"type": "x"}, call_id="c1")]
        ),
        "arguments a list": lambda: ToolCall("c1", "f", [1, 2]),  # type: ignore[arg-type]
        "arguments_text not a str": lambda: ToolCall("c1", "f", arguments_text=b"{}"),  # type: ignore[arg-type]
        "arguments_text with a lone surrogate": lambda: ToolCall(
            "c1", "f", arguments_text='{"a": "\ud800"}\ud800'
        ),
        "tool call without a name": lambda: ToolCall("c1", ""),
        "extras not a mapping": lambda: TextBlock("x", extras=["a"]),  # type: ignore[arg-type]
        "extras not JSON": lambda: ThinkingBlock("x", extras={"when": datetime.now(timezone.utc)}),
        "message extras with NaN": lambda: Message.user("x", extras={"x": float("nan")}),
        "redacted thinking not a str": lambda: RedactedThinkingBlock(b"x"),  # type: ignore[arg-type]
        "opaque payload a list": lambda: OpaqueBlock("openai", [1]),  # type: ignore[arg-type]
        "opaque without provider": lambda: OpaqueBlock("", {"type": "x"}),
        "opaque call_id with a control character": lambda: OpaqueBlock(
            "openai", {"type": "x"}, call_id="c\n1"
        ),
        "image with two sources": lambda: ImageBlock(
            png, "image/png", url="https://example.com/a.png"
        ),
        "image with no source": lambda: ImageBlock(media_type="image/png"),
        "image bytes without a media type": lambda: ImageBlock(png),
        "image reference with a bad media type": lambda: ImageBlock(
            url="https://example.com/a.bmp", media_type="image/bmp"
        ),
        "image url of another scheme": lambda: ImageBlock(url="ftp://example.com/a.png"),
        "image url that is not a url": lambda: ImageBlock(url="a.png"),
        "image detail unknown": lambda: ImageBlock(url="https://example.com/a.png", detail="max"),
        "image file id empty": lambda: ImageBlock(file_id=""),
        "image file id with a control character": lambda: ImageBlock(file_id="file\x00"),
        "data url with bad base64": lambda: ImageBlock(url="data:image/png;base64,@@"),
        "data url without a comma": lambda: ImageBlock(url="data:image/png;base64"),
        "data url of another type than given": lambda: ImageBlock(
            url="data:image/png;base64," + base64.b64encode(png).decode(), media_type="image/gif"
        ),
        "data url of an unsupported type": lambda: ImageBlock(url="data:image/bmp;base64,Qk0="),
        "data url bytes that are no png": lambda: ImageBlock(url="data:image/png;base64,AAAA"),
        "document with two sources": lambda: DocumentBlock(b"x", "text/plain", file_id="file-1"),
        "document bytes without a media type": lambda: DocumentBlock(b"%PDF-1.4"),
        "document url of another scheme": lambda: DocumentBlock(url="file:///etc/passwd"),
        "document data url of an unsupported type": lambda: DocumentBlock(
            url="data:text/html,<p>hi</p>"
        ),
        "assistant without content or calls": lambda: Message.assistant(),
        "tool calls on a user message": lambda: Message(
            Role.USER, (TextBlock("hi"),), tool_calls=(ToolCall("c1", "f"),)
        ),
        "tool message without tool_call_id": lambda: Message(Role.TOOL, (TextBlock("result"),)),
        "duplicate tool call ids": lambda: Message.assistant(
            tool_calls=[ToolCall("c1", "f"), ToolCall("c1", "g")]
        ),
        "arguments not JSON": lambda: ToolCall("c1", "f", {"when": datetime.now(timezone.utc)}),
        "arguments with a set": lambda: ToolCall("c1", "f", {"s": {1, 2}}),
        "arguments with bytes": lambda: ToolCall("c1", "f", {"b": b"x"}),
        "arguments with NaN": lambda: ToolCall("c1", "f", {"x": float("nan")}),
        "arguments with Infinity": lambda: ToolCall("c1", "f", {"x": [float("inf")]}),
        "metadata with -Infinity": lambda: Message.user("hi", metadata={"x": float("-inf")}),
        "lone surrogate in text": lambda: Message.user("bad \udc80 text"),
        "lone surrogate in a block": lambda: TextBlock("\ud83d"),
        "image media type bmp": lambda: ImageBlock(b"BM\x00\x00", "image/bmp"),
        "image media type svg": lambda: ImageBlock(b"<svg/>", "image/svg+xml"),
        "png bytes declared jpeg": lambda: ImageBlock(png, "image/jpeg"),
        "jpeg magic declared png": lambda: ImageBlock(b"\xff\xd8\xff\xe0 junk", "image/png"),
        "zero-byte image": lambda: ImageBlock(b"", "image/png"),
        "document media type": lambda: DocumentBlock(b"x", "application/zip"),
        "zero-byte document": lambda: DocumentBlock(b"", "application/pdf"),
    }


BAD_MESSAGE_BUILDERS = _bad_message_builders()
"""Builders of values refused with ``InvalidMessageError`` when built (docs/contract/errors.md)."""

# --- comparing messages ---------------------------------------------------------------


def timeless(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with ``recorded_at`` cleared, to compare content alone."""
    return [m.with_recorded_at(None) for m in messages]  # type: ignore[arg-type]


def ids(messages: Sequence[Message]) -> list[str]:
    return [m.id for m in messages]


def texts(messages: Sequence[Message]) -> list[str]:
    return [m.text_content() for m in messages]


def value(m: Message) -> tuple[Any, ...]:
    """Everything a message carries except the store-assigned ``recorded_at``."""
    return (m.id, m.role, m.content, m.tool_calls, m.tool_call_id, dict(m.metadata))


def essence(messages: Sequence[Message]) -> list[tuple[Any, ...]]:
    """:func:`value` of each message: what they are, ``recorded_at`` aside."""
    return [value(m) for m in messages]


def chat(n: int, prefix: str = "m") -> list[Message]:
    """``n`` messages, user and assistant in turn, with texts ``m0``, ``m1``..."""
    return [
        Message.user(f"{prefix}{i}") if i % 2 == 0 else Message.assistant(f"{prefix}{i}")
        for i in range(n)
    ]


def image_sizes(messages: Sequence[Message]) -> list[tuple[int | None, int | None]]:
    """Width and height of every image block, in order (``ImageBlock`` equality ignores them)."""
    return [(b.width, b.height) for m in messages for b in m.content if isinstance(b, ImageBlock)]
