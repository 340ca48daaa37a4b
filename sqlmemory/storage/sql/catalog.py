"""The catalog of an ``SqlStorage``: listing sessions, their records and owners.

Generated from ``sqlmemory/storage/sql/catalog_async.py``
by ``tools/generate_sync.py``: edit that file, never this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlmemory.storage.checks import (
    check_prefix,
    check_session_id,
)
from sqlmemory.storage.owners import (
    NOBODY,
    check_owner,
    check_owner_change,
    check_owner_filter,
    owner_filter,
)
from sqlmemory.storage.records import (
    DEFAULT_PAGE_LIMIT,
    UNSET,
    SessionInfo,
    SessionPage,
    Unset,
    check_limit,
    check_metadata,
    check_title,
    cutoff_of,
    decode_cursor,
    metadata_json,
    page_of,
)
from sqlmemory.storage.sql import (
    erasure,
    reads,
    record_queries,
)
from sqlmemory.storage.sql.front import SqlFront
from sqlmemory.storage.sql.reads import forget_built_messages
from sqlmemory.types import utc_now

T = TypeVar("T")


__all__ = ["SqlCatalog"]


class SqlCatalog(SqlFront):
    """The methods of ``SqlStorage`` about sessions as a whole."""

    def sessions(self, prefix: str | None = None, *, owner: str | None = None) -> list[str]:
        """The ids of stored sessions, sorted; only those starting with ``prefix`` if given,
        and only ``owner``'s if given (an owned view lists its owner's only)."""
        check_prefix(prefix)
        wanted = owner_filter(self._owner, check_owner_filter(owner))
        if wanted == NOBODY:
            return []
        return self._run("sessions", False, reads.session_ids, prefix, wanted)

    def session_info(self, session_id: str) -> SessionInfo | None:
        """The session's record (title, metadata, owner, times, message count), or ``None``."""
        sid = check_session_id(session_id)
        info = record_queries.session_info
        return self._run("session_info", False, info, sid, self._owner)

    def update_session(
        self,
        session_id: str,
        *,
        title: str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
        owner: str | Unset | None = UNSET,
    ) -> None:
        """Set the session's title, metadata and/or owner, creating its record if needed.

        An argument left out keeps its stored value; ``None`` clears it. ``owner``
        assigns or transfers the session (``None``: it becomes no one's); through an owned
        view only the view's own owner may be given.

        Raises:
            TypeError: a title that is not a ``str``, metadata that is not a mapping, an
                owner that is not a ``str``.
            ValueError: a title or metadata that cannot be stored (a lone surrogate,
                metadata JSON cannot represent); a bad owner (``InvalidSessionIdError``).
            SessionOwnerError: through an owned view, the session is another owner's (or
                no one's), or ``owner`` names another owner.
        """
        sid = check_session_id(session_id)
        values: dict[str, Any] = {}
        if title is not UNSET:
            values["title"] = check_title(title)
        if metadata is not UNSET:
            values["metadata_json"] = metadata_json(check_metadata(metadata))
        if owner is not UNSET:
            values["owner"] = check_owner_change(self._owner, sid, owner)
        update = record_queries.update_session
        self._run("update_session", True, update, sid, values, utc_now(), self._owner)

    def list_sessions(
        self,
        prefix: str | None = None,
        *,
        owner: str | None = None,
        limit: int = DEFAULT_PAGE_LIMIT,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of session records, the most recently updated first; only ``owner``'s
        when given (an owned view lists its owner's only).

        Keyset-paged: a page costs ``limit`` index rows however deep it is. Pass the
        page's ``next_cursor`` back as ``cursor`` for the next one.

        Raises:
            TypeError: a ``prefix``, ``owner`` or ``cursor`` that is not a ``str``, a
                ``limit`` that is not an ``int``.
            ValueError: ``limit`` out of range, a ``cursor`` this method did not return,
                a bad owner.
        """
        check_prefix(prefix)
        wanted = owner_filter(self._owner, check_owner_filter(owner))
        check_limit(limit)
        after = None if cursor is None else decode_cursor(cursor)
        if wanted == NOBODY:
            return SessionPage([], None)
        page = record_queries.list_page
        found = self._run("list_sessions", False, page, prefix, limit + 1, after, wanted)
        return page_of(found, limit)

    def prune(self, older_than: datetime | timedelta) -> int:
        """Delete every session not updated since ``older_than`` (a time, or an age);
        returns the number of sessions deleted. An owned view prunes its owner's only."""
        cutoff = cutoff_of(older_than, utc_now())
        return self._run("prune", True, record_queries.prune, cutoff, self._owner)

    def erase_owner(self, owner: str) -> int:
        """Delete every session of ``owner`` with its messages, blocks, blob bytes and
        record; returns how many sessions went.

        Works in bounded transactions (a batch of sessions each, a very long session in
        parts), so a large owner never holds one long transaction; safe to run again
        after a crash half-way. After it returns, no session the owner had when it
        started remains. Through an owned view, only its own owner can be erased
        (another owner has nothing to erase).

        Examples:
            >>> storage.erase_owner("user-42")  # doctest: +SKIP
            3

        Raises:
            TypeError, InvalidSessionIdError: a bad owner.
        """
        wanted = owner_filter(self._owner, check_owner(owner))
        if wanted is None or wanted == NOBODY:
            return 0
        erased = 0
        while True:
            count, done = self._run("erase_owner", True, erasure.erase_batch, wanted, utc_now())
            erased += count
            if done:
                # The messages this process built from the owner's rows go too (no read
                # could reach them without the rows; they would only wait in memory).
                forget_built_messages()
                return erased
