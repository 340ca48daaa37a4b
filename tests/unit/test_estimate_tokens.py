"""The default token estimate of docs/contract/windows.md, image sizes read from headers."""

from __future__ import annotations

import math
import tracemalloc

import pytest

from sqlmemory import (
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    TokenWindow,
    ToolCall,
    estimate_tokens,
)
from tests.support.cases import image_bytes, png_header_only

BASE = 4  # every message costs 4 before its blocks


IMAGE_REFERENCE = [
    ((1, 1), 170),
    ((64, 64), 170),
    ((65, 64), 340),
    ((128, 128), 680),
    ((1000, 1000), 43520),
]


@pytest.mark.parametrize("media_type", ["image/png", "image/jpeg", "image/gif", "image/webp"])
@pytest.mark.parametrize(("size", "expected"), IMAGE_REFERENCE, ids=lambda v: str(v))
def test_image_reference_values(media_type: str, size: tuple[int, int], expected: int) -> None:
    data = image_bytes(*size, media_type=media_type)
    message = Message.user([ImageBlock(data=data, media_type=media_type)])
    assert estimate_tokens(message) == BASE + expected


def test_image_width_and_height_are_not_swapped() -> None:
    # 64 wide, 200 high: ceil(64/64) * ceil(200/64) = 1 * 4 tiles
    data = image_bytes(64, 200)
    assert estimate_tokens(Message.user([ImageBlock(data=data, media_type="image/png")])) == (
        BASE + 4 * 170
    )
    data = image_bytes(200, 1)
    assert estimate_tokens(Message.user([ImageBlock(data=data, media_type="image/png")])) == (
        BASE + 4 * 170
    )


def test_undecodable_webp_costs_2500() -> None:
    data = b"RIFF\x10\x00\x00\x00WEBP" + b"\x00garbage, not a VP8 chunk" * 4
    message = Message.user([ImageBlock(data=data, media_type="image/webp")])
    assert estimate_tokens(message) == BASE + 2500


def test_undecodable_png_costs_2500() -> None:
    data = b"\x89PNG\r\n\x1a\n" + b"definitely not chunks" * 10
    message = Message.user([ImageBlock(data=data, media_type="image/png")])
    assert estimate_tokens(message) == BASE + 2500


def test_image_by_url_costs_2500() -> None:
    block = ImageBlock(url="https://example.com/cat.png", media_type="image/png")
    assert estimate_tokens(Message.user([block])) == BASE + 2500


def test_huge_header_is_estimated_from_header_without_decoding() -> None:
    tracemalloc.start()
    try:
        data = png_header_only(50_000, 50_000)
        message = Message.user([ImageBlock(data=data, media_type="image/png")])
        cost = estimate_tokens(message)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cost == BASE + math.ceil(50_000 / 64) ** 2 * 170
    assert peak < 10 * 1024 * 1024


def test_two_images_add_up() -> None:
    blocks = [
        ImageBlock(data=image_bytes(1, 1), media_type="image/png"),
        ImageBlock(data=image_bytes(128, 128, "image/jpeg"), media_type="image/jpeg"),
    ]
    assert estimate_tokens(Message.user(blocks)) == BASE + 170 + 680


# --- text, thinking, documents, tool calls --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abc", 0),
        ("abcd", 1),
        ("abcdefgh", 2),
        ("abcdefghijk", 2),
        ("é" * 4, 2),  # 8 UTF-8 bytes, 4 characters
        ("\U0001f600", 1),  # one 4-byte emoji
        ("日本語", 2),  # 9 bytes
    ],
)
def test_text_costs_utf8_bytes_over_four(text: str, expected: int) -> None:
    assert estimate_tokens(Message.user(text)) == BASE + expected


def test_each_text_block_is_floored_separately() -> None:
    # 3 bytes each: 0 + 0, not (3 + 3) // 4 == 1
    message = Message.user([TextBlock("abc"), TextBlock("def")])
    assert estimate_tokens(message) == BASE


def test_thinking_counts_its_text() -> None:
    message = Message.assistant([ThinkingBlock("x" * 12, signature="sig"), TextBlock("yyyyyyyy")])
    assert estimate_tokens(message) == BASE + 3 + 2


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (DocumentBlock(data=b"a" * 3000, media_type="text/plain"), 2),
        (DocumentBlock(data=b"a" * 1499, media_type="text/plain", title="notes"), 0),
        (DocumentBlock(data=b"%PDF-1.4\n" + b"0" * 4491, media_type="application/pdf"), 3),
    ],
)
def test_document_costs_bytes_over_1500(block: DocumentBlock, expected: int) -> None:
    assert estimate_tokens(Message.user([block])) == BASE + expected


def test_tool_call_costs_name_and_json_arguments_over_four() -> None:
    # "abcdefgh" + "{}" is 10 characters -> 2
    message = Message.assistant(tool_calls=[ToolCall(id="c1", name="abcdefgh", arguments={})])
    assert estimate_tokens(message) == BASE + 2


def test_tool_call_arguments_are_counted() -> None:
    # name (4) + {"q": "<40 x's>"}: 53 or 52 characters depending on separators -> 13 either way
    args = {"q": "x" * 40}
    message = Message.assistant(tool_calls=[ToolCall(id="c1", name="find", arguments=args)])
    assert estimate_tokens(message) == BASE + 13


def test_each_tool_call_is_floored_separately() -> None:
    # "abcde{}" is 7 characters: 1 + 1, not 14 // 4 == 3
    calls = [ToolCall(id=f"c{i}", name="abcde", arguments={}) for i in range(2)]
    assert estimate_tokens(Message.assistant(tool_calls=calls)) == BASE + 2


def test_text_and_tool_calls_add_up() -> None:
    message = Message.assistant(
        "let me check",  # 12 bytes -> 3
        tool_calls=[ToolCall(id="c1", name="abcdefgh", arguments={})],  # 2
    )
    assert estimate_tokens(message) == BASE + 3 + 2


def test_tool_result_costs_its_text() -> None:
    assert estimate_tokens(Message.tool("c1", "x" * 20)) == BASE + 5


def test_system_message() -> None:
    assert estimate_tokens(Message.system("y" * 16)) == BASE + 4


def test_token_window_default_tokenizer_is_estimate_tokens() -> None:
    history = [Message.user("x" * 40), Message.assistant("y" * 40)]  # 14 each
    assert len(TokenWindow(28).apply(history)) == 2
    assert len(TokenWindow(27).apply(history)) == 1
    assert len(TokenWindow(27, tokenizer=estimate_tokens).apply(history)) == 1
