"""The async storage as a contender: ``AsyncSqlStorage`` on the backend's own database.

:class:`AsyncSide` drives each call through ``run_until_complete`` of one event loop of
its own, so a scenario times it exactly as it times the sync ``SqlStorage``: one call per
rep, in the same rotating loop (``timing.rotating``). It offers the sync storage's
methods the scenarios use (``append``, ``load``, ``save``, ``count``, ``clear``), so the
same scenario code drives both.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from sqlalchemy.engine import URL
from timing import summarize

from sqlmemory import AsyncSqlStorage, Message
from sqlmemory.policy import Policy

NAME = "sqlmemory_async"
"""The async storage's key among a scenario's contenders and in the JSON."""

ASYNC_PEER = "agents_sqlalchemy"
"""The async peer it is compared with (the OpenAI Agents SDK's ``SQLAlchemySession``)."""

T = TypeVar("T")


def async_url(url: URL) -> str:
    """The async URL of the sync storage's database: ``aiosqlite`` on SQLite, ``aiomysql``
    on MySQL/MariaDB; on PostgreSQL ``asyncpg`` if installed, else psycopg's async mode."""
    if url.get_backend_name() == "sqlite":
        driver = "sqlite+aiosqlite"
    elif url.get_backend_name() in ("mysql", "mariadb"):
        driver = "mysql+aiomysql"
    elif importlib.util.find_spec("asyncpg") is not None:
        driver = "postgresql+asyncpg"
    else:
        driver = "postgresql+psycopg"
    return url.set(drivername=driver).render_as_string(hide_password=False)


class AsyncSide:
    """``AsyncSqlStorage.from_url(url)``, each call run to completion on one event loop."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.storage = AsyncSqlStorage.from_url(url)
        self.driver = self.storage.engine.url.drivername

    def run(self, awaitable: Awaitable[T]) -> T:
        return self.loop.run_until_complete(awaitable)

    def append(self, session_id: str, *messages: Message) -> None:
        self.run(self.storage.append(session_id, *messages))

    def load(self, session_id: str, policy: Policy | None = None) -> list[Message]:
        return self.run(self.storage.load(session_id, policy))

    def save(self, session_id: str, messages: Sequence[Message]) -> None:
        self.run(self.storage.save(session_id, messages))

    def count(self, session_id: str) -> int:
        return self.run(self.storage.count(session_id))

    def clear(self, session_id: str) -> int:
        return self.run(self.storage.clear(session_id))

    def close(self) -> None:
        try:
            self.run(self.storage.close())
        finally:
            self.loop.close()


def figures(entry: dict[str, Any], samples: Sequence[float] | None) -> dict[str, Any]:
    """The async fields of a result row: its summary, its median over the sync one's
    (``async_x_sync``) and over the async peer's, when that peer ran (``async_x_peer``)."""
    if samples is None:
        return {NAME: None, "async_x_sync": None, "async_x_peer": None}
    mine = summarize(samples)
    peer = entry["peers"].get(ASYNC_PEER)
    return {
        NAME: mine,
        "async_x_sync": mine["median_ms"] / entry["sqlmemory"]["median_ms"],
        "async_x_peer": mine["median_ms"] / peer["median_ms"] if peer else None,
    }


__all__ = ["ASYNC_PEER", "NAME", "AsyncSide", "async_url", "figures"]
