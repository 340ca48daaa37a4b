"""AsyncSqlStorage: the SQL storage over an ``AsyncEngine`` (asyncpg, aiomysql, aiosqlite).

It runs the very functions the sync storage runs (``sqlmemory.storage._sqlops``) through
``AsyncConnection.run_sync``: one copy of every query, the same semantics and errors.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, IntegrityError

try:
    import greenlet  # noqa: F401 - SQLAlchemy's asyncio layer runs on it
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "AsyncSqlStorage needs greenlet: pip install 'sqlmemory[async]' "
        "(or the postgres / mysql extra)"
    ) from exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from sqlmemory.errors import is_transient, translate_db_errors
from sqlmemory.policy import Policy, RecentWindow, TailPolicy, check_count
from sqlmemory.storage import _sqlops as ops
from sqlmemory.storage.base import (
    DEFAULT_MAX_BLOB_BYTES,
    RETRY_DELAYS,
    AsyncSessionView,
    check_messages,
    check_session_id,
)
from sqlmemory.storage.sql import SqlStorageBase
from sqlmemory.types import Message, utc_now

__all__ = ["AsyncSqlStorage"]

T = TypeVar("T")


class AsyncSqlStorage(SqlStorageBase[AsyncEngine]):
    """Sessions in SQL through a SQLAlchemy ``AsyncEngine``; every method is a coroutine.

    Same methods, semantics and errors as :class:`~sqlmemory.storage.sql.SqlStorage`.
    A call cancelled at any await point leaves the session as it was (the transaction
    rolls back) or as the call would have left it (the commit had been sent).

    Args:
        engine: the async engine to use; the caller keeps it and disposes it.
        max_blob_bytes: the largest image or document accepted (20 MiB by default).
    """

    _create_engine = staticmethod(create_async_engine)

    def __init__(
        self, engine: AsyncEngine, *, max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES
    ) -> None:
        super().__init__(engine, engine.sync_engine, max_blob_bytes)

    async def close(self) -> None:
        """Dispose the engine if :meth:`from_url` made it; a passed-in engine is left alone."""
        if self._owns_engine:
            await self.engine.dispose()

    async def __aenter__(self) -> AsyncSqlStorage:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @asynccontextmanager
    async def _transaction(self, write: bool) -> AsyncIterator[AsyncConnection]:
        async with (self._writer if write else self._reader).begin() as conn:
            if not self._schema_ok:
                await conn.run_sync(self._check_schema)
            yield conn

    async def _run(self, action: str, write: bool, fn: Callable[..., T], *args: Any) -> T:
        with translate_db_errors(action):
            return await self._attempt(write, fn, *args)

    async def _attempt(self, write: bool, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` in a transaction, shielded from cancellation until it has ended.

        A cancelled caller still gets ``CancelledError``, but only once the transaction
        has committed or rolled back and its connection is back in the pool: a
        transaction abandoned mid-way can keep its connection (and, on SQLite, the
        database's write lock) until the garbage collector finds it.
        """
        task = asyncio.ensure_future(self._attempt_unshielded(write, fn, *args))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            while not task.done():
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    continue
            if not task.cancelled():
                task.exception()  # retrieved: the caller asked to cancel, not to know
            raise

    async def _attempt_unshielded(self, write: bool, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` in a transaction, again after a deadlock (it rolled back whole)."""
        for delay in (*RETRY_DELAYS, None):
            try:
                async with self._transaction(write) as conn:
                    return await conn.run_sync(_call, fn, *args)
            except DBAPIError as exc:
                if delay is None or not is_transient(exc):
                    raise
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read_tail(self, action: str, sid: str, policy: TailPolicy) -> list[Message]:
        if self._quick is not None and self._schema_ok:
            with translate_db_errors(action):
                async with self._quick.connect() as conn:
                    found = await conn.run_sync(
                        _call, functools.partial(ops.read_tail, one_statement=True), sid, policy
                    )
            if found is not None:
                return found
        found = await self._run(action, False, ops.read_tail, sid, policy)
        assert found is not None  # noqa: S101 - only one_statement reads give up
        return found

    async def append(self, session_id: str, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none (see ``SqlStorage``)."""
        sid, encoded = self._prepare(session_id, messages)
        if not encoded:
            return
        now = utc_now()
        with translate_db_errors("append"):
            try:
                await self._attempt(True, ops.append_fresh, sid, encoded, now)
            except IntegrityError:
                # An id is stored already: a retry, or a conflict. Decide it under the lock.
                await self._attempt(True, ops.append_idempotent, sid, encoded, now)

    async def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The session's history oldest first, or ``policy``'s window (see ``SqlStorage``)."""
        sid = check_session_id(session_id)
        tail = self._tail_policy(policy)
        if tail is not None:
            return await self._read_tail("load", sid, tail)
        history = await self._run("load", False, ops.read_all, sid)
        return policy.apply(history) if policy is not None else history

    async def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the session's history; only what differs is written."""
        sid = check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        await self._run("save", True, ops.save, sid, batch, utc_now())

    async def recent(self, session_id: str, n: int) -> list[Message]:
        """At most the newest ``n`` messages in whole groups, newest last."""
        sid = check_session_id(session_id)
        check_count(n, "n")
        return await self._read_tail("recent", sid, RecentWindow(n))

    async def evict(self, session_id: str, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; returns how many went."""
        sid = check_session_id(session_id)
        check_count(keep, "keep")
        return await self._run("evict", True, ops.evict, sid, keep)

    async def clear(self, session_id: str) -> int:
        """Delete the session and all it owns; returns the number of messages deleted."""
        sid = check_session_id(session_id)
        return await self._run("clear", True, ops.clear, sid)

    async def count(self, session_id: str) -> int:
        """The number of messages in the session."""
        sid = check_session_id(session_id)
        return await self._run("count", False, ops.count, sid)

    async def sessions(self, prefix: str | None = None) -> list[str]:
        """The ids of stored sessions, sorted; only those starting with ``prefix`` if given."""
        if prefix is not None and not isinstance(prefix, str):
            raise TypeError("prefix must be a str")
        return await self._run("sessions", False, ops.session_ids, prefix)

    def session(self, session_id: str) -> AsyncSessionView:
        """A view of one session with the same coroutines minus the id argument."""
        return AsyncSessionView(self, session_id)


def _call(conn: Connection, fn: Callable[..., T], *args: Any) -> T:
    return fn(conn, *args)
