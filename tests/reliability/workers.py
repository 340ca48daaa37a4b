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
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlmemory import AsyncSqlStorage, ConflictError, FixedWindow, ImageBlock, Message, SqlStorage
from sqlmemory.migrate import sync_url
from tests.support.cases import image_bytes
from tests.support.processes import running

BATCH = 3
"""Messages in one append batch and in one saved history."""
TIMEOUT = 120.0

# Two small PNGs: appends share one, saves carry the other, so every write inserts or
# sweeps blobs, the rows the foreign keys protect.
_PNG_A = image_bytes(3, 2, "image/png", seed=101)
_PNG_B = image_bytes(2, 3, "image/png", seed=102)

OPS = ("append", "save", "save_empty", "clear", "evict", "pop")
"""The write operations of a session's messages; the storms pair each with every other."""
LATER_OPS = ("prune", "compact", "update_session")
"""The later write methods (the session record, the summary, the sweep of old sessions):
the storms pair each with every operation of :data:`OPS` and with each other."""
COMPACT_KEEP = FixedWindow(2)
"""The window the storms' ``compact`` keeps: the rest of the history is summarized."""


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
    elif op == "compact":
        summary = Message.user(f"{writer} summary {i}", id=f"{writer}/k{i}/summary")
        storage.compact(sid, lambda older: summary, keep=COMPACT_KEEP)
    elif op == "update_session":
        storage.update_session(sid, title=f"{writer} t{i}", metadata={"by": writer, "round": i})
    elif op == "prune":
        storage.prune(timedelta(0))
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
        return lambda *args, **kwargs: self._loop.run_until_complete(method(*args, **kwargs))

    def owned_by(self, owner: str) -> BlockingAsync:
        """The async storage's owned view, on this loop (close this one, not the view)."""
        view = object.__new__(BlockingAsync)
        view._loop, view.engine = self._loop, self.engine
        view._storage = self._storage.owned_by(owner)
        return view

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
    """Run ``plan`` (``(session, op, rounds)`` steps), every step started on ``barrier``.

    Reports ``(worker, operations, errors, conflicts)``: a ``compact`` that met a
    concurrent write raised ``ConflictError`` (its documented outcome, not an error);
    ``conflicts`` holds the ``(session, id)`` of the summaries those calls must not have
    written.
    """
    name = f"w{index}"
    ops = 0
    errors: list[str] = []
    conflicts: list[tuple[str, str]] = []
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
                        if op == "compact" and isinstance(exc, ConflictError):
                            conflicts.append((sid, f"{name}/k{i}/summary"))
                            ops += 1
                        else:
                            errors.append(f"{sid} {op}: {type(exc).__name__}: {exc}")
        finally:
            storage.close()
    except BaseException as exc:
        errors.append(f"worker {name} died: {type(exc).__name__}: {exc}")
        barrier.abort()
    results.put((name, ops, errors, conflicts))


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
        # On PostgreSQL the append's inserts are parts of one statement (a WITH).
        if "INSERT INTO " + table.upper() in statement.upper():
            os.kill(os.getpid(), signal.SIGKILL)

    ready.put("ready")
    # A queue's put is written to its pipe by a feeder thread: flushed before the append,
    # or the kill that follows it may come first and the parent never hear "ready".
    ready.close()
    ready.join_thread()
    storage.append(sid, *batch("killed", "k"))
    os._exit(3)  # pragma: no cover - the kill came first (the parent checks the exit code)


def forkserver() -> Any:
    """The multiprocessing context of the suite: a forkserver with sqlmemory preloaded."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["sqlmemory", "sqlalchemy", "tests.reliability.workers"])
    return context


def run_workers(
    count: int,
    target: Callable[..., None],
    url: str,
    args: Callable[[int], tuple[Any, ...]],
    timeout: float,
) -> list[Any]:
    """Run ``target(url, i, *args(i), barrier, results)`` in ``count`` processes that
    start each step together on ``barrier``; their reports, once every one has sent its
    own. A process still alive after that is killed."""
    context = forkserver()
    barrier = context.Barrier(count)
    results = context.Queue()
    processes = [
        context.Process(target=target, args=(url, i, *args(i), barrier, results), daemon=True)
        for i in range(count)
    ]
    with running(processes, TIMEOUT):
        return [results.get(timeout=timeout) for _ in processes]


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


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
PRUNE_SESSIONS = 20
"""Sessions of one round of the prune race."""


def prune_race_worker(
    url: str, index: int, rounds: int, cutoff: Any, barrier: Any, results: Any
) -> None:
    """Each round, ``prune(cutoff)`` runs while appends reach the old sessions it deletes.

    Worker 0 seeds ``PRUNE_SESSIONS`` sessions with one message each, then sets
    ``cutoff`` (microseconds since the epoch, a shared value) to a time after them and
    before any append. Workers 0 and 1 (sync, async) prune everything older; workers 2
    and 3 append a batch to every session, in opposite orders. Every append starts after
    the cutoff, so its session was updated since then: no prune may delete it
    (``docs/contract/storage.md``). After the round, worker 0 checks each session: the
    two batches whole, the seed either still first or gone with its old record.

    Reports ``(worker, operations, errors, deleted)``: ``deleted`` is what the prunes
    returned, for worker 0 minus the seeds found gone (the sum must be 0).
    """
    name = f"p{index}"
    ops = deleted = 0
    errors: list[str] = []
    try:
        storage = open_storage(url, index)
        try:
            storage.count("warm-up")
            for r in range(rounds):
                sids = [f"prune-{r}-{k:02d}" for k in range(PRUNE_SESSIONS)]
                if index == 0:
                    for sid in sids:
                        storage.append(sid, Message.user("old", id="seed"))
                    time.sleep(0.005)
                    now = datetime.now(timezone.utc)
                    cutoff.value = (now - EPOCH) // timedelta(microseconds=1)
                    time.sleep(0.005)
                barrier.wait(TIMEOUT)
                cut = EPOCH + timedelta(microseconds=cutoff.value)
                if index < 2:
                    for _ in range(2):
                        deleted += storage.prune(cut)
                        ops += 1
                else:
                    for sid in sids if index == 2 else reversed(sids):
                        storage.append(sid, *batch(name, f"r{r}"))
                        ops += 1
                barrier.wait(TIMEOUT)
                if index == 0:
                    deleted -= _check_pruned(storage, sids, cut, errors)
                    for sid in sids:  # or the next round's prunes would delete them
                        storage.clear(sid)
                barrier.wait(TIMEOUT)
        finally:
            storage.close()
    except BaseException as exc:
        errors.append(f"worker {name} died: {type(exc).__name__}: {exc}")
        barrier.abort()
    results.put((name, ops, errors, deleted))


def _check_pruned(storage: Any, sids: Sequence[str], cutoff: datetime, errors: list[str]) -> int:
    """Check the sessions of a prune race round; how many lost their seed."""
    gone = 0
    for sid in sids:
        history = [m.id for m in storage.load(sid)]
        info = storage.session_info(sid)
        if info is None or info.message_count != len(history):
            errors.append(f"{sid}: the record {info} disagrees with {len(history)} messages")
        ids = history[1:] if history[:1] == ["seed"] else history
        if ids is history:
            gone += 1
            if info is not None and info.created_at < cutoff:
                errors.append(f"{sid}: the seed is gone but its old record stayed: {info}")
        r = sid.split("-")[1]
        expected = [[f"{w}/r{r}/{k}" for k in range(BATCH)] for w in ("p2", "p3")]
        found = [ids[:BATCH], ids[BATCH:]]
        if sorted(found) != expected or "seed" in ids:
            errors.append(f"{sid}: an append made after the cutoff was lost or torn: {history}")
    return gone
