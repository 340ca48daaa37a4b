"""Google ADK on every backend: ``SqlMemorySessionService`` held to what ADK asks of a
session service.

The first half ports the behaviours ADK's own session service tests check of
``InMemorySessionService`` and ``DatabaseSessionService`` (``tests/unittests/sessions/
test_session_service.py`` in ADK's repository): state scopes, ``temp:`` state, the
stale-session check, ``GetSessionConfig``, partial events, listing. The second half
checks what sqlmemory adds: events read back dump exactly as stored, owners, the joint
write left whole when refused. Each test runs over the unscoped ``AsyncSqlStorage`` and
over an owned view of it. The end-to-end runs with ADK's ``Runner`` are in
``test_adk_runner.py``.
"""

from __future__ import annotations

import asyncio
import io
import time
from typing import Any

import pytest
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from PIL import Image

from sqlmemory import AsyncSqlStorage, ConversionError, ImageBlock, Role, ToolCall, Usage
from sqlmemory.integrations.adk import SqlMemorySessionService

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["unscoped", "owned"])
def service(request: pytest.FixtureRequest, async_storage: AsyncSqlStorage) -> Any:
    storage = async_storage if request.param == "unscoped" else async_storage.owned_by("t1")
    return SqlMemorySessionService(storage)


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (3, 2), (200, 10, 10)).save(buffer, "PNG")
    return buffer.getvalue()


# -- what ADK's own tests ask ---------------------------------------------------------------


async def test_an_unknown_session_is_none(service: Any) -> None:
    assert await service.get_session(app_name="a", user_id="u", session_id="123") is None


async def test_create_get_and_delete(service: Any) -> None:
    session = await service.create_session(app_name="my_app", user_id="u", state={"k": "v"})
    assert session.id and session.state == {"k": "v"}
    assert session.last_update_time <= time.time()
    got = await service.get_session(app_name="my_app", user_id="u", session_id=session.id)
    assert got == session
    await service.delete_session(app_name="my_app", user_id="u", session_id=session.id)
    assert await service.get_session(app_name="my_app", user_id="u", session_id=session.id) is None


async def test_sessions_are_listed_with_their_state(service: Any) -> None:
    for name in ("s0", "s1", "s2"):
        await service.create_session(
            app_name="app", user_id="u1", session_id=name, state={"key": f"v-{name}"}
        )
    await service.create_session(app_name="app", user_id="u2", session_id="t0", state={"k": 1})
    await service.create_session(app_name="other", user_id="u1", session_id="x")
    listed = (await service.list_sessions(app_name="app", user_id="u1")).sessions
    assert [s.id for s in listed] == ["s0", "s1", "s2"]  # least recently updated first
    assert [s.state for s in listed] == [{"key": f"v-s{i}"} for i in range(3)]
    assert all(s.events == [] for s in listed)
    everyone = (await service.list_sessions(app_name="app")).sessions
    assert {(s.user_id, s.id) for s in everyone} == {
        ("u1", "s0"),
        ("u1", "s1"),
        ("u1", "s2"),
        ("u2", "t0"),
    }
    assert (await service.list_sessions(app_name="app", user_id="u3")).sessions == []


async def test_app_state_is_shared_by_all_users_of_the_app(service: Any) -> None:
    first = await service.create_session(
        app_name="app", user_id="u1", session_id="s1", state={"app:k1": "v1"}
    )
    event = Event(invocation_id="i", author="user", actions=EventActions(state_delta={"app:k2": 2}))
    await service.append_event(first, event)
    second = await service.create_session(app_name="app", user_id="u2", session_id="s2")
    assert second.state == {"app:k1": "v1", "app:k2": 2}
    again = await service.get_session(app_name="app", user_id="u1", session_id="s1")
    assert again.state == {"app:k1": "v1", "app:k2": 2}
    listed = (await service.list_sessions(app_name="app")).sessions
    assert all(s.state == {"app:k1": "v1", "app:k2": 2} for s in listed)


async def test_user_state_is_shared_only_by_the_users_sessions(service: Any) -> None:
    first = await service.create_session(
        app_name="app", user_id="u1", session_id="s1", state={"user:k1": "v1"}
    )
    event = Event(
        invocation_id="i", author="user", actions=EventActions(state_delta={"user:k2": 2})
    )
    await service.append_event(first, event)
    mine = await service.create_session(app_name="app", user_id="u1", session_id="s1b")
    assert mine.state == {"user:k1": "v1", "user:k2": 2}
    theirs = await service.create_session(app_name="app", user_id="u2", session_id="s2")
    assert theirs.state == {}
    assert await service.get_user_state(app_name="app", user_id="u1") == {"k1": "v1", "k2": 2}
    assert await service.get_user_state(app_name="app", user_id="u2") == {}
    listed = (await service.list_sessions(app_name="app")).sessions
    assert {s.id: s.state for s in listed} == {
        "s1": {"user:k1": "v1", "user:k2": 2},
        "s1b": {"user:k1": "v1", "user:k2": 2},
        "s2": {},
    }


async def test_session_state_is_not_shared(service: Any) -> None:
    first = await service.create_session(
        app_name="app", user_id="u1", session_id="s1", state={"sk1": "v1"}
    )
    event = Event(invocation_id="i", author="user", actions=EventActions(state_delta={"sk2": 2}))
    await service.append_event(first, event)
    got = await service.get_session(app_name="app", user_id="u1", session_id="s1")
    assert got.state == {"sk1": "v1", "sk2": 2}
    other = await service.create_session(app_name="app", user_id="u1", session_id="s1b")
    assert other.state == {}


async def test_temp_state_is_seen_in_memory_and_never_stored(service: Any) -> None:
    session = await service.create_session(
        app_name="app", user_id="u1", session_id="s1", state={"temp:t0": 0, "k": 0}
    )
    assert session.state == {"k": 0}
    event = Event(
        invocation_id="i", author="user", actions=EventActions(state_delta={"temp:t": 1, "k": 2})
    )
    await service.append_event(session, event)
    assert session.state == {"temp:t": 1, "k": 2}
    assert event.actions.state_delta == {"k": 2}
    got = await service.get_session(app_name="app", user_id="u1", session_id="s1")
    assert got.state == {"k": 2} and got.events[0].actions.state_delta == {"k": 2}


async def test_the_same_session_id_of_two_users_is_two_sessions(service: Any) -> None:
    first = await service.create_session(app_name="app", user_id="u1", session_id="s1")
    await service.append_event(first, Event(invocation_id="i", author="user"))
    await service.create_session(app_name="app", user_id="u2", session_id="s1")
    got = await service.get_session(app_name="app", user_id="u2", session_id="s1")
    assert got.user_id == "u2" and got.events == []
    await service.delete_session(app_name="app", user_id="u2", session_id="s1")
    mine = await service.get_session(app_name="app", user_id="u1", session_id="s1")
    assert len(mine.events) == 1


async def test_creating_an_existing_session_raises_and_changes_nothing(service: Any) -> None:
    made = await service.create_session(app_name="app", user_id="u", session_id="s", state={"k": 1})
    with pytest.raises(AlreadyExistsError):
        await service.create_session(
            app_name="app", user_id="u", session_id="s", state={"k": 2, "user:x": 1}
        )
    assert await service.get_session(app_name="app", user_id="u", session_id="s") == made
    assert await service.get_user_state(app_name="app", user_id="u") == {}


async def test_event_bytes_round_trip(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u")
    content = types.Content(
        role="user",
        parts=[
            types.Part.from_bytes(data=b"test_image_data", mime_type="image/png"),
            types.Part.from_bytes(data=png(), mime_type="image/png"),
        ],
    )
    grounding = types.GroundingMetadata(
        search_entry_point=types.SearchEntryPoint(sdk_blob=b"test_sdk_blob")
    )
    event = Event(invocation_id="i", author="user", content=content, grounding_metadata=grounding)
    await service.append_event(session, event)
    got = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert got.events[0].content == content and got.events[0].grounding_metadata == grounding


async def test_a_complete_event_round_trips(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u")
    event = Event(
        invocation_id="invocation",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="test_text")]),
        turn_complete=True,
        partial=False,
        actions=EventActions(artifact_delta={"file": 0}, transfer_to_agent="agent", escalate=True),
        long_running_tool_ids={"tool1"},
        error_code="error_code",
        error_message="error_message",
        interrupted=True,
        grounding_metadata=types.GroundingMetadata(web_search_queries=["query1"]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1, total_token_count=2
        ),
        citation_metadata=types.CitationMetadata(),
        custom_metadata={"custom_key": "custom_value"},
        timestamp=1700000000.123,
        input_transcription=types.Transcription(text="input", finished=True),
        output_transcription=types.Transcription(text="output", finished=True),
    )
    await service.append_event(session, event)
    got = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert got == session


async def test_usage_metadata_is_the_messages_usage_and_kept(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=120,
        cached_content_token_count=100,
        candidates_token_count=7,
        thoughts_token_count=5,
        total_token_count=132,
    )
    reply = Event(
        invocation_id="i",
        author="agent",
        model_version="gemini-2.5-flash",
        content=types.Content(role="model", parts=[types.Part(text="42")]),
        usage_metadata=usage,
    )
    asked = Event(invocation_id="i", author="user", content=reply.content, usage_metadata=usage)
    await service.append_event(session, asked)
    await service.append_event(session, reply)
    stored = await service._view(service._names("app", "u")).load("app/u/s")
    # A user's event says nothing of a reply's cost; the model's event is its reply's.
    assert [m.usage for m in stored] == [
        None,
        Usage("gemini-2.5-flash", 120, 12, cache_read_tokens=100, reasoning_tokens=5),
    ]
    got = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert got.events[1].usage_metadata == usage and got == session
    report = await service._view(service._names("app", "u")).usage("app/u/s")
    assert report.total.input_tokens == 120 and report.total.output_tokens == 12


async def test_last_update_time_follows_the_event(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u")
    created = session.last_update_time
    event = Event(invocation_id="i", author="user", timestamp=created + 10)
    await service.append_event(session, event)
    assert session.last_update_time == created + 10
    got = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert got.last_update_time == created + 10


async def test_a_stale_session_is_refused_and_nothing_is_written(service: Any) -> None:
    now = time.time()
    original = await service.create_session(app_name="app", user_id="u")

    def event(k: int) -> Event:
        delta = {f"sk{k}": k, f"user:uk{k}": k, f"app:ak{k}": k}
        return Event(
            invocation_id=f"inv{k}",
            author="user",
            timestamp=now + k,
            actions=EventActions(state_delta=delta),
        )

    await service.append_event(original, event(1))
    updated = await service.get_session(app_name="app", user_id="u", session_id=original.id)
    await service.append_event(updated, event(2))
    assert original.last_update_time < updated.last_update_time
    with pytest.raises(ValueError, match="modified in storage"):
        await service.append_event(original, event(3))
    final = await service.get_session(app_name="app", user_id="u", session_id=original.id)
    assert [e.invocation_id for e in final.events] == ["inv1", "inv2"]
    assert final.state == {
        "sk1": 1, "sk2": 2, "app:ak1": 1, "app:ak2": 2, "user:uk1": 1, "user:uk2": 2
    }  # fmt: skip


async def test_of_two_writers_of_one_revision_one_is_refused(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u")
    for i in range(6):
        latest = await service.get_session(app_name="app", user_id="u", session_id=session.id)
        copies = [latest.model_copy(deep=True) for _ in range(2)]
        events = [
            Event(
                invocation_id=f"inv{i}-{k}",
                author="user",
                timestamp=latest.last_update_time + k,
                actions=EventActions(state_delta={f"sk{i}-{k}": k}),
            )
            for k in (1, 2)
        ]
        results = await asyncio.gather(
            *(service.append_event(c, e) for c, e in zip(copies, events, strict=True)),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, Exception)]
        assert len(errors) == 1 and "modified in storage" in str(errors[0]), results
    final = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert len(final.events) == 6 and len(final.state) == 6


async def test_a_current_session_may_drift_or_lack_its_marker(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u", session_id="s1")
    first = Event(invocation_id="inv1", author="user", timestamp=session.last_update_time + 10)
    await service.append_event(session, first)
    session.last_update_time -= 0.0001
    second = Event(invocation_id="inv2", author="user", timestamp=first.timestamp + 10)
    await service.append_event(session, second)
    session._storage_update_marker = None
    session.last_update_time -= 0.0001
    third = Event(invocation_id="inv3", author="user", timestamp=second.timestamp + 10)
    await service.append_event(session, third)
    got = await service.get_session(app_name="app", user_id="u", session_id="s1")
    assert [e.invocation_id for e in got.events] == ["inv1", "inv2", "inv3"]
    # Without a marker, a session that missed an event is stale.
    behind = got.model_copy(update={"events": got.events[:2]}, deep=True)
    behind._storage_update_marker = None
    behind.last_update_time = 0.0
    with pytest.raises(ValueError, match="modified in storage"):
        await service.append_event(behind, Event(invocation_id="inv4", author="user"))


async def test_appending_to_a_missing_session_raises(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u", session_id="s1")
    await service.delete_session(app_name="app", user_id="u", session_id="s1")
    with pytest.raises(SessionNotFoundError):
        await service.append_event(session, Event(invocation_id="i", author="user"))
    assert await service.get_session(app_name="app", user_id="u", session_id="s1") is None


async def test_get_session_config(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u")
    for i in range(1, 6):
        await service.append_event(session, Event(author="user", timestamp=i))

    async def stamps(**config: Any) -> list[float]:
        got = await service.get_session(
            app_name="app",
            user_id="u",
            session_id=session.id,
            config=GetSessionConfig(**config) if config else None,
        )
        return [e.timestamp for e in got.events]

    assert await stamps() == [1, 2, 3, 4, 5]
    assert await stamps(num_recent_events=0) == []
    assert await stamps(num_recent_events=3) == [3, 4, 5]
    assert await stamps(num_recent_events=30) == [1, 2, 3, 4, 5]
    assert await stamps(after_timestamp=4.0) == [4, 5]
    assert await stamps(after_timestamp=50.0) == []
    assert await stamps(after_timestamp=4.0, num_recent_events=3) == [4, 5]
    assert await stamps(after_timestamp=1.0, num_recent_events=2) == [4, 5]


async def test_partial_events_are_not_stored(service: Any) -> None:
    session = await service.create_session(app_name="app", user_id="u")
    await service.append_event(session, Event(author="user", partial=True))
    got = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert session.events == [] and got.events == []


# -- what sqlmemory adds --------------------------------------------------------------------


def answer(call_id: str, name: str, response: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response=response)
    )


def rich_events() -> list[Event]:
    call = types.FunctionCall(id="c1", name="lookup", args={"q": "x", "n": [1, 2.5, None]})
    return [
        Event(
            invocation_id="inv",
            author="user",
            content=types.Content(
                role="user",
                parts=[
                    types.Part(text="Look at this"),
                    types.Part.from_bytes(data=png(), mime_type="image/png"),
                    types.Part.from_uri(file_uri="https://e.x/a.pdf", mime_type="application/pdf"),
                ],
            ),
        ),
        Event(
            invocation_id="inv",
            author="agent",
            content=types.Content(
                role="model",
                parts=[
                    types.Part(text="hmm", thought=True, thought_signature=b"\x00sig"),
                    types.Part(function_call=call),
                    types.Part(function_call=types.FunctionCall(id="c2", name="now")),
                ],
            ),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=12, candidates_token_count=3, total_token_count=15
            ),
            long_running_tool_ids={"c2", "c1"},
        ),
        Event(
            invocation_id="inv",
            author="agent",
            content=types.Content(
                role="user",
                parts=[
                    answer("c1", "lookup", {"hits": [1.25]}),
                    answer("c2", "now", {"t": "noon"}),
                ],
            ),
            actions=EventActions(state_delta={"k": {"deep": [1]}}, skip_summarization=True),
        ),
        Event(invocation_id="inv", author="agent", actions=EventActions(end_of_agent=True)),
        Event(
            invocation_id="inv",
            author="agent",
            content=types.Content(
                role="model",
                parts=[
                    types.Part.from_executable_code(code="print(1)", language="PYTHON"),
                    types.Part(text="done"),
                ],
            ),
        ),
    ]  # fmt: skip


async def test_events_read_back_dump_exactly_as_stored(
    service: Any, async_storage: AsyncSqlStorage
) -> None:
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    events = rich_events()
    for event in events:
        await service.append_event(session, event)
    got = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert [e.model_dump() for e in got.events] == [e.model_dump() for e in events]
    for n in range(len(events) + 1):
        tail = await service.get_session(
            app_name="app",
            user_id="u",
            session_id="s",
            config=GetSessionConfig(num_recent_events=n),
        )
        dumps = [e.model_dump() for e in events]
        assert [e.model_dump() for e in tail.events] == dumps[len(dumps) - n :]
    # As sqlmemory sees them: blocks, a call with its results, bytes by reference.
    messages = await async_storage.load("app/u/s")
    assert [m.role for m in messages] == [
        Role.USER, Role.ASSISTANT, Role.TOOL, Role.TOOL, Role.ASSISTANT, Role.ASSISTANT
    ]  # fmt: skip
    assert isinstance(messages[0].content[1], ImageBlock) and messages[0].content[1].data == png()
    assert [c.id for c in messages[1].tool_calls] == ["c1", "c2"]
    assert isinstance(messages[1].content[1], ToolCall)
    assert [m.tool_call_id for m in messages[2:4]] == ["c1", "c2"]
    assert messages[1].extras["adk"]["event"]["usage_metadata"]["total_token_count"] == 15


async def test_each_users_sessions_are_theirs(async_storage: AsyncSqlStorage) -> None:
    service = SqlMemorySessionService(async_storage)
    await service.create_session(app_name="app", user_id="u1", session_id="s", state={"user:a": 1})
    await service.create_session(app_name="app", user_id="u/2", session_id="s", state={"app:b": 2})
    assert (await async_storage.session_info("app/u1/s")).owner == "app/u1"
    assert (await async_storage.session_info("app/u%2F2/s")).owner == "app/u%2F2"
    assert (await async_storage.session_info("app:user/u1")).owner == "app/u1"
    assert (await async_storage.session_info("app:app")).owner == "app:app"
    assert await async_storage.owned_by("app/u1").sessions() == ["app/u1/s", "app:user/u1"]
    listed = (await service.list_sessions(app_name="app")).sessions
    assert sorted((s.user_id, s.id) for s in listed) == [("u/2", "s"), ("u1", "s")]


async def test_names_with_separators_and_spaces_stay_apart(service: Any) -> None:
    for app, user, sid in [
        ("a/b", "c", "d"),
        ("a", "b/c", "d"),
        ("a", "b", "c/d"),
        (" a", "b ", " "),
    ]:
        state = {"who": [app, user, sid]}
        await service.create_session(app_name=app, user_id=user, session_id=sid, state=state)
    for app, user, sid in [
        ("a/b", "c", "d"),
        ("a", "b/c", "d"),
        ("a", "b", "c/d"),
        (" a", "b ", " "),
    ]:
        got = await service.get_session(app_name=app, user_id=user, session_id=sid)
        assert got.state == {"who": [app, user, sid]}
        listed = (await service.list_sessions(app_name=app, user_id=user)).sessions
        assert [(s.app_name, s.user_id, s.id) for s in listed] == [(app, user, sid)]


async def test_state_json_cannot_hold_is_refused_before_anything_is_written(
    service: Any, async_storage: AsyncSqlStorage
) -> None:
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    before = await async_storage.session_info("app/u/s")
    for delta in ({"k": float("nan")}, {"user:k": 2**70}, {"app:k": "\ud800"}):
        event = Event(invocation_id="i", author="user", actions=EventActions(state_delta=delta))
        with pytest.raises(ConversionError):
            await service.append_event(session, event)
    assert await async_storage.session_info("app/u/s") == before
    assert await service.get_user_state(app_name="app", user_id="u") == {}
    with pytest.raises(ConversionError):
        await service.create_session(app_name="app", user_id="u", state={"k": float("inf")})
    assert len((await service.list_sessions(app_name="app")).sessions) == 1
