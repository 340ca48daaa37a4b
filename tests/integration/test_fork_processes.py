"""Forks racing appends to their source, from real processes, on every backend.

Two processes append batches of three messages (an image in each) to one session while
two others (a ``SqlStorage`` and an ``AsyncSqlStorage``) fork it again and again, every
other time at a message they just read. A fork runs under the source's lock, so each
append lands wholly before or wholly after it: every fork is a prefix of the final
source made of whole batches (or, with ``at``, ends at ``at``), its record counts it,
and every fork's blob rows are exactly the bytes its blocks reference.
"""

from __future__ import annotations

import multiprocessing

import sqlalchemy as sa

from sqlmemory import SqlStorage
from tests.support.fork_workers import FORKS
from tests.support.fork_workers import process_forker as forker_process
from tests.support.processes import running
from tests.support.tables import blob_rows, orphan_blobs
from tests.support.writers import BATCH_SIZE, WRITER_BATCHES, process_writer, writer_batch

SOURCE = "source"
TIMEOUT = 180


def test_every_fork_made_during_appends_is_a_prefix_of_the_final_source(
    engine: sa.Engine, db_url: str, async_db_url: str
) -> None:
    storage = SqlStorage(engine)
    storage.append(SOURCE, *writer_batch("seed", 0))
    context = multiprocessing.get_context("spawn")
    ready, done, go = context.Queue(), context.Queue(), context.Event()
    writers = ["w0", "w1"]
    forkers = {"sync": False, "async": True}
    processes = [
        context.Process(
            target=process_writer, args=(db_url, SOURCE, w, ready, go, done), daemon=True
        )
        for w in writers
    ] + [
        context.Process(
            target=forker_process,
            args=(async_db_url if is_async else db_url, is_async, SOURCE, name, ready, go, done),
            daemon=True,
        )
        for name, is_async in forkers.items()
    ]
    with running(processes, TIMEOUT):
        for _ in processes:
            report = ready.get(timeout=TIMEOUT)
            assert report[0] == "ready", report
        go.set()
        reports = [done.get(timeout=TIMEOUT) for _ in processes]
    assert [r for r in reports if r[0] != "done"] == []
    assert [p.exitcode for p in processes] == [0] * len(processes)
    made = [fork for r in reports if len(r) == 3 for fork in r[2]]
    assert len(made) == FORKS * len(forkers)

    final = storage.load(SOURCE)
    assert len(final) == BATCH_SIZE * (1 + WRITER_BATCHES * len(writers))
    sizes = set()
    for fork in made:
        copied = storage.load(fork)
        info = storage.session_info(fork)
        assert copied == final[: len(copied)], fork
        assert info is not None and info.message_count == len(copied)
        assert info.parent_id == SOURCE
        if info.forked_at is None:
            assert len(copied) % BATCH_SIZE == 0, f"{fork} holds part of a batch"
        else:
            assert copied[-1].id == info.forked_at
        sizes.add(len(copied))
    # The forks really raced the appends: they caught the source at different lengths.
    assert len(sizes) > 2, sizes
    with engine.connect() as conn:
        assert orphan_blobs(conn) == []
        for fork in made:
            assert len(blob_rows(conn, fork)) == 1  # the one image every batch shares
