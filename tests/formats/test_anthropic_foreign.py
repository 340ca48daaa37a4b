"""``to_anthropic`` on messages that did not come from Anthropic: a request it accepts.

Roles are mapped, tool calls and results keep their ids and adjacency, what Anthropic cannot
carry is dropped with a ``DroppedContentWarning`` (``docs/providers.md``, section
"Anthropic"). Every request built here is checked against the SDK's TypedDicts.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from sqlmemory import (
    DocumentBlock,
    DroppedContentWarning,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    from_anthropic,
    from_openai_chat,
    to_anthropic,
)
from tests.formats.anthropic_types import api_problems, request_problems
from tests.formats.corpus_anthropic import PNG_1PX
from tests.formats.corpus_openai_chat import REQUESTS as CHAT_REQUESTS

RESPONSES_EXTRAS = {"openai_responses": {"id": "rs_1", "encrypted_content": "gAAAA"}}


def _convert(messages: list[Message]) -> tuple[dict[str, Any], list[str]]:
    """The request, valid for the SDK, and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        request = to_anthropic(messages)
    assert request_problems(request) == []
    assert all(w.category is DroppedContentWarning for w in caught)
    return request, [str(w.message) for w in caught]


def test_developer_messages_are_sent_as_system() -> None:
    request, dropped = _convert(
        [
            Message.system("Be brief."),
            Message.developer("Answer in French."),
            Message.user("Hello"),
            Message.assistant("Bonjour"),
            Message.developer("Now in German."),
            Message.user("Hello again"),
        ]
    )
    assert dropped == []
    assert request["system"] == [
        {"type": "text", "text": "Be brief."},
        {"type": "text", "text": "Answer in French."},
    ]
    assert request["messages"][2] == {"role": "system", "content": "Now in German."}


def test_tool_results_in_a_row_and_the_text_after_them_are_one_user_turn() -> None:
    calls = [ToolCall("call_1", "add", arguments_text='{"a": 1}'), ToolCall("call_2", "add")]
    request, _ = _convert(
        [
            Message.user("Add."),
            Message.assistant(tool_calls=calls),
            Message.tool("call_1", "1"),
            Message.tool("call_2", "", is_error=True),
            Message.user("Thanks."),
            Message.user("More?"),
        ]
    )
    assert request["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 1}},
                {"type": "tool_use", "id": "call_2", "name": "add", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "1"},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "", "is_error": True},
                {"type": "text", "text": "Thanks."},
            ],
        },
        {"role": "user", "content": "More?"},
    ]


def test_arguments_that_are_no_json_object_are_sent_empty_with_a_warning() -> None:
    call = ToolCall("call_1", "f", arguments_text='{"a": 1')
    request, dropped = _convert([Message.user("go"), Message.assistant(tool_calls=[call])])
    assert request["messages"][1]["content"][0]["input"] == {}
    assert len(dropped) == 1 and "call_1" in dropped[0]


def test_thinking_anthropic_did_not_sign_is_dropped() -> None:
    reasoning = ThinkingBlock("Let me think.", extras=RESPONSES_EXTRAS)
    foreign_signed = ThinkingBlock("x", signature="sig", extras=RESPONSES_EXTRAS)
    unsigned = ThinkingBlock("Plain reasoning.")
    own = ThinkingBlock("Mine.", signature="EqQB")
    request, dropped = _convert(
        [
            Message.user("q"),
            Message.assistant([reasoning, foreign_signed, unsigned, own, TextBlock("Answer.")]),
            Message.assistant([reasoning]),  # nothing left: no empty turn is sent
            Message.user("next"),
        ]
    )
    assert request["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Mine.", "signature": "EqQB"},
            {"type": "text", "text": "Answer."},
        ],
    }
    assert len(request["messages"]) == 3
    assert len(dropped) == 4


def test_other_providers_opaque_items_and_their_results_are_dropped() -> None:
    computer = OpaqueBlock(
        "openai_responses", {"type": "computer_call", "call_id": "cu_1"}, call_id="cu_1"
    )
    search = OpaqueBlock("openai_responses", {"type": "web_search_call", "id": "ws_1"})
    mine = OpaqueBlock(
        "anthropic", {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}
    )
    request, dropped = _convert(
        [
            Message.user("q"),
            Message.assistant([search, computer, mine, TextBlock("Done.")]),
            Message.tool("cu_1", "screenshot taken"),
            Message.user("thanks"),
        ]
    )
    assert request["messages"][1]["content"] == [
        dict(mine.payload),
        {"type": "text", "text": "Done."},
    ]
    assert request["messages"][2] == {"role": "user", "content": "thanks"}
    assert len(dropped) == 3  # two opaque items and the orphan result


def test_redacted_thinking_of_another_format_is_dropped() -> None:
    request, dropped = _convert(
        [
            Message.user("q"),
            Message.assistant(
                [RedactedThinkingBlock("x", extras=RESPONSES_EXTRAS), TextBlock("a")]
            ),
        ]
    )
    assert request["messages"][1]["content"] == [{"type": "text", "text": "a"}]
    assert len(dropped) == 1


def test_images_and_documents_travel_by_each_source() -> None:
    image = ImageBlock(url=f"data:image/png;base64,{PNG_1PX}", detail="high")
    request, dropped = _convert(
        [
            Message.user(
                [
                    image,
                    ImageBlock(url="https://example.com/a.png", media_type="image/png"),
                    ImageBlock(file_id="file-abc"),
                    DocumentBlock(b"minutes", "text/plain", title="Notes"),
                    DocumentBlock(url="https://example.com/a.pdf"),
                    DocumentBlock(b"\xff\xfe", "text/plain"),
                    TextBlock("What is here?", extras={"openai_chat": {"x": 1}}),
                ]
            )
        ]
    )
    assert request["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "image", "source": {"type": "file", "file_id": "file-abc"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "minutes"},
            "title": "Notes",
        },
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        {"type": "text", "text": "What is here?"},
    ]
    assert len(dropped) == 1 and "UTF-8" in dropped[0]


def test_what_a_system_prompt_or_a_tool_result_cannot_hold_is_dropped() -> None:
    picture = ImageBlock(file_id="file-abc")
    request, dropped = _convert(
        [
            Message.system(["Look:", picture]),
            Message.user("q"),
            Message.assistant(tool_calls=[ToolCall("c1", "f")]),
            Message.tool("c1", [TextBlock("done"), ThinkingBlock("hm", signature="s")]),
        ]
    )
    assert request["system"] == [{"type": "text", "text": "Look:"}]
    assert request["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "done"}]}
    ]
    assert len(dropped) == 2


def test_a_result_that_answers_no_call_of_the_turn_before_is_dropped() -> None:
    call = ToolCall("c1", "f")
    request, dropped = _convert(
        [
            Message.user("q"),
            Message.assistant(tool_calls=[call]),
            Message.tool("c1", "first"),
            Message.tool("c1", "again"),  # answered already
            Message.assistant("done"),
            Message.tool("c1", "late"),  # its call is two turns back
            Message.tool("c9", "unknown"),
        ]
    )
    assert request["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "first"}],
    }
    assert len(request["messages"]) == 4 and len(dropped) == 3


def test_assistant_messages_before_the_first_user_turn_are_dropped() -> None:
    """A window can open on the assistant's side; the API wants the user's turn first."""
    request, dropped = _convert(
        [
            Message.system("Be brief."),
            Message.assistant("Earlier answer.", tool_calls=[ToolCall("c1", "f")]),
            Message.tool("c1", "done"),
            Message.assistant("Done."),
            Message.user("And now?"),
            Message.assistant("Now this."),
        ]
    )
    assert request == {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "And now?"},
            {"role": "assistant", "content": "Now this."},
        ],
    }
    assert len(dropped) == 3 and all("before the first user turn" in d for d in dropped)
    assert api_problems(request) == []
    nothing, dropped = _convert([Message.assistant("Hello.")])
    assert nothing == {"messages": []} and len(dropped) == 1


def test_a_system_turn_may_come_before_the_first_user_turn() -> None:
    request = {
        "messages": [
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Hello"},
        ]
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_anthropic(from_anthropic(request["messages"])) == request


def test_tool_results_come_first_in_their_user_turn() -> None:
    calls = [ToolCall("c1", "f"), ToolCall("c2", "g")]
    history = [
        Message.user("q"),
        Message.assistant(tool_calls=calls),
        Message.user("While you work: hurry."),
        Message.tool("c1", "one"),
        Message.tool("c2", "two"),
        Message.user("Thanks."),
    ]
    request, dropped = _convert(history)
    assert dropped == []
    assert request["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "one"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "two"},
            {"type": "text", "text": "While you work: hurry."},
            {"type": "text", "text": "Thanks."},
        ],
    }
    assert api_problems(request) == []
    # A turn sent the other way round (the API refuses it) is read, and written results first.
    refused = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here:"},
                {"type": "tool_result", "tool_use_id": "c1", "content": "one"},
            ],
        },
    ]
    turns = to_anthropic(from_anthropic(refused))["messages"]
    assert turns[2]["content"] == list(reversed(refused[2]["content"]))


def test_blank_texts_are_left_out_of_turns() -> None:
    """The API refuses a text block that is empty or only whitespace (a tool result's own
    empty content is fine)."""
    request, dropped = _convert(
        [
            Message.user([TextBlock(""), TextBlock("q")]),
            Message.assistant("", tool_calls=[ToolCall("c1", "f")]),
            Message.tool("c1", ""),
            Message.user("  \n"),
            Message.assistant("ok"),
        ]
    )
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": ""}]},
        {"role": "assistant", "content": "ok"},
    ]
    assert len(dropped) == 1 and "whitespace" in dropped[0]  # an empty text says nothing
    assert api_problems(request) == []


@pytest.mark.parametrize("messages", [[], [Message.system("only instructions")]])
def test_no_turns_give_an_empty_message_list(messages: list[Message]) -> None:
    request, _ = _convert(messages)
    assert request["messages"] == []
    assert ("system" in request) == bool(messages)


@pytest.mark.parametrize("name", list(CHAT_REQUESTS))
def test_every_chat_request_becomes_a_request_anthropic_accepts(name: str) -> None:
    messages = from_openai_chat(CHAT_REQUESTS[name])
    request, _ = _convert(messages)
    sent_calls = [
        block["id"]
        for turn in request["messages"]
        if isinstance(turn["content"], list)
        for block in turn["content"]
        if block["type"] == "tool_use"
    ]
    assert sent_calls == [call.id for m in messages for call in m.tool_calls]
    for before, after in zip(request["messages"], request["messages"][1:], strict=False):
        results = [
            block["tool_use_id"]
            for block in (after["content"] if isinstance(after["content"], list) else [])
            if block["type"] == "tool_result"
        ]
        if results:  # results come right after the turn that made the calls
            assert before["role"] == "assistant" and isinstance(before["content"], list)
            uses = [b["id"] for b in before["content"] if b["type"] == "tool_use"]
            assert set(results) <= set(uses) and len(set(results)) == len(results)
