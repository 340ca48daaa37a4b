"""Agent Framework messages to sqlmemory and back (``docs/integrations/agent-framework.md``).

Lossless means one thing here: what comes back gives the framework's ``to_dict()`` (its own
persisted form) exactly as the original does, message for message.
"""

from __future__ import annotations

import base64
import contextlib
import warnings
from typing import Any

import pytest
from agent_framework import Content
from agent_framework import Message as AFMessage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import (
    ConversionError,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from sqlmemory.errors import InvalidMessageError
from sqlmemory.formats import DroppedContentWarning
from sqlmemory.integrations.agent_framework import from_agent_framework, to_agent_framework
from tests.formats.hostile import HOSTILE, JSON_HOSTILE, Lie, hostile_values

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def round_trip(messages: list[AFMessage]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in to_agent_framework(from_agent_framework(messages))]


def dumped(messages: list[AFMessage]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in messages]


HISTORY = [
    AFMessage("system", ["Be brief."], author_name="sys"),
    AFMessage(
        "user",
        [
            "Look:",
            Content.from_data(PNG, "image/png", additional_properties={"k": 1}),
            Content.from_data(b"%PDF-1.4", "application/pdf", name="a.pdf"),
            Content.from_uri("https://example.com/a.png", media_type="image/png"),
            Content.from_data(b"RIFF", "audio/wav"),
            Content.from_uri("https://example.com/a.svg", media_type="image/svg+xml"),
            Content.from_uri("data:image/png;base64," + base64.b64encode(PNG).decode() + "\n"),
        ],
        message_id="u1",
        additional_properties={"tags": ["a", "b"]},
    ),
    AFMessage(
        "assistant",
        [
            Content.from_text_reasoning(text="hmm", protected_data="sig"),
            Content.from_text("Calling."),
            Content.from_function_call("c1", "f", arguments='{"a": 1'),
            Content.from_function_call("c2", "g", arguments={"b": [1, 2]}),
            Content.from_function_call("c3", "h"),
            Content.from_usage({"input_token_count": 5, "output_token_count": 2, "x_count": 3}),
        ],
        message_id="r1",
        author_name="bot",
    ),
    AFMessage(
        "tool",
        [
            Content.from_function_result("c1", result="ok"),
            Content.from_function_result("c2", result=[Content.from_text("rich")]),
            Content.from_function_result("c3", exception="boom"),
        ],
    ),
    AFMessage("assistant", []),
    AFMessage("assistant", [Content.from_text("")]),
    AFMessage("critic", ["a role sqlmemory lacks"]),
    AFMessage("tool", [Content.from_function_result("c9", result="x"), Content.from_text("note")]),
    AFMessage("user", [Content.from_error(message="bad", error_code="E1")]),
    AFMessage(
        "assistant", [Content.from_function_call("c4", "f"), Content.from_function_call("c4", "f")]
    ),
]


def test_every_content_kind_comes_back_as_it_was() -> None:
    assert round_trip(HISTORY) == dumped(HISTORY)


def test_contents_become_the_blocks_of_their_meaning() -> None:
    ours = from_agent_framework(HISTORY)
    assert [m.role for m in ours] == [
        Role.SYSTEM,
        Role.USER,
        Role.ASSISTANT,
        *[Role.TOOL] * 3,  # one per result, each answering its call
        Role.ASSISTANT,  # no contents: a placeholder, kept verbatim
        Role.ASSISTANT,  # empty text only: kept verbatim
        Role.USER,  # a role sqlmemory lacks
        Role.USER,  # a tool message with more than results
        Role.USER,
        Role.ASSISTANT,  # a call id used twice
    ]
    user = ours[1].content
    assert [type(b) for b in user] == [
        TextBlock,
        ImageBlock,
        DocumentBlock,
        ImageBlock,
        OpaqueBlock,  # audio: no sqlmemory block
        OpaqueBlock,  # SVG: no sqlmemory image type
        OpaqueBlock,  # a data: URI the framework would write otherwise
    ]
    assert isinstance(user[1], ImageBlock) and user[1].data == PNG
    assert isinstance(user[3], ImageBlock) and user[3].url == "https://example.com/a.png"
    thinking, said, *calls = ours[2].content
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking == "hmm"
    assert isinstance(said, TextBlock) and said.text == "Calling."
    assert [(c.id, c.arguments, c.arguments_text) for c in calls if isinstance(c, ToolCall)] == [
        ("c1", None, '{"a": 1'),
        ("c2", {"b": [1, 2]}, None),
        ("c3", {}, None),
    ]
    assert ours[2].usage == Usage(input_tokens=5, output_tokens=2)
    results = ours[3:6]
    assert [(m.tool_call_id, m.text_content(), m.is_error) for m in results] == [
        ("c1", "ok", False),
        ("c2", "rich", False),
        ("c3", "", True),
    ]


def test_messages_from_elsewhere_become_framework_contents() -> None:
    ours = [
        Message.developer("Be brief."),
        Message.user(
            [
                TextBlock("Look:"),
                ImageBlock(url="https://example.com/cat.png"),
                ImageBlock(file_id="file-1"),
                DocumentBlock(b"minutes", "text/plain"),
            ]
        ),
        Message.assistant(
            [ThinkingBlock("hmm"), RedactedThinkingBlock("x")],
            tool_calls=[ToolCall("c1", "f", {"a": 1}), ToolCall("c2", "g", arguments_text="{")],
        ),
        Message.tool("c1", "1"),
        Message.tool("c2", "bad json", is_error=True),
        Message.assistant([TextBlock("Done."), OpaqueBlock("openai", {"type": "web_search_call"})]),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        back = to_agent_framework(ours)
    assert sorted(str(w.message) for w in caught if w.category is DroppedContentWarning) == [
        "a openai item dropped: agent_framework cannot carry it",
        "a redacted_thinking block dropped: agent_framework cannot carry it",
    ]
    assert [m.role for m in back] == ["system", "user", "assistant", "tool", "assistant"]
    assert [c.type for c in back[1].contents] == ["text", "uri", "hosted_file", "data"]
    assert (
        back[1].contents[3].uri == "data:text/plain;base64," + base64.b64encode(b"minutes").decode()
    )
    assert [(c.type, c.call_id, c.arguments) for c in back[2].contents] == [
        ("text_reasoning", None, None),
        ("function_call", "c1", {"a": 1}),
        ("function_call", "c2", "{"),
    ]
    # The two results, one tool message: as the framework puts parallel results.
    assert [(c.call_id, c.result, c.exception) for c in back[3].contents] == [
        ("c1", "1", None),
        ("c2", "bad json", "bad json"),
    ]
    assert back[4].text == "Done."


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(
    text=texts,
    arguments=st.one_of(texts, st.dictionaries(texts, json_values, max_size=3)),
    properties=st.dictionaries(texts, json_values, max_size=3),
    result=texts,
)
def test_any_text_arguments_and_properties_come_back(
    text: str, arguments: Any, properties: dict[str, Any], result: str
) -> None:
    history = [
        AFMessage("user", [text or "?"], additional_properties=properties),
        AFMessage(
            "assistant",
            [Content.from_function_call("c1", "f", arguments=arguments)],
            additional_properties=properties,
        ),
        AFMessage("tool", [Content.from_function_result("c1", result=result)]),
    ]
    assert round_trip(history) == dumped(history)


@pytest.mark.parametrize(
    "messages",
    [
        "not a list",
        AFMessage("user", ["a lone message"]),
        [AFMessage("user", ["ok"]), {"role": "user", "contents": []}],
        [AFMessage("user", ["a lone surrogate \ud800"])],
        [AFMessage("user", ["x"], additional_properties={"n": float("inf")})],
        [AFMessage("assistant", [Content.from_usage({"output_token_count": 2**64})])],
    ],
)
def test_hostile_framework_messages_raise_conversion_error(messages: Any) -> None:
    with pytest.raises(ConversionError):
        from_agent_framework(messages)


@pytest.mark.parametrize(
    "messages",
    [
        "not a list",
        Message.user("a lone message"),
        [Message.user("ok"), "no message"],
        [Message.user("x", extras={"agent_framework": {"message": {"role": "user", "bad": 1}}})],
        [
            Message.assistant(
                tool_calls=[ToolCall("c", "f", extras={"agent_framework": {"hosted": 1}})]
            )
        ],
    ],
)
def test_hostile_sqlmemory_messages_raise_conversion_error(messages: Any) -> None:
    with pytest.raises(ConversionError):
        to_agent_framework(messages)


def _framework_message(place: str, value: Any) -> AFMessage:
    if place == "message":
        return AFMessage("user", ["x"], additional_properties={"v": value})
    if place == "content":
        return AFMessage("user", [Content.from_text("x", additional_properties={"v": value})])
    if place == "arguments":
        return AFMessage("assistant", [Content.from_function_call("c", "f", arguments=value)])
    if place == "result":
        return AFMessage("tool", [Content.from_function_result("c", result=value)])
    return AFMessage("assistant", [Content.from_usage(value)])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    place=st.sampled_from(["message", "content", "arguments", "result", "usage"]),
    value=hostile_values(HOSTILE),
)
def test_hostile_values_anywhere_in_a_framework_message_raise_only_ours(
    place: str, value: Any
) -> None:
    try:
        message = _framework_message(place, value)
    except Lie:
        return
    except Exception:  # the framework refuses to build it: nothing reaches sqlmemory
        return
    try:
        ours = from_agent_framework([message])
    except (ConversionError, Lie):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedContentWarning)
        back = to_agent_framework(ours)
    assert [m.to_dict() for m in back] == [message.to_dict()]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    place=st.sampled_from(["message", "content", "usage", "block", "call"]),
    value=hostile_values(JSON_HOSTILE),
)
def test_hostile_extras_raise_only_conversion_error(place: str, value: Any) -> None:
    own: dict[str, Any] = {"message": value} if place == "message" else {place: value}
    try:
        if place == "block":
            messages = [Message.user([TextBlock("x", extras={"agent_framework": value})])]
        elif place == "call":
            call = ToolCall("c", "f", extras={"agent_framework": value})
            messages = [Message.assistant(tool_calls=[call]), Message.tool("c", "1")]
        else:
            messages = [Message.tool("c", "1", extras={"agent_framework": own})]
    except InvalidMessageError:
        return  # sqlmemory refuses to hold it: nothing to convert
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedContentWarning)
        with contextlib.suppress(ConversionError):  # refused is fine; nothing else is
            to_agent_framework(messages)
