"""SqlStorage: sessions in SQL through a SQLAlchemy ``Engine``.

Generated from ``sqlmemory/storage/sql/storage_async.py``
by ``tools/generate_sync.py``: edit that file, never this one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from sqlmemory.errors import translate_db_errors
from sqlmemory.policy import Policy, RecentWindow, TailPolicy
from sqlmemory.storage.base import SessionView
from sqlmemory.storage.checks import (
    DEFAULT_MAX_BLOB_BYTES,
    check_count,
    check_messages,
    check_policy,
    check_prefix,
    check_session_id,
)
from sqlmemory.storage.compaction import (
    DEFAULT_KEEP,
    Summarizer,
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
    metadata_json,
    page_of,
)
from sqlmemory.storage.sql import compact, deletes, reads, record_queries, tail_reads, writes
from sqlmemory.storage.sql._io import (
    call_summarizer,
    create_engine,
    finish_before_cancel,
    run_sync,
    sleep,
    sync_engine_of,
)
from sqlmemory.storage.sql.codec import encode_message
from sqlmemory.storage.sql.engine import Retries
from sqlmemory.storage.sql.storage_base import SqlStorageBase
from sqlmemory.types import Message, utc_now

__all__ = ["SqlStorage"]

T = TypeVar("T")


class SqlStorage(SqlStorageBase[Engine]):
    """Sessions in PostgreSQL, MySQL/MariaDB or SQLite, through a SQLAlchemy ``Engine``.

    Every public write is one transaction: it happens whole or not at all. The database
    must be at the head revision of the shipped migrations (``sqlmemory migrate``). The
    methods, their errors and their cost are in ``docs/contract/storage.md``.

    Examples:
        >>> storage = SqlStorage.from_url("sqlite:///chat.db")  # doctest: +SKIP
        >>> storage.append("chat-1", Message.user("Hello!"))  # doctest: +SKIP

    Args:
        engine: the engine to use; the caller keeps it and disposes it.
        max_blob_bytes: the largest image or document accepted (20 MiB by default).
    """

    _create_engine = staticmethod(create_engine)
    _engine_class = Engine
    _sync_engine_of = staticmethod(sync_engine_of)

    def __init__(self, engine: Engine, *, max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES) -> None:
        super().__init__(engine, max_blob_bytes)

    def close(self) -> None:
        """Dispose the engine if :meth:`from_url` made it; a passed-in engine is left alone."""
        if self._owns_engine:
            self.engine.dispose()

    def __enter__(self) -> SqlStorage:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _ensure_schema(self) -> None:
        """Check the schema once, in a transaction of its own.

        Never inside a write's transaction: there, on MySQL's REPEATABLE READ, the read
        would fix the snapshot before the session's lock is taken, and the write would
        then decide on stale rows.
        """
        if not self._schema_ok:
            with self._reader.connect() as conn:
                run_sync(conn, self._check_schema)

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Connection]:
        self._ensure_schema()
        with (self._writer if write else self._reader).begin() as conn:
            yield conn

    def _run(self, action: str, write: bool, fn: Callable[..., T], *args: Any) -> T:
        with translate_db_errors(action):
            return self._attempt(action, write, fn, *args)

    def _attempt(self, action: str, write: bool, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` in a transaction; a cancelled caller waits until it has ended."""
        return finish_before_cancel(self._attempt_unshielded(action, write, fn, *args))

    def _attempt_unshielded(self, action: str, write: bool, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` in a transaction, again when :class:`Retries` says so (it rolled
        back whole: a deadlock, or a read's dead connection)."""
        retries = Retries(action, write=write)
        while True:
            try:
                with self._transaction(write) as conn:
                    return run_sync(conn, fn, *args)
            except DBAPIError as exc:
                delay = retries.delay_after(exc)
            sleep(delay)

    def _read_tail(self, action: str, sid: str, policy: TailPolicy) -> list[Message]:
        if self._one_statement_reader is not None and self._schema_ok:
            found = None
            with translate_db_errors(action):
                try:
                    with self._one_statement_reader.connect() as conn:
                        found = run_sync(
                            conn, tail_reads.read_tail, sid, policy, one_statement=True
                        )
                except DBAPIError as exc:
                    if not exc.connection_invalidated:
                        raise
                    # A dead connection: the read below runs on a fresh one.
            if found is not None:
                return found
        found = self._run(action, False, tail_reads.read_tail, sid, policy)
        assert found is not None  # noqa: S101 - only one_statement reads give up
        return found

    def append(self, session_id: str, *messages: Message) -> None:
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
                self._attempt("append", True, writes.append_fresh, sid, encoded, now)
            except IntegrityError:
                # An id is stored already: a retry, or a conflict. Decide it under the lock.
                self._attempt("append", True, writes.append_idempotent, sid, encoded, now)

    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The session's history oldest first (``[]`` if unknown), or ``policy``'s window.

        Window policies (:class:`~sqlmemory.FixedWindow`, :class:`~sqlmemory.TokenWindow`)
        read only the newest messages they need; other policies get the whole history.
        """
        sid = check_session_id(session_id)
        check_policy(policy)
        tail = self._tail_policy(policy)
        if tail is not None:
            return self._read_tail("load", sid, tail)
        history = self._run("load", False, reads.read_all, sid)
        return policy.apply(history) if policy is not None else history

    def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the session's history with ``messages``; ``[]`` clears it.

        Only what differs from the stored history is written.
        """
        sid = check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        self._run("save", True, writes.save, sid, batch, utc_now())

    def recent(self, session_id: str, n: int) -> list[Message]:
        """At most the newest ``n`` messages in whole groups, newest last."""
        sid = check_session_id(session_id)
        check_count(n, "n")
        return self._read_tail("recent", sid, RecentWindow(n))

    def evict(self, session_id: str, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; returns how many went."""
        sid = check_session_id(session_id)
        check_count(keep, "keep")
        return self._run("evict", True, deletes.evict, sid, keep, utc_now())

    def clear(self, session_id: str) -> int:
        """Delete the session and all it owns; returns the number of messages deleted."""
        sid = check_session_id(session_id)
        return self._run("clear", True, deletes.clear, sid)

    def pop(self, session_id: str) -> Message | None:
        """Remove and return the newest message, as stored; ``None`` when there is none.

        Exactly one message goes, whatever its group, in one transaction under the
        session's lock; popping the last message deletes the session.

        Examples:
            >>> storage = SqlStorage.from_url("sqlite:///chat.db")  # doctest: +SKIP
            >>> (await storage.pop("chat-1")).text_content()  # doctest: +SKIP
            'pong'
        """
        sid = check_session_id(session_id)
        return self._run("pop", True, deletes.pop, sid, utc_now())

    def _pop_keeping(
        self, session_id: str, keep: Callable[[Message], Sequence[Message]]
    ) -> Message | None:
        """:meth:`pop`, storing ``keep(popped)`` in its place in the same transaction (for
        an adapter whose item is part of a stored message); ``keep`` must not do I/O."""
        sid = check_session_id(session_id)
        return self._run("pop", True, deletes.pop, sid, utc_now(), keep)

    def compact(
        self, session_id: str, summarize: Summarizer, *, keep: Policy = DEFAULT_KEEP
    ) -> int:
        """Replace the messages older than ``keep``'s window with ``summarize(older)``.

        The history is read in one transaction; ``summarize`` (a coroutine function or a
        plain one) runs outside any transaction; the replacement commits in a second
        one, under the session's lock, only if the session did not change meanwhile.
        See ``docs/compaction.md``.

        Examples:
            >>> async def summarize(older):  # doctest: +SKIP
            ...     return Message.user("Earlier: " + await my_model_summary(older))
            >>> storage.compact("chat-1", summarize, keep=FixedWindow(20))  # doctest: +SKIP
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
        history, stored = self._run("compact", False, compact.read_history, sid)
        plan = plan_compaction(history, keep)
        if not plan.replaced:
            return 0
        older = history[plan.head : plan.cut]
        kept = [*history[: plan.head], *history[plan.cut :]]
        result = call_summarizer(summarize, list(older))
        summaries = check_messages(summary_messages(result, older, kept), self.max_blob_bytes)
        encoded = [encode_message(m) for m in summaries]
        self._run("compact", True, compact.replace_older, sid, stored, plan, encoded, utc_now())
        return len(older)

    def count(self, session_id: str) -> int:
        """The number of messages in the session."""
        sid = check_session_id(session_id)
        return self._run("count", False, reads.count, sid)

    def sessions(self, prefix: str | None = None) -> list[str]:
        """The ids of stored sessions, sorted; only those starting with ``prefix`` if given."""
        return self._run("sessions", False, reads.session_ids, check_prefix(prefix))

    def session_info(self, session_id: str) -> SessionInfo | None:
        """The session's record (title, metadata, times, message count), or ``None``."""
        sid = check_session_id(session_id)
        return self._run("session_info", False, record_queries.session_info, sid)

    def update_session(
        self,
        session_id: str,
        *,
        title: str | Unset | None = UNSET,
        metadata: Mapping[str, Any] | Unset | None = UNSET,
    ) -> None:
        """Set the session's title and/or metadata, creating its record if needed.

        An argument left out keeps its stored value; ``None`` clears it.

        Raises:
            TypeError: a title that is not a ``str``, metadata that is not a mapping.
            ValueError: a title or metadata that cannot be stored (a lone surrogate,
                metadata JSON cannot represent).
        """
        sid = check_session_id(session_id)
        values: dict[str, Any] = {}
        if title is not UNSET:
            values["title"] = check_title(title)
        if metadata is not UNSET:
            values["metadata_json"] = metadata_json(check_metadata(metadata))
        self._run("update_session", True, record_queries.update_session, sid, values, utc_now())

    def list_sessions(
        self,
        prefix: str | None = None,
        *,
        limit: int = DEFAULT_PAGE_LIMIT,
        cursor: str | None = None,
    ) -> SessionPage:
        """A page of session records, the most recently updated first.

        Keyset-paged: a page costs ``limit`` index rows however deep it is. Pass the
        page's ``next_cursor`` back as ``cursor`` for the next one.

        Raises:
            TypeError: a ``prefix`` or ``cursor`` that is not a ``str``, a ``limit`` that
                is not an ``int``.
            ValueError: ``limit`` out of range, a ``cursor`` this method did not return.
        """
        check_prefix(prefix)
        check_limit(limit)
        after = None if cursor is None else decode_cursor(cursor)
        found = self._run(
            "list_sessions", False, record_queries.list_page, prefix, limit + 1, after
        )
        return page_of(found, limit)

    def prune(self, older_than: datetime | timedelta) -> int:
        """Delete every session not updated since ``older_than`` (a time, or an age);
        returns the number of sessions deleted."""
        cutoff = cutoff_of(older_than, utc_now())
        return self._run("prune", True, record_queries.prune, cutoff)

    def session(self, session_id: str) -> SessionView:
        """A view of one session with the same methods minus the id argument."""
        return SessionView(self, session_id)
