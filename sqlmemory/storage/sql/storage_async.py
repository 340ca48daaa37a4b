"""AsyncSqlStorage: sessions in SQL through a SQLAlchemy ``AsyncEngine``.

This file is the single source of both SQL front doors: ``tools/generate_sync.py``
rewrites it into :mod:`sqlmemory.storage.sql.storage` (``SqlStorage``, over an
``Engine``), and a test fails when the two drift. The I/O that really differs between the
flavours (cancellation, sleeping, running the shared SQL functions) is in
:mod:`~sqlmemory.storage.sql._io_async` and its twin :mod:`~sqlmemory.storage.sql._io`.
The SQL itself is written once, as functions over a ``Connection``: the reads in
:mod:`~sqlmemory.storage.sql.reads` and :mod:`~sqlmemory.storage.sql.tail_reads`, the
writes in :mod:`~sqlmemory.storage.sql.writes` and :mod:`~sqlmemory.storage.sql.deletes`
(both under the lock of :mod:`~sqlmemory.storage.sql.session_lock`), ``compact``'s in
:mod:`~sqlmemory.storage.sql.compact` and the records' in
:mod:`~sqlmemory.storage.sql.record_queries`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from sqlmemory.errors import translate_db_errors
from sqlmemory.policy import Policy, RecentWindow
from sqlmemory.storage.base_async import AsyncSessionView
from sqlmemory.storage.checks import (
    DEFAULT_MAX_BLOB_BYTES,
    check_count,
    check_messages,
    check_policy,
    check_session_id,
)
from sqlmemory.storage.compaction import (
    DEFAULT_KEEP,
    AsyncSummarizer,
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
from sqlmemory.storage.sql import (
    compact,
    deletes,
    joint_reads,
    joint_writes,
    one_statement_append,
    one_statement_pop,
    one_statement_save,
    reads,
    rewrites,
    splices,
    writes,
)
from sqlmemory.storage.sql._io_async import (
    call_summarizer,
)
from sqlmemory.storage.sql.codec import encode_message
from sqlmemory.types import Message, utc_now

__all__ = ["AsyncSqlStorage"]

from sqlmemory.storage.sql.branches_async import AsyncSqlBranches
from sqlmemory.storage.sql.catalog_async import AsyncSqlCatalog
from sqlmemory.storage.sql.search_async import AsyncSqlSearch
from sqlmemory.storage.sql.usage_async import AsyncSqlUsage

T = TypeVar("T")


class AsyncSqlStorage(AsyncSqlSearch, AsyncSqlUsage, AsyncSqlCatalog, AsyncSqlBranches):
    """Sessions in PostgreSQL, MySQL/MariaDB or SQLite, through a SQLAlchemy ``AsyncEngine``.

    Every public write is one transaction: it happens whole or not at all. The database
    must be at the head revision of the shipped migrations (``sqlmemory migrate``). The
    methods, their errors and their cost are in ``docs/contract/storage.md``.

    Examples:
        >>> storage = AsyncSqlStorage.from_url("sqlite+aiosqlite:///chat.db")  # doctest: +SKIP
        >>> await storage.append("chat-1", Message.user("Hello!"))  # doctest: +SKIP

    Args:
        engine: the engine to use; the caller keeps it and disposes it.
        max_blob_bytes: the largest image or document accepted (20 MiB by default).
    """

    def __init__(
        self, engine: AsyncEngine, *, max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES
    ) -> None:
        super().__init__(engine, max_blob_bytes)

    async def append(self, session_id: str, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none.

        A message whose id is already stored with the same content is skipped, so a
        retried append is safe.

        Raises:
            InvalidSessionIdError: a bad session id (``TypeError`` for a non-``str``).
            InvalidMessageError: a bad message.
            BlobTooLargeError: image or document bytes over ``max_blob_bytes``.
            DuplicateMessageError: an id is stored with different content.
            StorageError: the database failed; nothing was written.
        """
        sid, encoded = self._prepare(session_id, messages)
        if not encoded:
            return
        now = utc_now()
        with translate_db_errors("append"):
            try:
                if self._one_statement_append(encoded):
                    # PostgreSQL: one statement in autocommit, one round trip.
                    one = one_statement_append.append_in_one_statement
                    await self._attempt("append", True, one, sid, encoded, now, one_statement=True)
                else:
                    await self._attempt(
                        "append", True, writes.append_fresh, sid, encoded, now, self._owner
                    )
            except IntegrityError:
                # An id is stored already: a retry, or a conflict. Decide it under the lock.
                await self._attempt(
                    "append", True, writes.append_idempotent, sid, encoded, now, self._owner
                )

    async def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The session's history oldest first (``[]`` if unknown), or ``policy``'s window.

        Window policies (:class:`~sqlmemory.FixedWindow`, :class:`~sqlmemory.TokenWindow`)
        read only the newest messages they need; other policies get the whole history.
        """
        sid = check_session_id(session_id)
        check_policy(policy)
        tail = self._tail_policy(policy)
        if tail is not None:
            return await self._read_tail("load", sid, tail)
        history = await self._run("load", False, reads.read_all, sid, self._owner)
        return policy.apply(history) if policy is not None else history

    async def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the session's history with ``messages``; ``[]`` clears it.

        Only what differs from the stored history is written.
        """
        sid = check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        now = utc_now()
        known = self._saved_before(sid)
        if self._saves_in_one_statement and one_statement_save.grows(batch, known):
            # PostgreSQL: if the stored history is what the last save left (of ``known``
            # messages, when this storage saved it), the new messages go in one
            # statement, one round trip.
            with translate_db_errors("save"):
                try:
                    grown = one_statement_save.save_grown
                    done = await self._attempt(
                        "save", True, grown, sid, batch, known, now, one_statement=True
                    )
                except IntegrityError:
                    done = False  # an id stored already: the usual save says what to do
            if done:
                self._saved(sid, len(batch))
                return
        await self._run("save", True, writes.save, sid, batch, now, self._owner)
        self._saved(sid, len(batch))

    async def recent(self, session_id: str, n: int) -> list[Message]:
        """At most the newest ``n`` messages in whole groups, newest last."""
        sid = check_session_id(session_id)
        check_count(n, "n")
        return await self._read_tail("recent", sid, RecentWindow(n))

    async def evict(self, session_id: str, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; returns how many went."""
        sid = check_session_id(session_id)
        check_count(keep, "keep")
        return await self._run("evict", True, deletes.evict, sid, keep, utc_now(), self._owner)

    async def clear(self, session_id: str) -> int:
        """Delete the session and all it owns; returns the number of messages deleted."""
        sid = check_session_id(session_id)
        return await self._run("clear", True, deletes.clear, sid, self._owner)

    async def pop(self, session_id: str) -> Message | None:
        """Remove and return the newest message, as stored; ``None`` when there is none.

        Exactly one message goes, whatever its group, in one transaction under the
        session's lock; popping the last message deletes the session.

        Examples:
            >>> storage = AsyncSqlStorage.from_url("sqlite+aiosqlite:///chat.db")  # doctest: +SKIP
            >>> (await storage.pop("chat-1")).text_content()  # doctest: +SKIP
            'pong'
        """
        sid = check_session_id(session_id)
        now = utc_now()
        if self._one_statement_writer is not None:
            # PostgreSQL: one statement in autocommit, if no other writer comes between.
            one = one_statement_pop.pop_in_one_statement
            with translate_db_errors("pop"):
                found = await self._attempt(
                    "pop", True, one, sid, now, self._owner, one_statement=True
                )
            if found is not None:
                return found
        return await self._run("pop", True, deletes.pop, sid, now, None, self._owner)

    async def _pop_keeping(
        self, session_id: str, keep: Callable[[Message], Sequence[Message]]
    ) -> Message | None:
        """:meth:`pop`, storing ``keep(popped)`` in its place in the same transaction (for
        an adapter whose item is part of a stored message); ``keep`` must not do I/O."""
        sid = check_session_id(session_id)
        return await self._run("pop", True, deletes.pop, sid, utc_now(), keep, self._owner)

    async def _rewrite(self, session_id: str, change: rewrites.Change[T]) -> T:
        """The session's history read and ``change(history)``'s history written back in one
        transaction under the session's lock (:mod:`~sqlmemory.storage.sql.rewrites`),
        for an adapter that amends stored messages; ``change`` must not do I/O."""
        sid = check_session_id(session_id)
        write = rewrites.rewrite
        now, blobs = utc_now(), self.max_blob_bytes
        result: T = await self._run("save", True, write, sid, change, blobs, now, self._owner)
        return result

    async def compact(
        self, session_id: str, summarize: AsyncSummarizer, *, keep: Policy = DEFAULT_KEEP
    ) -> int:
        """Replace the messages older than ``keep``'s window with ``summarize(older)``.

        The history is read in one transaction; ``summarize`` (a coroutine function or a
        plain one) runs outside any transaction; the replacement commits in a second
        one, under the session's lock, only if the session did not change meanwhile.
        See ``docs/compaction.md``.

        Examples:
            >>> async def summarize(older):  # doctest: +SKIP
            ...     return Message.user("Earlier: " + await my_model_summary(older))
            >>> await storage.compact("chat-1", summarize, keep=FixedWindow(20))  # doctest: +SKIP
            37

        Returns:
            The number of messages replaced (0: nothing older than the window, and the
            summarizer was not called).

        Raises:
            TypeError: ``summarize`` is not callable or returns something other than
                messages; ``keep`` is not a policy.
            ValueError: the summary holds no message, or more than it replaces.
            DuplicateMessageError: a summary message has the id of a kept message.
            ConflictError: the session changed while ``summarize`` ran; nothing written.
        """
        sid = check_session_id(session_id)
        check_compaction(summarize, keep)
        history, stored = await self._run("compact", False, compact.read_history, sid, self._owner)
        plan = plan_compaction(history, keep)
        if not plan.replaced:
            return 0
        older = history[plan.head : plan.cut]
        kept = [*history[: plan.head], *history[plan.cut :]]
        result = await call_summarizer(summarize, list(older))
        summaries = check_messages(summary_messages(result, older, kept), self.max_blob_bytes)
        encoded = [encode_message(m) for m in summaries]
        now = utc_now()
        replace = compact.replace_older
        await self._run("compact", True, replace, sid, stored, plan, encoded, now, self._owner)
        return len(older)

    async def update_together(self, changes: Sequence[RecordChange]) -> None:
        """Change several sessions' records, and append their messages, in one transaction.

        Each session is locked (in sorted id order), its ``metadata`` function called with
        the record as locked, its messages appended and its new metadata stored; anything
        raised rolls back the whole call (``docs/contract/storage.md``, joint writes).

        Raises:
            TypeError, ValueError: bad changes (before any I/O), or metadata that cannot
                be stored.
            SessionOwnerError: a session is not the change's owner's. Whatever a
                ``metadata`` function raised is raised as it is; nothing is written.
        """
        checked = check_changes(changes, self.max_blob_bytes, self._owner)
        for change in checked:
            change.encoded.extend(encode_message(m) for m in change.messages)
        write, now = joint_writes.update_together, utc_now()
        with translate_db_errors("update_together"):
            try:
                await self._attempt("update_together", True, write, checked, now)
            except IntegrityError:
                # A message id is stored already: a retry, or a conflict. Decide it under
                # the lock, as append does.
                await self._attempt("update_together", True, write, checked, now, True)

    async def read_together(
        self, session_id: str, policy: Policy | None = None, *, records: Sequence[str] = ()
    ) -> JointRead:
        """The session's messages (``policy``'s window, read from the tail) and the
        records of the session and of ``records``, from one snapshot, in one transaction
        (``docs/contract/storage.md``, joint reads).

        Raises:
            InvalidSessionIdError, TypeError: a bad id, ``records`` or ``policy``
                (before any I/O).
        """
        sid, ids = check_read(session_id, records)
        check_policy(policy)
        tail = self._tail_policy(policy)
        read = joint_reads.read_together
        return await self._run("read_together", False, read, sid, ids, policy, tail, self._owner)

    async def _splice(
        self, session_id: str, plan: SplicePlan, messages: Sequence[Message] = ()
    ) -> list[Message]:
        """Take a span of the session's messages by position, decided by ``plan`` under
        the session's lock, append ``messages`` and store the plan's metadata, in one
        transaction (:class:`~sqlmemory.storage.joint.Splice`; for adapters)."""
        sid, encoded = self._prepare(session_id, messages)
        write, now = splices.splice, utc_now()
        with translate_db_errors("splice"):
            try:
                return await self._attempt(
                    "splice", True, write, sid, plan, encoded, now, self._owner
                )
            except IntegrityError:
                # An appended id is stored already: decide it under the lock, as append does.
                args = (sid, plan, encoded, now, self._owner, True)
                return await self._attempt("splice", True, write, *args)

    async def count(self, session_id: str) -> int:
        """The number of messages in the session."""
        sid = check_session_id(session_id)
        return await self._run("count", False, reads.count, sid, self._owner)

    def session(self, session_id: str) -> AsyncSessionView:
        """A view of one session with the same methods minus the id argument."""
        return AsyncSessionView(self, session_id)
