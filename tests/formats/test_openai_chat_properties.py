"""Random valid Chat Completions histories round trip exactly (docs/providers.md).

The histories are drawn from what the SDK's ``ChatCompletionMessageParam`` TypedDicts
allow: every role, content as a string or parts, names, refusals, audio, tool calls with
any argument text, and every object's keys in any order.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessageParam

from sqlmemory import DroppedContentWarning, from_openai_chat, to_openai_chat
from tests.formats.corpus_openai_chat import JPEG_URL_WITH_PARAMETER, PDF_URL, PNG_URL, WAV_BASE64
from tests.support.provider_types import assert_valid
from tests.support.windows import PURE

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
SOME_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
IDS = st.text("abcdefghij_-0123456789", min_size=1, max_size=8).map(lambda s: f"call_{s}")


@st.composite
def shuffled(draw: st.DrawFn, base: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A dict of ``base`` with its keys in any order."""
    item = draw(base)
    keys = draw(st.permutations(list(item)))
    return {key: item[key] for key in keys}


def obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> Any:
    return shuffled(st.fixed_dictionaries(required, optional=optional or {}))


TEXT_PART = obj({"type": st.just("text"), "text": TEXT})
IMAGE_URLS = st.sampled_from(
    ["https://example.com/a.png", "http://example.com/b.jpg", PNG_URL, JPEG_URL_WITH_PARAMETER]
)
IMAGE_PART = obj(
    {
        "type": st.just("image_url"),
        "image_url": obj(
            {"url": IMAGE_URLS}, {"detail": st.sampled_from(["auto", "low", "high", "original"])}
        ),
    },
    {"prompt_cache_breakpoint": st.just({"mode": "explicit"})},
)
AUDIO_PART = obj(
    {
        "type": st.just("input_audio"),
        "input_audio": obj(
            {"data": st.just(WAV_BASE64), "format": st.sampled_from(["wav", "mp3"])}
        ),
    }
)
FILE_PART = obj(
    {
        "type": st.just("file"),
        "file": st.one_of(
            obj({"file_data": st.just(PDF_URL)}, {"filename": TEXT}),
            obj({"file_id": st.just("file-abc123")}, {"filename": TEXT}),
        ),
    }
)
REFUSAL_PART = obj({"type": st.just("refusal"), "refusal": TEXT})
NAME = {"name": SOME_TEXT}


def content(part: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A string or a list of parts; mostly with something to say, sometimes empty (a
    message the model cannot hold, kept whole)."""
    parts = st.lists(part, min_size=1, max_size=4).filter(
        lambda ps: any(p.get("type") != "text" or p["text"] for p in ps)
    )
    return st.one_of(SOME_TEXT, parts, st.sampled_from(["", []]))


def instructions(role: str) -> Any:
    return obj({"role": st.just(role), "content": content(TEXT_PART)}, NAME)


USER = obj(
    {
        "role": st.just("user"),
        "content": content(st.one_of(TEXT_PART, IMAGE_PART, AUDIO_PART, FILE_PART)),
    },
    NAME,
)
FUNCTION_CALL = obj(
    {
        "id": IDS,
        "type": st.just("function"),
        "function": obj({"name": SOME_TEXT, "arguments": TEXT}),
    }
)
CUSTOM_CALL = obj(
    {"id": IDS, "type": st.just("custom"), "custom": obj({"name": SOME_TEXT, "input": TEXT})}
)
CALLS = st.lists(
    st.one_of(FUNCTION_CALL, CUSTOM_CALL), min_size=1, max_size=3, unique_by=lambda c: c["id"]
)


def _says_something(message: dict[str, Any]) -> bool:
    body = message.get("content")
    texts = (
        [body] if isinstance(body, str) else [p.get("text", p.get("refusal")) for p in body or []]
    )
    return bool(
        message.get("tool_calls") or message.get("audio") or message.get("refusal") or any(texts)
    )


ASSISTANT = obj(
    {"role": st.just("assistant")},
    {
        "content": st.one_of(
            st.none(), TEXT, st.lists(st.one_of(TEXT_PART, REFUSAL_PART), max_size=3)
        ),
        "refusal": st.one_of(st.none(), TEXT),
        "audio": st.one_of(st.none(), obj({"id": st.just("audio_abc")})),
        "tool_calls": CALLS,
        **NAME,
    },
).filter(_says_something)
TOOL = obj(
    {
        "role": st.just("tool"),
        "tool_call_id": IDS,
        "content": st.one_of(TEXT, st.lists(TEXT_PART, max_size=3)),
    }
)
HISTORIES = st.lists(
    st.one_of(instructions("system"), instructions("developer"), USER, ASSISTANT, TOOL),
    max_size=8,
)


@PURE
@given(HISTORIES)
def test_any_valid_chat_history_round_trips_exactly(items: list[dict[str, Any]]) -> None:
    assert_valid(items, list[ChatCompletionMessageParam])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedContentWarning)
        out = to_openai_chat(from_openai_chat(items))
    assert out == items
    assert json.dumps(out) == json.dumps(items)
