"""Pydantic AI on every backend: an offline agent whose ``message_history`` lives in sqlmemory.

The model is Pydantic AI's ``FunctionModel``: it calls a tool on a new question, answers
once the tool returned, and records what it was sent, so the test sees the history the
model got on the second run. The ``storage`` fixture runs each test on ``SqlStorage`` and on
``AsyncSqlStorage``.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from sqlmemory import FixedWindow, Storage, groups
from sqlmemory.integrations.pydantic_ai import from_pydantic_ai, to_pydantic_ai


def dump(history: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(history)


def scripted_agent(seen: list[list[ModelMessage]]) -> Agent[None, str]:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"It is {last.content}.")])
        assert isinstance(last, UserPromptPart) and isinstance(last.content, str)
        a, b = (int(n) for n in last.content.rstrip("?").split(" x "))
        calls = sum(isinstance(p, ToolCallPart) for m in messages for p in m.parts)
        call_id = f"call-{calls + 1}"
        return ModelResponse(parts=[ToolCallPart("multiply", {"a": a, "b": b}, call_id)])

    agent = Agent(FunctionModel(reply, model_name="scripted"), system_prompt="Use the tool.")

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    return agent


def test_two_runs_with_the_history_in_sql(storage: Storage) -> None:
    seen: list[list[ModelMessage]] = []
    agent = scripted_agent(seen)

    first = agent.run_sync("6 x 7?", message_history=to_pydantic_ai(storage.load("pa-1")))
    storage.append("pa-1", *from_pydantic_ai(first.new_messages()))
    history = to_pydantic_ai(storage.load("pa-1"))
    assert dump(history) == dump(first.all_messages())

    second = agent.run_sync("6 x 8?", message_history=history)
    storage.append("pa-1", *from_pydantic_ai(second.new_messages()))

    assert (first.output, second.output) == ("It is 42.", "It is 48.")
    # The second run's first model call was sent the first run, as read from the database.
    assert dump(seen[2][: len(history)]) == dump(first.all_messages())
    # And the whole conversation reads back exactly as the agent holds it.
    assert dump(to_pydantic_ai(storage.load("pa-1"))) == dump(second.all_messages())
    stored = storage.load("pa-1")
    assert [m.role.value for m in stored] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert stored[2].tool_calls[0].id == "call-1" and stored[3].tool_call_id == "call-1"


def test_a_window_is_a_history_the_agent_accepts(storage: Storage) -> None:
    seen: list[list[ModelMessage]] = []
    agent = scripted_agent(seen)
    for question in ("6 x 7?", "6 x 8?"):
        result = agent.run_sync(question, message_history=to_pydantic_ai(storage.load("pa-2")))
        storage.append("pa-2", *from_pydantic_ai(result.new_messages()))

    window = storage.load("pa-2", FixedWindow(3, keep_system=True, start_on="user"))
    # The newest turn, whole: the system prompt, the question, the call with its result and
    # the answer.
    assert [m.role.value for m in window] == ["system", "user", "assistant", "tool", "assistant"]
    assert all(len(group) in (1, 2) for group in groups(window))
    third = agent.run_sync("6 x 9?", message_history=to_pydantic_ai(window))
    assert third.output == "It is 54."
    sent = seen[-2]
    calls = {p.tool_call_id for m in sent for p in m.parts if isinstance(p, ToolCallPart)}
    returns = {p.tool_call_id for m in sent for p in m.parts if isinstance(p, ToolReturnPart)}
    assert returns <= calls
