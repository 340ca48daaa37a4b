"""``SqlMemorySession.store_run_usage`` on every backend (docs/usage.md): after real
``Runner`` runs of a scripted model whose responses report usage, each response's counts
and its agent's model are on the stored message holding its output, once."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from agents import Agent, Runner
from agents.items import ModelResponse
from agents.usage import Usage as AgentsUsage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from sqlmemory import AsyncSqlStorage, SqlStorage, Usage
from sqlmemory.integrations.openai_agents import SqlMemorySession
from tests.integration.test_openai_agents_session import (
    ScriptedModel,
    Stores,
    _offline,  # noqa: F401 - the module's autouse fixture: no trace export
    call,
    multiply,
    text,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["async", "sync"])
def session_storage(
    request: pytest.FixtureRequest, async_storage: AsyncSqlStorage, engine: Any
) -> Stores:
    """The sessions' storage: the ``AsyncSqlStorage``, or a ``SqlStorage`` on the same
    database (its calls in worker threads)."""
    return async_storage if request.param == "async" else SqlStorage(engine)


class CountingModel(ScriptedModel):
    """A scripted model whose n-th response reports n * 100 input tokens and more."""

    model = "scripted-4o"

    async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any) -> Any:
        self.inputs.append(copy.deepcopy(input))
        n = len(self.inputs)
        usage = AgentsUsage(
            requests=1,
            input_tokens=100 * n,
            input_tokens_details=InputTokensDetails(cached_tokens=10 * n, cache_write_tokens=n),
            output_tokens=7 * n,
            output_tokens_details=OutputTokensDetails(reasoning_tokens=3 * n),
            total_tokens=107 * n,
        )
        return ModelResponse(output=self.turns.pop(0), usage=usage, response_id=None)


def counted(n: int) -> Usage:
    return Usage("scripted-4o", 100 * n, 7 * n, 10 * n, n, 3 * n)


async def test_each_response_lands_on_its_message_once(
    async_storage: AsyncSqlStorage, session_storage: Stores
) -> None:
    model = CountingModel(
        [[call("fc_1", "call_1", '{"a": 6, "b": 7}')], [text("msg_1", "6 x 7 = 42.")]]
    )
    agent = Agent(name="calculator", model=model, tools=[multiply])
    session = SqlMemorySession("usage-1", session_storage)
    result = await Runner.run(agent, "What is 6 x 7?", session=session)
    items_before = await session.get_items()

    assert await session.store_run_usage(result) == 2
    stored = await async_storage.load("usage-1")
    assert [m.usage for m in stored] == [None, counted(1), None, counted(2)]
    assert await session.get_items() == items_before  # the items sent back are unchanged

    assert await session.store_run_usage(result) == 2  # again: nothing changes
    assert await async_storage.load("usage-1") == stored
    report = await async_storage.usage("usage-1")
    assert report.messages == 2 and report.total == Usage(None, 300, 21, 30, 3, 9)
    assert dict(report.by_model) == {"scripted-4o": counted(1) + counted(2)}


async def test_responses_whose_items_are_no_longer_stored_are_not_counted(
    async_storage: AsyncSqlStorage, session_storage: Stores
) -> None:
    model = CountingModel([[text("msg_1", "Hi.")]])
    agent = Agent(name="greeter", model=model)
    session = SqlMemorySession("usage-2", session_storage)
    result = await Runner.run(agent, "Hello", session=session)
    await session.clear_session()
    assert await session.store_run_usage(result) == 0
    assert await async_storage.load("usage-2") == []


async def test_an_in_memory_storage_stores_usage_under_its_lock() -> None:
    from sqlmemory import InMemoryStorage
    from tests.support.agents_workers import response

    storage = InMemoryStorage()
    session = SqlMemorySession("in-memory", storage)
    assert await session.store_run_usage(_result_of("fc_x-000", 5)) == 0
    assert storage.session_info("in-memory") is None  # a missing session stays absent
    await session.add_items(response("x", 0))  # type: ignore[arg-type]
    assert await session.store_run_usage(_result_of("fc_x-000", 5)) == 1
    assert [m.usage for m in storage.load("in-memory")] == [None, Usage(None, 5, 1)]


def _result_of(item_id: str, tokens: int) -> Any:
    from types import SimpleNamespace

    usage = AgentsUsage(input_tokens=tokens, output_tokens=1)
    response = SimpleNamespace(output=[{"id": item_id}], usage=usage)
    return SimpleNamespace(raw_responses=[response], new_items=[])
