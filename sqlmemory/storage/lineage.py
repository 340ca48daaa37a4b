"""Branches of sessions: the checks and errors of ``fork`` that every storage shares.

``storage.fork(session_id, new_session_id, at=...)`` makes a new session holding the
source's messages up to and including ``at`` (all of them when ``None``), with the
source's title, metadata and owner, and its lineage (``SessionInfo.parent_id`` and
``SessionInfo.forked_at``); ``storage.branches(session_id)`` lists the forks of a session,
oldest first (``docs/branches.md``). What an argument may be, and which error a failed
fork raises, is decided here once, so every storage refuses the same input the same way.
Pure Python.
"""

from __future__ import annotations

from sqlmemory.errors import (
    ConflictError,
    InvalidMessageError,
    MessageNotFoundError,
    SessionNotFoundError,
)
from sqlmemory.storage.checks import check_session_id
from sqlmemory.types.blocks import check_id

__all__ = ["check_fork", "no_source", "not_a_message", "taken"]


def check_fork(
    session_id: object, new_session_id: object, at: object
) -> tuple[str, str, str | None]:
    """The arguments of ``fork``, checked before anything is read or written.

    Raises:
        TypeError: a session id or ``at`` that is not a ``str`` (``at`` may be ``None``).
        InvalidSessionIdError: a session id that is not allowed.
        MessageNotFoundError: ``at`` is no message id at all (empty, too long, holding a
            control character), so it cannot be a message of the session.

    Examples:
        >>> check_fork("chat-1", "chat-1/edit", "m3")
        ('chat-1', 'chat-1/edit', 'm3')
        >>> check_fork("chat-1", "chat-1/edit", 3)
        Traceback (most recent call last):
        ...
        TypeError: at must be a message id (str) or None, not int
    """
    sid = check_session_id(session_id)
    new = check_session_id(new_session_id)
    if at is None:
        return sid, new, None
    if not isinstance(at, str):
        raise TypeError(f"at must be a message id (str) or None, not {type(at).__name__}")
    try:
        check_id(at, "at")
    except InvalidMessageError:
        raise not_a_message(sid, at) from None
    return sid, new, at


def no_source(session_id: str) -> SessionNotFoundError:
    """The error of a fork whose source does not exist (or is not the view's owner's)."""
    return SessionNotFoundError(
        f"session {session_id!r} does not exist; nothing was written", session_id
    )


def not_a_message(session_id: str, message_id: str) -> MessageNotFoundError:
    """The error of a fork whose ``at`` is not a message of the source."""
    return MessageNotFoundError(
        f"message {message_id!r} is not a message of session {session_id!r}; nothing was written",
        session_id,
        message_id,
    )


def taken(new_session_id: str) -> ConflictError:
    """The error of a fork into a session id that exists already."""
    return ConflictError(f"session {new_session_id!r} exists already; nothing was written")
