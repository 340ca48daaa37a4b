"""What only the async storage can get wrong: concurrency on one loop and cancellation.

The behaviours the sync suite checks also run against ``AsyncSqlStorage`` through the
``storage`` fixture (see ``tests/conftest.py``), and the storage contract in
``tests/contract`` runs on it too; this file drives the coroutines for real, on every
backend: gathered appends to one session, ``AsyncShortTermMemory``, sync and async
storages sharing a database, and tasks cancelled at random points, after which a session
must hold exactly its state from before or after the call, the pool no connection, and
nothing a lock that would hold up the next write.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio.to_thread
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from sqlmemory import (
    AsyncSessionView,
    AsyncShortTermMemory,
    AsyncSqlStorage,
    AsyncStorage,
    DocumentBlock,
    FixedWindow,
    ImageBlock,
    InMemoryStorage,
    Message,
    NoOp,
    SqlStorage,
    TextBlock,
    TokenWindow,
    ToolCall,
)
from tests.support.cases import essence, image_bytes, texts
from tests.support.tables import BLOBS, BLOCKS, MESSAGES, SESSIONS

pytestmark = pytest.mark.anyio

SID = "async-session"
CANCEL_ROUNDS = 30
# Uncancelled calls timed before the rounds, after one warm-up call.
DURATION_SAMPLES = 3
POOL_SETTLE_SECONDS = 5.0
# A write takes milliseconds; SQLite's busy timeout (30 s) is far above this.
WRITE_PROBE_SECONDS = 5.0


async def settled_checkouts(async_engine: AsyncEngine) -> int:
    """The pool's checked-out count once it reaches 0, or when the wait runs out.

    A cancelled task may hand its connection back a few loop iterations later (the
    rollback or close runs in a shielded callback), so poll for a bounded time.
    """
    pool = async_engine.sync_engine.pool
    deadline = time.monotonic() + POOL_SETTLE_SECONDS
    await asyncio.sleep(0.01)
    while pool.checkedout() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return pool.checkedout()


async def assert_writable(async_storage: AsyncSqlStorage, where: str) -> None:
    """A write transaction on the session starts at once: no lock outlived the call.

    ``evict`` with a huge ``keep`` takes the session's write lock and deletes nothing.
    A connection that the pool has let go of but that was never closed (say, one left
    unreachable in a reference cycle) may still hold a database lock, which the pool's
    checked-out count cannot show; this probe can.
    """
    probe = asyncio.ensure_future(async_storage.evict(SID, 10**9))
    done, _ = await asyncio.wait({probe}, timeout=WRITE_PROBE_SECONDS)
    if done:
        probe.result()
        return
    # Release whatever garbage holds the lock, so that later tests are not stalled by it,
    # and tell whether that was what held it. The probe is left waiting, not cancelled:
    # cancelling it would add one more cancelled call to the picture.
    freed = gc.collect()
    started = time.monotonic()
    done, _ = await asyncio.wait({probe}, timeout=WRITE_PROBE_SECONDS)
    if done:
        after_gc = f"went through {time.monotonic() - started:.3f}s after gc.collect()"
    else:
        after_gc = "still waited after gc.collect()"
        await asyncio.wait({probe})
    probe.exception()  # retrieved: the failure below is the report
    pytest.fail(
        f"{where}: a write to the session waited over {WRITE_PROBE_SECONDS}s after the "
        f"cancelled call had settled (pool checked-out count 0); it {after_gc} "
        f"({freed} unreachable objects freed). A cancelled call left a connection the "
        "pool no longer tracks holding the database lock.",
        pytrace=False,
    )


def session_rows(engine: sa.Engine, sid: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the session owns, in every table: the state a transaction may change."""
    with engine.connect() as conn:

        def rows(stmt: sa.Select[Any]) -> list[tuple[Any, ...]]:
            return [tuple(r) for r in conn.execute(stmt)]

        return {
            "sessions": rows(
                sa.select(SESSIONS.c.next_seq, SESSIONS.c.last_recorded_at).where(
                    SESSIONS.c.session_id == sid
                )
            ),
            "messages": rows(
                sa.select(MESSAGES.c.seq, MESSAGES.c.message_id, MESSAGES.c.digest)
                .where(MESSAGES.c.session_id == sid)
                .order_by(MESSAGES.c.seq)
            ),
            "blocks": rows(
                sa.select(BLOCKS.c.seq, BLOCKS.c.position, BLOCKS.c.kind, BLOCKS.c.blob_sha256)
                .where(BLOCKS.c.session_id == sid)
                .order_by(BLOCKS.c.seq, BLOCKS.c.position)
            ),
            "blobs": rows(
                sa.select(BLOBS.c.sha256).where(BLOBS.c.session_id == sid).order_by(BLOBS.c.sha256)
            ),
        }


def assert_consistent(rows: dict[str, list[tuple[Any, ...]]], loaded: Sequence[Message]) -> None:
    """The rows describe ``loaded`` and nothing else: no stray block, no orphan blob."""
    assert [r[1] for r in rows["messages"]] == [m.id for m in loaded]
    message_seqs = {r[0] for r in rows["messages"]}
    assert {r[0] for r in rows["blocks"]} <= message_seqs
    referenced = {r[3] for r in rows["blocks"] if r[3] is not None}
    assert {r[0] for r in rows["blobs"]} == referenced, "unreferenced or missing blobs"


# --- concurrency --------------------------------------------------------------------------


async def test_every_method_is_a_coroutine(async_storage: AsyncSqlStorage) -> None:
    assert isinstance(async_storage, AsyncStorage)
    for name in (
        "append",
        "load",
        "save",
        "recent",
        "evict",
        "clear",
        "pop",
        "count",
        "sessions",
    ):
        assert inspect.iscoroutinefunction(getattr(async_storage, name)), name
    assert isinstance(async_storage.session(SID), AsyncSessionView)


async def test_gathered_appends_to_one_session_keep_every_message_once(
    async_storage: AsyncSqlStorage, async_engine: AsyncEngine, engine: sa.Engine
) -> None:
    pairs = [
        (Message.user(f"q{i}", id=f"q{i}"), Message.assistant(f"a{i}", id=f"a{i}"))
        for i in range(50)
    ]

    await asyncio.gather(*(async_storage.append(SID, q, a) for q, a in pairs))

    loaded = await async_storage.load(SID)
    assert len(loaded) == 100
    assert sorted(m.id for m in loaded) == sorted(m.id for pair in pairs for m in pair)
    # Each append is atomic, so its two messages sit side by side, in their given order.
    for first, second in zip(loaded[::2], loaded[1::2], strict=True):
        assert (first.id[0], second.id[0]) == ("q", "a")
        assert first.id[1:] == second.id[1:]
    # Read order is seq order, and store-assigned recorded_at never decreases along it.
    rows = session_rows(engine, SID)
    seqs = [r[0] for r in rows["messages"]]
    assert seqs == sorted(set(seqs))
    assert_consistent(rows, loaded)
    stamps = [m.recorded_at for m in loaded]
    assert all(s is not None for s in stamps)
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    assert await async_storage.count(SID) == 100
    assert await async_storage.recent(SID, 100) == loaded
    assert await settled_checkouts(async_engine) == 0


async def test_gathered_appends_to_many_sessions_stay_apart(
    async_storage: AsyncSqlStorage,
) -> None:
    async def converse(k: int) -> None:
        view = async_storage.session(f"s{k:02d}")
        for i in range(5):
            await view.append(Message.user(f"{k}:{i}"))

    await asyncio.gather(*(converse(k) for k in range(10)))

    assert await async_storage.sessions() == [f"s{k:02d}" for k in range(10)]
    assert await async_storage.sessions("s0") == [f"s0{k}" for k in range(10)]
    for k in range(10):
        assert texts(await async_storage.load(f"s{k:02d}")) == [f"{k}:{i}" for i in range(5)]


async def test_concurrent_retries_of_one_append_store_it_once(
    async_storage: AsyncSqlStorage,
) -> None:
    batch = [Message.user("once", id="m1"), Message.assistant("only once", id="m2")]

    await asyncio.gather(*(async_storage.append(SID, *batch) for _ in range(10)))

    assert essence(await async_storage.load(SID)) == essence(batch)


# --- AsyncShortTermMemory ---------------------------------------------------------------------


async def test_short_term_memory_applies_its_policy_at_read_time(
    async_storage: AsyncSqlStorage,
) -> None:
    memory = AsyncShortTermMemory(async_storage, SID, FixedWindow(2))
    await memory.append(Message.user("user"))
    await memory.append(
        Message.assistant(tool_calls=[ToolCall("c1", "lookup", {"q": "x"})]),
        Message.tool("c1", "42"),
    )
    await memory.append(Message.assistant("assistant"))

    window = await memory.messages()

    assert [m.role.value for m in window] == ["assistant", "tool", "assistant"]
    assert window[0].tool_calls[0].id == "c1"
    assert window[1].tool_call_id == "c1"
    assert await async_storage.count(SID) == 4
    assert len(await AsyncShortTermMemory(async_storage, SID).messages()) == 4
    one = AsyncShortTermMemory(async_storage, SID, FixedWindow(1))
    assert texts(await one.messages()) == ["assistant"]


async def test_short_term_memory_token_window(async_storage: AsyncSqlStorage) -> None:
    memory = AsyncShortTermMemory(async_storage, SID, TokenWindow(8))
    for text in ("one", "two", "bye", "ok"):
        await memory.append(Message.user(text))

    assert texts(await memory.messages()) == ["bye", "ok"]
    assert isinstance(AsyncShortTermMemory(async_storage, SID).policy, NoOp)


async def test_short_term_memory_sessions_do_not_mix(async_storage: AsyncSqlStorage) -> None:
    alice = AsyncShortTermMemory(async_storage, "alice")
    bob = AsyncShortTermMemory(async_storage, "bob")

    await asyncio.gather(
        alice.append(Message.user("hi from alice")), bob.append(Message.user("yo"))
    )

    assert texts(await alice.messages()) == ["hi from alice"]
    assert texts(await bob.messages()) == ["yo"]


# --- sync and async on one database -----------------------------------------------------------


async def test_sync_and_async_storages_see_each_others_writes(
    async_storage: AsyncSqlStorage, engine: sa.Engine
) -> None:
    sync_storage = SqlStorage(engine)
    image = ImageBlock(image_bytes(65, 64), "image/png")

    sync_storage.append(SID, Message.user(["look", image], id="u1"))
    seen = await async_storage.load(SID)
    assert essence(seen) == essence(sync_storage.load(SID))
    assert seen[0].content[1] == image
    assert (seen[0].content[1].width, seen[0].content[1].height) == (65, 64)

    await async_storage.append(SID, Message.assistant("a PNG", id="a1"))
    assert texts(sync_storage.load(SID)) == ["look", "a PNG"]

    await async_storage.save(SID, [Message.system("fresh", id="s1")])
    assert texts(sync_storage.load(SID)) == ["fresh"]

    sync_storage.append(SID, Message.user("again", id="u2"))
    assert await async_storage.evict(SID, 1) == 1
    assert [m.id for m in sync_storage.load(SID)] == ["u2"]
    assert sync_storage.count(SID) == await async_storage.count(SID) == 1

    # A retry through the other storage is still the same message: a no-op.
    await async_storage.append(SID, sync_storage.load(SID)[0])
    assert sync_storage.count(SID) == 1

    assert sync_storage.clear(SID) == 1
    assert await async_storage.load(SID) == []
    assert await async_storage.sessions() == sync_storage.sessions() == []


async def test_sync_and_async_appends_interleave_without_loss(
    async_storage: AsyncSqlStorage, engine: sa.Engine
) -> None:
    sync_storage = SqlStorage(engine)

    def sync_writer() -> None:
        for i in range(20):
            sync_storage.append(SID, Message.user(f"sync {i}", id=f"s{i:02d}"))

    async def async_writer(i: int) -> None:
        await async_storage.append(SID, Message.user(f"async {i}", id=f"a{i:02d}"))

    await asyncio.gather(
        anyio.to_thread.run_sync(sync_writer), *(async_writer(i) for i in range(20))
    )

    loaded = await async_storage.load(SID)
    assert sorted(m.id for m in loaded) == sorted(
        [f"s{i:02d}" for i in range(20)] + [f"a{i:02d}" for i in range(20)]
    )
    # One thread's appends are sequential, so they keep their order among the rest.
    assert [m.id for m in loaded if m.id.startswith("s")] == [f"s{i:02d}" for i in range(20)]
    assert essence(sync_storage.load(SID)) == essence(loaded)


# --- cancellation -----------------------------------------------------------------------------


class Rounds:
    """Fresh, unique messages for each round of a cancellation test."""

    def __init__(self) -> None:
        self.n = 0

    def batch(self) -> list[Message]:
        """Three messages: text with a new image, a tool-call group, a document."""
        self.n += 1
        n = self.n
        return [
            Message.user(
                [f"look {n}", ImageBlock(image_bytes(8 + n % 50, 8, seed=n), "image/png")],
                id=f"u{n}",
                metadata={"round": n},
            ),
            Message.assistant(
                [TextBlock(f"checking {n}")],
                tool_calls=[ToolCall(f"c{n}", "inspect", {"z": n, "a": [1, {"y": 2, "b": 3}]})],
                id=f"a{n}",
            ),
            Message.tool(
                f"c{n}",
                [f"result {n}", DocumentBlock(f"doc {n}".encode(), "text/plain", title="r")],
                id=f"t{n}",
            ),
        ]


Operation = Callable[[list[Message]], tuple[Callable[[], Awaitable[Any]], list[Message]]]


def expected_evict(before: list[Message], keep: int) -> list[Message]:
    reference = InMemoryStorage()
    reference.save(SID, before)
    reference.evict(SID, keep)
    return reference.load(SID)


async def run_cancellation_rounds(
    async_storage: AsyncSqlStorage,
    async_engine: AsyncEngine,
    engine: sa.Engine,
    rng: random.Random,
    prepare: Callable[[], Awaitable[None]],
    operation: Operation,
) -> dict[str, int]:
    """Cancel ``operation`` at random points, ``CANCEL_ROUNDS`` times, checking each round.

    ``operation(before)`` returns the call to make and the history it leads to. Delays
    are drawn up to a little past the uncancelled call's duration, so cancellation lands
    before the first await, between statements, around the commit, and after the end.
    That duration is the fastest of a few uncancelled calls made after a warm-up one: a
    single timing taken on a loaded machine can be many times the usual one, and every
    delay drawn from it would then land after the end.
    """
    durations = []
    for warm_up in range(1 + DURATION_SAMPLES):
        await prepare()
        before = await async_storage.load(SID)
        call, after = operation(before)
        started = time.perf_counter()
        await call()
        if warm_up:
            durations.append(time.perf_counter() - started)
        assert essence(await async_storage.load(SID)) == essence(after)
    duration = min(durations)

    outcomes = {"before": 0, "after": 0, "completed": 0}
    for round_no in range(CANCEL_ROUNDS):
        await prepare()
        before = await async_storage.load(SID)
        before_rows = session_rows(engine, SID)
        call, after = operation(before)
        delay = rng.uniform(0, duration * 1.2)

        task = asyncio.ensure_future(call())
        await asyncio.sleep(delay)
        task.cancel()
        try:
            await task
            outcomes["completed"] += 1
        except asyncio.CancelledError:
            pass

        where = f"round {round_no}, delay {delay:.6f}s"
        leaked = await settled_checkouts(async_engine)
        assert leaked == 0, f"{where}: {leaked} connection(s) leaked"
        await assert_writable(async_storage, where)
        now = await async_storage.load(SID)
        rows = session_rows(engine, SID)
        if essence(now) == essence(before):
            assert rows == before_rows, f"{where}: history unchanged but rows differ"
            outcomes["before"] += 1
        else:
            assert essence(now) == essence(after), f"{where}: neither before nor after state"
            outcomes["after"] += 1
        assert_consistent(rows, now)
    return outcomes


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    return random.Random(request.node.name)


async def test_cancelled_append_is_all_or_nothing_and_leaks_nothing(
    async_storage: AsyncSqlStorage,
    async_engine: AsyncEngine,
    engine: sa.Engine,
    rng: random.Random,
) -> None:
    rounds = Rounds()

    async def prepare() -> None:
        pass

    def operation(before: list[Message]) -> tuple[Callable[[], Awaitable[None]], list[Message]]:
        batch = rounds.batch()
        return (lambda: async_storage.append(SID, *batch)), [*before, *batch]

    outcomes = await run_cancellation_rounds(
        async_storage, async_engine, engine, rng, prepare, operation
    )
    assert outcomes["completed"] < CANCEL_ROUNDS, "no round was cancelled before it ended"


async def test_cancelled_save_is_all_or_nothing_and_leaks_nothing(
    async_storage: AsyncSqlStorage,
    async_engine: AsyncEngine,
    engine: sa.Engine,
    rng: random.Random,
) -> None:
    rounds = Rounds()
    await async_storage.append(SID, *rounds.batch(), *rounds.batch())

    async def prepare() -> None:
        pass

    def operation(before: list[Message]) -> tuple[Callable[[], Awaitable[None]], list[Message]]:
        # Keep a random prefix (whole groups or not), drop the rest, add new messages:
        # deletes, blob sweeps and inserts in one transaction.
        kept = before[: rng.randint(0, len(before))]
        if kept and kept[-1].tool_calls:
            kept = kept[:-1]
        target = [*kept, *rounds.batch()]
        if len(target) > 12:
            target = target[-9:]
        return (lambda: async_storage.save(SID, target)), target

    outcomes = await run_cancellation_rounds(
        async_storage, async_engine, engine, rng, prepare, operation
    )
    assert outcomes["completed"] < CANCEL_ROUNDS, "no round was cancelled before it ended"


async def test_cancelled_evict_is_all_or_nothing_and_leaks_nothing(
    async_storage: AsyncSqlStorage,
    async_engine: AsyncEngine,
    engine: sa.Engine,
    rng: random.Random,
) -> None:
    rounds = Rounds()

    async def prepare() -> None:
        # Top the session up, so every round has images and groups to evict.
        while await async_storage.count(SID) < 9:
            await async_storage.append(SID, *rounds.batch())

    def operation(before: list[Message]) -> tuple[Callable[[], Awaitable[int]], list[Message]]:
        keep = rng.randint(0, len(before) - 1)
        return (lambda: async_storage.evict(SID, keep)), expected_evict(before, keep)

    outcomes = await run_cancellation_rounds(
        async_storage, async_engine, engine, rng, prepare, operation
    )
    assert outcomes["completed"] < CANCEL_ROUNDS, "no round was cancelled before it ended"
