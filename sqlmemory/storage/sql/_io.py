"""The blocking side of the SQL front door: the sync twins of :mod:`._io_async`'s names.

:mod:`~sqlmemory.storage.sql.storage`, generated from the async source, imports these.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine

from sqlmemory.storage.compaction import call_summarizer

__all__ = [
    "call_summarizer",
    "create_engine",
    "finish_before_cancel",
    "run_sync",
    "sleep",
    "sync_engine_of",
]

T = TypeVar("T")

sleep = time.sleep


def sync_engine_of(engine: Engine) -> Engine:
    """``engine`` itself: a sync engine fires its own events."""
    return engine


def run_sync(conn: Connection, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(conn, *args, **kwargs)``; the async twin runs it through a greenlet."""
    return fn(conn, *args, **kwargs)


def finish_before_cancel(result: T) -> T:
    """``result``: a blocking call cannot be cancelled half-way by its caller."""
    return result
