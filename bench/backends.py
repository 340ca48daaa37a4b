"""Opening a backend: sqlmemory's engine (schema upgraded) and the raw connection beside it."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from machine import filesystem_of
from peers import Place
from raw_driver import RawDriver, RawPostgres, RawSqlite
from sqlalchemy.engine import make_url

from sqlmemory import SqlStorage
from sqlmemory.migrate import upgrade


@dataclasses.dataclass
class Backend:
    name: str
    storage: SqlStorage
    raw: RawDriver
    info: dict[str, Any]
    peers: Place
    cleanup: list[Callable[[], None]] = dataclasses.field(default_factory=list)

    @property
    def engine(self) -> sa.Engine:
        return self.storage.engine


def pg_conninfo(url: str) -> str:
    """The libpq URI of a SQLAlchemy PostgreSQL URL (driver name dropped)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def open_sqlite(directory: Path | None) -> Backend:
    tmp = Path(tempfile.mkdtemp(prefix="sqlmemory-bench-", dir=directory))
    path = tmp / "bench.db"
    url = f"sqlite+pysqlite:///{path}"
    upgrade(url)
    # from_url configures the engine's connections (WAL, busy timeout, BEGIN IMMEDIATE).
    storage = SqlStorage.from_url(url)
    raw = RawSqlite(path)
    info: dict[str, Any] = {
        "path": str(path),
        "filesystem": filesystem_of(tmp),
        "sqlite_version": sqlite3.sqlite_version,
        "raw": raw.settings(),
    }
    with storage.engine.connect() as conn:
        info["sqlmemory"] = {
            "journal_mode": conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
            "synchronous": conn.exec_driver_sql("PRAGMA synchronous").scalar(),
            "busy_timeout": conn.exec_driver_sql("PRAGMA busy_timeout").scalar(),
        }
    backend = Backend("sqlite", storage, raw, info, Place("sqlite", directory=tmp))
    backend.cleanup.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    return backend


def open_postgres(url: str) -> Backend:
    raw = RawPostgres(pg_conninfo(url))
    upgrade(url)
    storage = SqlStorage.from_url(url)
    info = {"url": safe_url(url), **raw.settings()}
    return Backend("postgresql", storage, raw, info, Place("postgresql", url=url))


def safe_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)
