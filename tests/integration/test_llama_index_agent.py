"""LlamaIndex end to end on every backend: a ``FunctionAgent`` with a tool, two turns.

The LLM is LlamaIndex's offline ``MockFunctionCallingLLM`` answering from a script (a tool
call, then the answer) and keeping what each call was sent. The agent's memory is a
``ChatMemoryBuffer`` over :class:`SqlMemoryChatStore` or a ``Memory`` over
:class:`SqlMemoryDBChatStore`, each over the ``AsyncSqlStorage`` and over a ``SqlStorage``
(the async calls then run in worker threads); the second turn runs with a fresh memory
object, so what it sends the model was read back from the database.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer, Memory

from sqlmemory import AsyncSqlStorage, SqlStorage
from sqlmemory.integrations.llama_index import SqlMemoryChatStore, SqlMemoryDBChatStore

pytestmark = pytest.mark.anyio
SID = "agent-1"


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def scripted(sent: list[list[ChatMessage]]) -> MockFunctionCallingLLM:
    """A function-calling LLM: each turn a call of ``multiply``, then the product."""
    turn = iter([(6, 7), (6, 8)])

    def reply(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        sent.append(list(messages))
        last = messages[-1]
        if last.role.value == "tool":
            return ChatMessage(role="assistant", content=f"It is {last.content}.")
        a, b = next(turn)
        call = ToolCallBlock(
            tool_call_id=f"c{b}", tool_name="multiply", tool_kwargs={"a": a, "b": b}
        )
        return ChatMessage(role="assistant", blocks=[call])

    return MockFunctionCallingLLM(response_generator=reply)


@pytest.fixture(params=["async", "sync"])
def any_storage(
    request: pytest.FixtureRequest, async_storage: AsyncSqlStorage, engine: sa.Engine
) -> AsyncSqlStorage | SqlStorage:
    """The storage under the store: the async one, or a sync one over the same tables."""
    return async_storage if request.param == "async" else SqlStorage(engine)


def buffer(storage: Any) -> ChatMemoryBuffer:
    return ChatMemoryBuffer.from_defaults(
        chat_store=SqlMemoryChatStore(storage), chat_store_key=SID
    )


def memory(storage: Any) -> Memory:
    return Memory.from_defaults(session_id=SID, chat_store=SqlMemoryDBChatStore(storage))


@pytest.mark.parametrize("make", [buffer, memory], ids=["ChatMemoryBuffer", "Memory"])
async def test_two_turns_with_a_tool_keep_the_conversation_in_sql(
    any_storage: AsyncSqlStorage | SqlStorage, make: Callable[[Any], Any]
) -> None:
    sent: list[list[ChatMessage]] = []
    agent = FunctionAgent(tools=[multiply], llm=scripted(sent))

    first = await agent.run("6 x 7?", memory=make(any_storage))
    second = await agent.run("6 x 8?", memory=make(any_storage))

    assert (str(first), str(second)) == ("It is 42.", "It is 48.")
    # The second turn's first call was sent the whole first turn, read back from SQL.
    roles = [m.role.value for m in sent[2] if m.role.value != "system"]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert [m.content for m in sent[2]][-2:] == ["It is 42.", "6 x 8?"]
    call = next(b for b in sent[2][1].blocks if isinstance(b, ToolCallBlock))
    assert (call.tool_call_id, call.tool_kwargs) == ("c7", {"a": 6, "b": 7})
    # Stored as sqlmemory messages: the call and its result are one group.
    load = any_storage.load(SID)
    stored = await load if not isinstance(load, list) else load
    assert [m.role.value for m in stored] == ["user", "assistant", "tool", "assistant"] * 2
    assert stored[1].tool_calls[0].arguments == {"a": 6, "b": 7}
    assert (stored[2].tool_call_id, stored[2].text_content()) == ("c7", "42")
