"""An agent retrying from a checkpoint over a forked session, on every backend
(docs/branches.md): the OpenAI Agents SDK through ``SqlMemorySession`` (an
``AsyncSqlStorage``, and a ``SqlStorage`` run in threads), and LangChain through
``SqlMemoryChatHistory`` (``SqlStorage`` and ``AsyncSqlStorage``).

The models are scripted and offline. A run goes wrong in its second turn; the retry forks
the conversation at the last message of the first turn (the checkpoint) and runs the
second turn again over the forked id: the model is sent the first turn read back from the
fork, the failed attempt stays whole in the original session, and ``branches`` finds the
retry.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from langchain_core.messages import AIMessage, BaseMessage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from sqlmemory import AsyncSqlStorage, SqlStorage, Storage
from sqlmemory.integrations.openai_agents import SqlMemorySession
from tests.integration.test_langchain_history import _chain


@pytest.fixture(autouse=True, scope="module")
def _offline() -> Iterator[None]:
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


class Scripted(Model):
    """Answers each call with the next canned text; keeps each call's input."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any) -> Any:
        self.inputs.append(copy.deepcopy(input))
        words = self.answers.pop(0)
        content: list[Any] = [ResponseOutputText(type="output_text", text=words, annotations=[])]
        item = ResponseOutputMessage(
            id=f"msg_{len(self.inputs)}",
            type="message",
            role="assistant",
            status="completed",
            content=content,
        )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("these runs do not stream")


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_an_openai_agent_retries_its_second_turn_on_a_fork(
    async_storage: AsyncSqlStorage, engine: Any, kind: str
) -> None:
    storage: AsyncSqlStorage | SqlStorage = async_storage if kind == "async" else SqlStorage(engine)
    failing = Agent(name="guide", model=Scripted("Rome.", "I cannot help with that."))
    run = SqlMemorySession("run-1", storage)
    await Runner.run(failing, "Where is the Colosseum?", session=run)
    checkpoint = (await async_storage.load("run-1"))[-1].id  # the first turn's answer
    first_turn = await run.get_items()
    failed = await Runner.run(failing, "How old is it?", session=run)
    assert failed.final_output == "I cannot help with that."

    await async_storage.fork("run-1", "run-1/retry", at=checkpoint)
    model = Scripted("About 1,950 years.")
    retry = SqlMemorySession("run-1/retry", storage)
    again = await Runner.run(Agent(name="guide", model=model), "How old is it?", session=retry)

    assert again.final_output == "About 1,950 years."
    assert model.inputs[0] == [*first_turn, {"content": "How old is it?", "role": "user"}]
    retried = await retry.get_items()
    assert retried[:2] == first_turn and len(retried) == 4
    assert retried[-1]["content"][0]["text"] == "About 1,950 years."
    original = await run.get_items()
    assert original[:2] == first_turn and original[-1]["content"][0]["text"] == failed.final_output
    assert [b.session_id for b in await async_storage.branches("run-1")] == ["run-1/retry"]


@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
def test_a_langchain_chain_retries_its_second_turn_on_a_fork(storage: Storage) -> None:
    seen: list[list[BaseMessage]] = []
    replies = [AIMessage("Paris."), AIMessage("No idea."), AIMessage("About 2.1 million.")]
    chain = _chain(storage, replies, seen)
    chain.invoke({"question": "Capital of France?"}, {"configurable": {"session_id": "lc"}})
    checkpoint = storage.load("lc")[-1].id
    chain.invoke({"question": "Population?"}, {"configurable": {"session_id": "lc"}})

    storage.fork("lc", "lc/retry", at=checkpoint)
    answer = chain.invoke({"question": "Population?"}, {"configurable": {"session_id": "lc/retry"}})

    assert answer.content == "About 2.1 million."
    assert [m.content for m in seen[2]] == [
        "You are terse.",
        "Capital of France?",
        "Paris.",
        "Population?",
    ]
    texts = [m.text_content() for m in storage.load("lc/retry")]
    assert texts == ["Capital of France?", "Paris.", "Population?", "About 2.1 million."]
    assert [m.text_content() for m in storage.load("lc")][-1] == "No idea."
    assert storage.session_info("lc/retry").forked_at == checkpoint
