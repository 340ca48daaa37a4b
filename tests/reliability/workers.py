"""What the reliability suite's worker processes run: plain functions, no test framework.

The processes come from a ``forkserver`` that preloaded sqlmemory and this module, so
starting one costs a fork, not an interpreter. Each worker builds its own storage (even
ones sync, odd ones async), waits on a shared barrier so that all start an operation
pair together, and reports ``(worker, operations, errors)`` on a queue.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any

from sqlmemory import AsyncSqlStorage, ImageBlock, Message, SqlStorage
from sqlmemory.migrate import sync_url
from tests.support.cases import image_bytes

BATCH = 3
"""Messages in one append batch and in one saved history."""
TIMEOUT = 120.0

# Two small PNGs: appends share one, saves carry the other, so every write inserts or
# sweeps blobs, the rows the foreign keys protect.
_PNG_A = image_bytes(3, 2, "image/png", seed=101)
_PNG_B = image_bytes(2, 3, "image/png", seed=102)

OPS = ("append", "save", "save_empty", "clear", "evict", "pop")
"""The write operations the storms pair up (every write method of the storage)."""


def scale() -> int:
    """``$SQLMEMORY_SOAK`` (default 1): how many times longer every storm and model run is."""
    try:
        return max(1, int(os.environ.get("SQLMEMORY_SOAK", "1")))
    except ValueError:
        return 1


def batch(writer: str, tag: str, image: bytes = _PNG_A) -> list[Message]:
    """``BATCH`` messages ``writer/tag/k``; the first carries ``image``."""
    first = Message.user(
        [f"{writer} {tag} 0", ImageBlock(image, "image/png")], id=f"{writer}/{tag}/0"
    )
    rest = [
        Message.assistant(f"{writer} {tag} {k}", id=f"{writer}/{tag}/{k}") for k in range(1, BATCH)
    ]
    return [first, *rest]


def run_op(storage: Any, op: str, sid: str, writer: str, i: int) -> None:
    """One write ``op`` of ``writer``'s ``i``-th round on session ``sid``."""
    if op == "append":
        storage.append(sid, *batch(writer, f"a{i}"))
    elif op == "save":
        storage.save(sid, batch(writer, f"s{i}", _PNG_B))
    elif op == "save_empty":
        storage.save(sid, [])
    elif op == "clear":
        storage.clear(sid)
    elif op == "evict":
        storage.evict(sid, BATCH + 1)
    elif op == "pop":
        storage.pop(sid)
    else:  # pragma: no cover - the suite names only OPS
        raise ValueError(op)


class BlockingAsync:
    """An :class:`AsyncSqlStorage` driven from blocking code, on a loop of its own."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        made = _make_async(_async_url(url), **engine_kwargs)
        self._storage = self._loop.run_until_complete(made)
        self.engine = self._storage.engine.sync_engine

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._storage, name)
        return lambda *args: self._loop.run_until_complete(method(*args))

    def close(self) -> None:
        self._loop.run_until_complete(self._storage.close())
        self._loop.close()


async def _make_async(url: str, **engine_kwargs: Any) -> AsyncSqlStorage:
    return AsyncSqlStorage.from_url(url, **engine_kwargs)


_ASYNC_DRIVERS = {
    "postgresql": "postgresql+asyncpg",
    "mysql": "mysql+aiomysql",
    "sqlite": "sqlite+aiosqlite",
}


def _async_url(url: str) -> str:
    parsed = sync_url(url)
    async_driver = _ASYNC_DRIVERS[parsed.get_backend_name()]
    return parsed.set(drivername=async_driver).render_as_string(hide_password=False)


def open_storage(url: str, index: int) -> Any:
    """Worker ``index``'s storage: sync for even indexes, async for odd ones."""
    return SqlStorage.from_url(url) if index % 2 == 0 else BlockingAsync(url)


def storm_worker(
    url: str, index: int, plan: Sequence[tuple[str, str, int]], barrier: Any, results: Any
) -> None:
    """Run ``plan`` (``(session, op, rounds)`` steps), every step started on ``barrier``."""
    name = f"w{index}"
    ops = 0
    errors: list[str] = []
    try:
        storage = open_storage(url, index)
        try:
            storage.count("warm-up")  # connects and checks the schema before the race
            for sid, op, rounds in plan:
                barrier.wait(TIMEOUT)
                for i in range(rounds):
                    try:
                        run_op(storage, op, sid, name, i)
                        ops += 1
                    except Exception as exc:  # every error is a finding: report it
                        errors.append(f"{sid} {op}: {type(exc).__name__}: {exc}")
        finally:
            storage.close()
    except BaseException as exc:
        errors.append(f"worker {name} died: {type(exc).__name__}: {exc}")
        barrier.abort()
    results.put((name, ops, errors))


def upgrade_worker(url: str, index: int, barrier: Any, results: Any) -> None:
    """Upgrade the (empty) database at ``url`` once all workers are at ``barrier``, then
    write through a new storage."""
    from sqlmemory.migrate import upgrade

    try:
        barrier.wait(TIMEOUT)
        upgrade(url)
        storage = SqlStorage.from_url(url)
        try:
            storage.append("after-upgrade", Message.user(f"worker {index}", id=f"u{index}"))
        finally:
            storage.close()
        results.put((index, None))
    except BaseException as exc:
        results.put((index, f"{type(exc).__name__}: {exc}"))


def killed_writer(url: str, sid: str, table: str, ready: Any) -> None:
    """Append a batch and SIGKILL this process as the first row reaches ``table``.

    The kill lands inside the write transaction, after the session lock and other rows:
    the database must roll all of it back.
    """
    import sqlalchemy as sa

    storage = SqlStorage.from_url(url)
    storage.count(sid)
    engine = storage.engine

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _kill(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO " + table.upper()):
            os.kill(os.getpid(), signal.SIGKILL)

    ready.put("ready")
    storage.append(sid, *batch("killed", "k"))
    ready.put("not killed")  # pragma: no cover - the kill came first


def forkserver() -> Any:
    """The multiprocessing context of the suite: a forkserver with sqlmemory preloaded."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["sqlmemory", "sqlalchemy", "tests.reliability.workers"])
    return context


def cold_worker(url: str, index: int, sid: str, rounds: int, barrier: Any, results: Any) -> None:
    """Each round, a brand-new storage writes at once: worker 0 saves, the others append.

    A new storage's first write is the one that checks the schema: it must not do so
    inside its write transaction (on MySQL that snapshot predates the session's lock).
    """
    name = f"c{index}"
    ops = 0
    errors: list[str] = []
    for i in range(rounds):
        try:
            barrier.wait(TIMEOUT)
            storage = open_storage(url, index)
            try:
                if index == 0:
                    storage.save(sid, batch(name, f"s{i}", _PNG_B))
                else:
                    storage.append(sid, *batch(name, f"a{i}"))
                ops += 1
            finally:
                storage.close()
        except Exception as exc:
            errors.append(f"round {i}: {type(exc).__name__}: {exc}")
    results.put((name, ops, errors))
