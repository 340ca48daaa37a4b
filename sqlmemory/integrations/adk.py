"""Google ADK: a session service whose sessions, events and state live in sqlmemory.

Needs ``pip install 'sqlmemory[adk]'`` (``google-adk``, and the async SQLite driver; add
``[postgres]`` or ``[mysql]`` for a server). The guide is ``docs/integrations/adk.md``.

:class:`SqlMemorySessionService` is a ``BaseSessionService`` over an
:class:`~sqlmemory.AsyncSqlStorage` (or an owned view of one): the one-line swap for
ADK's ``DatabaseSessionService``. Events become messages (text, calls, results, images
and files as blocks; the rest in ``extras``, :mod:`~sqlmemory.integrations._adk_events`);
each session is owned by its app and user, and its state, the user's and the app's live
in session records (:mod:`~sqlmemory.integrations._adk_records`), written in the same
transaction as the event that changes them.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from sqlmemory.errors import ConversionError
from sqlmemory.integrations._adk_events import event_messages, events_of
from sqlmemory.integrations._adk_records import (
    NO_EVENTS,
    Names,
    RecentEvents,
    check_state,
    new_marker,
    session_meta,
    state_of,
)
from sqlmemory.integrations._adk_service import SessionsBase, merged, split_state, stale
from sqlmemory.storage.joint import RecordChange
from sqlmemory.storage.records import SessionInfo

try:
    from google.adk.errors.already_exists_error import AlreadyExistsError
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.adk.sessions import Session
    from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.adk needs Google ADK: pip install 'sqlmemory[adk]'"
    ) from exc

if TYPE_CHECKING:
    from sqlmemory.storage import AsyncSqlStorage, AsyncStorage

__all__ = ["SqlMemorySessionService"]


class SqlMemorySessionService(SessionsBase):
    """An ADK session service kept in PostgreSQL, MySQL/MariaDB or SQLite by sqlmemory.

    Give it to ADK's ``Runner(session_service=...)`` where ``DatabaseSessionService`` was.
    The database is migrated by sqlmemory (``sqlmemory migrate``), not by ADK.

    Examples:
        >>> import asyncio, tempfile
        >>> from sqlmemory import AsyncSqlStorage, migrate
        >>> path = f"{tempfile.mkdtemp()}/adk.db"
        >>> migrate.upgrade(f"sqlite:///{path}")
        >>> async def main():
        ...     async with AsyncSqlStorage.from_url(f"sqlite+aiosqlite:///{path}") as storage:
        ...         service = SqlMemorySessionService(storage)
        ...         made = await service.create_session(
        ...             app_name="app", user_id="u1", state={"user:lang": "fr", "step": 1}
        ...         )
        ...         got = await service.get_session(
        ...             app_name="app", user_id="u1", session_id=made.id
        ...         )
        ...         return got.state
        >>> asyncio.run(main())
        {'step': 1, 'user:lang': 'fr'}

    Args:
        storage: an :class:`~sqlmemory.AsyncSqlStorage`, unscoped (each session is then
            owned by ``{app}/{user}``) or an owned view (every session is the view's
            owner's); shared by the whole application.

    Raises:
        TypeError: ``storage`` is not an async sqlmemory storage with ``update_together``.
    """

    def __init__(self, storage: AsyncStorage | AsyncSqlStorage) -> None:
        super().__init__(storage)

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session; its ``app:`` and ``user:`` state go to the app and the user
        (``temp:`` is dropped), in one transaction.

        Raises:
            AlreadyExistsError: the user has a session of that id.
            ConversionError: state that cannot be stored as JSON.
        """
        names = self._names(app_name, user_id)
        session_id = session_id or str(uuid.uuid4())
        sid = names.session_id(self._check_name(session_id, "session_id"))
        deltas = self._deltas(state or {}, "state")
        now = self._now()
        marker = new_marker()
        seen: dict[str, dict[str, Any]] = {}

        def create(info: SessionInfo | None) -> dict[str, Any]:
            if info is None or info.message_count or session_meta(info):
                raise AlreadyExistsError(f"Session with id {session_id} already exists.")
            meta = {"state": deltas["session"], "update_time": now, "marker": marker}
            return {"adk": {**meta, "last_event": None}}

        changes = [RecordChange(sid, metadata=create, owner=self._user_owner(names))]
        changes += self._scope_changes(names, deltas, seen)
        await self._write(changes)
        app_state, user_state = await self._scopes(names, seen)
        session = Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=merged(app_state, user_state, deltas["session"]),
            last_update_time=now,
        )
        session._storage_update_marker = marker
        return session

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with its events (``config`` picks the newest ones, read from the
        tail of the history) and its merged state; ``None`` when the user has none of that
        id.

        One storage call, one read transaction: the session's, the user's and the app's
        records and the events, all of one snapshot."""
        names = self._names(app_name, user_id)
        sid = names.session_id(self._check_name(session_id, "session_id"))
        n = config.num_recent_events if config is not None else None
        after = config.after_timestamp if config is not None else None
        policy = (
            NO_EVENTS if n == 0 else None if n is None and not after else RecentEvents(n, after)
        )
        ids = [names.user_state_id, names.app_state_id]
        read = await self.storage.read_together(sid, policy, records=ids)
        info = self._owned(read.records[sid], self._user_owner(names))
        if info is None or not session_meta(info):
            return None
        user = self._owned(read.records[names.user_state_id], self._user_owner(names))
        app = self._owned(read.records[names.app_state_id], self._app_owner(names))
        return self._session(names, session_id, info, state_of(app), state_of(user), read.messages)

    @staticmethod
    def _owned(info: SessionInfo | None, owner: str | None) -> SessionInfo | None:
        """``info`` if it is ``owner``'s (any, for ``None``: an owned view checked it)."""
        return info if owner is None or (info is not None and info.owner == owner) else None

    def _session(
        self,
        names: Names,
        session_id: str,
        info: SessionInfo,
        app_state: dict[str, Any],
        user_state: dict[str, Any],
        messages: list[Any],
    ) -> Session:
        meta = session_meta(info)
        session = Session(
            id=session_id,
            app_name=names.app,
            user_id=names.user,
            state=merged(app_state, user_state, state_of(info)),
            events=events_of(messages, Event),
            last_update_time=float(meta.get("update_time", 0.0)),
        )
        session._storage_update_marker = meta.get("marker")
        return session

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """The user's sessions (every user's when ``user_id`` is ``None``), without events,
        with their merged state, the least recently updated first, as ADK orders them.

        Records are read in keyset pages of 10,000; no event is read."""
        names = self._names(app_name, "" if user_id is None else user_id)
        listed, app = await asyncio.gather(
            self._listed(names, user_id), self.storage.session_info(names.app_state_id)
        )
        app_state = state_of(app)
        sessions = [
            self._session(Names(app_name, user), sid, info, app_state, user_state, [])
            for user, sid, info, user_state in listed
        ]
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session and its events (the user's and the app's state stay)."""
        names = self._names(app_name, user_id)
        sid = names.session_id(self._check_name(session_id, "session_id"))
        await self._view(names).clear(sid)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's ``user:`` state, without the prefix."""
        names = self._names(app_name, user_id)
        return state_of(await self._view(names).session_info(names.user_state_id))

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store the event and its state delta (session, ``user:`` and ``app:`` scopes;
        ``temp:`` only in memory) in one transaction, under the session's lock, once the
        session is found not stale.

        Raises:
            SessionNotFoundError: the session does not exist (any more).
            StaleSessionError: the session was written since ``session`` was read.
            ConversionError: an event or state sqlmemory cannot store; nothing is written.
        """
        if not isinstance(session, Session) or not isinstance(event, Event):
            raise TypeError("append_event takes an ADK Session and an ADK Event")
        if event.partial:
            return event
        names = self._names(session.app_name, session.user_id)
        sid = names.session_id(self._check_name(session.id, "session id"))
        delta = state_delta(event)
        deltas = self._deltas(delta, "state_delta")
        # Converted with the temp: keys left out, before the session object changes.
        kept = {key: value for key, value in delta.items() if not key.startswith("temp:")}
        actions = event.actions.model_copy(update={"state_delta": kept})
        messages = event_messages(event.model_copy(update={"actions": actions}))
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        marker = new_marker()
        update_time = float(event.timestamp)

        def store(info: SessionInfo | None) -> dict[str, Any]:
            stale(info, session)
            meta = session_meta(info)
            state = {**meta.get("state", {}), **deltas["session"]}
            meta.update(state=state, update_time=update_time, marker=marker)
            meta.update(last_event=event.id, last_message=messages[-1].id)
            return {"adk": meta}

        owner = self._user_owner(names)
        changes = [RecordChange(sid, messages, store, create=False, owner=owner)]
        changes += self._scope_changes(names, deltas, {})
        await self._write(changes)
        session.last_update_time = update_time
        session._storage_update_marker = marker
        self._update_session_state(session, event)  # what ADK 2.13's base does, on 2.0 too
        session.events.append(event)
        return event

    @staticmethod
    def _deltas(state: Any, what: str) -> dict[str, dict[str, Any]]:
        if not isinstance(state, dict) or not all(isinstance(key, str) for key in state):
            raise TypeError(f"{what} must be a dict of str keys, not {type(state).__name__}")
        return {
            scope: check_state(delta, f"{what} ({scope})")
            for scope, delta in split_state(state).items()
        }


def state_delta(event: Event) -> dict[str, Any]:
    """The event's state delta, or :class:`ConversionError` for actions changed past
    ADK's validation."""
    actions = event.actions
    delta = getattr(actions, "state_delta", None)
    if not isinstance(actions, EventActions) or not isinstance(delta, dict):
        raise ConversionError("event.actions.state_delta must be a dict")
    return delta
