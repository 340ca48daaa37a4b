"""Each provider's whole replies read with their usage (docs/providers.md, docs/usage.md).

Every reply of ``corpus_usage`` is validated by the provider's SDK, read as a dict and as
the SDK's object, and its ``usage`` must be exactly the SDK's numbers; the writers never
send usage back, and a malformed usage is a ``ConversionError`` naming the field.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from sqlmemory import (
    ConversionError,
    Usage,
    from_anthropic,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
)
from tests.formats.corpus_usage import ANTHROPIC_MESSAGES, CHAT_COMPLETIONS, RESPONSES


def _or_zero(details: Any, name: str) -> int:
    return 0 if details is None else getattr(details, name) or 0


def chat_usage(completion: ChatCompletion) -> Usage:
    usage = completion.usage
    assert usage is not None
    return Usage(
        completion.model,
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cache_read_tokens=_or_zero(usage.prompt_tokens_details, "cached_tokens"),
        cache_write_tokens=_or_zero(usage.prompt_tokens_details, "cache_write_tokens"),
        reasoning_tokens=_or_zero(usage.completion_tokens_details, "reasoning_tokens"),
    )


@pytest.mark.parametrize("name", sorted(CHAT_COMPLETIONS))
def test_a_chat_completion_gives_its_message_with_the_sdks_numbers(name: str) -> None:
    body = CHAT_COMPLETIONS[name]
    completion = ChatCompletion.model_validate(body)
    want = chat_usage(completion)
    assert want.input_tokens > 0 and want.model == body["model"]
    from_dict, from_sdk = from_openai_chat([body]), from_openai_chat([completion])
    assert [m.usage for m in from_dict] == [m.usage for m in from_sdk] == [want]
    alone = from_openai_chat([body["choices"][0]["message"]])
    assert alone[0].usage is None
    assert to_openai_chat(from_dict) == to_openai_chat(alone)  # never the usage
    assert "usage" not in str(to_openai_chat(from_sdk))


def test_the_cached_and_reasoning_counts_of_a_completion() -> None:
    (message,) = from_openai_chat([CHAT_COMPLETIONS["cached and reasoning"]])
    assert message.usage == Usage("o3-mini-2025-01-31", 1117, 46, 1024, 64, 320)


def test_a_completion_of_several_choices_is_refused_naming_choices() -> None:
    body = copy.deepcopy(CHAT_COMPLETIONS["null details"])
    body["choices"].append({**body["choices"][0], "index": 1})
    with pytest.raises(ConversionError, match=r"item 1: choices: .*exactly one choice, not 2"):
        from_openai_chat([{"role": "user", "content": "Hi"}, body])
    body["choices"] = []
    with pytest.raises(ConversionError, match="choices"):
        from_openai_chat([body])


def response_usage(response: Response) -> Usage:
    usage = response.usage
    assert usage is not None
    return Usage(
        response.model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.input_tokens_details.cached_tokens,
        cache_write_tokens=usage.input_tokens_details.cache_write_tokens,
        reasoning_tokens=usage.output_tokens_details.reasoning_tokens,
    )


@pytest.mark.parametrize("name", sorted(RESPONSES))
def test_a_response_gives_its_output_with_the_sdks_numbers_on_the_last(name: str) -> None:
    body = RESPONSES[name]
    response = Response.model_validate(body)
    want = response_usage(response)
    for read in (from_openai_responses(body), from_openai_responses(response)):
        assert [m.usage for m in read] == [want]
        assert to_openai_responses(read) == to_openai_responses(
            from_openai_responses(body["output"])
        )
    assert from_openai_responses([response])[0].usage == want


def test_each_response_of_a_history_is_its_own_turn_counted_once() -> None:
    first, second = RESPONSES["function call"], RESPONSES["reasoning and text"]
    result = {"type": "function_call_output", "call_id": "call_x", "output": "22"}
    history = [{"role": "user", "content": "Hi"}, first, second, result, second]
    messages = from_openai_responses(history)
    assert [m.role.value for m in messages] == [
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
    ]
    usages = [m.usage for m in messages if m.usage is not None]
    assert len(usages) == 3
    assert sum(u.input_tokens for u in usages) == 291 + 2036 * 2


def anthropic_usage(message: AnthropicMessage) -> Usage:
    usage = message.usage
    return Usage(
        message.model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_input_tokens or 0,
        cache_write_tokens=usage.cache_creation_input_tokens or 0,
    )


@pytest.mark.parametrize("name", sorted(ANTHROPIC_MESSAGES))
def test_an_anthropic_response_gives_the_sdks_numbers(name: str) -> None:
    body = ANTHROPIC_MESSAGES[name]
    sdk = AnthropicMessage.model_validate(body)
    want = anthropic_usage(sdk)
    assert [m.usage for m in from_anthropic([body])] == [want]
    assert [m.usage for m in from_anthropic(sdk)] == [want]
    request = to_anthropic(from_anthropic([{"role": "user", "content": "Hi"}, body]))
    assert "usage" not in str(request) and "model" not in str(request)


def test_the_cache_counts_of_an_anthropic_response() -> None:
    (message,) = from_anthropic([ANTHROPIC_MESSAGES["cache read and write"]])
    assert message.usage == Usage("claude-sonnet-4-5-20250929", 21, 393, 0, 188086, 0)


BAD_USAGE = [
    ({"prompt_tokens": -1}, "usage.prompt_tokens"),
    ({"prompt_tokens": True}, "usage.prompt_tokens"),
    ({"prompt_tokens": 2**63}, "usage.prompt_tokens"),
    ({"prompt_tokens": "12"}, "usage.prompt_tokens"),
    ({"prompt_tokens_details": 3}, "usage.prompt_tokens_details"),
    (
        {"completion_tokens_details": {"reasoning_tokens": 1.5}},
        "usage.completion_tokens_details.reasoning_tokens",
    ),
]


@pytest.mark.parametrize(("usage", "field"), BAD_USAGE)
def test_a_malformed_usage_is_refused_naming_the_field(usage: dict[str, Any], field: str) -> None:
    body = {**CHAT_COMPLETIONS["null details"], "usage": usage}
    with pytest.raises(ConversionError, match=f"item 0: {re.escape(field)}"):
        from_openai_chat([body])
    bad_model = {**CHAT_COMPLETIONS["null details"], "model": ""}
    with pytest.raises(ConversionError, match="item 0: model"):
        from_openai_chat([bad_model])
    response = {**RESPONSES["function call"], "usage": {"input_tokens": -3}}
    with pytest.raises(ConversionError, match=r"usage\.input_tokens"):
        from_openai_responses(response)
    message = {**ANTHROPIC_MESSAGES["cached tool use"], "usage": {"output_tokens": "many"}}
    with pytest.raises(ConversionError, match=r"usage\.output_tokens"):
        from_anthropic([message])
