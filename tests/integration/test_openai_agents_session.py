"""The OpenAI Agents SDK on every backend: ``SqlMemorySession`` under real ``Runner`` runs.

The model is scripted and offline: an implementation of the SDK's ``Model`` interface that
returns canned Responses output items and records the input of every call, so a test sees
what the runner read back from the session. The second half checks the behaviours the
SDK's own session tests check of its ``SQLiteSession`` (``tests/memory/test_session.py``
and ``test_session_limit.py`` in the SDK's repository), on sqlmemory.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.memory import Session, SessionSettings
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)

from sqlmemory import AsyncSqlStorage, Role, SqlStorage
from sqlmemory.integrations.openai_agents import SqlMemorySession

pytestmark = pytest.mark.anyio

Stores = AsyncSqlStorage | SqlStorage


@pytest.fixture(autouse=True, scope="module")
def _offline() -> Iterator[None]:
    """No trace export: the runs are offline."""
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


@pytest.fixture(params=["async", "sync"])
def session_storage(
    request: pytest.FixtureRequest, async_storage: AsyncSqlStorage, engine: Any
) -> Stores:
    """The storage of the sessions under test: the ``AsyncSqlStorage``, or a ``SqlStorage``
    on the same database, whose calls the session runs in worker threads. Assertions read
    through ``async_storage`` either way."""
    return async_storage if request.param == "async" else SqlStorage(engine)


class ScriptedModel(Model):
    """Returns the next canned output on each call; keeps each call's input."""

    def __init__(self, turns: list[list[Any]]) -> None:
        self.turns = list(turns)
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.inputs.append(copy.deepcopy(input))
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    async def stream_response(  # type: ignore[override]
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        response = await self.get_response(system_instructions, input)
        yield ResponseCompletedEvent(
            type="response.completed",
            sequence_number=0,
            response=Response(
                id="resp_1",
                created_at=0,
                model="scripted",
                object="response",
                output=response.output,
                tool_choice="auto",
                tools=[],
                parallel_tool_calls=False,
            ),
        )


def text(item_id: str, words: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id,
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=words, annotations=[])],
    )


def call(item_id: str, call_id: str, arguments: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=item_id,
        type="function_call",
        call_id=call_id,
        name="multiply",
        arguments=arguments,
        status="completed",
    )


@function_tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def scripted_agent() -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(
        [
            [
                ResponseReasoningItem(id="rs_1", type="reasoning", summary=[]),
                call("fc_1", "call_1", '{"a": 6, "b": 7}'),
            ],
            [text("msg_1", "6 x 7 = 42.")],
            [call("fc_2", "call_2", '{"a":6,"b":8}')],
            [text("msg_2", "6 x 8 = 48.")],
        ]
    )
    return Agent(name="calculator", model=model, tools=[multiply]), model


@pytest.mark.parametrize("method", ["run", "run_streamed"])
async def test_two_turns_with_a_tool_call(
    async_storage: AsyncSqlStorage, session_storage: Stores, method: str
) -> None:
    agent, model = scripted_agent()
    session = SqlMemorySession("agents-1", session_storage)

    async def run(question: str) -> Any:
        if method == "run":
            return await Runner.run(agent, question, session=session)
        streamed = Runner.run_streamed(agent, question, session=session)
        async for _ in streamed.stream_events():
            pass
        return streamed

    first = await run("What is 6 x 7?")
    after_first = await session.get_items()
    second = await run("And 6 x 8?")

    assert (first.final_output, second.final_output) == ("6 x 7 = 42.", "6 x 8 = 48.")
    # The second turn's first model call got the first turn back from the database.
    assert model.inputs[2] == [*after_first, {"content": "And 6 x 8?", "role": "user"}]
    assert [item.get("type") for item in after_first] == [
        None,  # the user's message, as the runner wrote it
        "reasoning",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert after_first[2]["arguments"] == '{"a": 6, "b": 7}'  # byte for byte
    everything = await session.get_items()
    assert everything[:5] == after_first and len(everything) == 9
    assert model.inputs[3] == everything[:8]

    stored = await async_storage.load("agents-1")
    assert [m.role for m in stored] == [
        Role.USER,
        Role.ASSISTANT,  # the reasoning with the call it led to, one message
        Role.TOOL,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    assert [b.kind for b in stored[1].content] == ["thinking", "tool_call"]
    assert stored[2].tool_call_id == "call_1" and stored[2].text_content() == "42"


async def test_a_limited_read_reads_the_tail(session_storage: Stores) -> None:
    agent, model = scripted_agent()
    session = SqlMemorySession(
        "agents-2", session_storage, session_settings=SessionSettings(limit=3)
    )
    await Runner.run(agent, "What is 6 x 7?", session=session)
    await Runner.run(agent, "And 6 x 8?", session=session)
    # The runner read the newest 3 items (the SDK puts back the call a read output answers).
    sent = model.inputs[2]
    assert [i.get("type") for i in sent[-3:]] == ["function_call_output", "message", None]
    calls = {i["call_id"] for i in sent if i.get("type") == "function_call"}
    assert {i["call_id"] for i in sent if i.get("type") == "function_call_output"} <= calls
    everything = await session.get_items(limit=100)
    assert await session.get_items() == everything[-3:]


# -- what the SDK's own session tests check --------------------------------------------------


def chat(n: int) -> list[Any]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Message {i}"} for i in range(n)
    ]


async def test_it_is_an_sdk_session(session_storage: Stores) -> None:
    session = SqlMemorySession("s", session_storage)
    assert isinstance(session, Session)
    assert session.session_id == "s"
    assert isinstance(session.session_settings, SessionSettings)
    assert session.session_settings.limit is None


async def test_add_get_clear(session_storage: Stores) -> None:
    session = SqlMemorySession("direct", session_storage)
    items = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there!"}]
    await session.add_items(items)  # type: ignore[arg-type]
    assert await session.get_items() == items
    await session.add_items([])
    assert await session.get_items() == items
    await session.clear_session()
    assert await session.get_items() == []


async def test_pop_item_takes_the_newest_until_empty(session_storage: Stores) -> None:
    session = SqlMemorySession("pop", session_storage)
    assert await session.pop_item() is None
    items = chat(3)
    await session.add_items(items)
    assert await session.pop_item() == items[2]
    assert await session.get_items() == items[:2]
    assert await session.pop_item() == items[1]
    assert await session.pop_item() == items[0]
    assert await session.pop_item() is None
    assert await session.get_items() == []


async def test_pop_item_splits_the_outputs_of_one_response(
    async_storage: AsyncSqlStorage, session_storage: Stores
) -> None:
    session = SqlMemorySession("pop-split", session_storage)
    outputs = [
        {"role": "user", "content": "Go"},
        {"id": "rs_1", "summary": [], "type": "reasoning"},
        {"arguments": "{}", "call_id": "c1", "name": "f", "type": "function_call", "id": "fc_1"},
        {"arguments": "{}", "call_id": "c2", "name": "f", "type": "function_call", "id": "fc_2"},
    ]
    await session.add_items(outputs)  # type: ignore[arg-type]
    assert await async_storage.count("pop-split") == 2  # the user, and one response
    assert await session.pop_item() == outputs[3]
    assert await session.get_items() == outputs[:3]
    assert await session.pop_item() == outputs[2]
    assert await session.get_items() == outputs[:2]


async def test_pop_item_stores_the_other_outputs_back_in_the_same_transaction(
    async_storage: AsyncSqlStorage,
    session_storage: Stores,
) -> None:
    session = SqlMemorySession("pop-atomic", session_storage)
    outputs = [
        {"role": "user", "content": "Go"},
        {"id": "rs_1", "summary": [], "type": "reasoning"},
        {"arguments": "{}", "call_id": "c1", "name": "f", "type": "function_call", "id": "fc_1"},
    ]
    await session.add_items(outputs)  # type: ignore[arg-type]
    stored = await async_storage.load("pop-atomic")

    def fails(message: Any) -> list[Any]:
        raise RuntimeError("after the newest message was deleted")

    # The delete and the re-append are one transaction: a failure between them (here in
    # the split itself) leaves the history whole, where two calls would have lost it.
    with pytest.raises(RuntimeError):
        await async_storage._pop_keeping("pop-atomic", fails)
    assert await async_storage.load("pop-atomic") == stored

    assert await session.pop_item() == outputs[2]
    after = await async_storage.load("pop-atomic")
    assert [m.id for m in after[:1]] == [stored[0].id]  # the user message is untouched
    assert len(after) == 2 and await session.get_items() == outputs[:2]
    record = await async_storage.session_info("pop-atomic")
    assert record is not None and record.message_count == 2


async def test_sessions_are_apart(session_storage: Stores) -> None:
    one = SqlMemorySession("session_1", session_storage)
    two = SqlMemorySession("session_2", session_storage)
    await one.add_items([{"role": "user", "content": "Session 1 message"}])
    await two.add_items(
        [
            {"role": "user", "content": "Session 2 message 1"},
            {"role": "user", "content": "Session 2 message 2"},
        ]
    )
    assert (await two.pop_item() or {}).get("content") == "Session 2 message 2"
    assert [i.get("content") for i in await one.get_items()] == ["Session 1 message"]
    assert [i.get("content") for i in await two.get_items()] == ["Session 2 message 1"]


@pytest.mark.parametrize(("limit", "expected"), [(2, 4), (4, 2), (10, 0), (6, 0), (1, 5)])
async def test_get_items_limit_is_the_newest_items(
    session_storage: Stores, limit: int, expected: int
) -> None:
    session = SqlMemorySession("limit", session_storage)
    items = chat(6)
    await session.add_items(items)
    assert await session.get_items(limit=limit) == items[expected:]


@pytest.mark.parametrize("limit", [0, -1])
async def test_a_limit_below_one_reads_nothing(session_storage: Stores, limit: int) -> None:
    session = SqlMemorySession("none", session_storage)
    await session.add_items(chat(2))
    assert await session.get_items(limit=limit) == []


async def test_session_settings_limit_is_the_default(session_storage: Stores) -> None:
    items = chat(10)
    session = SqlMemorySession(
        "settings", session_storage, session_settings=SessionSettings(limit=3)
    )
    await session.add_items(items)
    assert await session.get_items() == items[-3:]
    assert await session.get_items(limit=2) == items[-2:]  # an explicit limit wins
    from_dict = SqlMemorySession("settings", session_storage, session_settings={"limit": 5})
    assert from_dict.session_settings is not None and from_dict.session_settings.limit == 5
    assert await from_dict.get_items() == items[-5:]


async def test_run_config_settings_override_the_sessions(session_storage: Stores) -> None:
    session = SqlMemorySession(
        "override", session_storage, session_settings=SessionSettings(limit=100)
    )
    await session.add_items([{"role": "user", "content": f"Turn {i}"} for i in range(10)])
    model = ScriptedModel([[text("msg_1", "Got it")]])
    agent = Agent(name="test", model=model)
    config = RunConfig(session_settings=SessionSettings(limit=2))
    await Runner.run(agent, "New question", session=session, run_config=config)
    assert [i.get("content") for i in model.inputs[0]] == ["Turn 8", "Turn 9", "New question"]


async def test_text_comes_back_as_written(session_storage: Stores) -> None:
    session = SqlMemorySession("text", session_storage)
    contents = [
        "こんにちは",
        "😊👍",
        "O'Reilly",
        "DROP TABLE sessions;",
        '"SELECT * FROM users WHERE name = "admin";"',
        "Robert'); DROP TABLE students;--",
        "NUL \x00 inside",
    ]
    items = [{"role": "user", "content": c} for c in contents]
    await session.add_items(items)  # type: ignore[arg-type]
    assert await session.get_items() == items


async def test_concurrent_adds_all_land(session_storage: Stores) -> None:
    session = SqlMemorySession("concurrent", session_storage)
    items = [{"role": "user", "content": f"Message {i}"} for i in range(10)]
    await asyncio.gather(*(session.add_items([item]) for item in items))  # type: ignore[list-item]
    stored = await session.get_items()
    assert sorted(i["content"] for i in stored) == sorted(i["content"] for i in items)


async def test_a_bad_item_stores_nothing(session_storage: Stores) -> None:
    from sqlmemory import ConversionError

    session = SqlMemorySession("bad", session_storage)
    with pytest.raises(ConversionError):
        await session.add_items([{"role": "user", "content": "ok"}, {"type": 42}])  # type: ignore[list-item]
    assert await session.get_items() == []


async def test_from_url_makes_its_own_storage(async_db_url: str, engine: Any) -> None:
    session = SqlMemorySession.from_url("from-url", async_db_url, session_settings={"limit": 1})
    try:
        await session.add_items(chat(2))
        assert await session.get_items() == chat(2)[1:]
    finally:
        await session.storage.close()  # type: ignore[union-attr]


async def test_from_url_runs_a_sync_driver_in_worker_threads(
    db_url: str, engine: Any, backend: str
) -> None:
    session = SqlMemorySession.from_url("from-sync-url", db_url)
    try:
        # psycopg has an asyncio side; pysqlite and PyMySQL have none.
        expected = AsyncSqlStorage if backend == "postgresql" else SqlStorage
        assert type(session.storage) is expected
        await session.add_items(chat(3))
        assert await session.get_items(limit=2) == chat(3)[1:]
        assert await session.pop_item() == chat(3)[2]
    finally:
        closed = session.storage.close()  # type: ignore[union-attr]
        if closed is not None:
            await closed


class SlowStorage(SqlStorage):
    """A ``SqlStorage`` whose appends start late, so a caller can be cancelled mid-call."""

    def append(self, session_id: str, *messages: Any) -> None:
        time.sleep(0.3)
        super().append(session_id, *messages)


async def test_a_cancelled_call_returns_once_its_thread_is_done(engine: Any) -> None:
    session = SqlMemorySession("cancelled", SlowStorage(engine))
    task = asyncio.ensure_future(session.add_items(chat(2)))
    await asyncio.sleep(0.05)  # the append is sleeping in its worker thread
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The caller got CancelledError only after the thread had stored the items: the write
    # cannot be stopped, so the caller is not let go while it may still land.
    assert await session.get_items() == chat(2)


async def test_from_url_rejects_a_url_it_cannot_use() -> None:
    with pytest.raises(ValueError, match="does not support the database 'oracle'"):
        SqlMemorySession.from_url("x", "oracle://app@db/app")
    with pytest.raises(ValueError, match="is not a database URL"):
        SqlMemorySession.from_url("x", "chat.db")
    with pytest.raises(ValueError, match="holds a NUL character"):
        SqlMemorySession.from_url("x", "sqlite:///\x00")


async def test_any_sync_storage_runs_in_worker_threads() -> None:
    # InMemoryStorage has no one-transaction pop: pop_item takes its two calls, each in a
    # worker thread, and stores the other outputs of the response back.
    from sqlmemory import InMemoryStorage

    storage = InMemoryStorage()
    session = SqlMemorySession("memory", storage)
    outputs = [
        {"role": "user", "content": "Go"},
        {"id": "rs_1", "summary": [], "type": "reasoning"},
        {"arguments": "{}", "call_id": "c1", "name": "f", "type": "function_call", "id": "fc_1"},
    ]
    await asyncio.gather(*(session.add_items([item]) for item in chat(5)))  # type: ignore[list-item]
    assert sorted(i["content"] for i in await session.get_items()) == [
        f"Message {i}" for i in range(5)
    ]
    await session.clear_session()
    await session.add_items(outputs)  # type: ignore[arg-type]
    assert await session.pop_item() == outputs[2]
    assert await session.get_items(limit=2) == outputs[:2]
    assert len(storage.load("memory")) == 2
