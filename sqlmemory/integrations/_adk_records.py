"""Where the ADK session service keeps things: session ids, owners, state records, windows.

Each ADK session is the sqlmemory session ``{app}/{user}/{session}``, owned by
``{app}/{user}``; the user's ``user:`` state is the metadata of the record
``{app}:user/{user}`` (same owner), the app's ``app:`` state that of ``{app}:app`` (owned
by ``{app}:app``). Each name is escaped first (``%``, ``/``, ``:``, whitespace and control
characters as ``%XX`` or ``%uXXXX``), so the ids are unambiguous, ``{app}/`` lists only
sessions and never a state record, and :func:`parse_session_id` gives the names back.
A session record's metadata holds, under ``"adk"``, its ``state``, its ``update_time``
(ADK's ``last_update_time``), the ``marker`` of its last write (the stale-session check)
and the id of its ``last_event``.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.integrations._adk_events import ADK, is_event_start
from sqlmemory.policy.groups import Item
from sqlmemory.storage.records import SessionInfo
from sqlmemory.types import Message
from sqlmemory.types._json import freeze_mapping, thaw_json

__all__ = [
    "NO_EVENTS",
    "Names",
    "RecentEvents",
    "check_state",
    "new_marker",
    "parse_session_id",
    "session_meta",
    "state_of",
    "user_of_state_id",
]

_ESCAPED = re.compile(r"%(?:u([0-9A-F]{4})|([0-9A-F]{2}))")


def _escape_char(ch: str) -> str:
    if ch in "%/:" or ch.isspace() or unicodedata.category(ch) in ("Cc", "Cs"):
        code = ord(ch)
        return f"%{code:02X}" if code < 0x100 else f"%u{code:04X}"
    return ch


def escape(name: str) -> str:
    """``name`` with ``%``, ``/``, ``:``, whitespace and control characters escaped."""
    return "".join(_escape_char(ch) for ch in name)


def unescape(text: str) -> str:
    """The name :func:`escape` escaped."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)


@dataclass(frozen=True)
class Names:
    """The sqlmemory ids and owners of one ADK app and user."""

    app: str
    user: str

    @property
    def app_prefix(self) -> str:
        return f"{escape(self.app)}/"

    @property
    def user_prefix(self) -> str:
        return f"{escape(self.app)}/{escape(self.user)}/"

    @property
    def user_owner(self) -> str:
        return f"{escape(self.app)}/{escape(self.user)}"

    @property
    def app_owner(self) -> str:
        return f"{escape(self.app)}:app"

    @property
    def user_state_prefix(self) -> str:
        return f"{escape(self.app)}:user/"

    @property
    def user_state_id(self) -> str:
        return f"{escape(self.app)}:user/{escape(self.user)}"

    @property
    def app_state_id(self) -> str:
        return self.app_owner

    def session_id(self, session_id: str) -> str:
        return f"{self.user_prefix}{escape(session_id)}"


def parse_session_id(sid: str) -> tuple[str, str, str] | None:
    """The app, user and session of a sqlmemory session id, or ``None`` for another id."""
    pieces = sid.split("/")
    if len(pieces) != 3 or any(":" in piece for piece in pieces):
        return None
    app, user, session = (unescape(piece) for piece in pieces)
    return app, user, session


def new_marker() -> str:
    """A fresh revision marker: every write of a session record gets one."""
    return uuid.uuid4().hex


def session_meta(info: SessionInfo | None) -> dict[str, Any]:
    """The ``"adk"`` part of a session record's metadata (empty when there is none)."""
    if info is None:
        return {}
    meta = info.metadata.get(ADK)
    return dict(thaw_json(meta)) if isinstance(meta, Mapping) else {}


def state_of(info: SessionInfo | None) -> dict[str, Any]:
    """The state a record holds: ``{}`` for none."""
    state = session_meta(info).get("state")
    return dict(state) if isinstance(state, dict) else {}


def user_of_state_id(sid: str) -> str | None:
    """The user whose state record ``sid`` is, or ``None`` for another id."""
    _, found, user = sid.partition(":user/")
    return unescape(user) if found and "/" not in user else None


def check_state(state: object, what: str) -> dict[str, Any]:
    """``state`` as JSON sqlmemory can store, or :class:`ConversionError` naming ``what``.

    Values are made JSON as ADK's database service makes them (``to_jsonable_python``:
    datetimes, models, sets); what still is not JSON (NaN, a huge int, a lone surrogate)
    is refused rather than stored changed.
    """
    from pydantic_core import to_jsonable_python

    if not isinstance(state, Mapping):
        raise TypeError(f"{what} must be a dict, not {type(state).__name__}")
    try:
        return dict(thaw_json(freeze_mapping(to_jsonable_python(dict(state)), what)))
    except InvalidMessageError as exc:
        raise ConversionError(str(exc)) from None
    except Exception as exc:  # pydantic_core's serialization error, a RecursionError
        raise ConversionError(f"{what} cannot be stored as JSON ({type(exc).__name__})") from None


class RecentEvents:
    """The tail policy of ``GetSessionConfig``: the newest ``n`` events (all when
    ``None``), and of them only those after the newest event older than ``after``.

    It counts events, not messages (an event may be several messages): it needs content,
    and reads pages of ``n`` messages and a few more until it has seen enough.
    """

    needs_content = True

    def __init__(self, n: int | None, after: float | None) -> None:
        self.n = n
        self.after = after
        self.page_hint = (n + 8) if n is not None else 64

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        chosen = self.select(messages, True)
        assert chosen is not None  # noqa: S101 - a whole history always decides
        return [messages[i] for i in chosen]

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        events = 0
        start = len(tail)
        for index in range(len(tail) - 1, -1, -1):
            message = tail[index]
            assert isinstance(message, Message)  # noqa: S101 - needs_content
            if not is_event_start(message):
                continue
            if self.after is not None and _timestamp(message) < self.after:
                return list(range(start, len(tail)))
            events += 1
            start = index
            if self.n is not None and events >= self.n:
                return list(range(start, len(tail)))
        return list(range(start, len(tail))) if complete else None


def _timestamp(message: Message) -> float:
    head = message.extras.get(ADK)
    event = head.get("event") if isinstance(head, Mapping) else None
    stamp = event.get("timestamp") if isinstance(event, Mapping) else None
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return float(stamp)
    return message.recorded_at.timestamp() if message.recorded_at is not None else 0.0


class _NoEvents:
    """The tail policy of ``num_recent_events=0``: no event, read at the cost of one row."""

    needs_content = False
    page_hint = 1

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return []

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        return []


NO_EVENTS = _NoEvents()
"""The policy of ``GetSessionConfig(num_recent_events=0)``: the session without events."""
