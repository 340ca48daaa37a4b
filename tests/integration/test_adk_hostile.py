"""The ADK session service under hostile input: only sqlmemory's errors (or ``TypeError``),
and the stored session, its events and its state left as they were, on every backend.

Events and sessions are changed past ADK's validation (``object.__setattr__``), as code
may do, with the values of :mod:`tests.integration.test_hostile_integrations`: wrong
types, NaN, huge ints, lone surrogates, nesting 10,000 deep, objects no JSON holds.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from sqlmemory import AsyncSqlStorage
from sqlmemory.integrations.adk import SqlMemorySessionService
from tests.integration.test_hostile_integrations import (
    DB_SETTINGS,
    _changed,
    _check,
    _create_async_engine,
    hostile,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture
def adk(engine: Any, backend: str, databases: Any) -> Iterator[tuple[BlockingPortal, Any]]:
    """A portal (an event loop in a thread) and a service over an ``AsyncSqlStorage`` on it."""
    del engine  # requested for its clean tables
    with start_blocking_portal("asyncio") as portal:
        async_engine = portal.call(_create_async_engine, databases.async_url(backend))
        try:
            yield portal, SqlMemorySessionService(AsyncSqlStorage(async_engine))
        finally:
            portal.call(async_engine.dispose)


def _base_events() -> list[Event]:
    call = types.FunctionCall(id="c1", name="f", args={"a": 1})
    answer = types.FunctionResponse(id="c1", name="f", response={"r": 2})
    user, model, a = "user", "model", "a"
    return [
        Event(author="user", content=types.Content(role=user, parts=[types.Part(text="hi")])),
        Event(author=a, content=types.Content(role=model, parts=[types.Part(function_call=call)])),
        Event(author=a, content=types.Content(role=user, parts=[types.Part(function_response=answer)])),  # noqa: E501
        Event(author="a", actions=EventActions(state_delta={"k": 1, "user:u": 2, "app:p": 3})),
    ]  # fmt: skip


@st.composite
def spoiled_events(draw: st.DrawFn) -> Any:
    """An event with a field, or a field of its content, actions or a part, set past
    validation to a hostile value."""
    event = draw(st.sampled_from(range(4)).map(lambda i: _base_events()[i]))
    targets: list[Any] = [event, event.actions]
    if event.content is not None:
        targets += [event.content, *event.content.parts]
        targets += [p.function_call or p.function_response for p in event.content.parts]
    target = draw(st.sampled_from([t for t in targets if t is not None]))
    field = draw(st.sampled_from(sorted(type(target).model_fields)))
    return _changed(target, **{field: draw(hostile)}) and event


def _snapshot(portal: BlockingPortal, service: Any, session_id: str) -> Any:
    got = portal.call(
        lambda: service.get_session(app_name="app", user_id="u", session_id=session_id)
    )
    users = portal.call(lambda: service.get_user_state(app_name="app", user_id="u"))
    return [e.model_dump() for e in got.events], got.state, users, got.last_update_time


@DB_SETTINGS
@given(event=spoiled_events())
def test_append_event_stores_whole_or_refuses_with_nothing_written(
    adk: tuple[BlockingPortal, Any], event: Any
) -> None:
    portal, service = adk
    session = portal.call(lambda: service.create_session(app_name="app", user_id="u"))
    for good in _base_events():
        portal.call(service.append_event, session, good)
    before = _snapshot(portal, service, session.id)
    mine = copy.copy(session)
    try:
        portal.call(service.append_event, mine, event)
    except Exception as exc:
        _check(exc, TypeError)
        assert _snapshot(portal, service, session.id) == before
        return
    after = _snapshot(portal, service, session.id)
    assert after[0][: len(before[0])] == before[0]


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.create_session(app_name=1, user_id="u"),
        lambda s: s.create_session(app_name="app", user_id=None),
        lambda s: s.create_session(app_name="app", user_id="u", session_id=5),
        lambda s: s.create_session(app_name="app", user_id="u", state=[1]),
        lambda s: s.create_session(app_name="app", user_id="u", state={"k": object()}),
        lambda s: s.create_session(app_name="app", user_id="u", state={"k": {"a": float("nan")}}),
        lambda s: s.create_session(app_name="app", user_id="u", session_id="x" * 300),
        lambda s: s.get_session(app_name="app", user_id="u", session_id=None),
        lambda s: s.list_sessions(app_name=b"app"),
        lambda s: s.delete_session(app_name="app", user_id=["u"], session_id="s"),
        lambda s: s.append_event(None, Event(author="user")),
        lambda s: s.append_event(_base_session(), {"author": "user"}),
    ],
)
def test_bad_arguments_get_type_or_conversion_errors(
    adk: tuple[BlockingPortal, Any], call: Any
) -> None:
    portal, service = adk
    with pytest.raises(Exception) as raised:
        portal.call(lambda: call(service))
    _check(raised.value, TypeError)
    assert portal.call(lambda: service.list_sessions(app_name="app")).sessions == []


def _base_session() -> Any:
    from google.adk.sessions import Session

    return Session(id="s", app_name="app", user_id="u")


def test_the_service_refuses_what_is_no_async_storage() -> None:
    for storage in (None, 1, "sqlite:///x.db", object()):
        with pytest.raises(TypeError, match="async sqlmemory storage"):
            SqlMemorySessionService(storage)  # type: ignore[arg-type]
