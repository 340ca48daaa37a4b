"""The strict request checker the provider-format tests rely on catches what pydantic lets by."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam

from tests.formats.anthropic_types import api_problems, turn_problems
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


def test_the_anthropic_checker_sees_unknown_keys_the_sdk_union_lets_by() -> None:
    """``MessageParam`` admits response models, which take any key: the strict one does not."""
    turns = [{"role": "user", "content": [{"type": "text", "text": "x", "bogus": 1}]}]
    assert problems(turns, ANTHROPIC) == []  # what the lax check alone would say
    assert api_problems({"messages": turns}) == [
        "$[0].content[0].bogus: not a field of TextBlockParam"
    ]


def _use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "f", "input": {}}


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}


ASK = {"role": "user", "content": "q"}
TURN_RULES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "the assistant first": ([{"role": "assistant", "content": "hi"}, ASK], "first turn"),
    "text before the results": (
        [
            ASK,
            {"role": "assistant", "content": [_use("c1")]},
            {"role": "user", "content": [{"type": "text", "text": "x"}, _result("c1")]},
        ],
        "after other content",
    ),
    "a call never answered": (
        [ASK, {"role": "assistant", "content": [_use("c1")]}],
        "never answered",
    ),
    "a call answered a turn late": (
        [
            ASK,
            {"role": "assistant", "content": [_use("c1")]},
            ASK,
            {"role": "assistant", "content": "wait"},
            {"role": "user", "content": [_result("c1")]},
        ],
        "the turn before called ['c1']",
    ),
    "a result without its call": ([{"role": "user", "content": [_result("c9")]}], "answers"),
    "one id called twice": (
        [
            ASK,
            {"role": "assistant", "content": [_use("c1")]},
            {"role": "user", "content": [_result("c1")]},
            {"role": "assistant", "content": [_use("c1")]},
            {"role": "user", "content": [_result("c1")]},
        ],
        "not unique",
    ),
    "blank text": ([{"role": "user", "content": " "}], "whitespace"),
}


@pytest.mark.parametrize("name", list(TURN_RULES))
def test_the_anthropic_turn_rules(name: str) -> None:
    turns, expected = TURN_RULES[name]
    found = turn_problems(turns)
    assert len(found) >= 1 and any(expected in problem for problem in found), found


def test_consecutive_turns_of_one_role_count_as_one() -> None:
    """The API combines them: results split over two user turns still answer the calls."""
    turns = [
        ASK,
        ASK,
        {"role": "assistant", "content": [_use("c1")]},
        {"role": "assistant", "content": [_use("c2")]},
        {"role": "user", "content": [_result("c2")]},
        {"role": "user", "content": [_result("c1"), {"type": "text", "text": "go on"}]},
        {"role": "system", "content": "Answer in French."},
    ]
    assert turn_problems(turns) == []
