"""LangChain messages to sqlmemory and back (``docs/integrations/langchain.md``).

The corpus holds the shapes LangChain code builds and models return: string and block
content, standard blocks, tool calls in ``tool_calls`` and in the content, invalid tool
calls, tool results with a status and an artifact. Each comes back equal, field for field.
"""

from __future__ import annotations

import base64
import warnings

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

from sqlmemory import (
    ConversionError,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.formats import DroppedContentWarning
from sqlmemory.integrations.langchain import from_langchain, to_langchain
from tests.support.cases import PDF_BYTES, image_bytes

PNG = image_bytes(3, 2)
PNG_B64 = base64.b64encode(PNG).decode("ascii")
USAGE = {
    "input_tokens": 12,
    "output_tokens": 5,
    "total_tokens": 17,
    "input_token_details": {"cache_read": 3},
}


def corpus() -> list[BaseMessage]:
    return [
        SystemMessage("Answer briefly."),
        HumanMessage("hi"),
        HumanMessage("hi again", id="h-1", name="bob"),
        HumanMessage([{"type": "text", "text": "one block"}]),
        HumanMessage(["plain text", {"type": "text", "text": "x"}]),
        HumanMessage(
            [
                {"type": "text", "text": "look", "id": "b1", "annotations": [{"type": "x"}]},
                {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
                {"type": "image", "url": "https://example.com/cat.png", "extras": {"k": 1}},
                {"type": "image", "file_id": "file-123"},
                {"type": "image", "url": f"data:image/png;base64,{PNG_B64}"},
                {
                    "type": "file",
                    "base64": base64.b64encode(PDF_BYTES).decode(),
                    "mime_type": "application/pdf",
                },
                {"type": "file", "url": "https://example.com/report.pdf"},
                {"type": "audio", "base64": "AAAA", "mime_type": "audio/wav"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                {"type": "text-plain", "text": "notes", "mime_type": "text/plain"},
            ]
        ),
        AIMessage(
            "Let me look.",
            id="lc_run--1",
            tool_calls=[{"name": "search", "args": {"q": "x", "n": 2}, "id": "c1"}],
            usage_metadata=USAGE,  # type: ignore[arg-type]
            response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
            additional_kwargs={"refusal": None},
        ),
        ToolMessage("42", tool_call_id="c1", id="t-1"),
        ToolMessage("no such city", tool_call_id="c2", status="error", name="weather"),
        ToolMessage("", tool_call_id="c3", artifact={"rows": [1, 2]}),
        ToolMessage([{"type": "text", "text": "in blocks"}], tool_call_id="c4"),
        AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": "c5"}]),
        AIMessage(
            [
                {"type": "reasoning", "reasoning": "think", "id": "rs_1"},
                {"type": "reasoning", "extras": {"signature": "sig"}},
                {"type": "text", "text": "then "},
                {"type": "tool_call", "id": "c6", "name": "f", "args": {"a": 1}},
                {"type": "text", "text": "done"},
            ],
            tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c6"}],
            response_metadata={"output_version": "v1"},
        ),
        AIMessage(
            "bad json",
            invalid_tool_calls=[
                {"type": "invalid_tool_call", "id": "c7", "name": "f", "args": "{x", "error": "no"},
                {
                    "type": "invalid_tool_call",
                    "id": "c8",
                    "name": None,
                    "args": None,
                    "error": None,
                },
            ],
        ),
        ChatMessage(role="developer", content="Be terse."),
        ChatMessage(role="user", content="as a chat message"),
        AIMessage("\x00 and 😀", id="nul"),
    ]


@pytest.mark.parametrize("message", corpus(), ids=lambda m: f"{m.type}:{str(m.content)[:20]}")
def test_every_message_comes_back_equal(message: BaseMessage) -> None:
    (back,) = to_langchain(from_langchain([message]))
    assert back == message
    assert type(back) is type(message)
    assert back.model_dump() == message.model_dump()


def test_string_content_comes_back_as_a_string_and_blocks_as_blocks() -> None:
    text, block = to_langchain(
        from_langchain([HumanMessage("hi"), HumanMessage([{"type": "text", "text": "hi"}])])
    )
    assert text.content == "hi"
    assert block.content == [{"type": "text", "text": "hi"}]


def test_what_sqlmemory_understands_becomes_its_own_blocks() -> None:
    (human, ai, tool) = from_langchain(corpus()[5:6] + corpus()[6:8])
    kinds = [type(b) for b in human.content]
    assert kinds == [
        TextBlock,
        ImageBlock,
        ImageBlock,
        ImageBlock,
        OpaqueBlock,  # a data: URL is kept as written
        DocumentBlock,
        DocumentBlock,
        OpaqueBlock,
        OpaqueBlock,
        OpaqueBlock,
    ]
    image = human.content[1]
    assert (
        isinstance(image, ImageBlock)
        and image.data == PNG
        and (image.width, image.height) == (3, 2)
    )
    assert ai.tool_calls == (ToolCall("c1", "search", {"q": "x", "n": 2}),)
    assert ai.text_content() == "Let me look."
    assert ai.id == "lc_run--1"
    assert tool.tool_call_id == "c1" and tool.text_content() == "42" and not tool.is_error


def test_error_status_is_is_error() -> None:
    (failed,) = from_langchain([ToolMessage("boom", tool_call_id="c1", status="error")])
    assert failed.is_error
    (back,) = to_langchain([Message.tool("c1", "boom", is_error=True)])
    assert isinstance(back, ToolMessage) and back.status == "error"


def test_tool_calls_in_the_content_keep_their_place() -> None:
    (message,) = from_langchain(corpus()[12:13])
    assert [b.kind for b in message.content] == [
        "thinking",
        "thinking",
        "text",
        "tool_call",
        "text",
    ]
    assert isinstance(message.content[0], ThinkingBlock)
    assert message.content[0].thinking == "think"


def test_invalid_tool_calls_are_calls_a_window_keeps_with_their_result() -> None:
    (message,) = from_langchain(corpus()[13:14])
    assert message.call_ids == ("c7", "c8")
    assert message.tool_calls[0].arguments_text == "{x"


def test_messages_from_other_sources_get_standard_blocks() -> None:
    history = [
        Message.system("sys"),
        Message.developer("dev"),
        Message.user(
            ["look", ImageBlock(PNG, "image/png"), DocumentBlock(url="https://e.x/a.pdf")]
        ),
        Message.assistant(
            [ThinkingBlock("hmm", signature="sig"), "ok"],
            tool_calls=[ToolCall("c1", "f", arguments_text='{"a": 1}')],
        ),
        Message.tool("c1", "1"),
    ]
    system, developer, user, assistant, tool = to_langchain(history)
    assert isinstance(system, SystemMessage) and system.content == "sys"
    assert isinstance(developer, ChatMessage) and developer.role == "developer"
    assert user.content == [
        {"type": "text", "text": "look"},
        {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
        {"type": "file", "url": "https://e.x/a.pdf"},
    ]
    assert isinstance(assistant, AIMessage)
    assert assistant.content == [
        {"type": "reasoning", "reasoning": "hmm"},
        {"type": "text", "text": "ok"},
    ]
    assert assistant.tool_calls == [
        {"name": "f", "args": {"a": 1}, "id": "c1", "type": "tool_call"}
    ]
    assert assistant.id == history[3].id
    assert isinstance(tool, ToolMessage) and tool.content == "1" and tool.tool_call_id == "c1"


def test_other_providers_items_are_dropped_with_a_warning() -> None:
    message = Message.assistant(
        ["ok", OpaqueBlock("openai_responses", {"type": "web_search_call"})]
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (back,) = to_langchain([message])
    assert back.content == "ok"
    assert [w.category for w in caught] == [DroppedContentWarning]


def test_an_artifact_that_is_not_json_is_dropped_with_a_warning() -> None:
    with pytest.warns(DroppedContentWarning, match="artifact"):
        (message,) = from_langchain([ToolMessage("x", tool_call_id="c1", artifact=object())])
    assert "artifact" not in message.extras["langchain"]


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ([RemoveMessage(id="x")], "message 0: a RemoveMessage cannot be stored"),
        ([HumanMessage("ok"), HumanMessage("")], "message 1: an empty human message"),
        ([AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}])], "without an id"),
        ([ChatMessage(role="wizard", content="x")], "role 'wizard'"),
        ([HumanMessage("x", additional_kwargs={"f": float("nan")})], "message 0"),
        ([HumanMessage("x", id="a" * 300)], "longer than"),
        (["hi"], "message 0: expected a langchain BaseMessage, got str"),
        (HumanMessage("x"), "must be a list"),
        ("hi", "must be a list"),
    ],
)
def test_what_cannot_be_stored_is_a_conversion_error(messages: object, match: str) -> None:
    with pytest.raises(ConversionError, match=match):
        from_langchain(messages)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "usage",
    [
        {},  # found by the hostile tests: kept, then refused by to_langchain
        {"input_tokens": 1, "output_tokens": 2},
        {**USAGE, "total_tokens": "many"},
        {**USAGE, "input_token_details": {"cache_read": [3]}},
    ],
    ids=["empty", "no total", "a total that is no int", "a detail that is no int"],
)
def test_usage_metadata_langchain_refuses_is_a_conversion_error(usage: dict[str, object]) -> None:
    # Set past LangChain's validation, as code may do: what from_langchain accepts must
    # convert back, so it refuses here what LangChain would refuse in to_langchain.
    message = AIMessage("42")
    object.__setattr__(message, "usage_metadata", usage)
    with pytest.raises(ConversionError, match=r"^message 1: usage_metadata\b"):
        from_langchain([HumanMessage("hi"), message])


def test_usage_metadata_langchain_accepts_converts_back() -> None:
    # LangChain keeps a key it does not know and reads an int from its text.
    usage = {**USAGE, "total_tokens": "17", "cost": 0.5}
    message = AIMessage("42")
    object.__setattr__(message, "usage_metadata", usage)
    (back,) = to_langchain(from_langchain([message]))
    assert isinstance(back, AIMessage)
    assert back.usage_metadata == {**usage, "total_tokens": 17}


def test_to_langchain_takes_messages_only() -> None:
    with pytest.raises(ConversionError, match="message 0: expected a sqlmemory Message"):
        to_langchain([{"role": "user"}])  # type: ignore[list-item]
