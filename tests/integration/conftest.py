"""Backend fixtures: one test body runs on SQLite, PostgreSQL and MySQL/MariaDB.

``backend``, ``db_url`` and ``async_db_url`` are session scoped and parametrised over
:data:`BACKENDS`; a test that uses any fixture below runs once per backend. A backend that
cannot be reached is skipped with the reason, or fails the run when it is listed in
``$SQLMEMORY_REQUIRE_BACKENDS``.

``engine`` gives each test empty ``sqlmemory_*`` tables at the head revision; tests that
downgrade the schema must bring it back to head before they finish.

``storage`` is also parametrised over ``"sync"`` and ``"async"``: every test written
against the sync API runs against :class:`~sqlmemory.SqlStorage` and, through
:class:`BlockingAsyncStorage`, against :class:`~sqlmemory.AsyncSqlStorage` too. Both kinds
expose ``sync_engine``, the ``Engine`` whose events fire for the storage's statements
(hook failure injection there). For SQL the test runs itself, use the ``engine`` fixture.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
import sqlalchemy as sa
from anyio.from_thread import BlockingPortal, start_blocking_portal
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from ._backends import (
    BACKENDS,
    BackendUnavailable,
    async_url,
    delete_rows,
    drop_sqlmemory_tables,
    raise_mysql_packet_limit,
    resolve_url,
    sqlmemory_data_tables,
    unavailable,
)

if TYPE_CHECKING:
    from sqlmemory import AsyncSqlStorage, Message, Policy, SessionView, SqlStorage

T = TypeVar("T")
STORAGE_KINDS = ("sync", "async")


@pytest.fixture(scope="session", params=BACKENDS, ids=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend under test: ``"sqlite"``, ``"postgresql"`` or ``"mysql"``."""
    return str(request.param)


@pytest.fixture(scope="session")
def db_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A sync SQLAlchemy URL of a reachable, otherwise untouched database."""
    with contextlib.ExitStack() as stack:  # stops a testcontainers database, if one starts
        reason: str | None = None
        try:
            url = resolve_url(
                backend,
                environ=os.environ,
                tmp_dir=tmp_path_factory.mktemp(f"sqlmemory-{backend}"),
                stack=stack,
            )
        except BackendUnavailable as exc:
            reason = str(exc)
        if reason is not None:
            # Outside the except block, so the report is the reason, not a traceback chain.
            unavailable(backend, reason, os.environ)
        if backend == "mysql":
            raise_mysql_packet_limit(url)
        # Tables left by an earlier run may hold an older schema under the same revision
        # id; every test of this session starts from a database without them.
        scratch = sa.create_engine(url)
        try:
            drop_sqlmemory_tables(scratch)
        finally:
            scratch.dispose()
        yield url


@pytest.fixture(scope="session")
def async_db_url(backend: str, db_url: str) -> str:
    """The database of ``db_url`` through the backend's async driver."""
    return async_url(backend, db_url)


@pytest.fixture(scope="session")
def migrated_engine(db_url: str) -> Iterator[sa.Engine]:
    """An engine on ``db_url`` whose schema was rebuilt from nothing and brought to head."""
    from sqlmemory.migrate import upgrade

    engine = sa.create_engine(db_url)
    try:
        drop_sqlmemory_tables(engine)
        upgrade(engine)
        yield engine
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def _sqlmemory_data_tables(migrated_engine: sa.Engine) -> list[sa.Table]:
    # Reflected once: the schema is at head for the whole session.
    return sqlmemory_data_tables(migrated_engine)


@pytest.fixture
def engine(migrated_engine: sa.Engine, _sqlmemory_data_tables: list[sa.Table]) -> sa.Engine:
    """The migrated engine, with every ``sqlmemory_*`` table emptied before the test."""
    delete_rows(migrated_engine, _sqlmemory_data_tables)
    return migrated_engine


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

    def _call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return self.portal.call(fn, *args)

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

    def count(self, session_id: str) -> int:
        return self._call(self.async_storage.count, session_id)

    def sessions(self, prefix: str | None = None) -> list[str]:
        return self._call(self.async_storage.sessions, prefix)

    def session(self, session_id: str) -> SessionView:
        """A bound view whose methods block like this adapter's."""
        from sqlmemory import SessionView

        return SessionView(self, session_id)


@functools.cache
def _sync_storage_class() -> type[SqlStorage]:
    from sqlmemory import SqlStorage

    class SyncStorage(SqlStorage):
        """``SqlStorage`` with the ``sync_engine`` name both storage kinds share."""

        @property
        def sync_engine(self) -> sa.Engine:
            return self.engine

    return SyncStorage


@pytest.fixture(params=STORAGE_KINDS, ids=STORAGE_KINDS)
def storage(
    request: pytest.FixtureRequest, engine: sa.Engine, async_db_url: str
) -> Iterator[SqlStorage | BlockingAsyncStorage]:
    """A storage on the clean tables of ``engine``: ``SqlStorage``, or the async one.

    ``"sync"`` is a ``SqlStorage`` over ``engine``. ``"async"`` is a
    :class:`BlockingAsyncStorage` over an ``AsyncSqlStorage`` whose async engine lives
    (and is disposed) on a loop of its own in a background thread.
    """
    if request.param == "sync":
        yield _sync_storage_class()(engine)
        return
    from sqlmemory import AsyncSqlStorage

    with start_blocking_portal("asyncio", name="sqlmemory-async-storage") as portal:
        # An async engine's connections belong to the loop that opened them: create,
        # use and dispose it on the portal's loop only.
        async_engine = portal.call(_create_async_engine, async_db_url)
        try:
            yield BlockingAsyncStorage(portal, AsyncSqlStorage(async_engine))
        finally:
            portal.call(async_engine.dispose)


async def _create_async_engine(url: str) -> AsyncEngine:
    return create_async_engine(url)


@pytest.fixture
async def async_engine(
    anyio_backend: str, async_db_url: str, engine: sa.Engine
) -> AsyncIterator[AsyncEngine]:
    """An ``AsyncEngine`` on the migrated database, tables emptied as for ``engine``."""
    async_engine = create_async_engine(async_db_url)
    try:
        yield async_engine
    finally:
        await async_engine.dispose()


@pytest.fixture
def async_storage(async_engine: AsyncEngine) -> AsyncSqlStorage:
    """An ``AsyncSqlStorage`` over ``async_engine``."""
    from sqlmemory import AsyncSqlStorage

    return AsyncSqlStorage(async_engine)
