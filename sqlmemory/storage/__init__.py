"""Storages: in memory, SQL (sync) and SQL (async), behind one protocol.

- :mod:`~sqlmemory.storage.base` (generated from :mod:`~sqlmemory.storage.base_async`):
  the ``Storage`` protocol and the bound ``SessionView``;
- :mod:`~sqlmemory.storage.checks`: the argument checks every storage shares;
- :mod:`~sqlmemory.storage.memory`: ``InMemoryStorage``;
- :mod:`~sqlmemory.storage.records`: ``SessionInfo`` and ``SessionPage``, the session
  records every storage keeps;
- :mod:`~sqlmemory.storage.search_results`: ``SearchHit`` and ``SearchPage``, what
  ``search`` returns (its rules in :mod:`~sqlmemory.storage.search_rules`);
- :mod:`sqlmemory.storage.sql`: ``SqlStorage`` and ``AsyncSqlStorage``.

A new storage method goes into the protocol (``base_async.py``), every storage, and the
contract test suite. ``AsyncSqlStorage`` is imported on first use (it needs greenlet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlmemory.storage.base import SessionView, Storage
from sqlmemory.storage.base_async import AsyncSessionView, AsyncStorage
from sqlmemory.storage.memory import InMemoryStorage
from sqlmemory.storage.records import SessionInfo, SessionPage
from sqlmemory.storage.search_results import SearchHit, SearchPage
from sqlmemory.storage.sql.storage import SqlStorage
from sqlmemory.storage.usage_report import UsageReport

if TYPE_CHECKING:
    from sqlmemory.storage.sql.storage_async import AsyncSqlStorage

__all__ = [
    "AsyncSessionView",
    "AsyncSqlStorage",
    "AsyncStorage",
    "InMemoryStorage",
    "SearchHit",
    "SearchPage",
    "SessionInfo",
    "SessionPage",
    "SessionView",
    "SqlStorage",
    "Storage",
    "UsageReport",
]


def __getattr__(name: str) -> Any:
    if name == "AsyncSqlStorage":
        from sqlmemory.storage.sql.storage_async import AsyncSqlStorage

        return AsyncSqlStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
