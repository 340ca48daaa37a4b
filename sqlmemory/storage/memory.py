"""A storage that keeps sessions in process memory: for tests, prototypes and one-process bots."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlmemory.errors import ConflictError, DuplicateMessageError
from sqlmemory.policy.groups import evict_start
from sqlmemory.policy.windows import Policy, RecentWindow
from sqlmemory.storage._memory_branches import MemoryBranches
from sqlmemory.storage._memory_joint import splice, update_together
from sqlmemory.storage._memory_search import MemorySearch
from sqlmemory.storage._memory_usage import MemoryUsage
from sqlmemory.storage.base import SessionView
from sqlmemory.storage.checks import (
    check_count,
    check_messages,
    check_policy,
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
from sqlmemory.storage.joint import (
    JointRead,
    RecordChange,
    SplicePlan,
    check_changes,
    check_read,
)
from sqlmemory.types import Message, utc_now

__all__ = ["InMemoryStorage"]

T = TypeVar("T")


class InMemoryStorage(MemorySearch, MemoryUsage, MemoryBranches):
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
            self._claim(session_id)
            self._append_locked(session_id, batch)

    def _append_locked(self, session_id: str, batch: Sequence[Message]) -> None:
        """Append the checked ``batch`` (the lock is held and the session claimed)."""
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

    def update_together(self, changes: Sequence[RecordChange]) -> None:
        """Change several sessions' records, and append their messages, all or none.

        See :class:`~sqlmemory.storage.joint.RecordChange` and
        ``docs/contract/storage.md`` (joint writes).
        """
        update_together(self, check_changes(changes, self.max_blob_bytes, self._owner))

    def read_together(
        self, session_id: str, policy: Policy | None = None, *, records: Sequence[str] = ()
    ) -> JointRead:
        """The session's messages (``policy``'s window) and the records of the session
        and of ``records``, at one moment (``docs/contract/storage.md``, joint reads)."""
        sid, ids = check_read(session_id, records)
        check_policy(policy)
        with self._lock:
            history = self._history(sid)
            found = {i: self._info(i) for i in ids}
        return JointRead(policy.apply(history) if policy is not None else history, found)

    def _splice(
        self, session_id: str, plan: SplicePlan, messages: Sequence[Message] = ()
    ) -> list[Message]:
        """Take a span of the session's messages by position, decided by ``plan`` under
        the lock, append ``messages`` and store the plan's metadata, all or none
        (:class:`~sqlmemory.storage.joint.Splice`; for adapters)."""
        check_session_id(session_id)
        return splice(self, session_id, plan, check_messages(messages, self.max_blob_bytes))

    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The session's history, oldest first, or its window under ``policy``."""
        check_session_id(session_id)
        check_policy(policy)
        with self._lock:
            history = self._history(session_id)
        return policy.apply(history) if policy is not None else history

    def _history(self, session_id: str) -> list[Message]:
        """A copy of the session's messages, ``[]`` if it is not visible (lock held)."""
        return list(self._sessions.get(session_id, ())) if self._visible(session_id) else []

    def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the session's whole history; ``[]`` clears it."""
        check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        with self._lock:
            self._claim(session_id)
            self._save_locked(session_id, batch)

    def _save_locked(self, session_id: str, batch: Sequence[Message]) -> None:
        """Replace the history with the checked ``batch`` (the lock is held and the
        session claimed)."""
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

    def _rewrite(
        self, session_id: str, change: Callable[[list[Message]], tuple[list[Message], T]]
    ) -> T:
        """The history read and ``change(history)``'s history stored, under the lock
        (for an adapter that amends stored messages); a missing session stays absent."""
        check_session_id(session_id)
        with self._lock:
            history = self._history(session_id)
            updated, result = change(history)
            if history and updated != history:
                self._save_locked(session_id, check_messages(updated, self.max_blob_bytes))
            return result

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
            history = self._history(session_id)
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
            return len(self._drop(session_id)) if self._visible(session_id) else 0

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
            history = self._history(session_id)
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
            history = self._history(session_id)
        plan = plan_compaction(history, keep)
        if not plan.replaced:
            return 0
        older = history[plan.head : plan.cut]
        kept = [*history[: plan.head], *history[plan.cut :]]
        summaries = summary_messages(call_summarizer(summarize, list(older)), older, kept)
        summaries = check_messages(summaries, self.max_blob_bytes)
        with self._lock:
            now = self._history(session_id)  # [] once it is not this owner's any more
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
            return len(self._history(session_id))

    def session(self, session_id: str) -> SessionView:
        """A view of one session with the same methods minus the id argument."""
        return SessionView(self, session_id)
