"""The in-memory storage's branches: ``fork`` and ``branches`` (``docs/branches.md``).

:class:`MemoryBranches` adds them to the state of
:class:`~sqlmemory.storage._memory_records.MemoryRecords`; messages are immutable values,
so a fork shares them with its source and still never changes with it.
"""

from __future__ import annotations

from sqlmemory.storage._memory_records import MemoryRecords
from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.lineage import check_fork, no_source, not_a_message, taken
from sqlmemory.storage.owners import refuse
from sqlmemory.storage.records import SessionInfo
from sqlmemory.types import utc_now

__all__ = ["MemoryBranches"]


class MemoryBranches(MemoryRecords):
    """``fork`` and ``branches`` over the dicts of :class:`MemoryRecords`."""

    def fork(self, session_id: str, new_session_id: str, *, at: str | None = None) -> SessionInfo:
        """Copy the session up to and including the message ``at`` (all of it when
        ``None``) into the new session ``new_session_id``; returns the new record.

        The copy takes the source's title, metadata and owner, and names the source
        (``parent_id``) and ``at`` (``forked_at``).

        Examples:
            >>> from sqlmemory import InMemoryStorage, Message
            >>> storage = InMemoryStorage()
            >>> storage.append("chat-1", Message.user("Hi", id="m1"), Message.user("Bye"))
            >>> info = storage.fork("chat-1", "chat-1/v2", at="m1")
            >>> info.parent_id, info.forked_at, info.message_count
            ('chat-1', 'm1', 1)

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
        with self._lock:
            if not self._visible(sid):
                raise no_source(sid)
            history = self._sessions.get(sid, [])
            end = len(history)
            if point is not None:
                ids = [m.id for m in history]
                if point not in ids:
                    raise not_a_message(sid, point)
                end = ids.index(point) + 1
            taken_by = self._records.get(new)
            if taken_by is not None:
                if self._owner is not None and taken_by.owner != self._owner:
                    raise refuse(new, self._owner)
                raise taken(new)
            source = self._records[sid]
            now = utc_now()
            copied = list(history[:end])
            if copied:
                self._sessions[new] = copied
            clock = self._clocks.get(sid)
            if clock is not None:
                self._clocks[new] = clock
            self._records[new] = SessionInfo(
                new,
                now,
                now,
                0,
                title=source.title,
                metadata=source.metadata,
                owner=source.owner,
                parent_id=sid,
                forked_at=point,
            )
            found = self._info(new)
        assert found is not None  # noqa: S101 - created above, under the lock
        return found

    def branches(self, session_id: str) -> list[SessionInfo]:
        """The sessions forked from ``session_id``, oldest first (through an owned view,
        only the owner's), whether or not it still exists.

        Examples:
            >>> from sqlmemory import InMemoryStorage, Message
            >>> storage = InMemoryStorage()
            >>> storage.append("chat-1", Message.user("Hi"))
            >>> _ = storage.fork("chat-1", "chat-1/v2")
            >>> [b.session_id for b in storage.branches("chat-1")]
            ['chat-1/v2']
        """
        sid = check_session_id(session_id)
        with self._lock:
            found = [
                self._info(child)
                for child, record in self._records.items()
                if record.parent_id == sid
            ]
        children = [info for info in found if info is not None]
        return sorted(children, key=lambda info: (info.created_at, info.session_id))
