"""Google ADK's ``Runner`` over ``SqlMemorySessionService``, offline, on every backend.

The model is a ``BaseLlm`` answering from a list and keeping every request, so a test
sees what the runner read back from the service: two turns with a function tool, the
second one sent the whole first turn (call, result, answer), and every event read back
dumping exactly as the runner yielded it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types
from pydantic import PrivateAttr

from sqlmemory import AsyncSqlStorage, Role
from sqlmemory.integrations.adk import SqlMemorySessionService

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::UserWarning"),  # ADK's experimental-feature notes
]


class ScriptedLlm(BaseLlm):
    """Answers each request with the next response of its script; keeps the requests."""

    model: str = "scripted"
    _script: list[LlmResponse] = PrivateAttr(default_factory=list)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._requests.append(llm_request.model_copy(deep=True))
        yield self._script.pop(0)


def call(b: int) -> LlmResponse:
    function_call = types.FunctionCall(name="multiply", args={"a": 6, "b": b})
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(function_call=function_call)]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=10 + b, candidates_token_count=3, total_token_count=13 + b
        ),
    )


def text(words: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=words)]))


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def user(words: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=words)])


@pytest.mark.parametrize("scope", ["unscoped", "owned"])
async def test_two_turns_with_a_tool(async_storage: AsyncSqlStorage, scope: str) -> None:
    storage = async_storage if scope == "unscoped" else async_storage.owned_by("tenant")
    model = ScriptedLlm()
    model._script = [call(7), text("42"), call(8), text("48")]
    agent = LlmAgent(name="calc", model=model, tools=[multiply], instruction="Use the tool.")
    service = SqlMemorySessionService(storage)
    runner = Runner(app_name="calc", agent=agent, session_service=service)
    session = await service.create_session(app_name="calc", user_id="u1", state={"user:n": 1})
    yielded = []
    for question in ("6 x 7?", "6 x 8?"):
        async for event in runner.run_async(
            user_id="u1", session_id=session.id, new_message=user(question)
        ):
            yielded.append(event)
    assert [e.content.parts[0].text for e in yielded if e.is_final_response()] == ["42", "48"]

    stored = await service.get_session(app_name="calc", user_id="u1", session_id=session.id)
    agent_events = [e for e in stored.events if e.author != "user"]
    assert [e.model_dump() for e in agent_events] == [e.model_dump() for e in yielded]
    assert [e.author for e in stored.events] == ["user", "calc", "calc", "calc"] * 2
    assert stored.state == {"user:n": 1}
    # The second turn's first request holds the first turn whole, then the question.
    second = model._requests[2].contents
    assert [c.role for c in second] == ["user", "model", "user", "model", "user"]
    assert second[1].parts[0].function_call.args == {"a": 6, "b": 7}
    assert second[2].parts[0].function_response.response == {"result": 42}
    assert second[4].parts[0].text == "6 x 8?"
    # As sqlmemory keeps it: each call with its result, usage kept in extras.
    messages = await storage.load(f"calc/u1/{session.id}")
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT] * 2
    assert messages[2].tool_call_id == messages[1].tool_calls[0].id
    usage = messages[1].extras["adk"]["event"]["usage_metadata"]
    assert usage["total_token_count"] == 20
    owner = "tenant" if scope == "owned" else "calc/u1"
    assert (await async_storage.session_info(f"calc/u1/{session.id}")).owner == owner
    tail = await service.get_session(
        app_name="calc", user_id="u1", session_id=session.id, config=_config(2)
    )
    assert [e.model_dump() for e in tail.events] == [e.model_dump() for e in yielded[-2:]]


def _config(n: int) -> Any:
    from google.adk.sessions.base_session_service import GetSessionConfig

    return GetSessionConfig(num_recent_events=n)
