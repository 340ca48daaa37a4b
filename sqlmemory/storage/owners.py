"""Owners of sessions: the checks and rules every storage shares (``docs/many-users.md``).

A session's owner is a string on its record (``SessionInfo.owner``). A storage made by
``storage.owned_by(owner)`` is scoped to that owner: sessions of other owners, and
sessions with none, do not exist through it. What a scoped storage may ask of the
owner filters (``sessions(owner=...)``, ``list_sessions(owner=...)``,
``update_session(owner=...)``) is decided here, once for every storage. Pure Python.
"""

from __future__ import annotations

from typing import Final

from sqlmemory.errors import InvalidSessionIdError, SessionOwnerError

__all__ = [
    "MAX_OWNER_LENGTH",
    "NOBODY",
    "check_owner",
    "check_owner_change",
    "check_owner_filter",
    "owner_filter",
    "refuse",
]

MAX_OWNER_LENGTH = 255
"""The longest owner, in characters (the column holds 255)."""

NOBODY: Final = "\x00"
"""The owner filter of a scoped storage asked about another owner: it matches no
session (no owner holds NUL), and a storage answers it without running SQL."""


def check_owner(owner: object) -> str:
    """Return ``owner`` if it is a valid owner, else raise.

    An owner is a non-empty ``str`` of at most 255 characters, without NUL or a lone
    surrogate; anything else is refused as a bad session id is.

    Raises:
        TypeError: it is not a ``str``.
        InvalidSessionIdError: it is empty, too long, or holds NUL or a lone surrogate.

    Examples:
        >>> check_owner("user-42")
        'user-42'
        >>> check_owner("")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.InvalidSessionIdError: owner must not be empty
    """
    if not isinstance(owner, str):
        raise TypeError(f"owner must be a str, not {type(owner).__name__}")
    if not owner:
        raise InvalidSessionIdError("owner must not be empty")
    if len(owner) > MAX_OWNER_LENGTH:
        raise InvalidSessionIdError(f"owner is longer than {MAX_OWNER_LENGTH} characters")
    if "\x00" in owner:
        raise InvalidSessionIdError("owner holds NUL")
    try:
        owner.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidSessionIdError(f"owner holds a lone surrogate at index {exc.start}") from None
    return owner


def check_owner_filter(owner: object) -> str | None:
    """The ``owner=`` argument of a listing: ``None`` (every owner) or a valid owner."""
    return None if owner is None else check_owner(owner)


def owner_filter(scope: str | None, asked: str | None) -> str | None:
    """The owner a listing filters by: ``asked`` on an unscoped storage (``None``: all).

    Through a storage scoped to ``scope``, only its own sessions: ``asked`` of another
    owner finds nothing (:data:`NOBODY`).

    Examples:
        >>> owner_filter(None, None), owner_filter(None, "a"), owner_filter("a", None)
        (None, 'a', 'a')
        >>> owner_filter("a", "b") == NOBODY
        True
    """
    if scope is None:
        return asked
    return scope if asked in (None, scope) else NOBODY


def check_owner_change(scope: str | None, session_id: str, owner: object) -> str | None:
    """The owner ``update_session(owner=...)`` sets: any (or ``None``, unowned) on an
    unscoped storage; through a scoped one, only its own owner (which changes nothing).

    Raises:
        TypeError, InvalidSessionIdError: a bad owner.
        SessionOwnerError: a scoped storage would hand the session to another owner, or
            to none.
    """
    new = None if owner is None else check_owner(owner)
    if scope is not None and new != scope:
        raise refuse(session_id, scope)
    return new


def refuse(session_id: str, owner: str) -> SessionOwnerError:
    """The error of a write through ``owner``'s view to a session that is not theirs."""
    return SessionOwnerError(
        f"session {session_id!r} is not owned by {owner!r}; nothing was written"
    )
