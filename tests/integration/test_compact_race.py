"""``compact`` with a real model call's shape: an async summarizer that takes its time,
while other writers carry on, on every backend.

docs/compaction.md: ``AsyncSqlStorage.compact`` awaits a coroutine summarizer outside
any transaction, so other writers of the session are never held up by the model call;
a write that lands meanwhile makes ``compact`` raise ``ConflictError`` and write nothing.
A sync storage refuses a coroutine summarizer with ``TypeError``. The contract suite
(tests/contract/test_compact.py) checks the rest on every storage.
"""

from __future__ import annotations

import asyncio
import threading
import warnings

import pytest
import sqlalchemy as sa

from sqlmemory import (
    AsyncSqlStorage,
    ConflictError,
    FixedWindow,
    InMemoryStorage,
    Message,
    SqlStorage,
)
from tests.support.cases import ids
from tests.support.tables import snapshot

pytestmark = pytest.mark.anyio

SID = "race"
# Far below SQLite's 30 s busy timeout: a write held up by an open transaction would
# fail this instead of passing late.
WRITE_WITHIN_SECONDS = 5.0


def talk(n: int, prefix: str = "m") -> list[Message]:
    return [Message.user(f"{prefix}{i}", id=f"{prefix}{i}") for i in range(n)]


def rows(engine: sa.Engine) -> object:
    with engine.connect() as conn:
        return snapshot(conn)


async def test_an_async_summarizer_is_awaited_outside_any_transaction(
    async_storage: AsyncSqlStorage, engine: sa.Engine
) -> None:
    await async_storage.append(SID, *talk(6))
    before = await async_storage.load(SID)
    seen: list[list[Message]] = []

    async def summarize(older: list[Message]) -> Message:
        # Another session is written while the model "thinks": nothing is locked.
        await asyncio.wait_for(
            async_storage.append("bystander", Message.user("hi", id="hi")),
            WRITE_WITHIN_SECONDS,
        )
        seen.append(older)
        return Message.user("summary", id="summary")

    assert await async_storage.compact(SID, summarize, keep=FixedWindow(2)) == 4
    assert seen == [before[:4]]
    assert ids(await async_storage.load(SID)) == ["summary", "m4", "m5"]
    assert await async_storage.load("bystander") != []


async def test_a_writer_racing_the_summarizer_wins_and_compact_writes_nothing(
    async_storage: AsyncSqlStorage, engine: sa.Engine
) -> None:
    await async_storage.append(SID, *talk(6))
    summarizing = asyncio.Event()
    written = asyncio.Event()
    after_race: list[object] = []

    async def summarize(older: list[Message]) -> Message:
        summarizing.set()
        await written.wait()  # the model call, during which the user sends a message
        after_race.append(rows(engine))
        return Message.user("too late", id="late")

    async def writer() -> None:
        await summarizing.wait()
        meanwhile = Message.user("meanwhile", id="meanwhile")
        await asyncio.wait_for(async_storage.append(SID, meanwhile), WRITE_WITHIN_SECONDS)
        written.set()

    compaction = asyncio.ensure_future(async_storage.compact(SID, summarize, keep=FixedWindow(2)))
    await writer()
    with pytest.raises(ConflictError):
        await compaction
    assert rows(engine) == after_race[0]
    assert ids(await async_storage.load(SID)) == [*ids(talk(6)), "meanwhile"]


async def test_a_compaction_cancelled_while_summarizing_writes_nothing(
    async_storage: AsyncSqlStorage, engine: sa.Engine
) -> None:
    await async_storage.append(SID, *talk(4))
    before = rows(engine)
    started = asyncio.Event()

    async def summarize(older: list[Message]) -> Message:
        started.set()
        await asyncio.sleep(60)
        return Message.user("never")

    task = asyncio.ensure_future(async_storage.compact(SID, summarize, keep=FixedWindow(1)))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rows(engine) == before
    assert await async_storage.compact(SID, lambda older: Message.user("s"), keep=FixedWindow(1))


def test_threads_racing_a_slow_summarizer(engine: sa.Engine) -> None:
    # The sync storage: a thread appends while the summarizer blocks, and is not held
    # up by it; the compaction then loses the race.
    storage = SqlStorage(engine)
    storage.append(SID, *talk(5))
    go, done = threading.Event(), threading.Event()

    def append_meanwhile() -> None:
        go.wait(WRITE_WITHIN_SECONDS)
        storage.append(SID, Message.user("meanwhile", id="meanwhile"))
        done.set()

    def summarize(older: list[Message]) -> Message:
        go.set()
        assert done.wait(WRITE_WITHIN_SECONDS), "the append was held up by the compaction"
        return Message.user("too late", id="late")

    thread = threading.Thread(target=append_meanwhile)
    thread.start()
    try:
        with pytest.raises(ConflictError):
            storage.compact(SID, summarize, keep=FixedWindow(1))
    finally:
        thread.join()
    assert ids(storage.load(SID)) == [*ids(talk(5)), "meanwhile"]


def test_a_sync_storage_refuses_a_coroutine_summarizer(engine: sa.Engine) -> None:
    async def summarize(older: list[Message]) -> Message:
        return Message.user("summary")

    for storage in (SqlStorage(engine), InMemoryStorage()):
        storage.append(SID, *talk(4))
        before = storage.load(SID)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "coroutine was never awaited"
            with pytest.raises(TypeError, match="awaitable"):
                storage.compact(SID, summarize, keep=FixedWindow(1))
        assert storage.load(SID) == before
