"""Backend fixtures: one test body runs on SQLite, PostgreSQL and MySQL/MariaDB.

``backend``, ``db_url`` and ``async_db_url`` are session scoped and parametrised over
:data:`BACKENDS`; a test that uses any fixture below runs once per backend. A backend that
cannot be reached is skipped with the reason, or fails the run when it is listed in
``$SQLMEMORY_REQUIRE_BACKENDS``.

``engine`` gives each test empty ``sqlmemory_*`` tables at the head revision; tests that
downgrade the schema must bring it back to head before they finish.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
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
    from sqlmemory import AsyncSqlStorage, SqlStorage


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


@pytest.fixture
def storage(engine: sa.Engine) -> SqlStorage:
    """A ``SqlStorage`` over ``engine``."""
    from sqlmemory import SqlStorage

    return SqlStorage(engine)


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
