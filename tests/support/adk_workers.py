"""ADK session service workers: processes appending events with state deltas at once.

Each worker has its own ``SqlMemorySessionService`` over an ``AsyncSqlStorage`` of the
async URL (its own event loop and engine). Every round, released with the others by a
barrier, it appends one event to the session all workers share (a stale session is read
again and the event sent again, as an ADK application does) and one to a session of its
own; each event's delta sets session, ``user:``, ``app:`` and ``temp:`` keys no other
event sets, so a merge that reads state another writer has replaced since loses a key.
Plain functions, no test framework.
"""

from __future__ import annotations

import asyncio
from typing import Any

APP = "proc-app"
SHARED = "shared"
"""The session every worker appends to: user ``USERS[0]``'s."""
USERS = ("u0", "u1")
ATTEMPTS = 200
"""Appends of one event tried before a worker gives up on a session always stale."""
TIMEOUT = 120.0


def user_of(index: int) -> str:
    """The user whose own session worker ``index`` appends to."""
    return USERS[index % len(USERS)]


def own_session(index: int) -> str:
    return f"own-{index}"


def delta(tag: str, r: int) -> dict[str, Any]:
    """The state delta of the event ``tag`` sends in round ``r``: a key of each scope."""
    key = f"{tag}r{r}"
    return {key: r, f"user:{key}": r, f"app:{key}": r, f"temp:{key}": r}


def adk_worker(url: str, index: int, rounds: int, barrier: Any, results: Any) -> None:
    """Run the rounds; report ``(index, stale retries, errors)``."""
    errors: list[str] = []
    retries = 0
    try:
        retries = asyncio.run(_rounds(url, index, rounds, barrier, errors))
    except BaseException as exc:
        errors.append(f"worker {index} died: {type(exc).__name__}: {exc}")
        barrier.abort()
    results.put((index, retries, errors))


async def _rounds(url: str, index: int, rounds: int, barrier: Any, errors: list[str]) -> int:
    from sqlmemory import AsyncSqlStorage
    from sqlmemory.integrations.adk import SqlMemorySessionService

    retries = 0
    async with AsyncSqlStorage.from_url(url) as storage:
        service = SqlMemorySessionService(storage)
        await service.get_session(app_name=APP, user_id=USERS[0], session_id=SHARED)  # warm up
        for r in range(rounds):
            barrier.wait(TIMEOUT)
            for user, sid, tag in (
                (USERS[0], SHARED, f"w{index}"),
                (user_of(index), own_session(index), f"own{index}"),
            ):
                try:
                    retries += await _append(service, user, sid, tag, r)
                except Exception as exc:  # every error is a finding: report it
                    errors.append(f"{sid} round {r}: {type(exc).__name__}: {exc}")
    return retries


async def _append(service: Any, user: str, sid: str, tag: str, r: int) -> int:
    """Append ``tag``'s event of round ``r`` until the session is not stale; the retries."""
    from google.adk.errors._stale_session_error import StaleSessionError
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    for attempt in range(ATTEMPTS):
        session = await service.get_session(app_name=APP, user_id=user, session_id=sid)
        event = Event(
            invocation_id=f"{tag}r{r}",
            author="user",
            content=types.Content(role="user", parts=[types.Part(text=f"{tag} {r}")]),
            actions=EventActions(state_delta=delta(tag, r)),
        )
        try:
            await service.append_event(session, event)
            return attempt
        except StaleSessionError:
            await asyncio.sleep(0.001 * (attempt % 7))
    raise RuntimeError(f"{sid} stayed stale for {ATTEMPTS} attempts")
