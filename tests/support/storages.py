"""The databases of a test run, and the storages under test over them.

:class:`Databases` finds each backend (see :mod:`tests.support.backends` and
``docs/contract/backends.md``) the first time a test needs it and keeps it for the run: a
missing driver or an unreachable server skips the test with the reason, or fails it when
the backend is listed in ``$SQLMEMORY_REQUIRE_BACKENDS``.

:class:`BlockingAsyncStorage` puts an :class:`~sqlmemory.AsyncSqlStorage` behind the sync
storage's signatures, so one test body drives both SQL storages. :class:`Subject` is one
storage under a contract test together with what the test may inspect of what it stored.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import sqlalchemy as sa
from anyio.from_thread import BlockingPortal, start_blocking_portal

from tests.support.backends import (
    BACKENDS,
    BackendUnavailable,
    async_url,
    delete_rows,
    drop_sqlmemory_tables,
    missing_driver,
    mysql_packet_problem,
    resolve_url,
    sqlmemory_data_tables,
    unavailable,
)
from tests.support.tables import row_counts, snapshot

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from sqlmemory import AsyncSqlStorage, Message, Policy, SessionView, SqlStorage

T = TypeVar("T")
STORAGE_KINDS = ("sync", "async")
PARTITIONED = "postgresql-partitioned"
"""sqlmemory's schema hash-partitioned by session id on PostgreSQL (``partitioned.py``)."""
SUBJECTS = (
    "memory",
    *(f"{backend}-{kind}" for backend in BACKENDS for kind in STORAGE_KINDS),
    f"{PARTITIONED}-sync",
)
"""The storages every contract test runs on: ``memory``, ``sqlite-sync``, ``sqlite-async``...
and ``postgresql-partitioned-sync`` (the statements are the same sync and async)."""


class Databases:
    """Each backend's database, found on first use and kept for the whole run.

    Args:
        environ: where ``$SQLMEMORY_TEST_*_URL`` and ``$SQLMEMORY_REQUIRE_BACKENDS`` are read.
        tmp_dir: makes the directory of the SQLite file.
    """

    def __init__(self, environ: Mapping[str, str], tmp_dir: Callable[[str], Path]) -> None:
        self.environ = environ
        self._tmp_dir = tmp_dir
        self._stack = contextlib.ExitStack()  # stops testcontainers databases, if any start
        self._urls: dict[str, str] = {}
        self._reasons: dict[str, str] = {}
        self._engines: dict[str, sa.Engine] = {}
        self._tables: dict[str, list[sa.Table]] = {}

    def url(self, backend: str) -> str:
        """A sync URL of the backend's database, with no ``sqlmemory_*`` table left over."""
        if backend in self._urls:
            return self._urls[backend]
        if backend == PARTITIONED:
            return self._partitioned_url()
        if backend not in self._reasons:
            try:
                url = resolve_url(
                    backend,
                    environ=self.environ,
                    tmp_dir=self._tmp_dir(f"sqlmemory-{backend}"),
                    stack=self._stack,
                )
            except BackendUnavailable as exc:
                self._reasons[backend] = str(exc)
            else:
                problem = mysql_packet_problem(url) if backend == "mysql" else None
                if problem is None:
                    # Tables left by an earlier run may hold an older schema under the same
                    # revision id; every test of this run starts from a database without them.
                    scratch = sa.create_engine(url)
                    try:
                        drop_sqlmemory_tables(scratch)
                    finally:
                        scratch.dispose()
                    self._urls[backend] = url
                    return url
                self._reasons[backend] = problem
        # Outside the except block, so the report is the reason, not a traceback chain.
        unavailable(backend, self._reasons[backend], self.environ)

    def _partitioned_url(self) -> str:
        from tests.support.partitioned import partitioned_url

        base = self.url("postgresql")
        try:
            url = partitioned_url(base)
        except sa.exc.DBAPIError as exc:
            unavailable(
                "postgresql", f"cannot create the partitioned database: {exc}", self.environ
            )
        scratch = sa.create_engine(url)
        try:
            drop_sqlmemory_tables(scratch)
        finally:
            scratch.dispose()
        self._urls[PARTITIONED] = url
        return url

    def async_url(self, backend: str) -> str:
        """The database of :meth:`url` through the backend's async driver, if installed."""
        url = async_url(backend, self.url(backend))
        reason = missing_driver(url)
        if reason is not None:
            unavailable(backend, reason, self.environ)
        return url

    def migrated_engine(self, backend: str) -> sa.Engine:
        """An engine whose schema was rebuilt from nothing and brought to head, once a run."""
        if backend not in self._engines:
            from sqlmemory.migrate import upgrade

            engine = sa.create_engine(self.url(backend))
            try:
                drop_sqlmemory_tables(engine)
                if backend == PARTITIONED:
                    from tests.support.partitioned import create_partitioned_schema

                    create_partitioned_schema(engine)
                else:
                    upgrade(engine)
                # Reflected once: the schema is at head for the whole run.
                self._tables[backend] = sqlmemory_data_tables(engine)
            except BaseException:
                engine.dispose()
                raise
            self._engines[backend] = engine
        return self._engines[backend]

    def clean_engine(self, backend: str) -> sa.Engine:
        """The migrated engine, with every ``sqlmemory_*`` table emptied, and what this
        process learned of the windows of its sessions forgotten (their rows are gone)."""
        from sqlmemory.storage.sql.tail_reads import FIRST_PAGES

        engine = self.migrated_engine(backend)
        delete_rows(engine, self._tables[backend])
        FIRST_PAGES.clear()
        return engine

    def close(self) -> None:
        for engine in self._engines.values():
            engine.dispose()
        self._stack.close()


class BlockingAsyncStorage:
    """An :class:`~sqlmemory.AsyncSqlStorage` behind the sync storage's method signatures.

    Each call runs the coroutine on ``portal``'s event loop (a background thread) and
    blocks until it finishes, so a test body written for ``SqlStorage`` drives the async
    code path unchanged: same arguments, same results, same exceptions. Calls from several
    threads at once run concurrently on that one loop.

    ``engine`` and ``sync_engine`` are the ``Engine`` inside the async engine: its events
    fire for the storage's statements, its dialect and pool are the storage's. It cannot
    open connections from the test's thread; run test SQL through the ``engine`` fixture.
    """

    def __init__(self, portal: BlockingPortal, async_storage: AsyncSqlStorage) -> None:
        self.portal = portal
        self.async_storage = async_storage
        self.async_engine: AsyncEngine = async_storage.engine
        self.sync_engine: sa.Engine = self.async_engine.sync_engine
        self.engine: sa.Engine = self.sync_engine

    def __repr__(self) -> str:
        return f"BlockingAsyncStorage({self.async_storage!r})"

    def __getattr__(self, name: str) -> Any:
        # Anything not spelt out below: plain attributes (``max_blob_bytes``) as they are,
        # coroutine functions made blocking, so that none returns an unawaited coroutine.
        value = getattr(self.async_storage, name)
        if inspect.iscoroutinefunction(value):
            return functools.partial(self._call, value)
        return value

    def _call(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        return self.portal.call(functools.partial(fn, **kwargs) if kwargs else fn, *args)

    def append(self, session_id: str, *messages: Message) -> None:
        self._call(self.async_storage.append, session_id, *messages)

    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        return self._call(self.async_storage.load, session_id, policy)

    def save(self, session_id: str, messages: Sequence[Message]) -> None:
        self._call(self.async_storage.save, session_id, messages)

    def recent(self, session_id: str, n: int) -> list[Message]:
        return self._call(self.async_storage.recent, session_id, n)

    def evict(self, session_id: str, keep: int) -> int:
        return self._call(self.async_storage.evict, session_id, keep)

    def clear(self, session_id: str) -> int:
        return self._call(self.async_storage.clear, session_id)

    def pop(self, session_id: str) -> Message | None:
        return self._call(self.async_storage.pop, session_id)

    def compact(self, session_id: str, summarize: Callable[..., Any], **options: Any) -> int:
        """``summarize`` runs on the portal's loop, as the async storage calls it."""
        call = functools.partial(self.async_storage.compact, **options)
        return self._call(call, session_id, summarize)

    def count(self, session_id: str) -> int:
        return self._call(self.async_storage.count, session_id)

    def sessions(self, prefix: str | None = None, **options: Any) -> list[str]:
        return self._call(functools.partial(self.async_storage.sessions, prefix, **options))

    def owned_by(self, owner: str) -> BlockingAsyncStorage:
        """The async storage's owned view, blocking like this adapter."""
        return BlockingAsyncStorage(self.portal, self.async_storage.owned_by(owner))

    def update_session(self, session_id: str, **fields: Any) -> None:
        self._call(functools.partial(self.async_storage.update_session, session_id, **fields))

    def list_sessions(self, prefix: str | None = None, **options: Any) -> Any:
        return self._call(functools.partial(self.async_storage.list_sessions, prefix, **options))

    def fork(self, session_id: str, new_session_id: str, **options: Any) -> Any:
        call = functools.partial(self.async_storage.fork, **options)
        return self._call(call, session_id, new_session_id)

    def branches(self, session_id: str) -> Any:
        return self._call(self.async_storage.branches, session_id)

    def usage(self, session_id: str | None = None, **options: Any) -> Any:
        return self._call(functools.partial(self.async_storage.usage, session_id, **options))

    def search(self, query: Any, **options: Any) -> Any:
        return self._call(functools.partial(self.async_storage.search, query, **options))

    def session(self, session_id: str) -> SessionView:
        """A bound view whose methods block like this adapter's."""
        from sqlmemory import SessionView

        return SessionView(self, session_id)


@functools.cache
def sync_storage_class() -> type[SqlStorage]:
    """``SqlStorage`` with the ``sync_engine`` name both SQL storage kinds share."""
    from sqlmemory import SqlStorage

    class SyncStorage(SqlStorage):
        @property
        def sync_engine(self) -> sa.Engine:
            return self.engine

    return SyncStorage


class SqlStorages:
    """Makes ``SqlStorage`` or blocking ``AsyncSqlStorage`` objects over one database.

    The async engine lives (and is disposed) on a loop of its own in a background thread:
    an async engine's connections belong to the loop that opened them.
    """

    def __init__(
        self, kind: str, engine: sa.Engine, async_db_url: str, stack: contextlib.ExitStack
    ) -> None:
        if kind not in STORAGE_KINDS:
            raise ValueError(f"unknown storage kind {kind!r}")
        self.kind = kind
        self.engine = engine
        self._portal: BlockingPortal | None = None
        self._async_engine: AsyncEngine | None = None
        if kind == "async":
            self._portal = stack.enter_context(
                start_blocking_portal("asyncio", name="sqlmemory-async-storage")
            )
            self._async_engine = self._portal.call(_create_async_engine, async_db_url)
            stack.callback(self._portal.call, self._async_engine.dispose)

    def make(self, **options: Any) -> SqlStorage | BlockingAsyncStorage:
        """A new storage object; ``options`` go to the storage (``max_blob_bytes``)."""
        if self._portal is None or self._async_engine is None:
            return sync_storage_class()(self.engine, **options)
        from sqlmemory import AsyncSqlStorage

        return BlockingAsyncStorage(self._portal, AsyncSqlStorage(self._async_engine, **options))


async def _create_async_engine(url: str) -> AsyncEngine:
    from sqlalchemy.ext.asyncio import create_async_engine

    return create_async_engine(url)


class Subject:
    """One storage under a contract test, and what the test may inspect of its state.

    ``storage`` is an ``InMemoryStorage``, a ``SqlStorage`` or a
    :class:`BlockingAsyncStorage`. ``engine`` is the SQL storages' database (``None`` for
    memory): tests read rows through it to check what a call wrote, or did not.
    """

    def __init__(
        self, name: str, make: Callable[..., Any], engine: sa.Engine | None = None
    ) -> None:
        self.name = name
        self._make = make
        self.engine = engine
        self.storage = make()

    def __repr__(self) -> str:
        return f"Subject({self.name!r})"

    @property
    def sql(self) -> bool:
        """Whether the storage keeps its sessions in SQL tables (:attr:`engine`)."""
        return self.engine is not None

    def with_options(self, **options: Any) -> Subject:
        """The same kind of storage over the same place, made with ``options``.

        An ``InMemoryStorage`` has no place to share: the new one starts empty.
        """
        return Subject(self.name, functools.partial(self._make, **options), self.engine)

    def state(self) -> object:
        """Everything stored: each session's history and record, and every table row on SQL.

        Two equal states mean a call changed nothing (``recorded_at`` included).
        """
        histories = {
            sid: (self.storage.load(sid), self.storage.session_info(sid))
            for sid in self.storage.sessions()
        }
        if self.engine is None:
            return histories
        with self.engine.connect() as conn:
            return histories, snapshot(conn)

    def counts(self) -> dict[str, int]:
        """Stored sessions and messages; on SQL, the rows of every sqlmemory table."""
        if self.engine is not None:
            with self.engine.connect() as conn:
                return row_counts(conn)
        sessions = self.storage.sessions()
        return {
            "sessions": len(sessions),
            "messages": sum(self.storage.count(sid) for sid in sessions),
        }

    def assert_counts(self, *, sessions: int, messages: int, blocks: int, blobs: int) -> None:
        """What :meth:`counts` must be; ``blocks`` and ``blobs`` are rows of SQL only."""
        expected = {"sessions": sessions, "messages": messages}
        if self.sql:
            expected.update(blocks=blocks, blobs=blobs)
        assert self.counts() == expected


@contextlib.contextmanager
def open_subject(name: str, databases: Databases | None) -> Iterator[Subject]:
    """The subject called ``name`` (one of :data:`SUBJECTS`) on clean tables.

    ``databases`` may be ``None`` for ``"memory"``, which needs none.
    """
    if name == "memory":
        from sqlmemory import InMemoryStorage

        yield Subject(name, InMemoryStorage)
        return
    if databases is None:
        raise ValueError(f"{name} needs the databases")
    backend, kind = name.rsplit("-", 1)
    engine = databases.clean_engine(backend)
    with contextlib.ExitStack() as stack:
        url = databases.async_url(backend) if kind == "async" else ""
        storages = SqlStorages(kind, engine, url, stack)
        yield Subject(name, storages.make, engine)


def backend_param(name: str, marked: str | None = None) -> Any:
    """A fixture parameter ``name`` carrying the marker of its backend (``-m "not mysql"``).

    The markers (``memory``, ``sqlite``, ``postgresql``, ``mysql``) are registered by
    ``tests/conftest.py``.
    """
    import pytest

    return pytest.param(name, id=name, marks=getattr(pytest.mark, marked or name))
