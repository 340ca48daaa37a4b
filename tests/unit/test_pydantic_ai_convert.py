"""Pydantic AI histories to sqlmemory and back (``docs/integrations/pydantic-ai.md``).

Lossless means one thing here: ``ModelMessagesTypeAdapter`` dumps what comes back exactly
as it dumps the original, timestamps, usage, model names, run ids and part kinds included.
"""

from __future__ import annotations

import warnings
from datetime import datetime, timezone

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

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
from sqlmemory.integrations.pydantic_ai import from_pydantic_ai, to_pydantic_ai
from tests.support.cases import PDF_BYTES, image_bytes

PNG = image_bytes(3, 2)
AT = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)


def dump(history: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(history)


def agent_history() -> list[ModelMessage]:
    """What an agent run with a tool really produces, over two runs."""
    agent = Agent(TestModel(), system_prompt="Be brief.")

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    first = agent.run_sync("What is 6 x 7?")
    return agent.run_sync("And 7 x 8?", message_history=first.all_messages()).all_messages()


def deprecated_parts() -> list[ModelMessage]:
    """``RetryPromptPart`` values: Pydantic AI reads them back as the parts replacing them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RetryPromptPart is deprecated, yet in old histories
        retry_call = RetryPromptPart("bad args", tool_name="f", tool_call_id="c9", timestamp=AT)
        retry_free = RetryPromptPart("answer in JSON", timestamp=AT)
        retry_errors = RetryPromptPart(
            [{"type": "missing", "loc": ("a",), "msg": "Field required", "input": {}}],
            tool_name="g",
            tool_call_id="c10",
            timestamp=AT,
        )
    return [ModelRequest(parts=[retry_call, retry_free, retry_errors])]


def hand_built() -> list[ModelMessage]:
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("Be brief.", timestamp=AT),
                UserPromptPart(
                    [
                        "look at these",
                        ImageUrl("https://example.com/cat.png"),
                        BinaryContent(PNG, media_type="image/png"),
                        DocumentUrl("https://example.com/report.pdf"),
                        BinaryContent(PDF_BYTES, media_type="application/pdf"),
                        AudioUrl("https://example.com/a.mp3"),
                        ImageUrl("data:image/png;base64,iVBORw0KGgo="),
                        BinaryContent(b"not a png", media_type="image/png"),
                    ],
                    timestamp=AT,
                ),
            ],
            instructions="Answer in French.",
            run_id="run-1",
        ),
        ModelResponse(
            parts=[
                ThinkingPart("hmm", signature="sig", provider_name="anthropic"),
                TextPart("Let me call."),
                ToolCallPart("f", '{"a": 1', tool_call_id="c1"),
                ToolCallPart("g", {"b": [1, 2], "a": None}, tool_call_id="c2"),
                ToolCallPart("h", None, tool_call_id="c3"),
            ],
            usage=RequestUsage(input_tokens=10, output_tokens=3, details={"reasoning": 2}),
            model_name="claude-x",
            timestamp=AT,
            provider_name="anthropic",
            provider_response_id="msg_1",
            finish_reason="tool_call",
            run_id="run-1",
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("f", "one", tool_call_id="c1", timestamp=AT),
                ToolReturnPart("g", {"rows": [1, 2]}, tool_call_id="c2", timestamp=AT),
                ToolReturnPart("h", "failed", tool_call_id="c3", timestamp=AT, outcome="failed"),
            ]
        ),
        ModelResponse(parts=[]),
        ModelRequest(parts=[]),
        ModelResponse(parts=[TextPart("")]),
        ModelRequest(parts=[UserPromptPart("", timestamp=AT), SystemPromptPart("", timestamp=AT)]),
        ModelResponse(
            parts=[
                ToolCallPart("f", {}, tool_call_id="same"),
                ToolCallPart("f", {}, tool_call_id="same"),
            ]
        ),
        ModelRequest(parts=[UserPromptPart(["one item"], timestamp=AT)]),
        ModelResponse(parts=[TextPart("\x00 and 😀")], timestamp=AT),
    ]


@pytest.mark.parametrize("history", [agent_history(), hand_built()], ids=["agent", "hand-built"])
def test_the_round_trip_dumps_identically(history: list[ModelMessage]) -> None:
    back = to_pydantic_ai(from_pydantic_ai(history))
    assert dump(back) == dump(history)


def test_deprecated_parts_come_back_as_pydantic_ai_itself_reads_them() -> None:
    history = deprecated_parts()
    back = to_pydantic_ai(from_pydantic_ai(history))
    assert dump(back) == dump(ModelMessagesTypeAdapter.validate_json(dump(history)))
    messages = from_pydantic_ai(history)
    assert [(m.role.value, m.is_error) for m in messages] == [
        ("tool", True),
        ("user", False),
        ("tool", True),
    ]


def test_each_part_becomes_a_message_a_window_understands() -> None:
    messages = from_pydantic_ai(hand_built()[:3])
    roles = [m.role.value for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "tool"]
    user = messages[1]
    assert [type(b) for b in user.content] == [
        TextBlock,
        ImageBlock,
        ImageBlock,
        DocumentBlock,
        DocumentBlock,
        OpaqueBlock,  # audio
        OpaqueBlock,  # a data: URL, kept as written
        OpaqueBlock,  # bytes that are no PNG
    ]
    image = user.content[2]
    assert isinstance(image, ImageBlock) and image.data == PNG
    assistant = messages[2]
    assert [type(b) for b in assistant.content] == [
        ThinkingBlock,
        TextBlock,
        ToolCall,
        ToolCall,
        ToolCall,
    ]
    assert assistant.call_ids == ("c1", "c2", "c3")
    assert assistant.tool_calls[0].arguments_text == '{"a": 1'
    assert [m.tool_call_id for m in messages[3:]] == ["c1", "c2", "c3"]
    assert [m.is_error for m in messages[3:]] == [False, False, True]
    assert messages[4].text_content() == '{"rows": [1, 2]}'


def test_messages_from_elsewhere_become_requests_and_responses() -> None:
    history = to_pydantic_ai(
        [
            Message.system("Be brief."),
            Message.user(["look", ImageBlock(PNG, "image/png")]),
            Message.assistant(
                [ThinkingBlock("hmm"), "Calling."],
                tool_calls=[ToolCall("c1", "lookup", {"q": "x"})],
            ),
            Message.tool("c1", "found"),
            Message.tool("c1", "again", is_error=True),
            Message.assistant("Done."),
        ]
    )
    request, response, results, final = history
    assert isinstance(request, ModelRequest) and isinstance(response, ModelResponse)
    system, user = request.parts
    assert isinstance(system, SystemPromptPart) and system.content == "Be brief."
    assert isinstance(user, UserPromptPart) and user.content[0] == "look"
    assert isinstance(user.content[1], BinaryContent) and user.content[1].data == PNG
    assert [p.part_kind for p in response.parts] == ["thinking", "text", "tool-call"]
    call = response.parts[2]
    assert isinstance(call, ToolCallPart) and call.args == {"q": "x"}
    found, failed = results.parts
    assert isinstance(found, ToolReturnPart) and found.tool_name == "lookup"
    assert found.outcome == "success" and found.tool_call_id == "c1"
    # Sent as a retry prompt, which Pydantic AI reads as a retried tool return.
    assert isinstance(failed, ToolReturnPart) and failed.tool_name == "lookup"
    assert failed.outcome == "retried" and failed.content == "again"
    assert isinstance(final, ModelResponse) and final.text == "Done."


def test_other_providers_items_are_dropped_with_a_warning() -> None:
    message = Message.assistant(
        ["ok", OpaqueBlock("openai_responses", {"type": "web_search_call"})]
    )
    with pytest.warns(DroppedContentWarning, match="openai_responses"):
        (response,) = to_pydantic_ai([message])
    assert [p.part_kind for p in response.parts] == ["text"]


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ("hi", "must be a list"),
        ([{"kind": "request"}], "message 0: expected a ModelRequest or a ModelResponse, got dict"),
    ],
)
def test_what_is_no_history_is_a_conversion_error(messages: object, match: str) -> None:
    with pytest.raises(ConversionError, match=match):
        from_pydantic_ai(messages)  # type: ignore[arg-type]


def test_to_pydantic_ai_takes_messages_only() -> None:
    with pytest.raises(ConversionError, match="message 0: expected a sqlmemory Message"):
        to_pydantic_ai(["hi"])  # type: ignore[list-item]
