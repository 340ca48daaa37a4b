"""Microsoft Agent Framework over ``SqlMemoryHistoryProvider``, offline, on every backend.

The chat client answers from a script and keeps every request, so a test sees what the
agent read back from the provider: two runs with a function tool, the session serialised
and restored between them (it holds only its id: the history is in SQL), the second run
sent the whole first one. Each test runs over an ``AsyncSqlStorage`` and over a
``SqlStorage`` (whose calls run in a worker thread), and over owned views.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from agent_framework import (
    Agent,
    AgentSession,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    tool,
)
from agent_framework import Message as AFMessage

from sqlmemory import AsyncSqlStorage, FixedWindow, ImageBlock, Role, SessionOwnerError, SqlStorage
from sqlmemory.errors import ConversionError
from sqlmemory.integrations.agent_framework import SqlMemoryHistoryProvider
from tests.support.tables import snapshot

pytestmark = pytest.mark.anyio

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class _Script:
    """Answers each request with the next response of its script; keeps the requests."""

    def __init__(self, script: Sequence[ChatResponse], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script = list(script)
        self.sent: list[list[dict[str, Any]]] = []

    async def _reply(self, messages: Sequence[AFMessage]) -> ChatResponse:
        self.sent.append([m.to_dict() for m in messages])
        return self.script.pop(0)

    def _inner_get_response(self, *, messages: Sequence[AFMessage], **kwargs: Any) -> Any:
        return self._reply(messages)


class ScriptedClient(_Script, FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """A chat client that calls the tools its script asks for."""


class MiddlewareClient(
    _Script, FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]
):
    """The scripted client with chat middleware: what per-service-call persistence needs."""


def call(b: int) -> ChatResponse:
    content = Content.from_function_call(f"call_{b}", "multiply", arguments={"a": 6, "b": b})
    usage: Any = {"input_token_count": 10 + b, "output_token_count": 3}
    return ChatResponse(messages=[AFMessage("assistant", [content])], usage_details=usage)


def text(words: str) -> ChatResponse:
    usage: Any = {"input_token_count": 30, "output_token_count": 2}
    return ChatResponse(messages=[AFMessage("assistant", [words])], usage_details=usage)


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def scripted_agent(history: SqlMemoryHistoryProvider) -> tuple[Agent[Any], ScriptedClient]:
    client = ScriptedClient([call(7), text("42"), call(8), text("48")])
    return Agent(client=client, tools=[multiply], context_providers=[history]), client


def plain(messages: Sequence[AFMessage] | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Message dicts without the attribution the agent adds to the history it loads."""
    dumped = [m if isinstance(m, Mapping) else m.to_dict() for m in messages]
    out = []
    for message in dumped:
        properties = {
            k: v for k, v in message["additional_properties"].items() if k != "_attribution"
        }
        out.append({**message, "additional_properties": properties})
    return out


@pytest.fixture(params=["async", "sync"])
def af_storage(
    request: pytest.FixtureRequest, async_storage: AsyncSqlStorage, engine: sa.Engine
) -> AsyncSqlStorage | SqlStorage:
    """The provider's storage: async, or sync with its calls in worker threads."""
    return async_storage if request.param == "async" else SqlStorage(engine)


async def test_two_runs_with_a_tool_keep_their_history_in_sql(
    af_storage: AsyncSqlStorage | SqlStorage,
) -> None:
    history = SqlMemoryHistoryProvider(af_storage)
    agent, client = scripted_agent(history)
    session = agent.create_session()
    first = await agent.run("6 x 7?", session=session)
    # A restored session holds the id only: the second run reads the first from SQL.
    session = AgentSession.from_dict(session.to_dict())
    second = await agent.run("6 x 8?", session=session)

    assert (first.text, second.text) == ("42", "48")
    stored = await history.get_messages(session.session_id)
    asked = [AFMessage("user", ["6 x 7?"]), *first.messages]
    assert plain(stored[:4]) == plain(asked)
    assert plain(stored[4:]) == plain([AFMessage("user", ["6 x 8?"]), *second.messages])
    # The second run's first model call was sent the first run, as read from the database.
    assert plain(client.sent[2]) == plain([*asked, AFMessage("user", ["6 x 8?"])])
    rows = (
        await af_storage.load(session.session_id)
        if isinstance(af_storage, AsyncSqlStorage)
        else af_storage.load(session.session_id)
    )
    assert [m.role for m in rows] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT] * 2
    assert rows[1].tool_calls[0].arguments == {"a": 6, "b": 7}
    assert rows[2].tool_call_id == "call_7" and rows[2].text_content() == "42"
    # Each run's usage (its two model calls) is on its answer.
    assert [(m.usage.input_tokens, m.usage.output_tokens) for m in rows if m.usage] == [
        (47, 5),
        (48, 5),
    ]


async def test_per_service_call_persistence_stores_each_model_call_with_its_usage(
    af_storage: AsyncSqlStorage | SqlStorage,
) -> None:
    history = SqlMemoryHistoryProvider(af_storage)
    client = MiddlewareClient(script=[call(7), text("42")])
    agent = Agent(
        client=client,
        tools=[multiply],
        context_providers=[history],
        require_per_service_call_history_persistence=True,
    )
    session = agent.create_session()
    assert (await agent.run("6 x 7?", session=session)).text == "42"
    rows = (
        await af_storage.load(session.session_id)
        if isinstance(af_storage, AsyncSqlStorage)
        else af_storage.load(session.session_id)
    )
    # Stored after each model call: each answer carries the usage of its own call.
    assert [m.role for m in rows] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert [(m.usage.input_tokens, m.usage.output_tokens) for m in rows if m.usage] == [
        (17, 3),
        (30, 2),
    ]
    # The second call was sent the call and its result, read back from the database.
    assert [m["role"] for m in client.sent[1]] == ["user", "assistant", "tool"]


async def test_a_window_is_read_in_sql_and_keeps_calls_with_results(
    af_storage: AsyncSqlStorage | SqlStorage,
) -> None:
    writer = SqlMemoryHistoryProvider(af_storage)
    agent, _ = scripted_agent(writer)
    session = agent.create_session()
    await agent.run("6 x 7?", session=session)
    await agent.run("6 x 8?", session=session)
    window = SqlMemoryHistoryProvider(af_storage, policy=FixedWindow(2))
    got = await window.get_messages(session.session_id)
    # Two messages would start at the tool result: the window reaches back to its call.
    assert [m.role for m in got] == ["assistant", "tool", "assistant"]
    assert got[0].contents[0].call_id == got[1].contents[0].call_id == "call_8"


async def test_contents_of_every_kind_round_trip_through_the_database(
    af_storage: AsyncSqlStorage | SqlStorage, engine: sa.Engine
) -> None:
    history = SqlMemoryHistoryProvider(af_storage)
    messages = [
        AFMessage(
            "user",
            [
                "Look:",
                Content.from_data(PNG, "image/png", additional_properties={"k": 1}),
                Content.from_uri("https://example.com/a.pdf", media_type="application/pdf"),
                Content.from_data(b"RIFF", "audio/wav"),
            ],
            message_id="u1",
            additional_properties={"tags": ["a", "b"]},
        ),
        AFMessage(
            "assistant",
            [
                Content.from_text_reasoning(text="thinking"),
                Content.from_function_call("c1", "f", arguments='{"a": 1'),
                Content.from_function_call("c2", "g", arguments={"b": [1, 2]}),
                Content.from_usage({"input_token_count": 5, "output_token_count": 2}),
            ],
            author_name="bot",
        ),
        AFMessage(
            "tool",
            [
                Content.from_function_result("c1", result="ok"),
                Content.from_function_result("c2", result={"v": [1, 2]}),
            ],
        ),
        AFMessage("assistant", [Content.from_error(message="refused", error_code="E1")]),
    ]
    await history.save_messages("kinds", messages)
    back = await history.get_messages("kinds")
    assert [m.to_dict() for m in back] == [m.to_dict() for m in messages]
    rows = (
        await af_storage.load("kinds")
        if isinstance(af_storage, AsyncSqlStorage)
        else af_storage.load("kinds")
    )
    image = rows[0].content[1]
    assert isinstance(image, ImageBlock) and image.data == PNG
    assert rows[1].usage is not None and rows[1].usage.input_tokens == 5
    with engine.connect() as conn:
        blobs = snapshot(conn)["blobs"]
    assert [row for row in blobs if PNG in row]  # the image bytes are a blob, by reference


async def test_owned_views_keep_two_users_apart(
    af_storage: AsyncSqlStorage | SqlStorage, engine: sa.Engine
) -> None:
    alice = SqlMemoryHistoryProvider(af_storage.owned_by("alice"))
    bob = SqlMemoryHistoryProvider(af_storage.owned_by("bob"))
    agent, _ = scripted_agent(alice)
    session = agent.create_session()
    await agent.run("6 x 7?", session=session)
    with engine.connect() as conn:
        before = snapshot(conn)

    assert await bob.get_messages(session.session_id) == []
    with pytest.raises(SessionOwnerError):
        await bob.save_messages(session.session_id, [AFMessage("user", ["mine?"])])
    await bob.clear(session.session_id)
    # Bob's agent on Alice's session id fails on its first write, having read nothing.
    bobs_agent, bobs_client = scripted_agent(bob)
    with pytest.raises(SessionOwnerError):
        await bobs_agent.run("6 x 8?", session=AgentSession(session_id=session.session_id))
    assert bobs_client.sent[0][0]["contents"][0]["text"] == "6 x 8?"
    assert len(bobs_client.sent[0]) == 1
    with engine.connect() as conn:
        assert snapshot(conn) == before
    assert len(await alice.get_messages(session.session_id)) == 4
    await alice.clear(session.session_id)
    assert await alice.get_messages(session.session_id) == []


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


async def test_hostile_input_is_refused_before_anything_is_written(
    af_storage: AsyncSqlStorage | SqlStorage, engine: sa.Engine
) -> None:
    history = SqlMemoryHistoryProvider(af_storage)
    await history.save_messages("h", [AFMessage("user", ["kept"])])
    with engine.connect() as conn:
        before = snapshot(conn)
    hostile: list[Any] = [
        [AFMessage("user", ["ok"]), {"role": "user"}],
        "not a list",
        AFMessage("user", ["a lone message"]),
        [AFMessage("user", ["ok"]), AFMessage("user", ["a lone surrogate \ud800"])],
        [AFMessage("user", ["x"], additional_properties={"n": float("nan")})],
        [AFMessage("user", ["x"], additional_properties={"deep": _nested(10_000)})],
        [AFMessage("user", ["x"], additional_properties={"n": 2**70})],
        [AFMessage("assistant", [Content.from_usage({"input_token_count": -1})])],
    ]
    for messages in hostile:
        with pytest.raises(ConversionError):
            await history.save_messages("h", messages)
    for session_id in (None, 7, b"h"):
        with pytest.raises(TypeError):
            await history.save_messages(session_id, [AFMessage("user", ["x"])])  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await history.get_messages(session_id)  # type: ignore[arg-type]
    with engine.connect() as conn:
        assert snapshot(conn) == before
    assert [m.text for m in await history.get_messages("h")] == ["kept"]
    with pytest.raises(TypeError):
        SqlMemoryHistoryProvider(object())  # type: ignore[arg-type]
