"""OpenAI Responses items to messages and back (``docs/providers.md``, OpenAI Responses).

The corpus (``corpus_openai_responses.py``) is checked against the ``openai`` SDK's own
TypedDicts, converted, and must come back exactly, ``json.dumps`` included. SDK objects
are read like the dicts they dump to; what another provider put in a message and the
Responses API cannot carry is dropped with a warning; malformed items name their place.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import warnings
from typing import Any

import pytest
from openai.types.responses import Response, ResponseInputParam, ResponseOutputItem
from pydantic import TypeAdapter

from sqlmemory import (
    ConversionError,
    DocumentBlock,
    FixedWindow,
    ImageBlock,
    InMemoryStorage,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    from_openai_responses,
    groups,
    to_openai_responses,
)
from sqlmemory.formats import DroppedContentWarning
from tests.formats.corpus_openai_responses import CASES, PDF, PNG, SHAPES
from tests.support.provider_types import problems

NAMES = sorted(CASES)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("name", NAMES)
def test_every_corpus_case_is_a_valid_request(name: str) -> None:
    assert problems(CASES[name], ResponseInputParam) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_corpus_round_trips_exactly(name: str) -> None:
    items = CASES[name]
    original = copy.deepcopy(items)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = to_openai_responses(from_openai_responses(items))
    assert back == items
    assert _dumps(back) == _dumps(items)
    assert items == original  # the input was not altered


@pytest.mark.parametrize("name", NAMES)
def test_the_corpus_round_trips_through_the_wire_form(name: str) -> None:
    messages = from_openai_responses(CASES[name])
    wired = [Message.from_dict(json.loads(json.dumps(m.to_dict()))) for m in messages]
    assert wired == messages
    assert _dumps(to_openai_responses(wired)) == _dumps(CASES[name])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_items_become_the_expected_messages(name: str) -> None:
    messages = from_openai_responses(CASES[name])
    assert [(m.role.value, [b.kind for b in m.content]) for m in messages] == SHAPES[name]


def test_the_output_of_one_response_is_one_assistant_message_windows_keep_whole() -> None:
    messages = from_openai_responses(CASES["function_calling"])
    assistant = messages[1]
    assert [b.kind for b in assistant.content] == [
        "thinking",
        "tool_call",
        "tool_call",
        "tool_call",
    ]
    assert assistant.call_ids == ("call_Paris1", "call_Tokyo2", "call_bad3")
    assert [m.tool_call_id for m in messages[2:5]] == list(assistant.call_ids)
    assert [[m.role.value for m in group] for group in groups(messages)] == [
        ["user"],
        ["assistant", "tool", "tool", "tool"],
        ["assistant"],
    ]
    storage = InMemoryStorage()
    storage.save("s", messages)
    # Two groups back: the reasoning item comes with its calls and their results.
    window = storage.load("s", FixedWindow(2))
    assert window[0] is not None and window[0].content[0].kind == "thinking"
    assert [m.role.value for m in window] == ["assistant", "tool", "tool", "tool", "assistant"]


def test_what_the_blocks_hold() -> None:
    messages = from_openai_responses(CASES["function_calling"])
    thinking, paris, tokyo, bad = messages[1].content
    assert isinstance(thinking, ThinkingBlock) and thinking.signature is None
    assert (
        thinking.thinking
        == "**Planning calls**\n\nTwo cities, one product.\n\nCall tools in parallel."
    )
    assert thinking.extras["openai_responses"]["encrypted_content"] == "gAAAAABoXz-encrypted=="
    assert isinstance(paris, ToolCall) and paris.arguments == {"city": "Paris", "units": "celsius"}
    assert isinstance(tokyo, ToolCall)
    assert tokyo.arguments_text == '{ "city" : "東京",\n  "units": "celsius" }'
    assert isinstance(bad, ToolCall) and bad.arguments is None
    assert bad.extras["openai_responses"] == {"id": "fc_68a3", "status": "incomplete"}
    result = messages[4]
    assert isinstance(result.content[1], ImageBlock) and result.content[1].media_type == "image/png"
    answer = messages[5].content[1]
    assert isinstance(answer, TextBlock) and answer.text.startswith("Paris 18°C")
    part = answer.extras["openai_responses"]["part"]
    assert part["annotations"][0]["type"] == "url_citation"
    user = from_openai_responses(CASES["user_content_parts"])[0].content
    assert isinstance(user[2], ImageBlock) and user[2].data == base64.b64decode(PNG)
    assert isinstance(user[7], DocumentBlock) and user[7].data == base64.b64decode(PDF)
    assert user[7].title == "notes.pdf"
    # A CSV is no document the model holds: kept verbatim, as a part, at its place.
    assert isinstance(user[8], OpaqueBlock) and user[8].payload["filename"] == "sheet.csv"


def test_hosted_calls_are_answered_by_tool_messages() -> None:
    messages = from_openai_responses(CASES["client_tools"])
    calls = [m.call_ids for m in messages if m.role.value == "assistant"]
    answers = [m.tool_call_id for m in messages if m.role.value == "tool"]
    assert calls[:-1] == [(a,) for a in answers]
    assert answers == [
        "call_cu1",
        "call_ls1",
        "call_sh1",
        "call_ap1",
        "call_ct1",
        "mcpr_1",
        "ts_c1",
    ]
    assert all(len(group) == 2 for group in groups(messages)[1:-1])


def test_server_side_tool_search_stays_in_the_assistant_message() -> None:
    items = [
        {
            "arguments": {"q": "x"},
            "type": "tool_search_call",
            "call_id": "t1",
            "execution": "server",
        },
        {"tools": [], "type": "tool_search_output", "call_id": "t1", "execution": "server"},
    ]
    (message,) = from_openai_responses(items)
    assert message.call_ids == () and [b.kind for b in message.content] == ["opaque", "opaque"]
    assert to_openai_responses([message]) == items


API_OUTPUT: list[dict[str, Any]] = [
    {
        "id": "rs_1",
        "summary": [{"text": "Plan.", "type": "summary_text"}],
        "type": "reasoning",
        "content": None,
        "encrypted_content": "gAAA",
        "status": None,
    },
    {
        "arguments": '{"q":"x"}',
        "call_id": "call_1",
        "name": "search",
        "type": "function_call",
        "id": "fc_1",
        "async": True,
        "namespace": None,
        "status": "completed",
    },
    {
        "id": "msg_1",
        "content": [
            {"annotations": [], "text": "Hi.", "type": "output_text", "logprobs": []},
            {"refusal": "No.", "type": "refusal"},
        ],
        "role": "assistant",
        "status": "completed",
        "type": "message",
        "phase": None,
    },
    {
        "id": "ws_1",
        "action": {"type": "search", "queries": None, "query": "x", "sources": None},
        "status": "completed",
        "type": "web_search_call",
    },
]


def test_sdk_objects_are_read_as_the_api_sent_them() -> None:
    output = TypeAdapter(list[ResponseOutputItem]).validate_python(API_OUTPUT)
    messages = from_openai_responses(output)
    assert len(messages) == 1
    back = to_openai_responses(messages)
    dumped = [item.model_dump(mode="json", exclude_unset=True, by_alias=True) for item in output]
    assert _dumps(back) == _dumps(dumped) == _dumps(API_OUTPUT)


def test_a_whole_response_output_is_stored_in_one_line() -> None:
    response = Response.model_validate(
        {
            "id": "resp_1",
            "created_at": 1.0,
            "model": "gpt-5",
            "object": "response",
            "output": API_OUTPUT,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )
    whole = from_openai_responses(response)  # no usage in this response: none on the message
    assert [m.usage for m in whole] == [None]
    assert _dumps(to_openai_responses(whole)) == _dumps(API_OUTPUT)
    storage = InMemoryStorage()
    storage.append("s", *from_openai_responses(response.output))
    assert _dumps(to_openai_responses(storage.load("s"))) == _dumps(API_OUTPUT)


def _native_history() -> list[Message]:
    png = base64.b64decode(PNG)
    return [
        Message.system("Be brief."),
        Message.developer("Use tools."),
        Message.user(["Look:", ImageBlock(png, "image/png"), ImageBlock(url="https://x/y.jpg")]),
        Message(
            "document", [DocumentBlock(base64.b64decode(PDF), "application/pdf", title="a.pdf")]
        ),
        Message.user(DocumentBlock(file_id="file-1")),
        Message.assistant(
            ["Let me check.", ToolCall("c1", "lookup", {"q": "x"}), "and", ToolCall("c2", "f")]
        ),
        Message.tool("c1", "found"),
        Message.tool("c2", [TextBlock("a"), ImageBlock(file_id="file-2", detail="high")]),
        Message.assistant("Done."),
    ]


def test_messages_from_elsewhere_give_a_valid_request() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        items = to_openai_responses(_native_history())
    assert problems(items, ResponseInputParam) == []
    assert items[2] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Look:"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
            {"type": "input_image", "image_url": "https://x/y.jpg", "detail": "auto"},
        ],
    }
    assert items[3]["role"] == "user" and items[3]["content"][0]["filename"] == "a.pdf"
    assert [item.get("type") for item in items[5:10]] == [
        None,
        "function_call",
        None,
        "function_call",
        "function_call_output",
    ]
    assert items[6]["arguments"] == '{"q":"x"}' and items[8]["arguments"] == "{}"
    # Read back, they give the same roles and text.
    again = from_openai_responses(items)
    native = _native_history()
    assert [m.role.value for m in again] == [
        "user" if m.role.value == "document" else m.role.value for m in native
    ]
    assert [m.text_content() for m in again] == [m.text_content() for m in native]


def test_what_responses_cannot_carry_is_dropped_with_a_warning() -> None:
    history = [
        Message.user([TextBlock("hi"), OpaqueBlock("anthropic", {"type": "server_tool_use"})]),
        Message.assistant(
            [
                ThinkingBlock("signed elsewhere", signature="sig"),
                RedactedThinkingBlock("abc"),
                TextBlock("answer"),
                ToolCall("c1", "f"),
            ]
        ),
        Message.tool("c1", "boom", is_error=True),
    ]
    with pytest.warns(DroppedContentWarning) as caught:
        items = to_openai_responses(history)
    assert len(caught) == 4
    assert problems(items, ResponseInputParam) == []
    assert items == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "answer"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "boom"},
    ]


def test_an_edited_block_is_written_with_its_new_value() -> None:
    (user, assistant) = from_openai_responses(
        [
            {"role": "user", "content": [{"type": "input_text", "text": "old"}]},
            {
                "id": "msg_1",
                "content": [{"annotations": [], "text": "old", "type": "output_text"}],
                "role": "assistant",
                "status": "completed",
                "type": "message",
            },
        ]
    )
    edited_user = Message.user(
        [dataclasses.replace(user.content[0], text="new")], extras=user.extras
    )
    edited = Message.assistant([dataclasses.replace(assistant.content[0], text="new")])
    items = to_openai_responses([edited_user, edited])
    assert items[0]["content"][0]["text"] == "new"
    assert items[1]["content"][0] == {"annotations": [], "text": "new", "type": "output_text"}
    assert items[1]["id"] == "msg_1"


MALFORMED: list[tuple[list[Any], str]] = [
    ([42], "item 0: expected a dict or an SDK object"),
    ([{"content": "x"}], "item 0: type: missing"),
    ([{"role": "user", "content": "ok"}, {"type": 3}], "item 1: type: expected a string"),
    ([{"role": "robot", "content": "x"}], "item 0: role: 'robot' is not a message role"),
    ([{"role": "user", "content": 5}], "item 0: content: expected a string or a list"),
    ([{"role": "user", "content": ["x"]}], "item 0: content[0]: expected an object"),
    ([{"role": "user", "content": [{"text": "x"}]}], "item 0: content[0].type: expected a string"),
    (
        [{"role": "user", "content": [{"type": "input_text", "text": 1}]}],
        "item 0: content[0].text: expected a string",
    ),
    (
        [{"role": "user", "content": [{"type": "input_image", "image_url": 7, "detail": "low"}]}],
        "item 0: content[0].image_url: expected a string or null",
    ),
    (
        [{"type": "function_call", "call_id": "c", "name": "f"}],
        "item 0: arguments: expected a string",
    ),
    (
        [{"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"}],
        "item 0: ToolCall.id must not be empty",
    ),
    ([{"type": "function_call_output", "call_id": "c", "output": 1}], "item 0: output: expected"),
    ([{"type": "reasoning", "id": "rs"}], "item 0: summary: expected a list"),
    ([{"type": "reasoning", "id": "rs", "summary": [{}]}], "item 0: summary[0].text: expected"),
    ([{"type": "web_search_call", "_secret": 1}], "item 0: _secret: not a field name"),
    ([{"type": "web_search_call", "x": float("nan")}], "item 0: "),
    ([{"type": "web_search_call", "x": b"bytes"}], "item 0: "),
    (
        [
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "c", "name": "g", "arguments": "{}"},
        ],
        "item 0: tool call ids must be unique",
    ),
]


@pytest.mark.parametrize(("items", "expected"), MALFORMED)
def test_a_malformed_item_raises_naming_its_index_and_field(
    items: list[Any], expected: str
) -> None:
    with pytest.raises(ConversionError) as caught:
        from_openai_responses(items)
    assert str(caught.value).startswith(expected)


@pytest.mark.parametrize("items", ["text", {"role": "user"}, 3])
def test_items_must_be_a_list(items: Any) -> None:
    with pytest.raises(ConversionError, match="must be a list of items"):
        from_openai_responses(items)


@pytest.mark.parametrize("messages", ["text", {"role": "user"}, 3, [Message.user("x"), "y"]])
def test_to_takes_a_list_of_messages(messages: Any) -> None:
    with pytest.raises(TypeError):
        to_openai_responses(messages)


def test_messages_that_say_nothing_are_kept_as_opaque_items() -> None:
    items = [
        {"role": "user", "content": ""},
        {"role": "user", "content": []},
        {"role": "assistant", "content": ""},
        {"id": "m", "content": [], "role": "assistant", "status": "completed", "type": "message"},
    ]
    messages = from_openai_responses(items)
    assert [[b.kind for b in m.content] for m in messages] == [
        ["opaque"],
        ["opaque"],
        ["opaque"] * 2,
    ]
    assert to_openai_responses(messages) == items
