"""The branches of ``SqlStorage``: ``fork`` and ``branches``.

Generated from ``sqlmemory/storage/sql/branches_async.py``
by ``tools/generate_sync.py``: edit that file, never this one.
"""

from __future__ import annotations

from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.lineage import check_fork
from sqlmemory.storage.records import SessionInfo
from sqlmemory.storage.sql import branches as branch_sql
from sqlmemory.storage.sql.front import SqlFront
from sqlmemory.types import utc_now

__all__ = ["SqlBranches"]


class SqlBranches(SqlFront):
    """The methods of ``SqlStorage`` about branches: ``fork`` and ``branches``."""

    def fork(self, session_id: str, new_session_id: str, *, at: str | None = None) -> SessionInfo:
        """Make ``new_session_id`` a copy of the session up to and including the message
        ``at`` (the whole history when ``None``); returns the new session's record.

        The copy is equal to the source in every field (message ids, ``recorded_at``,
        blocks, extras, image and document bytes) and takes the source's title, metadata
        and owner; its record names the source (``parent_id``) and ``at``
        (``forked_at``). One transaction under the source's lock: a concurrent write to
        the source lands wholly before or wholly after it. The database copies the rows
        (``INSERT ... SELECT``); afterwards the two sessions are independent. Through an
        owned view, only the owner's sessions can be forked.

        Examples:
            >>> storage = SqlStorage.from_url("sqlite:///chat.db")  # doctest: +SKIP
            >>> info = await storage.fork("chat-1", "chat-1/v2", at="m3")  # doctest: +SKIP
            >>> info.parent_id, info.forked_at  # doctest: +SKIP
            ('chat-1', 'm3')

        Raises:
            TypeError, InvalidSessionIdError: a bad session id; ``at`` neither a ``str``
                nor ``None``.
            SessionNotFoundError: the session does not exist (through an owned view: is
                not the owner's).
            MessageNotFoundError: ``at`` is not a message of the session.
            ConflictError: ``new_session_id`` exists already.
            SessionOwnerError: through an owned view, ``new_session_id`` is another
                owner's (or no one's).
        """
        sid, new, point = check_fork(session_id, new_session_id, at)
        fork = branch_sql.fork_session
        return self._run("fork", True, fork, sid, new, point, utc_now(), self._owner)

    def branches(self, session_id: str) -> list[SessionInfo]:
        """The sessions forked from ``session_id``, oldest first (through an owned view,
        only the owner's); they are listed after the session itself is deleted too.

        Examples:
            >>> [b.session_id for b in await storage.branches("chat-1")]  # doctest: +SKIP
            ['chat-1/v2']
        """
        sid = check_session_id(session_id)
        listed = branch_sql.list_branches
        return self._run("branches", False, listed, sid, self._owner)

    def _set_lineage(self, session_id: str, parent_id: str | None, forked_at: str | None) -> bool:
        """Give an existing session its lineage, as an export recorded it (for
        ``sqlmemory import``); whether the session exists."""
        sid = check_session_id(session_id)
        parent = None if parent_id is None else check_session_id(parent_id)
        point = None if forked_at is None else check_fork(sid, sid, forked_at)[2]
        lineage = branch_sql.set_lineage
        return self._run("import", True, lineage, sid, parent, point)
