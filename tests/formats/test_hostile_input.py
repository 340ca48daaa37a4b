"""Hostile provider items give ``ConversionError`` or messages, never a foreign exception.

``docs/providers.md``: a malformed item raises ``ConversionError`` naming its index and
field; ``docs/contract/errors.md``: no other exception type escapes (no ``KeyError``,
``RecursionError``, ``UnicodeError``, ...). Each property takes a real item of the
corpora and swaps one value anywhere in it (or the whole list) for a hostile one
(:mod:`tests.formats.hostile`). The writers, given messages whose ``extras`` hold
hand-written notes of any shape, must still build a request.
"""

from __future__ import annotations

import copy
import resource
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from sqlmemory import (
    ConversionError,
    DroppedContentWarning,
    InvalidMessageError,
    Message,
    from_anthropic,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
)
from sqlmemory.wire import messages_from_dicts, messages_to_dicts
from tests.formats import corpus_anthropic, corpus_openai_chat, corpus_openai_responses
from tests.formats.hostile import (
    DEPTH,
    HOSTILE,
    HOSTILE_SETTINGS,
    JSON_HOSTILE,
    Lie,
    Spoiled,
    nested_list,
    spoiled,
)

CHAT = [
    *corpus_openai_chat.REQUESTS.values(),
    *([reply] for reply in corpus_openai_chat.REPLIES.values()),
    *corpus_openai_chat.WITH_UNKNOWN_KEYS.values(),
]
RESPONSES = list(corpus_openai_responses.CASES.values())
ANTHROPIC_REQUESTS = list(corpus_anthropic.REQUESTS.values())
ANTHROPIC_RESPONSES = list(corpus_anthropic.RESPONSES.values())


def _read_anthropic(request: Any) -> list[Message]:
    if isinstance(request, dict):
        return from_anthropic(request.get("messages"), request.get("system"))
    return from_anthropic(request)


def converts_or_refuses(convert: Callable[[Any], list[Message]], items: Any) -> None:
    """``convert(items)`` gives messages or raises ``ConversionError`` (or the input's own
    :class:`Lie`), with a message of reasonable size."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedContentWarning)
        try:
            messages = convert(items)
        except ConversionError as exc:
            assert len(str(exc)) < 10_000, str(exc)[:200]
        except Lie:
            pass
        else:
            assert all(isinstance(message, Message) for message in messages)


@HOSTILE_SETTINGS
@given(spoiled(CHAT, HOSTILE))
def test_from_openai_chat_refuses_hostile_items_with_conversion_error(case: Spoiled) -> None:
    converts_or_refuses(from_openai_chat, case.document)


@HOSTILE_SETTINGS
@given(spoiled(RESPONSES, HOSTILE))
def test_from_openai_responses_refuses_hostile_items_with_conversion_error(
    case: Spoiled,
) -> None:
    converts_or_refuses(from_openai_responses, case.document)


@HOSTILE_SETTINGS
@given(spoiled(ANTHROPIC_REQUESTS, HOSTILE) | spoiled(ANTHROPIC_RESPONSES, HOSTILE))
def test_from_anthropic_refuses_hostile_items_with_conversion_error(case: Spoiled) -> None:
    converts_or_refuses(_read_anthropic, case.document)


@pytest.mark.parametrize(
    ("convert", "items", "error"),
    [
        (from_openai_chat, [{"role": nested_list(DEPTH)}], r"item 0: role: \[\[\[\[\.\.\.\]\]\]\]"),
        (from_openai_chat, [{"role": 10**5000}], r"item 0: role: <an integer of 16610 bits>"),
        (
            from_openai_chat,
            [{"role": "user", "content": [{"type": nested_list(DEPTH)}]}],
            r"item 0: content\[0\]\.type: \[\[\[\[\.\.\.\]\]\]\] is not a content part",
        ),
        (
            from_openai_chat,
            [{"role": "assistant", "tool_calls": [{"id": "c", "type": 10**5000}]}],
            r"tool_calls\[0\]\.type: <an integer of 16610 bits> is not 'function'",
        ),
        (
            from_openai_responses,
            [{"type": "message", "role": "x" * 1_000_000, "content": "hi"}],
            r"item 0: role: 'xxx+\.\.\.x+' is not a message role$",
        ),
        (
            _read_anthropic,
            {"messages": [{"role": 10**5000, "content": "hi"}]},
            r"item 0: role: expected 'user', 'assistant' or 'system', got <an integer",
        ),
        (
            _read_anthropic,
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "document",
                                "source": {
                                    "type": "text",
                                    "media_type": "text/plain",
                                    "data": "a\ud800",
                                },
                            }
                        ],
                    }
                ]
            },
            r"item 0: content\[0\]\.source\.data: holds a lone surrogate at index 1",
        ),
        (
            from_openai_responses,
            [
                {
                    "type": "function_call_output",
                    "call_id": "c",
                    "output": [{"type": "input_text", "text": "\ud800"}],
                }
            ],
            r"item 0: output\[0\]: TextBlock\.text holds a lone surrogate",
        ),
        (
            _read_anthropic,
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "t", "content": "\ud800"}
                        ],
                    }
                ]
            },
            r"item 0: content\[0\]\.content: TextBlock\.text holds a lone surrogate",
        ),
        (
            _read_anthropic,
            {"messages": [{"role": "user", "content": "hi", "note": float("nan")}]},
            r"item 0: content: Message\.extras\['anthropic'\]\['_turn'\]\['note'\] holds nan",
        ),
    ],
)
def test_a_value_too_deep_too_big_or_unencodable_is_named_in_short(
    convert: Callable[[Any], list[Message]], items: Any, error: str
) -> None:
    """Before: RecursionError or ValueError while building the message, UnicodeEncodeError
    reading a text source, a megabyte of message, InvalidMessageError without the item."""
    with pytest.raises(ConversionError, match=error) as caught:
        convert(items)
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize(
    "convert",
    [
        lambda extra: from_openai_chat([{"role": "user", "content": "hi", "x": extra}]),
        lambda extra: from_openai_responses([{"type": "web_search_call", "id": "w", "x": extra}]),
        lambda extra: from_anthropic(
            [{"role": "user", "content": [{"type": "text", "text": "a", "x": extra}]}]
        ),
    ],
)
def test_megabyte_keys_nested_deep_cost_a_short_message_and_little_memory(
    convert: Callable[[Any], list[Message]],
) -> None:
    """Before: the path of the refused value repeated each megabyte key, 60 MB of error
    message and about 2 GB of memory for a 1 MB input."""
    extra: Any = {"bad": {1, 2}}
    for _ in range(60):
        extra = {"k" * 1_000_000: extra}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ConversionError) as caught:
        convert(extra)
    assert len(str(caught.value)) < 10_000
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB


# --- the writers, given hand-written notes --------------------------------------------------

_READ = [
    *(from_openai_chat(items) for items in corpus_openai_chat.REQUESTS.values()),
    *(from_openai_responses(items) for items in RESPONSES),
    *(from_anthropic(r["messages"], r.get("system")) for r in ANTHROPIC_REQUESTS),
]
DOCUMENTS = [messages_to_dicts(messages) for messages in _READ]
WRITERS: dict[str, Callable[[list[Message]], Any]] = {
    "openai_chat": to_openai_chat,
    "openai_responses": to_openai_responses,
    "anthropic": to_anthropic,
}
NOTES = {
    "openai_chat": ["keys", "fields", "type", "url", "image_url", "file", "function", "parts"],
    "openai_responses": ["part", "item", "_order", "type"],
    "anthropic": [
        "_order", "_source", "_source_order", "_source_type", "_b64", "_list", "_joins",
        "_in_messages", "_turn", "_turn_order", "_response", "cache_control",
    ],
}  # fmt: skip


@st.composite
def noted(draw: st.DrawFn) -> tuple[str, list[Message]]:
    """A history with one hand-written note of any shape on a message, block or call."""
    document = copy.deepcopy(draw(st.sampled_from(DOCUMENTS)))
    fmt = draw(st.sampled_from(sorted(NOTES)))
    index = draw(st.integers(0, len(document) - 1))
    target = document[index]
    parts = [*target.get("content", []), *(target.get("tool_calls") or [])]
    if parts and draw(st.booleans()):
        target = draw(st.sampled_from(parts))
    extras = target.setdefault("extras", {})
    own = extras.setdefault(fmt, {})
    own[draw(st.sampled_from(NOTES[fmt]))] = JSON_HOSTILE[
        draw(st.integers(0, len(JSON_HOSTILE) - 1))
    ]
    try:
        return fmt, messages_from_dicts(document)
    except InvalidMessageError:  # a note no message can hold: nothing to write
        reject()


@HOSTILE_SETTINGS
@given(noted())
def test_a_writer_builds_a_request_whatever_its_notes_hold(case: tuple[str, list[Message]]) -> None:
    """Before: a note of the wrong shape gave AttributeError, TypeError or ValueError."""
    fmt, history = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedContentWarning)
        WRITERS[fmt](history)


@pytest.mark.parametrize(
    ("fmt", "note", "value"),
    [
        ("openai_chat", "image_url", 7),
        ("openai_chat", "keys", [{}]),
        ("anthropic", "_order", 7),
        ("anthropic", "_turn", None),
        ("anthropic", "_source", "x"),
    ],
)
def test_a_note_of_the_wrong_shape_is_ignored(fmt: str, note: str, value: Any) -> None:
    image = {"kind": "image", "url": "https://example.com/a.png", "extras": {fmt: {note: value}}}
    document = {"role": "user", "content": [image], "extras": {fmt: {note: value}}}
    [message] = messages_from_dicts([document])
    request = WRITERS[fmt]([message])
    assert "https://example.com/a.png" in str(request)
