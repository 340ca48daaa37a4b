"""The provider estimators of docs/contract/windows.md: reference values, and how text is
counted with and without ``tiktoken``, offline.

tiktoken downloads its encodings from the internet, which tests never reach: they build
a small ``tiktoken.Encoding`` here, or stand in for ``tiktoken.get_encoding``.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

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
from sqlmemory.policy import (
    anthropic_image_tokens,
    anthropic_tokenizer,
    openai_image_tokens,
    openai_tokenizer,
)
from sqlmemory.policy._encodings import load_encoding
from sqlmemory.policy.tokens import image_tokens
from tests.support.cases import image_bytes, png_header_only
from tests.support.windows import PURE, tiny_encoding


@pytest.fixture(autouse=True)
def fresh_encodings() -> Iterator[None]:
    """Each test loads encodings anew (they are cached per process)."""
    load_encoding.cache_clear()
    yield
    load_encoding.cache_clear()


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``tiktoken.get_encoding`` answering with the tiny encoding; the names it was asked."""
    asked: list[str] = []

    def get_encoding(name: str) -> tiktoken.Encoding:
        asked.append(name)
        return tiny_encoding()

    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    return asked


def sized_image(width: int | None, height: int | None) -> ImageBlock:
    return ImageBlock(
        url="https://example.com/i.png", media_type="image/png", width=width, height=height
    )


# --- images: the reference values ---------------------------------------------------------


def test_seed_heuristic_prices_a_screenshot_at_86700() -> None:
    assert image_tokens(1920, 1080) == 86_700
    assert estimate_tokens(Message.user(sized_image(1920, 1080))) == 86_704


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [
        (1920, 1080, 1105),  # 1365 x 768 after scaling: 3 x 2 tiles
        (512, 512, 255),  # no scaling up: 1 tile
        (1024, 1024, 765),  # OpenAI's own examples
        (2048, 4096, 1105),
        (1080, 1920, 1105),
        (1, 1, 255),
        (768, 768, 765),
        (769, 769, 765),
        (65_535, 1, 85 + 170 * 4),  # 2048 x 1 after fitting: 4 tiles of 1 row
    ],
)
def test_openai_high_detail(width: int, height: int, tokens: int) -> None:
    assert openai_image_tokens(width, height) == tokens
    assert openai_image_tokens(width, height, "high") == tokens
    assert openai_image_tokens(width, height, "auto") == tokens


@pytest.mark.parametrize("size", [(1, 1), (512, 512), (1920, 1080), (65_535, 65_535), (None, 9)])
def test_openai_low_detail_is_85_at_any_size(size: tuple[int | None, int | None]) -> None:
    assert openai_image_tokens(*size, detail="low") == 85


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [
        (1000, 1000, 1334),
        (200, 200, 54),
        (1092, 1092, 1590),  # Anthropic's largest square that is not resized
        (1, 1, 1),
        (750, 1, 1),
        (751, 1, 2),
    ],
)
def test_anthropic(width: int, height: int, tokens: int) -> None:
    assert anthropic_image_tokens(width, height) == tokens


def test_anthropic_screenshot_is_between_1500_and_1600() -> None:
    assert 1500 <= anthropic_image_tokens(1920, 1080) <= 1600
    assert anthropic_image_tokens(1920, 1080) == 1599  # 1460 x 821 after scaling


@pytest.mark.parametrize("size", [(None, None), (None, 100), (100, None)])
def test_unknown_sizes_cost_the_most_any_image_can(size: tuple[int | None, int | None]) -> None:
    assert openai_image_tokens(*size) == 85 + 170 * 8 == 1445
    assert anthropic_image_tokens(*size) == 1600


@PURE
@given(st.integers(1, 65_535), st.integers(1, 65_535))
def test_image_costs_stay_within_the_providers_bounds(width: int, height: int) -> None:
    openai = openai_image_tokens(width, height)
    assert 255 <= openai <= 1445
    assert (openai - 85) % 170 == 0
    anthropic = anthropic_image_tokens(width, height)
    assert 1 <= anthropic <= 1600
    if max(width, height) <= 1568 and width * height <= 1_200_000:
        assert anthropic == math.ceil(width * height / 750)  # not resized


def test_image_size_comes_from_the_stored_width_and_height_not_the_bytes() -> None:
    # 64 x 64 pixels of bytes, stored (as a storage reads it back) as 1920 x 1080
    block = ImageBlock(image_bytes(64, 64), "image/png", width=1920, height=1080)
    count = openai_tokenizer(encoding=tiny_encoding())
    assert count(Message.user(block)) == 4 + 1105
    assert anthropic_tokenizer(encoding=tiny_encoding())(Message.user(block)) == 4 + 1599
    huge = ImageBlock(png_header_only(50_000, 50_000), "image/png")  # size from the header
    assert count(Message.user(huge)) == 4 + openai_image_tokens(50_000, 50_000) == 4 + 765


def test_a_window_with_a_provider_estimator_keeps_the_history_around_a_screenshot() -> None:
    history = [
        Message.user(f"question {i}") if i % 2 == 0 else Message.assistant("ok") for i in range(6)
    ]
    history.append(Message.user(["what is on my screen?", sized_image(1920, 1080)]))
    seed = TokenWindow(8000).apply(history)
    openai = TokenWindow(8000, tokenizer=openai_tokenizer(encoding=tiny_encoding())).apply(history)
    assert seed == history[-1:]  # 86,700 tokens: the screenshot alone is over budget
    assert openai == history


# --- text, tool calls, documents ----------------------------------------------------------------


def test_openai_counts_framing_role_and_text_with_the_encoding() -> None:
    count = openai_tokenizer(encoding=tiny_encoding())
    assert count(Message.user("hello")) == 3 + 1 + 2
    assert count(Message.user([TextBlock("hello"), TextBlock("abc")])) == 3 + 1 + 2 + 3
    # text that spells a special token is plain text, not an error
    assert count(Message.user("<|endoftext|>")) == 3 + 1 + len("<|endoftext|>")


def test_anthropic_counts_four_per_message_and_text_with_the_encoding() -> None:
    count = anthropic_tokenizer(encoding=tiny_encoding())
    assert count(Message.user("hello")) == 4 + 2
    assert (
        count(Message.assistant([ThinkingBlock("abc", signature="s"), TextBlock("hello")]))
        == 4 + 3 + 2
    )


@pytest.mark.parametrize("make", [openai_tokenizer, anthropic_tokenizer])
def test_tool_calls_and_results_count_ids_names_and_arguments(make: Any) -> None:
    count = make(encoding=tiny_encoding())
    empty = count(Message.assistant("x")) - 1
    call = ToolCall("c1", "add", {"a": 1})
    assert count(Message.assistant(tool_calls=[call])) == empty + 2 + 3 + len('{"a":1}')
    assert count(Message.tool("c1", "hello")) == empty + 2 + 2


@pytest.mark.parametrize("make", [openai_tokenizer, anthropic_tokenizer])
def test_documents(make: Any) -> None:
    count = make(encoding=tiny_encoding())
    empty = count(Message.user("x")) - 1
    notes = DocumentBlock(b"hello", "text/plain")
    assert count(Message.user(notes)) == empty + 2  # a text document is its text
    pdf = DocumentBlock(b"%PDF-1.4\n" + b"0" * 2991, "application/pdf")
    assert count(Message.user(pdf)) == empty + 3000 // 1500  # no published rule: the seed's


# --- the encoding: chosen, loaded once, and the fallback ---------------------------------------


def test_the_model_picks_the_encoding_and_it_is_loaded_once(loads: list[str]) -> None:
    one, two = openai_tokenizer("gpt-4o"), openai_tokenizer("gpt-4o")
    for _ in range(3):
        assert one(Message.user("hello")) == 3 + 1 + 2
        assert two(Message.user("hello")) == 3 + 1 + 2
    assert loads == ["o200k_base"]
    openai_tokenizer("gpt-4")(Message.user("hello"))
    openai_tokenizer("a-model-tiktoken-does-not-know")(Message.user("hello"))
    anthropic_tokenizer()(Message.user("hello"))
    assert loads == ["o200k_base", "cl100k_base"]


def test_no_text_no_encoding(loads: list[str]) -> None:
    count = openai_tokenizer()
    assert count(Message.user(sized_image(512, 512))) == 3 + 1 + 255
    assert loads == []


def test_an_encoding_that_cannot_be_loaded_falls_back_to_four_bytes_per_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts = []

    def offline(name: str) -> tiktoken.Encoding:
        attempts.append(name)
        raise OSError("openaipublic.blob.core.windows.net: Name or service not known")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    count = openai_tokenizer()
    with pytest.warns(RuntimeWarning, match="4 bytes per token"):
        assert count(Message.user("hello")) == 3 + 1 + 2  # ceil(5 / 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert count(Message.user("x" * 9)) == 3 + 1 + 3  # ceil(9 / 4), and no new attempt
    assert attempts == ["o200k_base"]


def test_an_unknown_encoding_name_falls_back_too() -> None:
    # tiktoken refuses an unknown name without going online
    with pytest.warns(RuntimeWarning, match="no-such-encoding"):
        count = anthropic_tokenizer(encoding="no-such-encoding")
        assert count(Message.user("twelve bytes")) == 4 + 3


def test_without_tiktoken_text_is_four_bytes_per_token_silently(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken raises ImportError
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert openai_tokenizer("gpt-4o")(Message.user("hello")) == 3 + 1 + 2
        assert anthropic_tokenizer()(Message.user("é" * 3)) == 4 + 2  # 6 UTF-8 bytes


def test_tokenizers_print_what_they_count_for() -> None:
    assert repr(openai_tokenizer("gpt-4o-mini")) == "openai_tokenizer('gpt-4o-mini')"
    assert repr(anthropic_tokenizer()) == "anthropic_tokenizer()"
    assert repr(TokenWindow(100, openai_tokenizer())).startswith("TokenWindow(max_tokens=100")
