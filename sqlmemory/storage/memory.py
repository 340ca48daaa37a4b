"""A storage that keeps sessions in process memory: for tests, prototypes and one-process bots."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlmemory.errors import ConflictError, DuplicateMessageError
from sqlmemory.policy.groups import evict_start
from sqlmemory.policy.windows import Policy, RecentWindow
from sqlmemory.storage.base import SessionView
from sqlmemory.storage.checks import (
    DEFAULT_MAX_BLOB_BYTES,
    check_count,
    check_messages,
    check_policy,
    check_prefix,
    check_session_id,
    same_content,
)
from sqlmemory.storage.compaction import (
    DEFAULT_KEEP,
    Summarizer,
    call_summarizer,
    check_compaction,
    plan_compaction,
    summary_messages,
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
    page_of,
)
from sqlmemory.types import Message, utc_now

__all__ = ["InMemoryStorage"]


class InMemoryStorage:
    """Sessions held in a dict, safe for concurrent use from threads.

    Messages are immutable values, so handing them out shares nothing mutable; every
    method returns a new list.

    Examples:
        >>> from sqlmemory import Message
        >>> storage = InMemoryStorage()
        >>> storage.append("chat-1", Message.user("ping"), Message.assistant("pong"))
        >>> storage.count("chat-1"), storage.sessions()
        (2, ['chat-1'])

    Args:
        max_blob_bytes: the largest image or document accepted, in bytes (20 MiB).
    """

    def __init__(self, *, max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES) -> None:
        self.max_blob_bytes = max_blob_bytes
        self._sessions: dict[str, list[Message]] = {}
        self._clocks: dict[str, datetime] = {}
        self._records: dict[str, SessionInfo] = {}
        """Every existing session's record; its ``message_count`` is filled in on read."""
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"InMemoryStorage(sessions={len(self._records)})"

    def _stamp(self, session_id: str, messages: Sequence[Message]) -> list[Message]:
        """``messages`` with the store's stamp on those without a ``recorded_at``.

        The session clock is the latest stamp the store assigned: it never goes back, and
        a caller-supplied ``recorded_at`` (an import) neither moves it nor is changed.
        """
        floor = self._clocks.get(session_id)
        stamped = []
        for message in messages:
            if message.recorded_at is None:
                now = utc_now()
                floor = max(now, floor) if floor is not None else now
                message = message.with_recorded_at(floor)
            stamped.append(message)
        if floor is not None:
            self._clocks[session_id] = floor
        return stamped

    def _drop(self, session_id: str) -> list[Message]:
        """Delete the session, its clock and its record; returns its messages."""
        self._clocks.pop(session_id, None)
        self._records.pop(session_id, None)
        return self._sessions.pop(session_id, [])

    def _touch(self, session_id: str, **changes: Any) -> None:
        """Record a write that changed the session (the lock is held): its clock moves."""
        now = utc_now()
        record = self._records.get(session_id)
        if record is None:
            record = SessionInfo(session_id, now, now, 0)
        now = max(now, record.updated_at)
        self._records[session_id] = dataclasses.replace(record, updated_at=now, **changes)

    def append(self, session_id: str, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none.

        A message whose id is stored already with the same content is skipped.

        Raises:
            DuplicateMessageError: an id is stored with different content.
        """
        check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        if not batch:
            return
        with self._lock:
            history = self._sessions.get(session_id, [])
            stored = {m.id: m for m in history}
            fresh: list[Message] = []
            for message in batch:
                old = stored.get(message.id)
                if old is None:
                    fresh.append(message)
                elif not same_content(old, message):
                    raise DuplicateMessageError(
                        f"message id {message.id!r} is stored with different content"
                    )
            if not fresh:
                return
            self._sessions[session_id] = [*history, *self._stamp(session_id, fresh)]
            self._touch(session_id)

    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The session's history, oldest first, or its window under ``policy``."""
        check_session_id(session_id)
        check_policy(policy)
        with self._lock:
            history = list(self._sessions.get(session_id, ()))
        return policy.apply(history) if policy is not None else history

    def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the session's whole history; ``[]`` clears it."""
        check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        with self._lock:
            history = self._sessions.get(session_id, [])
            stored = {m.id: m for m in history}
            result = []
            for message in batch:
                old = stored.get(message.id)
                if message.recorded_at is None and old is not None and same_content(old, message):
                    message = old
                result.append(message)
            if not result:
                self._drop(session_id)
                return
            stamped = self._stamp(session_id, result)
            if stamped != history:
                self._sessions[session_id] = stamped
                self._touch(session_id)

    def recent(self, session_id: str, n: int) -> list[Message]:
        """At most the newest ``n`` messages, in whole groups, newest last."""
        check_session_id(session_id)
        check_count(n, "n")
        return self.load(session_id, RecentWindow(n))

    def evict(self, session_id: str, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; returns how many went."""
        check_session_id(session_id)
        check_count(keep, "keep")
        with self._lock:
            history = self._sessions.get(session_id, [])
            cut = evict_start([m.role for m in history], keep)
            if cut:
                remaining = history[cut:]
                if remaining:
                    self._sessions[session_id] = remaining
                    self._touch(session_id)
                else:
                    self._drop(session_id)
            return cut

    def clear(self, session_id: str) -> int:
        """Delete the session; returns the number of messages deleted."""
        check_session_id(session_id)
        with self._lock:
            return len(self._drop(session_id))

    def pop(self, session_id: str) -> Message | None:
        """Remove and return the newest message, as stored; ``None`` when there is none.

        Exactly one message goes, whatever its group: popping a tool result leaves its
        call unanswered, and windows then leave that incomplete group out.

        Examples:
            >>> from sqlmemory import Message
            >>> storage = InMemoryStorage()
            >>> storage.append("chat-1", Message.user("ping"), Message.assistant("pong"))
            >>> storage.pop("chat-1").text_content(), storage.count("chat-1")
            ('pong', 1)
            >>> storage.pop("chat-1").text_content(), storage.pop("chat-1")
            ('ping', None)
        """
        check_session_id(session_id)
        with self._lock:
            history = self._sessions.get(session_id)
            if not history:
                return None
            newest = history[-1]
            if len(history) > 1:
                self._sessions[session_id] = history[:-1]
                self._touch(session_id)
            else:
                self._drop(session_id)
            return newest

    def compact(
        self,
        session_id: str,
        summarize: Summarizer,
        *,
        keep: Policy = DEFAULT_KEEP,
    ) -> int:
        """Replace the messages older than ``keep``'s window with ``summarize(older)``.

        The summarizer runs without the storage's lock; the replacement happens only if
        the session did not change meanwhile. See ``docs/compaction.md``.

        Examples:
            >>> from sqlmemory import FixedWindow, Message
            >>> storage = InMemoryStorage()
            >>> storage.append("chat-1", *(Message.user(f"note {i}") for i in range(5)))
            >>> def summarize(older):
            ...     return Message.user("Earlier: " + ", ".join(m.text_content() for m in older))
            >>> storage.compact("chat-1", summarize, keep=FixedWindow(2))
            3
            >>> [m.text_content() for m in storage.load("chat-1")]
            ['Earlier: note 0, note 1, note 2', 'note 3', 'note 4']

        Returns:
            The number of messages replaced (0: nothing older than the window, and the
            summarizer was not called).

        Raises:
            TypeError: ``summarize`` is not callable, returns an awaitable or something
                other than messages; ``keep`` is not a policy.
            ValueError: the summary holds no message, or more than it replaces.
            DuplicateMessageError: a summary message has the id of a kept message.
            ConflictError: the session changed while ``summarize`` ran; nothing written.
        """
        check_session_id(session_id)
        check_compaction(summarize, keep)
        with self._lock:
            history = list(self._sessions.get(session_id, ()))
        plan = plan_compaction(history, keep)
        if not plan.replaced:
            return 0
        older = history[plan.head : plan.cut]
        kept = [*history[: plan.head], *history[plan.cut :]]
        summaries = summary_messages(call_summarizer(summarize, list(older)), older, kept)
        summaries = check_messages(summaries, self.max_blob_bytes)
        with self._lock:
            now = self._sessions.get(session_id, [])
            if now != history:  # the same test as SQL's: ids, content and times
                raise ConflictError(
                    f"session {session_id!r} changed while compacting; nothing was written"
                )
            self._sessions[session_id] = [
                *history[: plan.head],
                *summaries,
                *history[plan.cut :],
            ]
            self._touch(session_id)
        return len(older)

    def count(self, session_id: str) -> int:
        """The number of messages in the session."""
        check_session_id(session_id)
        with self._lock:
            return len(self._sessions.get(session_id, ()))

    def sessions(self, prefix: str | None = None) -> list[str]:
        """Session ids (sorted), optionally only those starting with ``prefix``.

        Raises:
            TypeError: ``prefix`` is neither ``None`` nor a ``str``.
        """
        check_prefix(prefix)
        with self._lock:
            ids = list(self._records)
        return sorted(i for i in ids if prefix is None or i.startswith(prefix))

    def _info(self, session_id: str) -> SessionInfo | None:
        record = self._records.get(session_id)
        if record is None:
            return None
        count = len(self._sessions.get(session_id, ()))
        return dataclasses.replace(record, message_count=count)

    def session_info(self, session_id: str) -> SessionInfo | None:
        """The session's record, or ``None`` when the session does not exist."""
        check_session_id(session_id)
        with self._lock:
            return self._info(session_id)

    def update_session(
        self,
        session_id: str,
        *,
        title: str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
    ) -> None:
        """Set the session's title and/or metadata, creating its record if needed.

        An argument left out keeps its stored value; ``None`` clears it.
        """
        check_session_id(session_id)
        changes: dict[str, Any] = {}
        if title is not UNSET:
            changes["title"] = check_title(title)
        if metadata is not UNSET:
            changes["metadata"] = check_metadata(metadata)
        with self._lock:
            self._touch(session_id, **changes)

    def list_sessions(
        self,
        prefix: str | None = None,
        *,
        limit: int = DEFAULT_PAGE_LIMIT,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of session records, the most recently updated first."""
        check_prefix(prefix)
        check_limit(limit)
        after = None if cursor is None else decode_cursor(cursor)
        with self._lock:
            infos = [self._info(sid) for sid in self._records]
        found = sorted(
            (
                i
                for i in infos
                if i is not None
                and (prefix is None or i.session_id.startswith(prefix))
                and (after is None or (i.updated_at, i.session_id) < after)
            ),
            key=lambda i: (i.updated_at, i.session_id),
            reverse=True,
        )
        return page_of(found[: limit + 1], limit)

    def prune(self, older_than: datetime | timedelta) -> int:
        """Delete every session not updated since ``older_than``; the number deleted."""
        cutoff = cutoff_of(older_than, utc_now())
        with self._lock:
            old = [sid for sid, r in self._records.items() if r.updated_at < cutoff]
            for sid in old:
                self._drop(sid)
        return len(old)

    def session(self, session_id: str) -> SessionView:
        """A view of one session with the same methods minus the id argument."""
        return SessionView(self, session_id)
