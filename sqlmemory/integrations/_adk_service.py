"""What :class:`~sqlmemory.integrations.adk.SqlMemorySessionService` is built on: the
storage it was given, the views and owners of each app and user, the joint writes of
state, and the stale-session check run under the session's lock."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlmemory.integrations._adk_records import (
    Names,
    parse_session_id,
    session_meta,
    state_of,
    user_of_state_id,
)
from sqlmemory.storage.joint import RecordChange
from sqlmemory.storage.records import MAX_PAGE_LIMIT, SessionInfo

try:
    from google.adk.errors.session_not_found_error import SessionNotFoundError
    from google.adk.sessions import Session
    from google.adk.sessions.base_session_service import BaseSessionService
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.adk needs Google ADK: pip install 'sqlmemory[adk]'"
    ) from exc
try:
    from google.adk.errors._stale_session_error import StaleSessionError
except ImportError:  # pragma: no cover - ADK before StaleSessionError raised ValueError

    class StaleSessionError(ValueError):  # type: ignore[no-redef]
        """The session was written since it was read."""


__all__ = ["STALE", "SessionsBase", "merged", "stale"]

STALE = (
    "The session has been modified in storage since it was loaded. "
    "Please reload the session before appending more events."
)
"""ADK's own words for a stale session (``DatabaseSessionService``)."""
SCOPES = {"app": "app:", "user": "user:"}
TEMP = "temp:"


def merged(app: dict[str, Any], user: dict[str, Any], session: dict[str, Any]) -> dict[str, Any]:
    """The state ADK shows: the session's, then ``app:`` and ``user:`` keys."""
    state = dict(session)
    state.update({f"app:{key}": value for key, value in app.items()})
    state.update({f"user:{key}": value for key, value in user.items()})
    return state


def split_state(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``state`` split by scope (prefixes taken off); ``temp:`` keys dropped."""
    deltas: dict[str, dict[str, Any]] = {"app": {}, "user": {}, "session": {}}
    for key, value in state.items():
        for scope, prefix in SCOPES.items():
            if key.startswith(prefix):
                deltas[scope][key[len(prefix) :]] = value
                break
        else:
            if not key.startswith(TEMP):
                deltas["session"][key] = value
    return deltas


def stale(info: SessionInfo | None, session: Session) -> None:
    """Refuse an append to a session that is gone, or was written since ``session`` was
    read: ADK's check, run under the session's lock on the locked record.

    A session this service returned carries the marker of the write it saw; one made
    otherwise (no marker) is stale when the stored session moved past its
    ``last_update_time`` and its newest event is not the stored one.
    """
    meta = session_meta(info)
    if not meta:
        raise SessionNotFoundError(f"Session {session.id} not found.")
    marker = session._storage_update_marker
    if marker is not None:
        if marker != meta.get("marker"):
            raise StaleSessionError(STALE)
        return
    if float(meta.get("update_time", 0.0)) > session.last_update_time:
        newest = session.events[-1].id if session.events else None
        if newest != meta.get("last_event"):
            raise StaleSessionError(STALE)


class SessionsBase(BaseSessionService):
    """The storage, its views and the shared steps of the service's methods."""

    def __init__(self, storage: Any) -> None:
        if not callable(getattr(storage, "update_together", None)) or not callable(
            getattr(storage, "owned_by", None)
        ):
            raise TypeError(
                "storage must be an async sqlmemory storage (AsyncSqlStorage), "
                f"not {type(storage).__name__}"
            )
        self.storage = storage
        self._scope: str | None = getattr(storage, "owner", None)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r})"

    @staticmethod
    def _check_name(value: object, what: str) -> str:
        if not isinstance(value, str):
            raise TypeError(f"{what} must be a str, not {type(value).__name__}")
        return value

    def _names(self, app_name: object, user_id: object) -> Names:
        return Names(self._check_name(app_name, "app_name"), self._check_name(user_id, "user_id"))

    @staticmethod
    def _now() -> float:
        return time.time()

    def _view(self, names: Names) -> Any:
        """The storage seen by the user: their owned view (the scope's, when scoped)."""
        return self.storage if self._scope is not None else self.storage.owned_by(names.user_owner)

    def _user_owner(self, names: Names) -> str | None:
        return None if self._scope is not None else names.user_owner

    def _app_owner(self, names: Names) -> str | None:
        return None if self._scope is not None else names.app_owner

    def _scope_changes(
        self, names: Names, deltas: dict[str, dict[str, Any]], seen: dict[str, dict[str, Any]]
    ) -> list[RecordChange]:
        """The changes merging the ``user:`` and ``app:`` deltas into their records (none
        for an empty delta); each new state lands in ``seen``."""
        targets = {
            "user": (names.user_state_id, self._user_owner(names)),
            "app": (names.app_state_id, self._app_owner(names)),
        }
        changes = []
        for scope, (sid, owner) in targets.items():
            delta = deltas[scope]
            if not delta:
                continue

            def merge(info: SessionInfo | None, scope: str = scope, delta: Any = delta) -> Any:
                seen[scope] = {**state_of(info), **delta}
                return {"adk": {"state": seen[scope]}}

            changes.append(RecordChange(sid, metadata=merge, owner=owner))
        return changes

    async def _write(self, changes: list[RecordChange]) -> None:
        await self.storage.update_together(changes)

    async def _scopes(
        self, names: Names, seen: dict[str, dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The app's and the user's state: those in ``seen``, else read (both at once)."""

        async def read(scope: str, sid: str) -> dict[str, Any]:
            if scope in seen:
                return seen[scope]
            return state_of(await self.storage.session_info(sid))

        app, user = await asyncio.gather(
            read("app", names.app_state_id), read("user", names.user_state_id)
        )
        return app, user

    async def _all_records(self, storage: Any, prefix: str) -> list[SessionInfo]:
        """Every record whose id starts with ``prefix``, in pages of the largest size."""
        records: list[SessionInfo] = []
        cursor = None
        while True:
            page = await storage.list_sessions(prefix, limit=MAX_PAGE_LIMIT, cursor=cursor)
            records.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                return records

    async def _listed(self, names: Names, user_id: str | None) -> list[Any]:
        """The records of the sessions to list, with the user state of each."""
        if user_id is not None:
            infos, user = await asyncio.gather(
                self._all_records(self._view(names), names.user_prefix),
                self.storage.session_info(names.user_state_id),
            )
            user_states = {user_id: state_of(user)}
        else:
            infos, users = await asyncio.gather(
                self._all_records(self.storage, names.app_prefix),
                self._all_records(self.storage, names.user_state_prefix),
            )
            user_states = {}
            for info in users:
                user_name = user_of_state_id(info.session_id)
                if user_name is not None:
                    user_states[user_name] = state_of(info)
        listed = []
        for info in infos:
            found = parse_session_id(info.session_id)
            if found is not None and found[0] == names.app and session_meta(info):
                listed.append((found[1], found[2], info, user_states.get(found[1], {})))
        return listed
