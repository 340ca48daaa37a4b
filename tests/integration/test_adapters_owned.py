"""Owned views under every framework adapter, on every backend (docs/many-users.md).

Each adapter is given ``storage.owned_by(user)``: two users of one session id never see
each other's items; the second user's first write raises ``SessionOwnerError`` and
stores nothing; their reads, pops and clears find an empty conversation and leave the
first user's as it was; and the adapter's own API keeps working for the owner. The
OpenAI Agents session runs over the async and the sync storage; LangChain's history and
the Pydantic AI converters over the ``storage`` fixture (``SqlStorage`` and
``AsyncSqlStorage``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from agents import Runner, set_tracing_disabled
from langchain_core.messages import AIMessage, HumanMessage
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sqlmemory import AsyncSqlStorage, FixedWindow, SessionOwnerError, SqlStorage, Storage
from sqlmemory.integrations.langchain import SqlMemoryChatHistory
from sqlmemory.integrations.openai_agents import SqlMemorySession
from sqlmemory.integrations.pydantic_ai import from_pydantic_ai, to_pydantic_ai
from tests.integration.test_langchain_history import _chain
from tests.integration.test_openai_agents_session import scripted_agent
from tests.integration.test_pydantic_ai_agent import dump
from tests.integration.test_pydantic_ai_agent import scripted_agent as scripted_pydantic_agent
from tests.support.agents_workers import response
from tests.support.tables import snapshot

SID = "shared-id"


@pytest.fixture(autouse=True, scope="module")
def _offline() -> Iterator[None]:
    """No trace export: the agent runs are offline."""
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


# -- OpenAI Agents SDK -----------------------------------------------------------------------


@pytest.fixture(params=["async", "sync"])
def agents_storage(
    request: pytest.FixtureRequest, async_storage: AsyncSqlStorage, engine: sa.Engine
) -> AsyncSqlStorage | SqlStorage:
    """The storage whose owned views the sessions get: async, or sync in worker threads."""
    return async_storage if request.param == "async" else SqlStorage(engine)


@pytest.mark.anyio
async def test_agents_sessions_of_two_users_with_one_id_stay_apart(
    agents_storage: AsyncSqlStorage | SqlStorage, engine: sa.Engine
) -> None:
    alice = SqlMemorySession(SID, agents_storage.owned_by("alice"))
    bob = SqlMemorySession(SID, agents_storage.owned_by("bob"))
    first, second = response("alice", 0), response("alice", 1)
    await alice.add_items(first)  # type: ignore[arg-type]
    await alice.add_items(second)  # type: ignore[arg-type]
    with engine.connect() as conn:
        before = snapshot(conn)

    # Bob sees nothing, cannot write, and his pops and clears leave Alice's items.
    assert await bob.get_items() == []
    assert await bob.get_items(limit=2) == []
    with pytest.raises(SessionOwnerError):
        await bob.add_items([{"role": "user", "content": "is this mine?"}])
    assert await bob.pop_item() is None
    await bob.clear_session()
    with engine.connect() as conn:
        assert snapshot(conn) == before
    # A run of Bob's agent on the id fails on the session's first write, having read
    # nothing of Alice's.
    agent, model = scripted_agent()
    with pytest.raises(SessionOwnerError):
        await Runner.run(agent, "What is 6 x 7?", session=bob)
    assert model.inputs == []
    with engine.connect() as conn:
        assert snapshot(conn) == before

    # Alice's session works as ever: get, a limited get, pop (the outputs of one
    # response split, the others stored back), clear.
    assert await alice.get_items() == [*first, *second]
    assert await alice.get_items(limit=2) == second[1:]
    assert await alice.pop_item() == second[-1]
    assert await alice.get_items() == [*first, *second[:-1]]
    await alice.clear_session()
    assert await alice.get_items() == []
    # The id is free again: Bob's run takes it, and now Alice is the one refused.
    result = await Runner.run(agent, "What is 6 x 7?", session=bob)
    assert result.final_output == "6 x 7 = 42."
    assert len(await bob.get_items()) == 5
    with pytest.raises(SessionOwnerError):
        await alice.add_items(first)  # type: ignore[arg-type]
    assert await alice.get_items() == []


# -- LangChain -------------------------------------------------------------------------------

# LangChain deprecates RunnableWithMessageHistory for LangGraph; code that uses it is who
# SqlMemoryChatHistory is for.
langchain_warnings = pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")


@langchain_warnings
def test_langchain_histories_of_two_users_with_one_id_stay_apart(
    storage: Storage, engine: sa.Engine, caplog: pytest.LogCaptureFixture
) -> None:
    alice = SqlMemoryChatHistory(SID, storage.owned_by("alice"))
    bob = SqlMemoryChatHistory(SID, storage.owned_by("bob"))
    alice.add_messages([HumanMessage("Capital of France?"), AIMessage("Paris.")])
    with engine.connect() as conn:
        before = snapshot(conn)

    assert bob.messages == []
    assert SqlMemoryChatHistory(SID, storage.owned_by("bob"), policy=FixedWindow(2)).messages == []
    with pytest.raises(SessionOwnerError):
        bob.add_messages([HumanMessage("is this mine?")])
    bob.clear()
    # Through RunnableWithMessageHistory, the model is sent none of Alice's history, and
    # the turn is not stored: LangChain writes it in an end-of-run callback whose errors
    # it logs instead of raising (docs/integrations/langchain.md, "Many users").
    seen: list[list[Any]] = []
    chain = _chain(storage.owned_by("bob"), [AIMessage("Rome.")], seen)
    with caplog.at_level(logging.WARNING, logger="langchain_core.callbacks.manager"):
        answer = chain.invoke(
            {"question": "Capital of Italy?"}, config={"configurable": {"session_id": SID}}
        )
    assert answer.content == "Rome."
    assert [m.content for m in seen[0]] == ["You are terse.", "Capital of Italy?"]
    assert "SessionOwnerError" in caplog.text
    with engine.connect() as conn:
        assert snapshot(conn) == before

    # Alice's history works as ever: add, read (a window too), clear.
    chain = _chain(storage.owned_by("alice"), [AIMessage("About 2.1 million.")], seen)
    chain.invoke({"question": "Population?"}, config={"configurable": {"session_id": SID}})
    assert [m.content for m in seen[-1]][1:3] == ["Capital of France?", "Paris."]
    assert [m.content for m in alice.messages] == [
        "Capital of France?",
        "Paris.",
        "Population?",
        "About 2.1 million.",
    ]
    window = SqlMemoryChatHistory(SID, storage.owned_by("alice"), policy=FixedWindow(2))
    assert [m.content for m in window.messages] == ["Population?", "About 2.1 million."]
    alice.clear()
    assert alice.messages == []
    bob.add_messages([HumanMessage("mine now")])
    assert [m.content for m in bob.messages] == ["mine now"]
    with pytest.raises(SessionOwnerError):
        alice.add_messages([HumanMessage("and mine?")])


# -- Pydantic AI -----------------------------------------------------------------------------


def test_pydantic_ai_histories_of_two_users_with_one_id_stay_apart(
    storage: Storage, engine: sa.Engine
) -> None:
    alice, bob = storage.owned_by("alice"), storage.owned_by("bob")
    seen: list[Any] = []
    agent = scripted_pydantic_agent(seen)
    first = agent.run_sync("6 x 7?", message_history=to_pydantic_ai(alice.load(SID)))
    alice.append(SID, *from_pydantic_ai(first.new_messages()))
    with engine.connect() as conn:
        before = snapshot(conn)

    # Bob's history of the id is empty, whole or windowed: his agent starts afresh, and
    # storing its run fails.
    assert to_pydantic_ai(bob.load(SID)) == []
    assert bob.load(SID, FixedWindow(20, keep_system=True)) == []
    theirs = agent.run_sync("6 x 8?", message_history=to_pydantic_ai(bob.load(SID)))
    assert theirs.output == "It is 48." and len(theirs.all_messages()) == 4
    with pytest.raises(SessionOwnerError):
        bob.append(SID, *from_pydantic_ai(theirs.new_messages()))
    assert (bob.pop(SID), bob.evict(SID, 0), bob.clear(SID)) == (None, 0, 0)
    with engine.connect() as conn:
        assert snapshot(conn) == before

    # Alice's next run gets her first run back, exactly.
    history = to_pydantic_ai(alice.load(SID, FixedWindow(20, keep_system=True)))
    assert dump(history) == dump(first.all_messages())
    second = agent.run_sync("6 x 9?", message_history=history)
    alice.append(SID, *from_pydantic_ai(second.new_messages()))
    assert second.output == "It is 54."
    assert dump(to_pydantic_ai(alice.load(SID))) == dump(second.all_messages())
    assert ModelMessagesTypeAdapter.validate_json(dump(to_pydantic_ai(alice.load(SID))))
    assert alice.clear(SID) == len(from_pydantic_ai(second.all_messages()))
    assert alice.load(SID) == []


def test_the_langchain_history_takes_an_owned_view_of_a_sync_storage_only(
    async_storage: AsyncSqlStorage, engine: sa.Engine
) -> None:
    # LangChain's history is sync: an owned view of the async storage is refused as the
    # async storage is, with the same TypeError; the view of a sync one is taken.
    with pytest.raises(TypeError, match="sync sqlmemory storage"):
        SqlMemoryChatHistory(SID, async_storage.owned_by("alice"))  # type: ignore[arg-type]
    history = SqlMemoryChatHistory(SID, SqlStorage(engine).owned_by("alice"))
    history.add_messages([HumanMessage("hi")])
    assert [m.content for m in history.messages] == ["hi"]
