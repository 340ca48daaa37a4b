"""Storms: four processes (two sync, two async storages) run every pair of write
operations on one session at once; nothing escapes, deadlocks, is lost or half-written.

docs/contract/persistence.md (locking, transactions): every write takes the session's
lock first, so writers of one session serialize; a deadlock the database still reports
is retried and never reaches the caller. ``compact`` may meet a write that landed while
it summarized: then it raises ``ConflictError`` and writes nothing (docs/compaction.md).
``prune`` never deletes a session updated since its cutoff (docs/contract/storage.md).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence

import pytest
import sqlalchemy as sa

from sqlmemory import Message, SqlStorage
from sqlmemory.storage.compaction import COMPACTION_KEY
from tests.reliability.figures import FIGURES
from tests.reliability.workers import (
    BATCH,
    LATER_OPS,
    OPS,
    PRUNE_SESSIONS,
    TIMEOUT,
    cold_worker,
    forkserver,
    open_storage,
    prune_race_worker,
    run_workers,
    scale,
    storm_worker,
)
from tests.support.tables import MESSAGES, SESSIONS, orphan_blobs, row_counts

# A prune deletes every session older than its call, those of earlier pairs included:
# the pairs with prune run first, so that the later pairs' histories are all checked.
PAIRS = sorted(
    [
        *itertools.combinations_with_replacement(OPS, 2),
        *itertools.product(LATER_OPS, OPS),
        *itertools.combinations_with_replacement(LATER_OPS, 2),
    ],
    key=lambda pair: "prune" not in pair,
)
WORKERS = 4
ROUNDS = 3


def _position(message_id: str) -> tuple[str, int]:
    tag, position = message_id.rsplit("/", 1)
    return tag, int(position)


def check_whole_batches(history: Sequence[Message], evicted: bool, popped: bool = False) -> None:
    """Every batch is whole and in order; only an evict or a compaction may have cut the
    oldest one, and only pops the newest messages of a batch (appends may follow a pop).

    A summary is the first message, and the only one: it replaced everything older than
    the window, and what follows it starts where the messages it replaced ended.
    """
    ids = [m.id for m in history]
    assert len(ids) == len(set(ids)), f"a message is stored twice: {ids}"
    summaries = [i for i, m in enumerate(history) if COMPACTION_KEY in m.metadata]
    assert summaries in ([], [0]), f"a summary is not alone at the head: {ids}"
    if summaries:
        replaced = history[0].metadata[COMPACTION_KEY]
        assert replaced["count"] >= 1 and replaced["first_id"] != history[0].id
        if len(ids) > 1:
            last_tag, last = _position(replaced["last_id"])
            tag, first = _position(ids[1])
            assert first == (last + 1 if tag == last_tag else 0), f"a gap after the summary: {ids}"
        ids = ids[1:]
    runs = [list(run) for _, run in itertools.groupby(ids, key=lambda i: i.rsplit("/", 1)[0])]
    for index, run in enumerate(runs):
        positions = [_position(i)[1] for i in run]
        first = positions[0] if index == 0 and (evicted or summaries) else 0
        last = first + len(positions) if popped else BATCH
        assert positions == list(range(first, last)), f"a torn or reordered batch: {ids}"


def check_records(conn: sa.Connection) -> None:
    """Every session record counts the messages its session holds, and a title and
    metadata set together (``update_session``) are still the pair one call wrote."""
    held = (
        sa.select(sa.func.count())
        .where(MESSAGES.c.session_id == SESSIONS.c.session_id)
        .scalar_subquery()
    )
    rows = conn.execute(
        sa.select(SESSIONS.c.session_id, SESSIONS.c.message_count, held, SESSIONS.c.title)
    ).all()
    assert [r for r in rows if r[1] != r[2]] == [], "a record disagrees with its messages"
    for sid, _, _, title in rows:
        FIGURES["records checked"] += 1
        if title is not None:
            writer, round_ = title.split(" t")
            info = SqlStorage(conn.engine).session_info(sid)
            assert info is not None and info.metadata == {"by": writer, "round": int(round_)}


def test_every_pair_of_writes_on_one_session_runs_clean(engine: sa.Engine, db_url: str) -> None:
    rounds = ROUNDS * scale()
    plans = [
        [(f"storm-{a}-{b}", a if index < WORKERS // 2 else b, rounds) for a, b in PAIRS]
        for index in range(WORKERS)
    ]
    reports = run_workers(
        WORKERS, storm_worker, db_url, lambda i: (plans[i],), TIMEOUT * len(PAIRS)
    )
    errors = [error for _, _, found, _ in reports for error in found]
    assert errors == []
    operations = sum(ops for _, ops, _, _ in reports)
    assert operations == WORKERS * rounds * len(PAIRS)
    FIGURES["operations"] += operations
    conflicts = {summary for _, _, _, found in reports for summary in found}
    FIGURES["compact conflicts"] += len(conflicts)

    storage = SqlStorage(engine)
    for a, b in PAIRS:
        history = storage.load(f"storm-{a}-{b}")
        check_whole_batches(history, evicted="evict" in (a, b), popped="pop" in (a, b))
        assert storage.count(f"storm-{a}-{b}") == len(history)
        stored = {(f"storm-{a}-{b}", m.id) for m in history}
        assert conflicts.isdisjoint(stored), "a compact that conflicted wrote its summary"
        FIGURES["histories checked"] += 1
    with engine.connect() as conn:
        assert orphan_blobs(conn) == []
        check_records(conn)
        counts = row_counts(conn)
    assert counts["messages"] == sum(storage.count(s) for s in storage.sessions())


def test_prune_never_deletes_a_session_appended_to_after_its_cutoff(
    engine: sa.Engine, db_url: str
) -> None:
    rounds = 2 * scale()
    cutoff = forkserver().Value("q", 0)
    reports = run_workers(
        WORKERS, prune_race_worker, db_url, lambda i: (rounds, cutoff), TIMEOUT * rounds
    )
    assert [error for _, _, found, _ in reports for error in found] == []
    # What the prunes say they deleted is exactly the seeded sessions found gone.
    assert sum(deleted for _, _, _, deleted in reports) == 0
    FIGURES["operations"] += sum(ops for _, ops, _, _ in reports) + rounds * PRUNE_SESSIONS
    FIGURES["histories checked"] += rounds * PRUNE_SESSIONS
    with engine.connect() as conn:
        assert orphan_blobs(conn) == []
        check_records(conn)


def test_new_storages_writing_at_once_decide_on_what_is_committed(
    engine: sa.Engine, db_url: str
) -> None:
    # A save by a storage whose first call this is must replace what the appenders
    # committed before it took the lock, never keep it (a snapshot older than the lock).
    sid = "cold-start"
    rounds = 4 * scale()
    reports = run_workers(WORKERS, cold_worker, db_url, lambda i: (sid, rounds), TIMEOUT * rounds)
    assert [error for _, _, found in reports for error in found] == []
    FIGURES["operations"] += sum(ops for _, ops, _ in reports)
    history = SqlStorage(engine).load(sid)
    check_whole_batches(history, evicted=False)
    tags = [m.id.rsplit("/", 1)[0] for m in history[::BATCH]]
    # The last save leads; only appends that committed after it follow.
    assert tags[0] == f"c0/s{rounds - 1}", tags
    assert all("/a" in tag for tag in tags[1:]), tags
    FIGURES["histories checked"] += 1


@pytest.mark.parametrize("seeded", [False, True], ids=["new-session", "old-session"])
@pytest.mark.parametrize("kind", [0, 1], ids=["sync", "async"])
def test_a_new_storage_decides_on_what_committed_while_it_waited_for_the_lock(
    engine: sa.Engine, db_url: str, seeded: bool, kind: int
) -> None:
    # The deterministic form of the cold start: a writer holds the session's lock with a
    # batch not yet committed; a brand-new storage checks the schema, then saves; the
    # writer commits only once that check has run. On MySQL/MariaDB (REPEATABLE READ) a
    # check inside the save's transaction fixes its snapshot before the commit, and the
    # save decides on a history without the batch: it keeps it, or finds no session row.
    sid = "stale"
    if seeded:
        SqlStorage(engine).save(sid, [Message.user("old", id="old")])
    warm = SqlStorage.from_url(db_url)
    warm.count(sid)  # its schema check is done
    cold = open_storage(db_url, kind)  # sync or async, its schema not checked yet
    holding, checked = threading.Event(), threading.Event()

    def hold(conn: sa.Connection) -> None:
        holding.set()
        checked.wait(TIMEOUT)

    def check_ran(conn: sa.Connection, cursor: object, statement: str, *args: object) -> None:
        if "alembic_version" in statement.lower():
            checked.set()

    sa.event.listen(warm.engine, "commit", hold)
    sa.event.listen(cold.engine, "after_cursor_execute", check_ran)
    errors: list[BaseException] = []

    def append() -> None:
        try:
            warm.append(sid, Message.user("appended", id="appended"))
        except BaseException as exc:
            errors.append(exc)

    writer = threading.Thread(target=append)
    writer.start()
    try:
        assert holding.wait(TIMEOUT)
        cold.save(sid, [Message.user("saved", id="saved")])
    finally:
        checked.set()
        writer.join(TIMEOUT)
        warm.close()
        cold.close()
    assert errors == []
    storage = SqlStorage(engine)
    assert [m.id for m in storage.load(sid)] == ["saved"]
    info = storage.session_info(sid)
    assert info is not None and info.message_count == 1
    FIGURES["operations"] += 2 + seeded
    FIGURES["histories checked"] += 1
