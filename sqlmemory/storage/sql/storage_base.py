"""What the sync and async SQL storages share: validation, engine options, ``from_url``.

Nothing here does I/O; the two front doors (:mod:`sqlmemory.storage.sql.storage_async` and
its generated twin :mod:`sqlmemory.storage.sql.storage`) run the SQL functions of
:mod:`~sqlmemory.storage.sql.reads`, :mod:`~sqlmemory.storage.sql.tail_reads`,
:mod:`~sqlmemory.storage.sql.writes` and :mod:`~sqlmemory.storage.sql.deletes` (and of
``compact`` and ``record_queries``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import URL

from sqlmemory._urls import check_engine_mode, check_url
from sqlmemory.errors import SessionOwnerError, missing_driver_message
from sqlmemory.policy import Policy, TailPolicy
from sqlmemory.storage.checks import DEFAULT_MAX_BLOB_BYTES, check_messages, check_session_id
from sqlmemory.storage.owners import check_owner
from sqlmemory.storage.sql import one_statement_append
from sqlmemory.storage.sql.codec import EncodedMessage, encode_message
from sqlmemory.storage.sql.engine import ONE_STATEMENT_OPTION, WRITE_OPTION, configure_engine
from sqlmemory.types import Message

__all__ = ["SqlStorageBase"]

StorageT = TypeVar("StorageT", bound="SqlStorageBase[Any]")

MAX_SAVED_HINTS = 10_000
"""How many sessions' last saved lengths a storage remembers."""


class _EngineLike(Protocol):
    """What the storages use of an ``Engine`` or an ``AsyncEngine``."""

    @property
    def url(self) -> URL: ...

    def execution_options(self, **opt: Any) -> Any: ...


EngineT = TypeVar("EngineT", bound=_EngineLike)


class _SchemaCheck:
    """Whether the schema was found at head, shared by a storage and its owned views."""

    ok = False


class SqlStorageBase(Generic[EngineT]):
    """What the sync and async SQL storages share: validation and engine options."""

    _create_engine: ClassVar[Callable[..., Any]]
    """Makes the engine of :meth:`from_url` (``create_engine`` or its async twin)."""
    _engine_class: ClassVar[type[Any]]
    """The engine class the storage takes (``Engine`` or ``AsyncEngine``)."""
    _sync_engine_of: ClassVar[Callable[..., Engine]]
    """The ``Engine`` whose events fire for the statements of an engine of ``_engine_class``."""

    def __init__(self, engine: EngineT, max_blob_bytes: int) -> None:
        sync_engine = self._sync_engine_of(self._check_engine(engine))
        check_engine_mode(sync_engine, is_async=self._is_async())
        configure_engine(sync_engine)
        self.engine = engine
        self.max_blob_bytes = max_blob_bytes
        self._schema = _SchemaCheck()
        self._owns_engine = False
        self._owner: str | None = None
        self._saved_lengths: dict[str, int] = {}
        """How many messages this storage's last ``save`` of each session left (a hint
        for PostgreSQL's one-statement save; the statement checks it)."""
        self._dialect = sync_engine.dialect.name
        self._writer: EngineT = engine.execution_options(**self._write_options)
        self._reader: EngineT = engine.execution_options(**self._read_options)
        one_statement = self._one_statement_options
        self._one_statement_reader: EngineT | None = (
            engine.execution_options(**one_statement) if one_statement is not None else None
        )
        # PostgreSQL: a write of one statement (an append) in autocommit, its own
        # transaction, without the BEGIN and COMMIT round trips.
        self._one_statement_writer: EngineT | None = (
            engine.execution_options(**self._write_options, isolation_level="AUTOCOMMIT")
            if self._dialect == "postgresql"
            else None
        )

    @classmethod
    def from_url(
        cls: type[StorageT],
        url: str | URL,
        *,
        max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
        **engine_kwargs: Any,
    ) -> StorageT:
        """A storage over a new engine for ``url``, owned (and disposed) by the storage.

        The engine does not ping pooled connections before use: a call that finds its
        connection dead runs again on a fresh one (``docs/contract/persistence.md``,
        retries). ``engine_kwargs`` go to ``create_engine`` as they are.

        Raises:
            ValueError: ``url`` is no URL, names a database sqlmemory does not support, or
                a driver of the other I/O mode (``sqlite://`` for ``AsyncSqlStorage``,
                ``asyncpg`` for ``SqlStorage``); checked before any engine is made.
            ModuleNotFoundError: the driver is not installed; the message names the extra.
        """
        parsed = check_url(url, is_async=cls._is_async())
        # No pool_pre_ping: a ping is a round trip before every call. A pooled connection
        # the server dropped (restart, failover, idle timeout) is found by the call that
        # fails on it, which runs again on a fresh connection (engine.Retries).
        try:
            engine = cls._create_engine(parsed, **engine_kwargs)
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(missing_driver_message(exc), name=exc.name) from exc
        storage = cls(engine, max_blob_bytes=max_blob_bytes)
        storage._owns_engine = True
        return storage

    @classmethod
    def _is_async(cls) -> bool:
        # An AsyncEngine is no Engine: it wraps one (its sync_engine).
        return not issubclass(cls._engine_class, Engine)

    @classmethod
    def _check_engine(cls, engine: EngineT) -> EngineT:
        """``engine``, when it is of the class the storage takes."""
        if isinstance(engine, cls._engine_class):
            return engine
        message = (
            f"{cls.__name__} takes an {cls._engine_class.__name__}, not {type(engine).__name__!r}"
        )
        if isinstance(engine, (str, URL)):
            raise TypeError(f"{message}; {cls.__name__}.from_url takes a URL")
        if isinstance(engine, Engine) or hasattr(engine, "sync_engine"):
            other = "SqlStorage" if cls._is_async() else "AsyncSqlStorage"
            raise TypeError(f"{message}; {other} takes it")
        raise TypeError(message)

    def __repr__(self) -> str:
        shown = self.engine.url.render_as_string(hide_password=True)
        scope = "" if self._owner is None else f", owner={self._owner!r}"
        return f"{type(self).__name__}({shown!r}{scope})"

    @property
    def _write_options(self) -> dict[str, Any]:
        return {WRITE_OPTION: True}

    @property
    def _one_statement_options(self) -> dict[str, Any] | None:
        # A single SELECT is its own snapshot. On PostgreSQL, running it in autocommit
        # saves the BEGIN and COMMIT round trips; on SQLite it saves the BEGIN statement
        # (through aiosqlite, three thread hand-offs). A read that needs a second
        # statement (blob bytes, a long head) starts over in a snapshot transaction. On
        # MySQL autocommit itself costs round trips.
        if self._dialect == "postgresql":
            return {"isolation_level": "AUTOCOMMIT"}
        if self._dialect == "sqlite":
            return {ONE_STATEMENT_OPTION: True}
        return None

    @property
    def _read_options(self) -> dict[str, Any]:
        # PostgreSQL's default READ COMMITTED gives each statement its own snapshot; a
        # load of several statements must see one state, never half of a save.
        if self._dialect == "postgresql":
            return {"isolation_level": "REPEATABLE READ"}
        return {}

    @property
    def _schema_ok(self) -> bool:
        return self._schema.ok

    def _check_schema(self, conn: Connection) -> None:
        if not self._schema.ok:
            from sqlmemory.migrate import require_head

            require_head(conn)
            self._schema.ok = True

    @property
    def owner(self) -> str | None:
        """The owner this storage is scoped to (:meth:`owned_by`); ``None``: unscoped."""
        return self._owner

    def owned_by(self: StorageT, owner: str) -> StorageT:
        """This storage scoped to ``owner``: the same engine, but only ``owner``'s sessions.

        A session first written through it belongs to ``owner``. A session of another
        owner, or of none, behaves as one that does not exist: reads find nothing,
        ``clear``, ``evict``, ``pop`` and ``prune`` leave it, and a write that would create
        or change it raises :class:`~sqlmemory.errors.SessionOwnerError`, the check made
        under the session's lock in the write's own transaction (``docs/many-users.md``).
        Making one costs no I/O: make one per request. Its ``close()`` leaves the engine
        to the storage it came from.

        Examples:
            >>> from sqlmemory import SqlStorage
            >>> storage = SqlStorage.from_url("sqlite://")
            >>> storage.owned_by("user-42")
            SqlStorage('sqlite://', owner='user-42')

        Raises:
            TypeError, InvalidSessionIdError: a bad owner (not a non-empty ``str`` of at
                most 255 characters without NUL).
            SessionOwnerError: this storage is scoped to another owner already.
        """
        owner = check_owner(owner)
        if self._owner is not None and owner != self._owner:
            raise SessionOwnerError(
                f"this storage is scoped to owner {self._owner!r}, not {owner!r}"
            )
        scoped = copy.copy(self)  # shares the engine, its options and the schema check
        scoped._owner = owner
        scoped._owns_engine = False
        return scoped

    def _one_statement_append(self, encoded: Sequence[EncodedMessage]) -> bool:
        """Whether ``encoded`` is appended in one statement in autocommit (PostgreSQL, the
        unscoped storage, a batch that fits): an owned view checks the owner the lock
        returns before it writes, in a transaction."""
        return (
            self._one_statement_writer is not None
            and self._owner is None
            and one_statement_append.fits(encoded)
        )

    @property
    def _saves_in_one_statement(self) -> bool:
        """Whether a grown save may be one statement (PostgreSQL, the unscoped storage)."""
        return self._one_statement_writer is not None and self._owner is None

    def _saved_before(self, sid: str) -> int | None:
        """How many messages this storage's last save of ``sid`` left, if it remembers
        (only where a save may be one statement: :meth:`_saved`)."""
        return self._saved_lengths.get(sid)

    def _saved(self, sid: str, length: int) -> None:
        if not self._saves_in_one_statement:
            return
        if len(self._saved_lengths) >= MAX_SAVED_HINTS and sid not in self._saved_lengths:
            self._saved_lengths.clear()  # a hint: losing it costs one transaction
        self._saved_lengths[sid] = length

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
