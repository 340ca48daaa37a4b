"""The contenders of ``bench/agents_session.py``: the Responses items of a turn, each case's
fresh databases, and the three session implementations timed side by side."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from corpus import Corpus
from sqlalchemy.engine import make_url

# --- the items ------------------------------------------------------------------------


class Turns:
    """Deterministic turns as the Agents ``Runner`` stores them: a user message, the
    model's function call, the tool's output and the model's answer (Responses items)."""

    def __init__(self, seed: int = 1234) -> None:
        self.corpus = Corpus(seed)

    def turn(self, i: int) -> list[dict[str, Any]]:
        call_id = f"call_{i:08d}{uuid.UUID(int=i).hex[:16]}"
        order = f"A-{1_000_000 + i}"
        return [
            {"role": "user", "content": self.corpus.text()},
            {
                "type": "function_call",
                "id": f"fc_{i:08d}{uuid.UUID(int=i * 7).hex[:24]}",
                "call_id": call_id,
                "name": "lookup_order",
                "arguments": json.dumps({"order_id": order, "fields": ["status", "eta"]}),
                "status": "completed",
            },
            {
                "type": "function_call_output",
                "call_id": call_id,
                "output": json.dumps(
                    {"order_id": order, "status": "shipped", "eta": "2026-12-04", "note": ""}
                ),
            },
            {
                "id": f"msg_{i:08d}{uuid.UUID(int=i * 13).hex[:24]}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": self.corpus.text(), "annotations": []}],
            },
        ]

    def turns(self, start: int, n: int) -> list[list[dict[str, Any]]]:
        return [self.turn(i) for i in range(start, start + n)]


# --- where each case's databases live -------------------------------------------------


class SqlitePlace:
    """A fresh SQLite file per contender and case, in a temporary directory."""

    backend = "sqlite"

    def __init__(self, directory: Path | None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="sqlmemory-agents-", dir=directory))

    def fresh(self, label: str) -> dict[str, str]:
        path = self.root / f"{label}.db"
        return {
            "path": str(path),
            "sync_url": f"sqlite+pysqlite:///{path}",
            "async_url": f"sqlite+aiosqlite:///{path}",
        }

    def drop(self, where: dict[str, str]) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(where["path"] + suffix).unlink(missing_ok=True)

    def version(self) -> str:
        import sqlite3

        return f"SQLite {sqlite3.sqlite_version}"

    def engine_options(self) -> dict[str, Any]:
        """Keyword arguments for every contender's ``create_async_engine``."""
        return {}

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class PostgresPlace:
    """A fresh PostgreSQL database per contender and case: created, then dropped."""

    backend = "postgresql"

    def __init__(self, url: str, run_id: str, driver: str, pre_ping: bool = False) -> None:
        import psycopg

        self.url = make_url(url)
        self.run_id = run_id
        self.driver = driver
        self.pre_ping = pre_ping
        conninfo = self.url.set(drivername="postgresql").render_as_string(False)
        self.admin = psycopg.connect(conninfo, autocommit=True)

    def fresh(self, label: str) -> dict[str, str]:
        name = re.sub(r"[^a-z0-9_]", "_", f"bench_agents_{self.run_id}_{label}".lower())[:63]
        self.admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.admin.execute(f'CREATE DATABASE "{name}"')
        url = self.url.set(database=name)
        return {
            "database": name,
            "sync_url": url.set(drivername="postgresql+psycopg").render_as_string(False),
            "async_url": url.set(drivername=f"postgresql+{self.driver}").render_as_string(False),
        }

    def drop(self, where: dict[str, str]) -> None:
        self.admin.execute(f'DROP DATABASE IF EXISTS "{where["database"]}" WITH (FORCE)')

    def engine_options(self) -> dict[str, Any]:
        """Keyword arguments for every contender's ``create_async_engine``: the same pool
        for both sessions, pinging pooled connections at checkout or not."""
        return {"pool_pre_ping": self.pre_ping}

    def version(self) -> str:
        row = self.admin.execute("SHOW server_version").fetchone()
        return f"PostgreSQL {row[0] if row else '?'}"

    def close(self) -> None:
        self.admin.close()


Place = SqlitePlace | PostgresPlace


# --- the contenders -------------------------------------------------------------------


class Contender:
    """One session implementation on a fresh database; one session object per id.

    Contenders on an ``AsyncEngine`` get one made the same way, by
    ``create_async_engine(url, **engine_options)``: the comparison is of the sessions, not
    of pool settings. (``AsyncSqlStorage.from_url`` on a server would also turn on
    ``pool_pre_ping``, which on asyncpg is three round trips per checkout: ``--pre-ping``
    gives it to both contenders.)
    """

    name = ""
    backends: tuple[str, ...] = ("sqlite", "postgresql")

    def __init__(self, where: dict[str, str], engine_options: dict[str, Any] | None = None) -> None:
        self.where = where
        self.engine_options = engine_options or {}
        self.sessions: dict[str, Any] = {}

    def engine(self) -> Any:
        """A new ``AsyncEngine`` on the contender's database."""
        from sqlalchemy.ext.asyncio import create_async_engine

        return create_async_engine(self.where["async_url"], **self.engine_options)

    async def setup(self) -> None:
        """Untimed: connect, create the schema."""

    def open(self, sid: str) -> Any:
        raise NotImplementedError

    def session(self, sid: str) -> Any:
        found = self.sessions.get(sid)
        if found is None:
            found = self.sessions[sid] = self.open(sid)
        return found

    async def close(self) -> None:
        """Release connections (the database is dropped by the caller)."""


class SqlMemory(Contender):
    name = "sqlmemory"

    async def setup(self) -> None:
        from sqlmemory import AsyncSqlStorage, migrate

        await asyncio.to_thread(migrate.upgrade, self.where["sync_url"])
        self.storage = AsyncSqlStorage(self.engine())

    def open(self, sid: str) -> Any:
        from sqlmemory.integrations.openai_agents import SqlMemorySession

        return SqlMemorySession(sid, self.storage)

    async def close(self) -> None:
        await self.storage.engine.dispose()


class SqlMemorySync(SqlMemory):
    """SqlMemorySession over a sync ``SqlStorage`` (``sqlite3``, ``psycopg``): each call
    runs whole in a worker thread, as the SDK's ``SQLiteSession`` runs its ``sqlite3``
    calls. The engine gets the same ``engine_options`` as the async contenders'."""

    name = "sqlmemory_sync"

    async def setup(self) -> None:
        from sqlalchemy import create_engine

        from sqlmemory import SqlStorage, migrate

        await asyncio.to_thread(migrate.upgrade, self.where["sync_url"])
        engine = create_engine(self.where["sync_url"], **self.engine_options)
        self.storage = SqlStorage(engine)  # type: ignore[assignment]

    async def close(self) -> None:
        self.storage.engine.dispose()


class AgentsSQLAlchemy(Contender):
    name = "agents_sqlalchemy"

    async def setup(self) -> None:
        self.async_engine = self.engine()

    def open(self, sid: str) -> Any:
        from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

        return SQLAlchemySession(sid, engine=self.async_engine, create_tables=True)

    async def close(self) -> None:
        await self.async_engine.dispose()


class AgentsSQLite(Contender):
    name = "agents_sqlite"
    backends = ("sqlite",)

    def open(self, sid: str) -> Any:
        from agents import SQLiteSession

        return SQLiteSession(sid, db_path=self.where["path"])

    async def close(self) -> None:
        for session in self.sessions.values():
            session.close()


CONTENDERS: tuple[type[Contender], ...] = (SqlMemory, SqlMemorySync, AgentsSQLAlchemy, AgentsSQLite)
OURS = (SqlMemory.name, SqlMemorySync.name)
"""sqlmemory's contenders: ``SqlMemorySession`` on the async storage, and on the sync one."""


def missing() -> str | None:
    """Why the SDK's sessions cannot run, or ``None``."""
    try:
        __import__("agents.extensions.memory.sqlalchemy_session")
        __import__("sqlmemory.integrations.openai_agents")
    except ImportError as exc:
        return f"{exc} (pip install -e '.[bench]')"
    return None


__all__ = [
    "CONTENDERS",
    "OURS",
    "Contender",
    "Place",
    "PostgresPlace",
    "SqlMemory",
    "SqlMemorySync",
    "SqlitePlace",
    "Turns",
    "missing",
]
