"""Both faces of one storage for the LlamaIndex stores: sync calls and async calls.

LlamaIndex calls a chat store both ways, often from one program (``ChatMemoryBuffer``'s
``aput_messages`` runs the sync ``put_messages`` in a worker thread), so each store serves
both over whichever storage it is given:

- over a sync storage (:class:`~sqlmemory.SqlStorage`, :class:`~sqlmemory.InMemoryStorage`)
  a sync call runs as it is; an async call runs it whole in a worker thread, and a
  cancelled caller gets ``CancelledError`` once it has ended (committed or rolled back);
- over an :class:`~sqlmemory.AsyncSqlStorage` an async call is awaited on the event loop
  the storage was first used on (its connections belong to that loop): from another loop
  (LlamaIndex's ``asyncio_run`` starts one in a thread) it is handed to that one. A sync
  call is handed to that loop too when it runs in another thread; from the loop's own
  thread, or before any loop used the storage, it raises ``TypeError`` (it would block the
  loop it waits for): call the ``a*`` method, or give a ``SqlStorage``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from typing import Any

from sqlmemory.storage.sql._io_async import finish_before_cancel

__all__ = ["Bridge"]


class Bridge:
    """Calls a storage's methods from sync or async code (the rules above)."""

    def __init__(self, storage: object) -> None:
        load = getattr(storage, "load", None)
        if not callable(load) or not callable(getattr(storage, "_splice", None)):
            raise TypeError(
                "storage must be a sqlmemory storage (SqlStorage, AsyncSqlStorage, "
                f"InMemoryStorage or an owned view of one), not {type(storage).__name__}"
            )
        self.storage = storage
        self.is_async = inspect.iscoroutinefunction(load)
        self._loop: asyncio.AbstractEventLoop | None = None
        if self.is_async:
            with contextlib.suppress(RuntimeError):  # made outside any loop
                self._loop = asyncio.get_running_loop()

    def call(self, name: str, *args: Any) -> Any:
        """``storage.name(*args)`` from sync code."""
        fn = getattr(self.storage, name)
        if not self.is_async:
            return fn(*args)
        home = self._loop
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if home is not None and home.is_running() and running is not home:
            return asyncio.run_coroutine_threadsafe(fn(*args), home).result()
        raise TypeError(
            f"a sync call ({name}) over an async storage needs the storage's event loop "
            "running in another thread: from async code call the store's async method, "
            "or give the store a SqlStorage"
        )

    async def run(self, name: str, *args: Any) -> Any:
        """``storage.name(*args)`` from async code."""
        fn = getattr(self.storage, name)
        if not self.is_async:
            return await finish_before_cancel(asyncio.to_thread(fn, *args))
        loop = asyncio.get_running_loop()
        home = self._loop
        if home is None or home.is_closed() or (home is not loop and not home.is_running()):
            self._loop = home = loop
        if home is loop:
            return await fn(*args)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(fn(*args), home))
