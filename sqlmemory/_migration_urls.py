"""The database a migration runs on: async URLs made sync, and an engine for one call.

Alembic is synchronous, so a URL naming an async driver (``asyncpg``, ``aiomysql``,
``aiosqlite``) is run through the backend's sync driver (:func:`sync_url`, re-exported by
:mod:`sqlmemory.migrate`). Parsing a URL, and the errors naming the right URL form or the
extra to install, are :mod:`sqlmemory._urls`'s.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from sqlmemory._urls import create_sync_engine, parse_url

__all__ = ["SYNC_DRIVERS", "EngineOrUrl", "migrate_command", "migration_engine", "sync_url"]

SYNC_DRIVERS = {
    "postgresql+asyncpg": "postgresql+psycopg",
    "postgresql+psycopg_async": "postgresql+psycopg",
    "mysql+aiomysql": "mysql+pymysql",
    "mysql+asyncmy": "mysql+pymysql",
    "mariadb+aiomysql": "mariadb+pymysql",
    "mariadb+asyncmy": "mariadb+pymysql",
    "sqlite+aiosqlite": "sqlite+pysqlite",
}
"""The sync driver that runs a migration for each async driver."""

EngineOrUrl = sa.Engine | str | URL


def sync_url(url: str | URL) -> URL:
    """Return ``url`` with an async driver replaced by the backend's sync driver.

    Examples:
        >>> sync_url("postgresql+asyncpg://app@db/app").drivername
        'postgresql+psycopg'

    Raises:
        ValueError: ``url`` is not a SQLAlchemy URL; the message shows the forms to use.
    """
    parsed = parse_url(url)
    sync_driver = SYNC_DRIVERS.get(parsed.drivername)
    return parsed.set(drivername=sync_driver) if sync_driver else parsed


def migrate_command(url: URL) -> str:
    """The ``sqlmemory migrate`` command that brings the database at ``url`` to head.

    Examples:
        >>> migrate_command(sync_url("postgresql+asyncpg://app:secret@db/app"))
        "sqlmemory migrate --url 'postgresql+psycopg://app:***@db/app'"
    """
    rendered = sync_url(url).render_as_string(hide_password=True)
    return f"sqlmemory migrate --url {shlex.quote(rendered)}"


@contextmanager
def migration_engine(engine_or_url: EngineOrUrl) -> Iterator[sa.Engine]:
    """The caller's engine as it is, or an engine made for a URL and disposed after."""
    if isinstance(engine_or_url, sa.Engine):
        yield engine_or_url
        return
    if not isinstance(engine_or_url, (str, URL)):
        raise TypeError(f"expected an Engine or a URL string, got {type(engine_or_url).__name__}")
    engine = create_sync_engine(sync_url(engine_or_url), poolclass=NullPool)
    try:
        yield engine
    finally:
        engine.dispose()
