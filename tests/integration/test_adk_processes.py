"""The ADK session service from real processes: no lost update of any state scope.

``append_event`` stores an event and merges its state delta into the session's, the
user's and the app's records in one transaction, each record read under its lock with a
locking read (on MariaDB's REPEATABLE READ a plain read would see the snapshot the
transaction began with, and the merge would drop what another writer stored since). Three
processes (``tests/support/adk_workers.py``) append at once to one shared session and to
sessions of their own whose users share ``user:`` state and all share ``app:`` state.
Afterwards every event is stored once and every key of every delta is in its scope's
state; ``temp:`` keys nowhere. Small by default; ``SQLMEMORY_SOAK=N`` runs N times as
many rounds.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import AsyncSqlStorage
from sqlmemory.integrations.adk import SqlMemorySessionService
from tests.reliability.figures import FIGURES
from tests.reliability.workers import TIMEOUT, run_workers, scale
from tests.support.adk_workers import (
    APP,
    SHARED,
    USERS,
    adk_worker,
    delta,
    own_session,
    user_of,
)

pytestmark = pytest.mark.anyio

WORKERS = 3
ROUNDS = 6


async def test_concurrent_appends_lose_no_event_and_no_state_key(
    async_storage: AsyncSqlStorage, async_db_url: str
) -> None:
    rounds = ROUNDS * scale()
    service = SqlMemorySessionService(async_storage)
    await service.create_session(app_name=APP, user_id=USERS[0], session_id=SHARED)
    for i in range(WORKERS):
        await service.create_session(app_name=APP, user_id=user_of(i), session_id=own_session(i))

    reports = run_workers(WORKERS, adk_worker, async_db_url, lambda i: (rounds,), TIMEOUT * rounds)
    assert sorted(r[0] for r in reports) == list(range(WORKERS))
    assert [e for r in reports for e in r[2]] == []

    # What each scope must hold: every key of every delta sent to it (temp: none).
    expected: dict[str, dict[str, Any]] = {"app": {}, **{user: {} for user in USERS}}
    sessions: dict[str, dict[str, Any]] = {
        SHARED: {},
        **{own_session(i): {} for i in range(WORKERS)},
    }
    for i in range(WORKERS):
        for r in range(rounds):
            for tag, sid, user in (
                (f"w{i}", SHARED, USERS[0]),
                (f"own{i}", own_session(i), user_of(i)),
            ):
                for key, value in delta(tag, r).items():
                    scope = key.partition(":")[0] if ":" in key else "session"
                    target = {"app": expected["app"], "user": expected[user]}.get(scope)
                    if scope == "session":
                        target = sessions[sid]
                    if target is not None:
                        target[key] = value

    shared = await service.get_session(app_name=APP, user_id=USERS[0], session_id=SHARED)
    assert shared is not None
    # Every worker's events are there once, each worker's in the order it sent them.
    sent = {f"w{i}r{r}" for i in range(WORKERS) for r in range(rounds)}
    stored = [e.invocation_id for e in shared.events]
    assert sorted(stored) == sorted(sent)
    for i in range(WORKERS):
        assert [s for s in stored if s.startswith(f"w{i}r")] == [f"w{i}r{r}" for r in range(rounds)]
    assert shared.state == {**sessions[SHARED], **expected["app"], **expected[USERS[0]]}
    for i in range(WORKERS):
        sid, user = own_session(i), user_of(i)
        session = await service.get_session(app_name=APP, user_id=user, session_id=sid)
        assert session is not None and len(session.events) == rounds
        assert session.state == {**sessions[sid], **expected["app"], **expected[user]}
    for user in USERS:
        listed = await service.list_sessions(app_name=APP, user_id=user)
        for session in listed.sessions:
            assert {k: v for k, v in session.state.items() if ":" in k} == {
                **expected["app"],
                **expected[user],
            }
    FIGURES["operations"] += 2 * WORKERS * rounds
    FIGURES["histories checked"] += 1 + WORKERS
