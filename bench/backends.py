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
from raw_driver import RawDriver, RawPostgres, RawSqlite
from sqlalchemy.engine import make_url

from sqlmemory import SqlStorage
from sqlmemory.migrate import upgrade


@dataclasses.dataclass
class Backend:
    name: str
    engine: sa.Engine
    raw: RawDriver
    info: dict[str, Any]
    cleanup: list[Callable[[], None]] = dataclasses.field(default_factory=list)


def pg_conninfo(url: str) -> str:
    """The libpq URI of a SQLAlchemy PostgreSQL URL (driver name dropped)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def open_sqlite(directory: Path | None) -> Backend:
    tmp = Path(tempfile.mkdtemp(prefix="sqlmemory-bench-", dir=directory))
    path = tmp / "bench.db"
    engine = sa.create_engine(f"sqlite+pysqlite:///{path}")
    upgrade(engine)
    raw = RawSqlite(path)
    info: dict[str, Any] = {
        "path": str(path),
        "filesystem": filesystem_of(tmp),
        "sqlite_version": sqlite3.sqlite_version,
        "raw": raw.settings(),
    }
    SqlStorage(engine)  # configures the engine's connections (WAL, busy timeout, BEGIN)
    with engine.connect() as conn:
        info["sqlmemory"] = {
            "journal_mode": conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
            "synchronous": conn.exec_driver_sql("PRAGMA synchronous").scalar(),
            "busy_timeout": conn.exec_driver_sql("PRAGMA busy_timeout").scalar(),
        }
    backend = Backend("sqlite", engine, raw, info)
    backend.cleanup.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    return backend


def open_postgres(url: str) -> Backend:
    raw = RawPostgres(pg_conninfo(url))
    engine = sa.create_engine(url)
    upgrade(engine)
    return Backend("postgresql", engine, raw, {"url": safe_url(url), **raw.settings()})


def safe_url(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)
