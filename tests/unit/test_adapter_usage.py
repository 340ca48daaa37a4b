"""The framework adapters carry usage both ways (docs/usage.md): LangChain's
``usage_metadata`` and ``response_metadata["model_name"]``, Pydantic AI's
``ModelResponse.usage`` and ``model_name``."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart
from pydantic_ai.usage import RequestUsage

from sqlmemory import InMemoryStorage, Message, Usage
from sqlmemory.integrations.langchain import from_langchain, to_langchain
from sqlmemory.integrations.pydantic_ai import from_pydantic_ai, to_pydantic_ai

LC_USAGE = {
    "input_tokens": 1350,
    "output_tokens": 240,
    "total_tokens": 1590,
    "input_token_details": {"cache_read": 1024, "cache_creation": 200, "audio": 0},
    "output_token_details": {"reasoning": 192, "audio": 0},
}


def test_langchain_usage_metadata_and_model_name_are_read() -> None:
    reply = AIMessage(
        "Hi.",
        usage_metadata=LC_USAGE,  # type: ignore[arg-type]
        response_metadata={"model_name": "gpt-4o-2024-08-06", "finish_reason": "stop"},
    )
    (message,) = from_langchain([reply])
    assert message.usage == Usage("gpt-4o-2024-08-06", 1350, 240, 1024, 200, 192)
    assert to_langchain([message]) == [reply]  # read from LangChain: back exactly
    bare = AIMessage(
        "Hi.", usage_metadata={"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
    )
    assert from_langchain([bare])[0].usage == Usage(None, 3, 1)
    assert from_langchain([HumanMessage("Hi"), AIMessage("No usage.")])[1].usage is None


def test_usage_from_elsewhere_is_written_as_langchains() -> None:
    usage = Usage("claude-sonnet-4-5", 21, 393, 5, 188086, 0)
    (back,) = to_langchain([Message.assistant("Done.", usage=usage)])
    assert isinstance(back, AIMessage)
    assert back.usage_metadata == {
        "input_tokens": 21,
        "output_tokens": 393,
        "total_tokens": 414,
        "input_token_details": {"cache_read": 5, "cache_creation": 188086},
    }
    assert back.response_metadata["model_name"] == "claude-sonnet-4-5"
    assert from_langchain([back])[0].usage == usage


def test_pydantic_ai_usage_and_model_name_are_read_and_kept() -> None:
    response = ModelResponse(
        [TextPart("Hello.")],
        usage=RequestUsage(
            input_tokens=52,
            output_tokens=9,
            cache_read_tokens=40,
            cache_write_tokens=2,
            details={"reasoning_tokens": 4},
        ),
        model_name="gpt-4o-mini",
    )
    history = [ModelRequest.user_text_prompt("Hi!"), response]
    messages = from_pydantic_ai(history)
    assert messages[1].usage == Usage("gpt-4o-mini", 52, 9, 40, 2, 4)
    assert to_pydantic_ai(messages) == history
    storage = InMemoryStorage()
    storage.append("s", *messages)
    assert storage.usage("s").by_model["gpt-4o-mini"].cache_read_tokens == 40


def test_pydantic_ai_gets_usage_from_elsewhere_and_none_from_nothing() -> None:
    usage = Usage("o3", 10, 20, 3, 0, 15)
    history = to_pydantic_ai([Message.user("q"), Message.assistant("a", usage=usage)])
    response = history[1]
    assert isinstance(response, ModelResponse)
    assert response.model_name == "o3"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 20)
    assert response.usage.cache_read_tokens == 3
    assert from_pydantic_ai(history)[1].usage == usage
    plain = [ModelRequest.user_text_prompt("Hi!"), ModelResponse([TextPart("Hello.")])]
    assert from_pydantic_ai(plain)[1].usage is None
