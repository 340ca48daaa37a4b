"""Storms: four processes (two sync, two async storages) run every pair of write
operations on one session at once; nothing escapes, deadlocks, is lost or half-written.

docs/contract/persistence.md (locking, transactions): every write takes the session's
lock first, so writers of one session serialize; a deadlock the database still reports
is retried and never reaches the caller.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import sqlalchemy as sa

from sqlmemory import Message, SqlStorage
from tests.reliability.figures import FIGURES
from tests.reliability.workers import (
    BATCH,
    OPS,
    TIMEOUT,
    cold_worker,
    forkserver,
    scale,
    storm_worker,
)
from tests.support.tables import orphan_blobs, row_counts

PAIRS = list(itertools.combinations_with_replacement(OPS, 2))
WORKERS = 4
ROUNDS = 3


def check_whole_batches(history: Sequence[Message], evicted: bool, popped: bool = False) -> None:
    """Every batch is whole and in order; only an evict may have cut the oldest one, and
    only pops the newest messages of a batch (appends may follow a pop)."""
    ids = [m.id for m in history]
    assert len(ids) == len(set(ids)), f"a message is stored twice: {ids}"
    runs = [list(run) for _, run in itertools.groupby(ids, key=lambda i: i.rsplit("/", 1)[0])]
    for index, run in enumerate(runs):
        positions = [int(i.rsplit("/", 1)[1]) for i in run]
        first = positions[0] if index == 0 and evicted else 0
        last = first + len(positions) if popped else BATCH
        assert positions == list(range(first, last)), f"a torn or reordered batch: {ids}"


def test_every_pair_of_writes_on_one_session_runs_clean(engine: sa.Engine, db_url: str) -> None:
    rounds = ROUNDS * scale()
    context = forkserver()
    barrier = context.Barrier(WORKERS)
    results = context.Queue()
    plans = [
        [(f"storm-{a}-{b}", a if index < WORKERS // 2 else b, rounds) for a, b in PAIRS]
        for index in range(WORKERS)
    ]
    processes = [
        context.Process(
            target=storm_worker, args=(db_url, i, plans[i], barrier, results), daemon=True
        )
        for i in range(WORKERS)
    ]
    for process in processes:
        process.start()
    try:
        reports = [results.get(timeout=TIMEOUT * len(PAIRS)) for _ in processes]
        for process in processes:
            process.join(TIMEOUT)
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
    errors = [error for _, _, found in reports for error in found]
    assert errors == []
    operations = sum(ops for _, ops, _ in reports)
    assert operations == WORKERS * rounds * len(PAIRS)
    FIGURES["operations"] += operations

    storage = SqlStorage(engine)
    for a, b in PAIRS:
        history = storage.load(f"storm-{a}-{b}")
        check_whole_batches(history, evicted="evict" in (a, b), popped="pop" in (a, b))
        assert storage.count(f"storm-{a}-{b}") == len(history)
        FIGURES["histories checked"] += 1
    with engine.connect() as conn:
        assert orphan_blobs(conn) == []
        counts = row_counts(conn)
    assert counts["messages"] == sum(storage.count(s) for s in storage.sessions())


def test_new_storages_writing_at_once_decide_on_what_is_committed(
    engine: sa.Engine, db_url: str
) -> None:
    # A save by a storage whose first call this is must replace what the appenders
    # committed before it took the lock, never keep it (a snapshot older than the lock).
    sid = "cold-start"
    rounds = 4 * scale()
    context = forkserver()
    barrier = context.Barrier(WORKERS)
    results = context.Queue()
    processes = [
        context.Process(
            target=cold_worker, args=(db_url, i, sid, rounds, barrier, results), daemon=True
        )
        for i in range(WORKERS)
    ]
    for process in processes:
        process.start()
    try:
        reports = [results.get(timeout=TIMEOUT * rounds) for _ in processes]
        for process in processes:
            process.join(TIMEOUT)
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
    assert [error for _, _, found in reports for error in found] == []
    FIGURES["operations"] += sum(ops for _, ops, _ in reports)
    history = SqlStorage(engine).load(sid)
    check_whole_batches(history, evicted=False)
    tags = [m.id.rsplit("/", 1)[0] for m in history[::BATCH]]
    # The last save leads; only appends that committed after it follow.
    assert tags[0] == f"c0/s{rounds - 1}", tags
    assert all("/a" in tag for tag in tags[1:]), tags
    FIGURES["histories checked"] += 1
