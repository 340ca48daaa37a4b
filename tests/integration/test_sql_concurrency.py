"""Concurrent writers and readers of one session: nothing lost, reordered or torn."""

from __future__ import annotations

import itertools
import multiprocessing
import threading
from collections.abc import Callable

import sqlalchemy as sa

from sqlmemory import FixedWindow, ImageBlock, Message, SqlStorage, ToolCall
from tests.support.cases import image_bytes, timeless
from tests.support.processes import running
from tests.support.tables import blob_rows, message_seqs, orphan_blobs
from tests.support.writers import (
    WRITER_BATCHES,
    check_writers_outcome,
    process_writer,
    writer_batch,
)

SID = "shared"
THREADS = 8
PROCESSES = 3
TIMEOUT = 120
SAVE_ROUNDS = 30
MAX_READS = 400


def test_threads_and_processes_appending_to_one_session_lose_nothing(
    storage: SqlStorage, engine: sa.Engine, db_url: str
) -> None:
    context = multiprocessing.get_context("spawn")
    ready, done, go = context.Queue(), context.Queue(), context.Event()
    process_names = [f"p{k}" for k in range(PROCESSES)]
    processes = [
        context.Process(
            target=process_writer, args=(db_url, SID, name, ready, go, done), daemon=True
        )
        for name in process_names
    ]
    thread_names = [f"t{k}" for k in range(THREADS)]
    start = threading.Barrier(THREADS + 1, timeout=TIMEOUT)
    errors: list[tuple[str, BaseException]] = []

    def thread_writer(name: str) -> None:
        try:
            start.wait()
            for batch in range(WRITER_BATCHES):
                storage.append(SID, *writer_batch(name, batch))
        except BaseException as exc:
            errors.append((name, exc))

    threads = [threading.Thread(target=thread_writer, args=(name,)) for name in thread_names]
    with running(processes, TIMEOUT):
        for _ in processes:
            report = ready.get(timeout=TIMEOUT)
            assert report[0] == "ready", report
        for thread in threads:
            thread.start()
        start.wait()  # every writer is connected: release them together
        go.set()
        for thread in threads:
            thread.join(TIMEOUT)
        assert not any(t.is_alive() for t in threads), "a writer thread hangs"
        reports = [done.get(timeout=TIMEOUT) for _ in processes]
    assert errors == []
    assert sorted(reports) == sorted(("done", name) for name in process_names)
    assert [p.exitcode for p in processes] == [0] * PROCESSES

    loaded = storage.load(SID)
    with engine.connect() as conn:
        seqs = message_seqs(conn, SID)
        blobs = blob_rows(conn, SID)
        assert orphan_blobs(conn) == []
    check_writers_outcome(loaded, [*thread_names, *process_names], [seqs[m.id] for m in loaded])
    assert len(loaded) == (THREADS + PROCESSES) * WRITER_BATCHES * 3
    # The writers really ran at once: their batches interleave. One writer after the
    # other switches writer exactly THREADS + PROCESSES - 1 times; any more means some
    # writer's batches were split by another's.
    batch_writers = [m.id.split("/")[0] for m in loaded if m.metadata["i"] == 0]
    switches = sum(x != y for x, y in itertools.pairwise(batch_writers))
    assert switches > THREADS + PROCESSES - 1, switches
    assert len(blobs) == 1  # every writer's image is the same bytes: stored once
    assert storage.count(SID) == len(loaded)


def history_a() -> list[Message]:
    picture = ImageBlock(image_bytes(40, 40, seed=21), "image/png")
    return [
        Message.system("be brief", id="s"),
        Message.user(["look", picture], id="q"),
        Message.assistant("a cat", id="a1"),
        Message.user("and now?", id="a2"),
        Message.assistant(tool_calls=[ToolCall("ca", "zoom", {"x": 1})], id="a3"),
        Message.tool("ca", "zoomed", id="a4"),
        Message.assistant("a big cat", id="a5"),
    ]


def history_b() -> list[Message]:
    other = ImageBlock(image_bytes(50, 20, "image/gif", seed=22), "image/gif")
    shared = history_a()[:2]  # a common prefix: saves rewrite only from the difference
    return [
        *shared,
        Message.assistant(["two blocks", "of text"], id="b1"),
        Message.user(["another", other], id="b2"),
        Message.assistant("fine", id="b3"),
        Message.user("bye", id="b4"),
    ]


def test_readers_see_one_whole_history_during_repeated_saves(storage: SqlStorage) -> None:
    a, b = history_a(), history_b()
    whole = [timeless(a), timeless(b)]
    windows = [timeless(FixedWindow(2).apply(a)), timeless(FixedWindow(2).apply(b))]
    storage.save(SID, a)
    writing = threading.Event()
    writing.set()
    errors: list[str] = []
    reads = [0] * 3

    def reader(k: int) -> None:
        try:
            while writing.is_set() and reads[k] < MAX_READS:
                got = timeless(storage.load(SID))
                if got not in whole:
                    errors.append(f"load saw {[m.id for m in got]}")
                    return
                window = timeless(storage.load(SID, FixedWindow(2)))
                if window not in windows:
                    errors.append(f"window saw {[m.id for m in window]}")
                    return
                if storage.count(SID) not in (len(a), len(b)):
                    errors.append("count saw neither length")
                    return
                reads[k] += 1
        except BaseException as exc:
            errors.append(f"reader failed: {exc!r}")

    def writer() -> None:
        try:
            for round_ in range(SAVE_ROUNDS):
                storage.save(SID, b if round_ % 2 == 0 else a)
        except BaseException as exc:
            errors.append(f"writer failed: {exc!r}")
        finally:
            writing.clear()

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(len(reads))]
    threads.append(threading.Thread(target=writer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert sum(reads) > 0
    assert timeless(storage.load(SID)) == timeless(a)  # the last round saved a


def run_threads(count: int, body: Callable[[int], None]) -> list[str]:
    """Run ``body(k)`` in ``count`` threads released together; return their errors."""
    start = threading.Barrier(count, timeout=TIMEOUT)
    errors: list[str] = []

    def run(k: int) -> None:
        try:
            start.wait()
            body(k)
        except BaseException as exc:
            errors.append(f"thread {k}: {exc!r}")

    threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    return errors


def test_concurrent_retries_of_one_batch_store_it_once(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    batch = writer_batch("retried", 0)
    errors = run_threads(THREADS, lambda k: storage.append(SID, *batch))
    assert errors == []
    assert timeless(storage.load(SID)) == timeless(batch)
    with engine.connect() as conn:
        assert len(blob_rows(conn, SID)) == 1


def test_writers_of_different_sessions_never_fail_each_other(storage: SqlStorage) -> None:
    # Sessions are created, grown, evicted and dropped side by side: the per-session
    # lock must not turn into a lock (or a deadlock) between sessions.
    rounds = 4

    def churn(k: int) -> None:
        for round_ in range(rounds):
            sid = f"own-{k}-{round_}"
            storage.append(sid, *writer_batch(f"w{k}", 0))
            storage.append(sid, *writer_batch(f"w{k}", 1))
            assert storage.evict(sid, 3) == 3
            storage.save(sid, [*storage.load(sid), *writer_batch(f"w{k}", 2)])
            assert storage.count(sid) == 6
            if round_ % 2:
                assert storage.clear(sid) == 6

    errors = run_threads(THREADS, churn)
    assert errors == []
    expected = sorted(f"own-{k}-{r}" for k in range(THREADS) for r in range(0, rounds, 2))
    assert storage.sessions("own-") == expected
