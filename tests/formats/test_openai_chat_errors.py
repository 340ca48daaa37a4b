"""OpenAI Chat Completions: malformed items are refused by name; foreign content is dropped.

docs/providers.md: a malformed item raises ``ConversionError`` naming its index and the
field at fault; messages from another format become a request Chat accepts, and what Chat
cannot carry is left out with a ``DroppedContentWarning``.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessageParam

from sqlmemory import (
    ConversionError,
    DocumentBlock,
    DroppedContentWarning,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    from_openai_chat,
    to_openai_chat,
)
from tests.support.cases import PDF_BYTES, image_bytes
from tests.support.lossless import every_new_field
from tests.support.provider_types import assert_valid

PARAMS = list[ChatCompletionMessageParam]
OK = {"role": "user", "content": "fine"}


def _call(**function: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": "{}", **function},
    }


def _assistant(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


MALFORMED: list[tuple[list[Any], str]] = [
    ([{"content": "hi"}], "item 0: role: None is not one of"),
    ([OK, {"role": "robot", "content": "x"}], "item 1: role: 'robot'"),
    ([OK, "hello"], "item 1: expected a dict or an SDK object, got str"),
    ([OK, OK, {"role": "user"}], "item 2: content: missing"),
    ([{"role": "system", "content": None}], "item 0: content: missing"),
    ([{"role": "user", "content": 5}], "item 0: content: expected a string or a list of parts"),
    ([{"role": "user", "content": [{"type": "video", "text": "x"}]}], "item 0: content[0].type"),
    ([{"role": "user", "content": ["text"]}], "item 0: content[0]: expected an object"),
    ([{"role": "user", "content": [{"type": "text"}]}], "item 0: content[0].text"),
    (
        [{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "https://x"}}]}],
        "item 0: content[0].type: 'image_url' is not a content part here",
    ),
    (
        [{"role": "user", "content": [{"type": "image_url", "image_url": "https://x"}]}],
        "item 0: content[0].image_url: expected an object",
    ),
    (
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": None}}]}],
        "item 0: content[0].image_url.url: expected a string",
    ),
    (
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image_url", "image_url": {"url": "https://x", "detail": "ultra"}},
                ],
            }
        ],
        "item 0: content[1].image_url.detail: 'ultra' is not one of",
    ),
    (
        [{"role": "user", "content": [{"type": "file", "file": {"file_id": 7}}]}],
        "item 0: content[0].file.file_id: expected a string",
    ),
    ([_assistant(_call(arguments={"a": 1}))], "item 0: tool_calls[0].function.arguments"),
    ([_assistant(_call(name=""))], "item 0: tool_calls[0].function.name: empty"),
    ([_assistant({"type": "function", "function": {}})], "item 0: tool_calls[0].id"),
    ([_assistant({**_call(), "type": "web"})], "item 0: tool_calls[0].type: 'web'"),
    ([_assistant({"id": "c1", "type": "function"})], "item 0: tool_calls[0].function: expected"),
    ([_assistant(_call(), _call())], "item 0: tool_calls[1].id: 'c1' is repeated"),
    ([{"role": "assistant", "tool_calls": "c1"}], "item 0: tool_calls: expected a list"),
    ([{"role": "assistant", "content": None}], "item 0: an assistant message needs content"),
    ([{"role": "assistant", "content": 3}], "item 0: content: expected a string, parts or null"),
    ([{"role": "assistant", "refusal": 5}], "item 0: refusal: expected a string"),
    ([{"role": "assistant", "audio": "a1"}], "item 0: audio: expected an object"),
    ([{"role": "assistant", "function_call": {"name": "f"}}], "item 0: function_call.arguments"),
    ([{"role": "tool", "content": "x"}], "item 0: tool_call_id: expected a non-empty string"),
    ([{"role": "tool", "tool_call_id": "c1"}], "item 0: content: missing"),
    ([{"role": "function", "content": "x"}], "item 0: name: expected a string"),
    ([{"role": "function", "name": "f", "content": ["x"]}], "item 0: content: expected a string"),
    ([{"role": "user", "content": "hi", "x": float("nan")}], "item 0: x holds nan"),
    ([{"role": "user", "content": "hi", "x": b"raw"}], "item 0: x holds a bytes"),
    ([{"role": "user", "content": "\ud800"}], "item 0: TextBlock.text holds a lone surrogate"),
    (
        [
            _assistant(
                {"id": "c\n1", "type": "function", "function": {"name": "f", "arguments": ""}}
            )
        ],
        "item 0: ToolCall.id holds a control character",
    ),
]


@pytest.mark.parametrize(("items", "expected"), MALFORMED, ids=[e for _, e in MALFORMED])
def test_a_malformed_item_is_refused_naming_its_index_and_field(
    items: list[Any], expected: str
) -> None:
    with pytest.raises(ConversionError) as caught:
        from_openai_chat(items)
    assert str(caught.value).startswith(expected), str(caught.value)


@pytest.mark.parametrize("items", [{"role": "user", "content": "hi"}, "hi", 3, None])
def test_messages_must_be_a_list(items: Any) -> None:
    with pytest.raises(ConversionError, match="messages must be a list"):
        from_openai_chat(items)


def test_to_openai_chat_takes_messages_only() -> None:
    with pytest.raises(TypeError, match=r"messages\[1\] is a dict, not a Message"):
        to_openai_chat([Message.user("hi"), {"role": "user", "content": "hi"}])
    with pytest.raises(TypeError, match="iterable of Message"):
        to_openai_chat(Message.user("hi"))  # type: ignore[arg-type]


def converted(messages: list[Message]) -> tuple[list[dict[str, Any]], list[str]]:
    """The params of ``messages``, checked strictly, and the warnings they raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = to_openai_chat(messages)
    assert {w.category for w in caught} <= {DroppedContentWarning}
    assert_valid(out, PARAMS)
    return out, [str(w.message) for w in caught]


def assert_calls_answered_in_place(out: list[dict[str, Any]]) -> None:
    """Each assistant's tool calls are answered right after it, each result by its call."""
    pending: list[str] = []
    for param in out:
        if param["role"] == "tool":
            assert param["tool_call_id"] in pending, param
            pending.remove(param["tool_call_id"])
            continue
        assert pending == [], f"{pending} unanswered before {param}"
        pending = [call["id"] for call in param.get("tool_calls", [])]
    assert pending == []


def test_the_lossless_history_becomes_a_valid_request_and_says_what_it_dropped() -> None:
    history = every_new_field()
    out, dropped = converted(history)
    assert_calls_answered_in_place(out)
    assert [p["role"] for p in out] == [
        "developer",
        "system",
        "user",
        "assistant",
        *["tool"] * 2,
        "assistant",
        *["tool"] * 4,
        "assistant",
        "tool",
        "user",
    ]
    interleaved = out[3]
    assert interleaved["content"] == [
        {"type": "text", "text": "First I search."},
        {"type": "text", "text": "Then I fetch."},
    ]
    assert [c["function"]["arguments"] for c in out[6]["tool_calls"]] == [
        '{"city": "Oslo", "units": "metric"',
        "[1, 2]",
        '{"b":1,"a":{"d":2,"c":3}}',
        '{"a": 1}',
    ]
    assert out[1] == {"role": "system", "content": "Be terse."}  # another format's extras stay out
    expected = [
        "message 2: an image by file id",
        "message 2: a document by URL",
        "message 3: a thinking block",
        "message 3: a redacted thinking block",
        "message 3: an opaque anthropic item (server_tool_use)",
        "message 5: the is_error flag of a tool result",
        "message 6: a thinking block",
        "message 6: an opaque openai item (computer_call)",
        "message 9: an image by file id in a tool result",
        "message 11: the result of 'call_computer_1', whose call was left out",
    ]
    for what in expected:
        assert any(
            d.startswith(what) and d.endswith("openai_chat cannot carry it") for d in dropped
        ), what


def test_content_chat_cannot_carry_is_dropped_and_empty_messages_with_it() -> None:
    png = image_bytes(4, 4)
    out, dropped = converted(
        [
            Message.system([TextBlock("Rules."), ImageBlock(png, "image/png")]),
            Message.user(OpaqueBlock("anthropic", {"type": "container_upload", "file_id": "f"})),
            Message.assistant([ThinkingBlock("hmm", signature="sig"), RedactedThinkingBlock("x")]),
            Message.user("Next."),
            Message.assistant(
                [
                    ThinkingBlock("plan"),
                    OpaqueBlock(
                        "openai_responses", {"type": "mcp_approval_request"}, call_id="ap_1"
                    ),
                    ImageBlock(png, "image/png"),
                    ToolCall("c1", "f", {}),
                ]
            ),
            Message.tool("ap_1", "approved"),
            Message.tool("c1", [TextBlock("ok"), DocumentBlock(PDF_BYTES, "application/pdf")]),
            Message.developer(DocumentBlock(b"text", "text/plain")),
        ]
    )
    assert out == [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "Next."},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    assert [d.split(" dropped")[0] for d in dropped] == [
        "message 0: an image by bytes in a system message",
        "message 1: an opaque anthropic item (container_upload)",
        "message 1: a user message with nothing Chat can carry",
        "message 2: a thinking block",
        "message 2: a redacted thinking block",
        "message 2: an assistant message with nothing Chat can carry",
        "message 4: a thinking block",
        "message 4: an opaque openai_responses item (mcp_approval_request)",
        "message 4: an image by bytes",
        "message 5: the result of 'ap_1', whose call was left out",
        "message 6: a document by bytes in a tool result",
        "message 7: a document by bytes in a developer message",
        "message 7: a developer message with nothing Chat can carry",
    ]


def test_the_warning_points_at_the_caller() -> None:
    with pytest.warns(DroppedContentWarning) as caught:
        to_openai_chat([Message.assistant([ThinkingBlock("x"), TextBlock("y")])])
    assert caught[0].filename == __file__
