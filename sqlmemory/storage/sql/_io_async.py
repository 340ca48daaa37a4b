"""The asyncio side of the SQL front door: what differs between sync and async I/O.

:mod:`~sqlmemory.storage.sql.storage_async` imports these names; in its generated sync
twin the same names come from :mod:`~sqlmemory.storage.sql._io`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine

try:
    import greenlet  # noqa: F401 - SQLAlchemy's asyncio layer runs on it
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "AsyncSqlStorage needs greenlet: pip install 'sqlmemory[async]' "
        "(or the postgres / mysql extra)"
    ) from exc
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.ext.asyncio import create_async_engine as create_engine

__all__ = [
    "call_summarizer",
    "create_engine",
    "finish_before_cancel",
    "run_sync",
    "sleep",
    "sync_engine_of",
]

T = TypeVar("T")

sleep = asyncio.sleep


def sync_engine_of(engine: AsyncEngine) -> Engine:
    """The ``Engine`` whose events fire for ``engine``'s statements."""
    return engine.sync_engine


async def run_sync(conn: AsyncConnection, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(sync_connection, *args, **kwargs)``: the shared SQL functions, run from async."""
    return await conn.run_sync(_call, fn, *args, **kwargs)


def _call(conn: Connection, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return fn(conn, *args, **kwargs)


async def call_summarizer(summarize: Callable[..., Any], older: list[Any]) -> Any:
    """``summarize(older)``, awaited when it returns an awaitable (a coroutine function)."""
    result = summarize(older)
    if inspect.isawaitable(result):
        result = await result
    return result


async def finish_before_cancel(work: Coroutine[Any, Any, T]) -> T:
    """Await ``work``, shielded from cancellation until it has ended.

    A cancelled caller still gets ``CancelledError``, but only once the transaction
    has committed or rolled back and its connection is back in the pool: a
    transaction abandoned mid-way can keep its connection (and, on SQLite, the
    database's write lock) until the garbage collector finds it.
    """
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                continue
        if not task.cancelled():
            task.exception()  # retrieved: the caller asked to cancel, not to know
        raise
