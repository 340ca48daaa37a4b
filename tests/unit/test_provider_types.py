"""The strict request checker the provider-format tests rely on catches what pydantic lets by."""

from __future__ import annotations

from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam

from tests.support.provider_types import problems

CHAT = list[ChatCompletionMessageParam]
ANTHROPIC = list[MessageParam]


def test_a_valid_request_has_no_problem() -> None:
    chat = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "6 x 7?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "mul", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    assert problems(chat, CHAT) == []
    responses = [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
        {"type": "function_call", "call_id": "c1", "name": "mul", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
    ]
    assert problems(responses, ResponseInputParam) == []


def test_a_key_the_typeddict_does_not_define_is_a_problem_at_any_depth() -> None:
    assert problems([{"role": "user", "content": "hi", "name": "x", "bogus": 1}], CHAT) == [
        "$[0].bogus: not a field of ChatCompletionUserMessageParam"
    ]
    source = {"type": "base64", "media_type": "image/png", "data": "AA==", "url": "x"}
    image = [{"role": "user", "content": [{"type": "image", "source": source}]}]
    found = problems(image, ANTHROPIC)
    assert found == ["$[0].content[0].source.url: not a field of Base64ImageSourceParam"]


def test_lazily_validated_iterables_are_checked_too() -> None:
    bad_part = [{"role": "user", "content": [{"type": "video", "text": "x"}]}]
    (problem,) = problems(bad_part, CHAT)
    assert problem.startswith("$: ") and "literal_error" in problem
    missing = [{"role": "user", "content": [{"type": "tool_result"}]}]
    assert problems(missing, ANTHROPIC) != []
