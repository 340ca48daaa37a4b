"""Session records: what a storage knows about a session besides its messages.

``SessionInfo`` (one session's record) and ``SessionPage`` (a page of
``list_sessions``), the opaque cursor of the pages, and the argument checks of
``update_session``, ``list_sessions`` and ``prune``, shared by every storage so that all of
them refuse the same input with the same error (``docs/contract/storage.md``, session
records). Pure Python: no SQLAlchemy.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any, Final, Literal

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types import FrozenDict
from sqlmemory.types._json import EMPTY, dump_json, freeze_mapping

__all__ = [
    "DEFAULT_PAGE_LIMIT",
    "MAX_PAGE_LIMIT",
    "UNSET",
    "SessionInfo",
    "SessionPage",
    "Unset",
    "check_limit",
    "check_metadata",
    "check_title",
    "cutoff_of",
    "decode_cursor",
    "encode_cursor",
    "info_of",
    "metadata_json",
    "metadata_of_json",
    "page_of",
]

DEFAULT_PAGE_LIMIT = 50
"""Sessions on a page of ``list_sessions`` unless the caller asks for another number."""
MAX_PAGE_LIMIT = 10_000
"""The most sessions one page holds."""


class Unset(Enum):
    """The type of :data:`UNSET`: an argument of ``update_session`` left out."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
"""An argument of ``update_session`` that was not given: the stored value stays."""


@dataclass(frozen=True)
class SessionInfo:
    """The record of one session, as ``session_info`` and ``list_sessions`` return it.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("chat-1", Message.user("Hi"))
        >>> storage.update_session("chat-1", title="Greetings")
        >>> info = storage.session_info("chat-1")
        >>> info.title, info.message_count, info.updated_at >= info.created_at
        ('Greetings', 1, True)

    Attributes:
        session_id: the session.
        created_at: when the session's first write happened (aware UTC).
        updated_at: the wall-clock time of the last write that changed the session (its
            messages, title or metadata); a message's own ``recorded_at`` never moves it.
        message_count: how many messages the session holds.
        title: the title ``update_session`` gave, or ``None``.
        metadata: the JSON mapping ``update_session`` gave (empty when none).
        owner: whose session it is (``None``: nobody's): the owner of the view that first
            wrote it, or what ``update_session(owner=...)`` set (``docs/many-users.md``).
        parent_id: the session it was forked from (``fork``), kept as a plain id when
            that session is deleted; ``None`` for a session that is no fork.
        forked_at: the id of the parent's message the fork ends at (the ``at`` of
            ``fork``); ``None`` for a fork of the whole history, or no fork.
    """

    session_id: str
    created_at: datetime
    updated_at: datetime
    message_count: int
    title: str | None = None
    metadata: FrozenDict = field(default_factory=lambda: EMPTY)
    owner: str | None = None
    parent_id: str | None = None
    forked_at: str | None = None


@dataclass(frozen=True)
class SessionPage:
    """One page of ``list_sessions``: the most recently updated sessions first.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> for sid in ("a", "b", "c"):
        ...     storage.append(sid, Message.user("Hi"))
        >>> page = storage.list_sessions(limit=2)
        >>> [info.session_id for info in page.items], page.next_cursor is not None
        (['c', 'b'], True)
        >>> last = storage.list_sessions(limit=2, cursor=page.next_cursor)
        >>> [info.session_id for info in last.items], last.next_cursor
        (['a'], None)

    Attributes:
        items: the sessions of the page, most recently updated first (ties: the greater
            session id first).
        next_cursor: pass it as ``cursor`` for the next page; ``None`` on the last page.
    """

    items: list[SessionInfo]
    next_cursor: str | None


def check_title(title: object) -> str | None:
    """A title for ``update_session``: a ``str`` that encodes to UTF-8, or ``None``.

    Raises:
        TypeError: it is neither a ``str`` nor ``None``.
        ValueError: it holds a lone surrogate.
    """
    if title is None:
        return None
    if not isinstance(title, str):
        raise TypeError(f"title must be a str or None, not {type(title).__name__}")
    try:
        title.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"title holds a lone surrogate at index {exc.start}") from None
    return title


def check_metadata(metadata: object) -> FrozenDict:
    """Session metadata for ``update_session``: a JSON mapping (``None`` is empty).

    Raises:
        TypeError: it is not a mapping.
        ValueError: it holds something JSON cannot represent (NaN, a set, a lone
            surrogate, a non-string key).
    """
    if metadata is None:
        return EMPTY
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping or None, not {type(metadata).__name__}")
    try:
        return freeze_mapping(metadata, "session metadata")
    except InvalidMessageError as exc:
        raise ValueError(str(exc)) from None


def metadata_json(metadata: FrozenDict) -> str | None:
    """The stored form of session metadata: compact JSON, ``None`` when empty."""
    return dump_json(metadata) if metadata else None


def metadata_of_json(text: str | None) -> FrozenDict:
    """Session metadata from its stored form."""
    if not text:
        return EMPTY
    return freeze_mapping(json.loads(text), "session metadata")


def check_limit(limit: object) -> int:
    """The page size of ``list_sessions``: an ``int`` from 1 to :data:`MAX_PAGE_LIMIT`.

    Raises:
        TypeError: it is not an ``int`` (``bool`` included).
        ValueError: it is out of range.
    """
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if not 1 <= limit <= MAX_PAGE_LIMIT:
        raise ValueError(f"limit must be from 1 to {MAX_PAGE_LIMIT}, got {limit}")
    return limit


def cutoff_of(older_than: object, now: datetime) -> datetime:
    """The time before which ``prune(older_than)`` deletes sessions (aware UTC).

    Raises:
        TypeError: ``older_than`` is neither a ``datetime`` nor a ``timedelta``.
        ValueError: a naive ``datetime``, or a negative ``timedelta``.

    Examples:
        >>> from datetime import datetime, timedelta, timezone
        >>> now = datetime(2026, 1, 31, tzinfo=timezone.utc)
        >>> cutoff_of(timedelta(days=30), now)
        datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if isinstance(older_than, datetime):
        if older_than.tzinfo is None or older_than.utcoffset() is None:
            raise ValueError("older_than must be a timezone-aware datetime")
        return older_than.astimezone(timezone.utc)
    if isinstance(older_than, timedelta):
        if older_than < timedelta(0):
            raise ValueError(f"older_than must not be negative, got {older_than}")
        try:
            return now - older_than
        except OverflowError:
            return datetime.min.replace(tzinfo=timezone.utc)
    raise TypeError(
        f"older_than must be a datetime or a timedelta, not {type(older_than).__name__}"
    )


_CURSOR_VERSION: Literal[1] = 1


def encode_cursor(info: SessionInfo) -> str:
    """The cursor of the page after ``info``: opaque text the caller hands back.

    Examples:
        >>> from datetime import datetime, timezone
        >>> at = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> cursor = encode_cursor(SessionInfo("chat-1", at, at, 0))
        >>> decode_cursor(cursor) == (at, "chat-1")
        True
    """
    payload = [
        _CURSOR_VERSION,
        info.updated_at.astimezone(timezone.utc).isoformat(),
        info.session_id,
    ]
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: object) -> tuple[datetime, str]:
    """The ``(updated_at, session_id)`` a cursor of :func:`encode_cursor` stands for.

    Raises:
        TypeError: ``cursor`` is not a ``str``.
        ValueError: it is not a cursor ``list_sessions`` returned.
    """
    if not isinstance(cursor, str):
        raise TypeError(f"cursor must be a str or None, not {type(cursor).__name__}")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        version, updated, session_id = json.loads(raw.decode("utf-8"))
        at = datetime.fromisoformat(updated)
        valid = version == _CURSOR_VERSION and isinstance(session_id, str) and at.tzinfo
    except (binascii.Error, UnicodeError, ValueError, TypeError, AttributeError):
        valid = False
    if not valid:
        raise ValueError("cursor is not one that list_sessions returned")
    return at.astimezone(timezone.utc), session_id


def page_of(items: list[SessionInfo], limit: int) -> SessionPage:
    """The page of the first ``limit`` of ``items`` (read ``limit + 1`` to know the end)."""
    if len(items) > limit:
        shown = items[:limit]
        return SessionPage(shown, encode_cursor(shown[-1]))
    return SessionPage(items, None)


def info_of(values: dict[str, Any]) -> SessionInfo:
    """A :class:`SessionInfo` from a stored record's columns (``metadata_json`` as text)."""
    return SessionInfo(
        session_id=values["session_id"],
        created_at=values["created_at"],
        updated_at=values["updated_at"],
        message_count=int(values["message_count"]),
        title=values["title"],
        metadata=metadata_of_json(values["metadata_json"]),
        owner=values.get("owner"),
        parent_id=values.get("parent_id"),
        forked_at=values.get("forked_at"),
    )
