"""The front door's machinery, shared by every method of ``SqlStorage``.

Generated from ``sqlmemory/storage/sql/front_async.py``
by ``tools/generate_sync.py``: edit that file, never this one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from sqlmemory.errors import translate_db_errors
from sqlmemory.policy import TailPolicy
from sqlmemory.storage.sql import (
    tail_reads,
)
from sqlmemory.storage.sql._io import (
    create_engine,
    finish_before_cancel,
    run_sync,
    sleep,
    sync_engine_of,
)
from sqlmemory.storage.sql.engine import Retries
from sqlmemory.storage.sql.storage_base import SqlStorageBase
from sqlmemory.types import Message

T = TypeVar("T")


__all__ = ["SqlFront"]

F = TypeVar("F", bound="SqlFront")


class SqlFront(SqlStorageBase[Engine]):
    """Running the SQL functions in transactions over an ``Engine``."""

    _create_engine = staticmethod(create_engine)
    _engine_class = Engine
    _sync_engine_of = staticmethod(sync_engine_of)

    def close(self) -> None:
        """Dispose the engine if :meth:`from_url` made it; a passed-in engine is left alone."""
        if self._owns_engine:
            self.engine.dispose()

    def __enter__(self: F) -> F:
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
    def _transaction(self, write: bool, one_statement: bool = False) -> Iterator[Connection]:
        """A transaction to write in (or read, without ``write``); with ``one_statement``,
        a connection in autocommit for a write of one statement (PostgreSQL)."""
        self._ensure_schema()
        engine = self._writer if write else self._reader
        if one_statement and self._one_statement_writer is not None:
            engine = self._one_statement_writer
        with engine.begin() as conn:
            yield conn

    def _run(self, action: str, write: bool, fn: Callable[..., T], *args: Any) -> T:
        with translate_db_errors(action):
            return self._attempt(action, write, fn, *args)

    def _attempt(
        self,
        action: str,
        write: bool,
        fn: Callable[..., T],
        *args: Any,
        one_statement: bool = False,
    ) -> T:
        """Run ``fn`` in a transaction; a cancelled caller waits until it has ended."""
        work = self._attempt_unshielded(action, write, fn, *args, one_statement=one_statement)
        return finish_before_cancel(work)

    def _attempt_unshielded(
        self,
        action: str,
        write: bool,
        fn: Callable[..., T],
        *args: Any,
        one_statement: bool = False,
    ) -> T:
        """Run ``fn`` in a transaction, again when :class:`Retries` says so (it rolled
        back whole: a deadlock, or a dead connection)."""
        retries = Retries(action, write=write)
        while True:
            committing = False
            try:
                with self._transaction(write, one_statement) as conn:
                    result = run_sync(conn, fn, *args)
                    committing = True
                return result
            except DBAPIError as exc:
                delay = retries.delay_after(exc, committing)
            sleep(delay)

    def _read_tail(self, action: str, sid: str, policy: TailPolicy) -> list[Message]:
        if self._one_statement_reader is not None and self._schema_ok:
            found = None
            with translate_db_errors(action):
                try:
                    with self._one_statement_reader.connect() as conn:
                        found = run_sync(
                            conn,
                            tail_reads.read_tail,
                            sid,
                            policy,
                            one_statement=True,
                            owner=self._owner,
                        )
                except DBAPIError as exc:
                    if not exc.connection_invalidated:
                        raise
                    # A dead connection: the read below runs on a fresh one.
            if found is not None:
                return found
        read = functools.partial(tail_reads.read_tail, owner=self._owner)
        found = self._run(action, False, read, sid, policy)
        assert found is not None  # noqa: S101 - only one_statement reads give up
        return found
