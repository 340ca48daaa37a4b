"""SqlStorage: sessions persisted through a synchronous SQLAlchemy Engine."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError

from sqlmemory.errors import is_transient, missing_driver_message, translate_db_errors
from sqlmemory.policy import Policy, RecentWindow, TailPolicy, check_count
from sqlmemory.storage import _sqlops as ops
from sqlmemory.storage._codec import EncodedMessage, encode_message
from sqlmemory.storage._engine import WRITE_OPTION, configure_engine
from sqlmemory.storage.base import (
    DEFAULT_MAX_BLOB_BYTES,
    RETRY_DELAYS,
    SessionView,
    check_messages,
    check_session_id,
)
from sqlmemory.types import Message, utc_now

__all__ = ["SqlStorage"]

T = TypeVar("T")
StorageT = TypeVar("StorageT", bound="SqlStorageBase[Any]")


class _EngineLike(Protocol):
    """What the storages use of an ``Engine`` or an ``AsyncEngine``."""

    @property
    def url(self) -> URL: ...

    def execution_options(self, **opt: Any) -> Any: ...


EngineT = TypeVar("EngineT", bound=_EngineLike)


class SqlStorageBase(Generic[EngineT]):
    """What the sync and async SQL storages share: validation and engine options."""

    _create_engine: ClassVar[Callable[..., Any]]
    """Makes the engine of :meth:`from_url` (``create_engine`` or its async twin)."""

    def __init__(self, engine: EngineT, sync_engine: Engine, max_blob_bytes: int) -> None:
        configure_engine(sync_engine)
        self.engine = engine
        self.max_blob_bytes = max_blob_bytes
        self._schema_ok = False
        self._owns_engine = False
        self._dialect = sync_engine.dialect.name
        self._writer: EngineT = engine.execution_options(**self._write_options)
        self._reader: EngineT = engine.execution_options(**self._read_options)
        quick = self._one_statement_options
        self._quick: EngineT | None = (
            engine.execution_options(**quick) if quick is not None else None
        )

    @classmethod
    def from_url(
        cls: type[StorageT],
        url: str | URL,
        *,
        max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
        **engine_kwargs: Any,
    ) -> StorageT:
        """A storage over a new engine for ``url``, owned (and disposed) by the storage."""
        try:
            engine = cls._create_engine(url, **engine_kwargs)
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(missing_driver_message(exc), name=exc.name) from exc
        storage = cls(engine, max_blob_bytes=max_blob_bytes)  # type: ignore[call-arg]
        storage._owns_engine = True
        return storage

    def __repr__(self) -> str:
        shown = self.engine.url.render_as_string(hide_password=True)
        return f"{type(self).__name__}({shown!r})"

    @property
    def _write_options(self) -> dict[str, Any]:
        return {WRITE_OPTION: True}

    @property
    def _one_statement_options(self) -> dict[str, Any] | None:
        # A single SELECT is its own snapshot. On PostgreSQL, running it in autocommit
        # saves the BEGIN and COMMIT round trips; a read that needs a second statement
        # starts over in a snapshot transaction. Elsewhere a transaction costs little
        # (SQLite) or autocommit itself costs round trips to switch (MySQL).
        if self._dialect == "postgresql":
            return {"isolation_level": "AUTOCOMMIT"}
        return None

    @property
    def _read_options(self) -> dict[str, Any]:
        # PostgreSQL's default READ COMMITTED gives each statement its own snapshot; a
        # load of several statements must see one state, never half of a save.
        if self._dialect == "postgresql":
            return {"isolation_level": "REPEATABLE READ"}
        return {}

    def _check_schema(self, conn: Connection) -> None:
        if not self._schema_ok:
            from sqlmemory.migrate import require_head

            require_head(conn)
            self._schema_ok = True

    def _prepare(
        self, session_id: str, messages: Sequence[Message]
    ) -> tuple[str, list[EncodedMessage]]:
        sid = check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        return sid, [encode_message(m) for m in batch]

    @staticmethod
    def _tail_policy(policy: Policy | None) -> TailPolicy | None:
        # Duck-typed: isinstance() against a runtime-checkable Protocol costs ~20 us.
        if callable(getattr(policy, "select", None)) and hasattr(policy, "needs_content"):
            return cast(TailPolicy, policy)
        return None


class SqlStorage(SqlStorageBase[Engine]):
    """Sessions in PostgreSQL, MySQL/MariaDB or SQLite, through a SQLAlchemy ``Engine``.

    Every public write is one transaction: it happens whole or not at all. The database
    must be at the head revision of the shipped migrations (``sqlmemory migrate``).

    Args:
        engine: the engine to use; the caller keeps it and disposes it.
        max_blob_bytes: the largest image or document accepted (20 MiB by default).
    """

    _create_engine = staticmethod(create_engine)

    def __init__(self, engine: Engine, *, max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES) -> None:
        super().__init__(engine, engine, max_blob_bytes)

    def close(self) -> None:
        """Dispose the engine if :meth:`from_url` made it; a passed-in engine is left alone."""
        if self._owns_engine:
            self.engine.dispose()

    def __enter__(self) -> SqlStorage:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Connection]:
        with (self._writer if write else self._reader).begin() as conn:
            self._check_schema(conn)
            yield conn

    def _run(self, action: str, write: bool, fn: Callable[..., T], *args: Any) -> T:
        with translate_db_errors(action):
            return self._attempt(write, fn, *args)

    def _attempt(self, write: bool, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` in a transaction, again after a deadlock (it rolled back whole)."""
        for delay in (*RETRY_DELAYS, None):
            try:
                with self._transaction(write) as conn:
                    return fn(conn, *args)
            except DBAPIError as exc:
                if delay is None or not is_transient(exc):
                    raise
            time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _read_tail(self, action: str, sid: str, policy: TailPolicy) -> list[Message]:
        if self._quick is not None and self._schema_ok:
            with translate_db_errors(action), self._quick.connect() as conn:
                found = ops.read_tail(conn, sid, policy, one_statement=True)
            if found is not None:
                return found
        found = self._run(action, False, ops.read_tail, sid, policy)
        assert found is not None  # noqa: S101 - only one_statement reads give up
        return found

    def append(self, session_id: str, *messages: Message) -> None:
        """Add ``messages`` at the end of the session, all or none.

        A message whose id is already stored with the same content is skipped, so a
        retried append is safe.

        Raises:
            InvalidSessionIdError, TypeError: a bad session id.
            InvalidMessageError, BlobTooLargeError: a bad message.
            DuplicateMessageError: an id is stored with different content.
            StorageError: the database failed; nothing was written.
        """
        sid, encoded = self._prepare(session_id, messages)
        if not encoded:
            return
        now = utc_now()
        with translate_db_errors("append"):
            try:
                self._attempt(True, ops.append_fresh, sid, encoded, now)
            except IntegrityError:
                # An id is stored already: a retry, or a conflict. Decide it under the lock.
                self._attempt(True, ops.append_idempotent, sid, encoded, now)

    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        """The session's history oldest first (``[]`` if unknown), or ``policy``'s window.

        Window policies (:class:`~sqlmemory.FixedWindow`, :class:`~sqlmemory.TokenWindow`)
        read only the newest messages they need; other policies get the whole history.
        """
        sid = check_session_id(session_id)
        tail = self._tail_policy(policy)
        if tail is not None:
            return self._read_tail("load", sid, tail)
        history = self._run("load", False, ops.read_all, sid)
        return policy.apply(history) if policy is not None else history

    def save(self, session_id: str, messages: Sequence[Message]) -> None:
        """Replace the session's history with ``messages``; ``[]`` clears it.

        Only what differs from the stored history is written.
        """
        sid = check_session_id(session_id)
        batch = check_messages(messages, self.max_blob_bytes)
        self._run("save", True, ops.save, sid, batch, utc_now())

    def recent(self, session_id: str, n: int) -> list[Message]:
        """At most the newest ``n`` messages in whole groups, newest last."""
        sid = check_session_id(session_id)
        check_count(n, "n")
        return self._read_tail("recent", sid, RecentWindow(n))

    def evict(self, session_id: str, keep: int) -> int:
        """Delete the oldest messages so at most ``keep`` remain; returns how many went."""
        sid = check_session_id(session_id)
        check_count(keep, "keep")
        return self._run("evict", True, ops.evict, sid, keep)

    def clear(self, session_id: str) -> int:
        """Delete the session and all it owns; returns the number of messages deleted."""
        sid = check_session_id(session_id)
        return self._run("clear", True, ops.clear, sid)

    def count(self, session_id: str) -> int:
        """The number of messages in the session."""
        sid = check_session_id(session_id)
        return self._run("count", False, ops.count, sid)

    def sessions(self, prefix: str | None = None) -> list[str]:
        """The ids of stored sessions, sorted; only those starting with ``prefix`` if given."""
        if prefix is not None and not isinstance(prefix, str):
            raise TypeError("prefix must be a str")
        return self._run("sessions", False, ops.session_ids, prefix)

    def session(self, session_id: str) -> SessionView:
        """A view of one session with the same methods minus the id argument."""
        return SessionView(self, session_id)
