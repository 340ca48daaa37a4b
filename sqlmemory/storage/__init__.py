"""Storages: in memory, SQL (sync) and SQL (async), behind one protocol.

``AsyncSqlStorage`` is imported on first use: SQLAlchemy's asyncio support needs
greenlet, which only the ``async``, ``postgres`` and ``mysql`` extras install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlmemory.storage.base import AsyncSessionView, AsyncStorage, SessionView, Storage
from sqlmemory.storage.memory import InMemoryStorage
from sqlmemory.storage.sql import SqlStorage

if TYPE_CHECKING:
    from sqlmemory.storage.aio import AsyncSqlStorage

__all__ = [
    "AsyncSessionView",
    "AsyncSqlStorage",
    "AsyncStorage",
    "InMemoryStorage",
    "SessionView",
    "SqlStorage",
    "Storage",
]


def __getattr__(name: str) -> Any:
    if name == "AsyncSqlStorage":
        from sqlmemory.storage.aio import AsyncSqlStorage

        return AsyncSqlStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
