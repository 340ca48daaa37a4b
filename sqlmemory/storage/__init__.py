"""Storages: in memory, SQL (sync) and SQL (async), behind one protocol."""

from sqlmemory.storage.base import AsyncSessionView, AsyncStorage, SessionView, Storage
from sqlmemory.storage.memory import InMemoryStorage

__all__ = ["AsyncSessionView", "AsyncStorage", "InMemoryStorage", "SessionView", "Storage"]
