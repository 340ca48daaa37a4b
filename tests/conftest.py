"""Fixtures shared by every test directory.

Database fixtures (used by ``tests/integration`` and ``tests/contract``; a unit test
requests none of them, so it never touches a database):

- ``backend`` is session scoped and parametrised over ``sqlite``, ``postgresql`` and
  ``mysql``: a test that uses any fixture below runs once per backend, marked with the
  backend's name (``-m "not mysql"``). A backend that cannot be reached is skipped with the
  reason, or fails the run when it is listed in ``$SQLMEMORY_REQUIRE_BACKENDS``
  (``docs/contract/backends.md``).
- ``db_url`` / ``async_db_url``: the backend's database through its sync / async driver.
- ``engine`` gives each test empty ``sqlmemory_*`` tables at the head revision; tests that
  downgrade the schema must bring it back to head before they finish.
- ``storage`` is also parametrised over ``"sync"`` and ``"async"``: every test written
  against the sync API runs against :class:`~sqlmemory.SqlStorage` and, through
  :class:`~tests.support.storages.BlockingAsyncStorage`, against
  :class:`~sqlmemory.AsyncSqlStorage` too. Both kinds expose ``sync_engine``, the ``Engine``
  whose events fire for the storage's statements (hook failure injection there). For SQL
  the test runs itself, use the ``engine`` fixture.

``tests/contract/conftest.py`` adds ``subject``: the storage contract on every storage.

Figures the tests count (:data:`tests.reliability.figures.FIGURES`) are printed at the end
of the run; under pytest-xdist each worker hands its own to the controller, which adds
them up (the workers' terminal summaries are not shown).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from tests.reliability.figures import FIGURES
from tests.support.backends import BACKENDS
from tests.support.storages import STORAGE_KINDS, Databases, SqlStorages, backend_param

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from sqlmemory import AsyncSqlStorage, SqlStorage
    from tests.support.storages import BlockingAsyncStorage

MARKERS = {
    "memory": "runs on InMemoryStorage",
    "sqlite": "runs on SQLite",
    "postgresql": "runs on PostgreSQL",
    "mysql": "runs on MySQL/MariaDB",
}


FIGURES_KEY = "sqlmemory_figures"
"""Where a pytest-xdist worker puts its figures in ``config.workeroutput``."""


def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand the figures its tests counted to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output[FIGURES_KEY] = dict(FIGURES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """In the pytest-xdist controller: add a finished worker's figures to the run's."""
    FIGURES.update(getattr(node, "workeroutput", {}).get(FIGURES_KEY, {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    from tests.reliability.workers import scale

    terminalreporter.section("sqlmemory reliability figures")
    terminalreporter.write_line(f"soak scale (SQLMEMORY_SOAK): {scale()}")
    for name in sorted(FIGURES):
        terminalreporter.write_line(f"{name}: {FIGURES[name]}")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests and async fixtures on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    """Every backend's database, found and migrated on first use, kept for the run."""
    found = Databases(os.environ, tmp_path_factory.mktemp)
    try:
        yield found
    finally:
        found.close()


@pytest.fixture(scope="session", params=[backend_param(b) for b in BACKENDS])
def backend(request: pytest.FixtureRequest) -> str:
    """The backend under test: ``"sqlite"``, ``"postgresql"`` or ``"mysql"``."""
    return str(request.param)


@pytest.fixture(scope="session")
def db_url(backend: str, databases: Databases) -> str:
    """A sync SQLAlchemy URL of a reachable database, without leftover sqlmemory tables."""
    return databases.url(backend)


@pytest.fixture(scope="session")
def async_db_url(backend: str, databases: Databases) -> str:
    """The database of ``db_url`` through the backend's async driver."""
    return databases.async_url(backend)


@pytest.fixture(scope="session")
def migrated_engine(backend: str, databases: Databases) -> sa.Engine:
    """An engine on ``db_url`` whose schema was rebuilt from nothing and brought to head."""
    return databases.migrated_engine(backend)


@pytest.fixture
def engine(backend: str, databases: Databases) -> sa.Engine:
    """The migrated engine, with every ``sqlmemory_*`` table emptied before the test."""
    return databases.clean_engine(backend)


@pytest.fixture(params=STORAGE_KINDS, ids=STORAGE_KINDS)
def storage(
    request: pytest.FixtureRequest, engine: sa.Engine, backend: str, databases: Databases
) -> Iterator[SqlStorage | BlockingAsyncStorage]:
    """A storage on the clean tables of ``engine``: ``SqlStorage``, or the async one.

    ``"sync"`` is a ``SqlStorage`` over ``engine``. ``"async"`` is a
    :class:`~tests.support.storages.BlockingAsyncStorage` over an ``AsyncSqlStorage``
    whose async engine lives (and is disposed) on a loop of its own in a background thread.
    """
    kind = str(request.param)
    # Only the async kind needs (and checks for) the async driver.
    url = databases.async_url(backend) if kind == "async" else ""
    with contextlib.ExitStack() as stack:
        yield SqlStorages(kind, engine, url, stack).make()


@pytest.fixture
async def async_engine(
    anyio_backend: str, async_db_url: str, engine: sa.Engine
) -> AsyncIterator[AsyncEngine]:
    """An ``AsyncEngine`` on the migrated database, tables emptied as for ``engine``."""
    from sqlalchemy.ext.asyncio import create_async_engine

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
