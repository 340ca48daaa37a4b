"""Storages: in memory, SQL (sync) and SQL (async), behind one protocol."""

from sqlmemory.storage.aio import AsyncSqlStorage
from sqlmemory.storage.base import AsyncSessionView, AsyncStorage, SessionView, Storage
from sqlmemory.storage.memory import InMemoryStorage
from sqlmemory.storage.sql import SqlStorage

__all__ = [
    "AsyncSessionView",
    "AsyncSqlStorage",
    "AsyncStorage",
    "InMemoryStorage",
    "SessionView",
    "SqlStorage",
    "Storage",
]
