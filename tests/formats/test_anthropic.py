"""Anthropic Messages: exact round trips, grouping, SDK objects, errors, other providers.

The contract is ``docs/providers.md`` (section "Anthropic"). The corpus of real shapes is in
``tests/formats/corpus_anthropic.py``; every request is checked against the SDK's own
TypedDicts, and so is everything ``to_anthropic`` builds.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from typing import Any

import anthropic.types as sdk
import pytest

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
    from_anthropic,
    to_anthropic,
)
from tests.formats.anthropic_types import api_problems, request_problems
from tests.formats.corpus_anthropic import PNG_1PX, REQUESTS, RESPONSES, SIGNATURE, _nested


def _round_trip(request: dict[str, Any]) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an Anthropic request drops nothing
        return to_anthropic(from_anthropic(request["messages"], request.get("system")))


def _replay(body: dict[str, Any]) -> list[dict[str, Any]]:
    """What a response's content looks like in the next request."""
    content = sdk.Message.model_validate(body).model_dump(mode="json", exclude_unset=True)
    return [{"role": "assistant", "content": content["content"]}]


ASK = Message.user("Go.")
"""The user turn a reply answers: a request opens with the user's turn."""


def _after_ask(replies: list[Message]) -> dict[str, Any]:
    """The request of ``replies`` after :data:`ASK`, its ``messages`` without ASK's turn."""
    request = to_anthropic([ASK, *replies])
    assert request["messages"][0] == {"role": "user", "content": "Go."}
    return {**request, "messages": request["messages"][1:]}


# -- the corpus ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(REQUESTS))
def test_the_corpus_is_valid_for_the_sdk_and_the_api(name: str) -> None:
    assert api_problems(REQUESTS[name]) == []


@pytest.mark.parametrize("name", list(REQUESTS))
def test_a_request_round_trips_exactly(name: str) -> None:
    request = REQUESTS[name]
    original = copy.deepcopy(request)
    back = _round_trip(request)
    assert back == request
    assert json.dumps(back) == json.dumps(request)
    assert request == original  # the input is not altered


@pytest.mark.parametrize("name", list(RESPONSES))
def test_a_response_is_one_assistant_message_replayed_exactly(name: str) -> None:
    body = RESPONSES[name]
    response = sdk.Message.model_validate(body)
    (message,) = from_anthropic(response)
    assert message.role is Role.ASSISTANT and message.id == body["id"]
    request = _after_ask([message])
    assert request == {"messages": _replay(body)}
    assert json.dumps(request["messages"]) == json.dumps(_replay(body))
    assert request_problems(request) == []
    # The JSON body itself (keys in the API's order, not the SDK's) replays exactly too.
    (from_body,) = from_anthropic([body])
    assert from_body.id == body["id"]
    replayed = _after_ask([from_body])["messages"]
    assert json.dumps(replayed) == json.dumps([{"role": "assistant", "content": body["content"]}])


def test_a_response_keeps_its_usage_but_never_sends_it() -> None:
    (message,) = from_anthropic(sdk.Message.model_validate(RESPONSES["plain text"]))
    kept = message.extras["anthropic"]["_response"]
    assert kept["usage"]["output_tokens"] == 6 and kept["stop_reason"] == "end_turn"
    assert _after_ask([message])["messages"] == [
        {"role": "assistant", "content": [{"type": "text", "text": "Hi! My name is Claude."}]}
    ]


def test_storing_a_reply_is_one_line_and_the_next_request_continues() -> None:
    request = REQUESTS["plain strings"]
    history = from_anthropic(request["messages"], request["system"])
    response = sdk.Message.model_validate(RESPONSES["thinking and a tool call"])
    history += from_anthropic(response)
    history.append(Message.tool("toolu_01A09q90qw90lq917835lq9", "15 degrees"))
    following = to_anthropic(history)
    assert following["system"] == request["system"]
    assert following["messages"][:3] == request["messages"]
    assert following["messages"][3:] == [
        *_replay(RESPONSES["thinking and a tool call"]),
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": "15 degrees",
                }
            ],
        },
    ]
    assert request_problems(following) == []


def test_an_empty_response_gives_no_message() -> None:
    body = {**RESPONSES["plain text"], "content": []}
    assert from_anthropic(sdk.Message.model_validate(body)) == []


def test_sdk_block_objects_inside_a_param_are_read() -> None:
    response = sdk.Message.model_validate(RESPONSES["web search"])
    as_param = {"role": "assistant", "content": response.content}
    assert from_anthropic([as_param])[0].content == from_anthropic(response)[0].content


# -- what the model holds ------------------------------------------------------------------


def test_blocks_map_to_the_model() -> None:
    request = REQUESTS["thinking, text and tool calls interleaved"]
    system, _user, assistant, tool_a, tool_b, text, final = from_anthropic(
        request["messages"], request["system"]
    )
    assert system.role is Role.SYSTEM and system.text_content() == "Use the tools."
    assert [type(b) for b in assistant.content] == [
        ThinkingBlock,
        RedactedThinkingBlock,
        TextBlock,
        ToolCall,
        TextBlock,
        ToolCall,
    ]
    thinking = assistant.content[0]
    assert isinstance(thinking, ThinkingBlock) and thinking.signature == SIGNATURE
    second = assistant.tool_calls[1]
    assert list(second.arguments or {}) == ["unit", "location"]  # key order kept
    assert second.extras == {"anthropic": {"cache_control": {"type": "ephemeral"}}}
    assert (tool_a.role, tool_a.tool_call_id, tool_a.text_content()) == (
        Role.TOOL,
        "toolu_01A09q90qw90lq917835lq9",
        "15 degrees",
    )
    assert tool_b.extras["anthropic"]["cache_control"] == {"type": "ephemeral"}
    assert (text.role, text.text_content()) == (Role.USER, "Which is warmer?")
    assert final.text_content() == "Paris."


def test_one_tool_message_per_result_and_back_to_one_user_turn() -> None:
    request = REQUESTS["tool results: errors, empty, images"]
    messages = from_anthropic(request["messages"])
    tools = [m for m in messages if m.role is Role.TOOL]
    assert [m.tool_call_id for m in tools] == [f"toolu_{n}" for n in range(1, 7)]
    assert [m.is_error for m in tools] == [False, False, False, True, False, False]
    assert tools[0].content == () and tools[2].content == ()
    assert tools[1].content == (TextBlock(""),)
    image = tools[4].content[1]
    assert isinstance(image, ImageBlock) and (image.width, image.height) == (1, 1)
    assert all(isinstance(b, OpaqueBlock) for b in tools[5].content)
    turns = to_anthropic(messages)["messages"]
    assert len(turns) == 4 and [b["type"] for b in turns[2]["content"]] == ["tool_result"] * 6


def test_images_and_documents_keep_their_sources() -> None:
    images = from_anthropic(REQUESTS["images by bytes, url and file id"]["messages"])[0].content
    png, url, file, gif = images[:4]
    assert isinstance(png, ImageBlock) and png.data is not None and png.media_type == "image/png"
    assert isinstance(url, ImageBlock) and url.url == "https://example.com/cat.jpg"
    assert isinstance(file, ImageBlock) and file.file_id == "file_011CNha8iCJcU1"
    assert isinstance(gif, ImageBlock) and gif.media_type == "image/gif"
    docs = from_anthropic(REQUESTS["documents of every source"]["messages"])[0].content
    pdf, text, by_url, by_file, chunks, plain_content = docs[:6]
    assert isinstance(pdf, DocumentBlock) and pdf.data is not None and pdf.data.startswith(b"%PDF")
    assert (
        pdf.title == "Annual report" and pdf.extras["anthropic"]["context"] == "Released in March."
    )
    assert isinstance(text, DocumentBlock) and text.data == b"The grass is green. The sky is blue."
    assert text.media_type == "text/plain"
    assert isinstance(by_url, DocumentBlock) and by_url.url == "https://example.com/paper.pdf"
    assert isinstance(by_file, DocumentBlock) and by_file.file_id == "file_abc"
    # Content sources have no common meaning: kept verbatim.
    assert isinstance(chunks, OpaqueBlock) and chunks.provider == "anthropic"
    assert isinstance(plain_content, OpaqueBlock)


def test_server_tool_blocks_are_opaque_at_their_place() -> None:
    request = REQUESTS["server tools: web search with citations"]
    assistant = from_anthropic(request["messages"])[1]
    assert [b.kind for b in assistant.content] == ["text", "opaque", "opaque", "text"]
    opaque = assistant.content[1]
    assert isinstance(opaque, OpaqueBlock) and opaque.payload["name"] == "web_search"
    assert opaque.call_id is None  # answered in the same turn, not by a tool message


def test_string_and_list_content_stay_as_they_were() -> None:
    request = REQUESTS["text after the results, and a separate user turn after them"]
    assert _round_trip(request)["messages"][-2:] == [
        {"role": "user", "content": "Thanks."},
        {"role": "user", "content": [{"type": "text", "text": "Bye."}]},
    ]


def test_deeply_nested_tool_input_round_trips() -> None:
    request = REQUESTS["deeply nested tool input"]
    call = from_anthropic(request["messages"])[1].tool_calls[0]
    assert call.arguments == _nested(60)
    assert _round_trip(request) == request


# -- storage -------------------------------------------------------------------------------


def test_the_corpus_round_trips_through_storage(storage: Any) -> None:
    """Every request and response, saved and loaded on every backend, sync and async."""
    for number, (name, request) in enumerate(REQUESTS.items()):
        session = f"anthropic-{number}"
        storage.save(session, from_anthropic(request["messages"], request.get("system")))
        back = to_anthropic(storage.load(session))
        assert json.dumps(back) == json.dumps(request), name
    for number, (name, body) in enumerate(RESPONSES.items()):
        session = f"anthropic-response-{number}"
        storage.save(session, from_anthropic(sdk.Message.model_validate(body)))
        loaded = storage.load(session)
        assert loaded[0].id == body["id"], name
        assert json.dumps(_after_ask(loaded)["messages"]) == json.dumps(_replay(body)), name


# -- errors --------------------------------------------------------------------------------


def _user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def _assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


BAD_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "@@"}}
WRONG_MAGIC = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG_1PX},
}
MALFORMED: dict[str, tuple[list[Any], str]] = {
    "not an object": (["hello"], "item 0: expected a dict"),
    "no role": ([{"content": "hi"}], "item 0: role"),
    "unknown role": ([{"role": "tool", "content": "hi"}], "item 0: role"),
    "no content": ([{"role": "user"}], "item 0: content: is missing"),
    "content a number": ([{"role": "user", "content": 3}], "item 0: content"),
    "empty content": ([{"role": "user", "content": []}], "item 0: content[0]"),
    "block without type": ([_user({"text": "hi"})], "item 0: content[0].type"),
    "block not an object": ([_user("hi")], "item 0: content[0]: expected a block"),
    "text not a string": ([_user({"type": "text", "text": 5})], "item 0: content[0].text"),
    "bad base64": ([_user(BAD_IMAGE)], "item 0: content[0].source.data: is not valid base64"),
    "image not what it says": ([_user(WRONG_MAGIC)], "item 0: content[0]: ImageBlock.data"),
    "image without source": ([_user({"type": "image"})], "item 0: content[0].source"),
    "thinking unsigned": (
        [{"role": "user", "content": "q"}, _assistant({"type": "thinking", "thinking": "x"})],
        "item 1: content[0].signature",
    ),
    "tool input not an object": (
        [_assistant({"type": "tool_use", "id": "t", "name": "f", "input": "{}"})],
        "item 0: content[0].input",
    ),
    "tool id empty": (
        [_assistant({"type": "tool_use", "id": "", "name": "f", "input": {}})],
        "item 0: content[0]: ToolCall.id",
    ),
    "tool use in a user turn": (
        [_user({"type": "tool_use", "id": "t", "name": "f", "input": {}})],
        "item 0: content[0]: a user message cannot carry tool calls",
    ),
    "tool result in an assistant turn": (
        [_assistant({"type": "tool_result", "tool_use_id": "t"})],
        "item 0: content[0].type: a tool_result belongs in a user turn",
    ),
    "is_error not a bool": (
        [_user({"type": "tool_result", "tool_use_id": "t", "is_error": "no"})],
        "item 0: content[0].is_error",
    ),
    "result without id": ([_user({"type": "tool_result"})], "item 0: content[0].tool_use_id"),
    "result content an object": (
        [_user({"type": "tool_result", "tool_use_id": "t", "content": {"a": 1}})],
        "item 0: content",
    ),
    "input not JSON": (
        [_assistant({"type": "tool_use", "id": "t", "name": "f", "input": {"a": {1, 2}}})],
        "item 0: content[0]: ",
    ),
    "input nested beyond Python's stack": (
        [_assistant({"type": "tool_use", "id": "t", "name": "f", "input": _nested(5000)})],
        "item 0: content[0]: ToolCall.arguments is nested more than 64 deep",
    ),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_item_names_its_index_and_field(name: str) -> None:
    items, expected = MALFORMED[name]
    with pytest.raises(ConversionError) as caught:
        from_anthropic(items)
    assert str(caught.value).startswith(expected), str(caught.value)
    # After a good item, the same fault names the next index.
    with pytest.raises(ConversionError) as later:
        from_anthropic([{"role": "user", "content": "first"}, *items])
    index = int(expected.split()[1].rstrip(":"))
    assert str(later.value).startswith(expected.replace(f"item {index}", f"item {index + 1}"))


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        ([{"type": "image", "source": {"type": "url", "url": "https://x"}}], "system[0].type"),
        ([{"type": "text", "text": 1}], "system[0].text"),
        (42, "system: expected a string or a list of text blocks"),
        ([{"text": "x"}], "system[0].type"),
    ],
)
def test_a_malformed_system_is_named(system: Any, expected: str) -> None:
    with pytest.raises(ConversionError, match="^" + re.escape(expected)):
        from_anthropic([], system)


def test_messages_must_be_a_list() -> None:
    with pytest.raises(ConversionError, match="messages must be a list"):
        from_anthropic({"role": "user", "content": "hi"})
    with pytest.raises(ConversionError, match="item 1: expected a Message"):
        to_anthropic([Message.user("hi"), {"role": "user", "content": "hi"}])  # type: ignore[list-item]


def test_an_empty_system_is_no_system() -> None:
    empties: tuple[Any, ...] = ("", [])
    for empty in empties:
        messages = from_anthropic([{"role": "user", "content": "hi"}], empty)
        assert [m.role for m in messages] == [Role.USER]
        assert to_anthropic(messages) == {"messages": [{"role": "user", "content": "hi"}]}
