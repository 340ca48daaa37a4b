"""``erase_owner`` in bounded transactions, killed half-way and run again, on every backend.

docs/many-users.md (erasure): each transaction deletes a batch of sessions, a session
larger than a batch loses its oldest messages per transaction until it fits; each batch
is all or nothing, so a run SIGKILLed half-way leaves whole sessions (or shorter ones)
behind, other owners' sessions untouched, and running it again finishes the work.
Other users' writes go on meanwhile.

The batch sizes are made small here (``erasure.ERASE_SESSIONS`` and ``ERASE_MESSAGES``,
in the worker process or through ``monkeypatch``), so a few dozen messages take many
batches.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import ImageBlock, Message, SqlStorage
from sqlmemory.storage.sql import erasure
from tests.reliability.figures import FIGURES
from tests.reliability.workers import TIMEOUT, forkserver
from tests.support.cases import image_bytes
from tests.support.owner_workers import killed_eraser
from tests.support.tables import BLOCKS, MESSAGES, SESSIONS, orphan_blobs, snapshot

LEAVER = "leaver"
SIZES = (3, 8)
"""The batches of the killed runs: at most 3 sessions and 8 messages each."""

_PNG = [image_bytes(2, 2, "image/png", seed=60 + k) for k in range(6)]
Rows = dict[str, list[tuple[Any, ...]]]


def _image(text: str, png: bytes, message_id: str) -> Message:
    return Message.user([text, ImageBlock(png, "image/png")], id=message_id)


def _history(sid: str, length: int, images: dict[int, bytes]) -> list[Message]:
    """``length`` messages of ``sid``; those at the indexes of ``images`` carry that image
    (the same bytes at two indexes: one blob the two blocks share)."""
    return [
        _image(f"{sid} {k}", images[k], f"{sid}/{k}")
        if k in images
        else Message.assistant(f"{sid} {k}", id=f"{sid}/{k}")
        for k in range(length)
    ]


def _seed(storage: SqlStorage) -> dict[str, list[str]]:
    """The leaver's sessions (two longer than a batch, ten short ones), written oldest
    first, and other owners' and unowned sessions beside them, holding the same images.
    Returns the message ids of each of the leaver's sessions."""
    leaver = storage.owned_by(LEAVER)
    histories = {
        # Image 0 only in the oldest messages (erased in the first part), image 1 shared
        # across the cut, image 2 at both ends.
        "big-a": _history("big-a", 20, {0: _PNG[0], 1: _PNG[0], 3: _PNG[1], 15: _PNG[1]}),
        **{
            f"small-{k:02d}": _history(f"small-{k:02d}", 3, {0: _PNG[k % 4], 2: _PNG[k % 4]})
            for k in range(10)
        },
        "big-b": _history("big-b", 12, {0: _PNG[2], 11: _PNG[2]}),
    }
    for sid, history in histories.items():
        leaver.append(sid, *history)
    stayer = storage.owned_by("stayer")
    for k in range(3):
        stayer.append(f"keep-{k}", *_history(f"keep-{k}", 4, {0: _PNG[0], 3: _PNG[k]}))
    storage.append("anon-0", *_history("anon-0", 3, {1: _PNG[1]}))
    # An id of the leaver's form, another owner's: erasing is by owner, never by id.
    stayer.append("small-99", *_history("small-99", 2, {0: _PNG[0]}))
    return {sid: [m.id for m in history] for sid, history in histories.items()}


def _of_others(rows: Rows, leavers: Sequence[str]) -> Rows:
    """The rows of every table that belong to sessions not in ``leavers`` (every table
    starts with the session id)."""
    return {name: [r for r in table if r[0] not in leavers] for name, table in rows.items()}


def _owned(conn: sa.Connection, owner: str) -> list[str]:
    return list(
        conn.scalars(
            sa.select(SESSIONS.c.session_id)
            .where(SESSIONS.c.owner == owner)
            .order_by(SESSIONS.c.session_id)
        )
    )


def check_consistent(conn: sa.Connection) -> None:
    """Every session record counts its messages, every blob is referenced by a block,
    and every block has its message."""
    held = (
        sa.select(sa.func.count())
        .where(MESSAGES.c.session_id == SESSIONS.c.session_id)
        .scalar_subquery()
    )
    disagree = conn.execute(
        sa.select(SESSIONS.c.session_id, SESSIONS.c.message_count, held).where(
            SESSIONS.c.message_count != held
        )
    ).all()
    assert disagree == [], "a record disagrees with its messages"
    assert orphan_blobs(conn) == []
    its_message = sa.exists().where(
        MESSAGES.c.session_id == BLOCKS.c.session_id, MESSAGES.c.seq == BLOCKS.c.seq
    )
    assert conn.execute(sa.select(BLOCKS.c.session_id).where(~its_message)).all() == []


def _kill_half_way(db_url: str, engine: sa.Engine, kind: str, after_commits: int) -> Rows:
    """Run ``erase_owner(LEAVER)`` in a process and SIGKILL it inside the transaction of
    the batch after ``after_commits`` committed ones, once the leaver's session count has
    dropped; every row as it was committed when the process was killed."""
    with engine.connect() as conn:
        before = len(_owned(conn, LEAVER))
    context = forkserver()
    holding = context.Queue()
    process = context.Process(
        target=killed_eraser,
        args=(db_url, kind, LEAVER, SIZES, after_commits, holding),
        daemon=True,
    )
    process.start()
    try:
        assert holding.get(timeout=TIMEOUT) == after_commits
        deadline = time.monotonic() + TIMEOUT
        while True:
            with engine.connect() as conn:
                if len(_owned(conn, LEAVER)) < before:
                    committed = snapshot(conn)
                    break
            assert time.monotonic() < deadline, "no batch of the erasure committed"
            time.sleep(0.01)
        assert process.pid is not None
        os.kill(process.pid, signal.SIGKILL)
        process.join(TIMEOUT)
        assert process.exitcode == -signal.SIGKILL
        FIGURES["faults"] += 1
    finally:
        if process.is_alive():
            process.kill()
    return committed


def test_an_erasure_killed_half_way_leaves_whole_sessions_and_finishes_when_run_again(
    engine: sa.Engine, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = SqlStorage(engine)
    histories = _seed(storage)
    with engine.connect() as conn:
        others = _of_others(snapshot(conn), list(histories))
    # Killed twice: a sync run after two batches (the oldest session cut in part, two
    # short ones deleted), then an async run after four more.
    cut: set[str] = set()
    for kind, after_commits in (("sync", 2), ("async", 4)):
        committed = _kill_half_way(db_url, engine, kind, after_commits)
        with engine.connect() as conn:
            # The batch the kill cut short is gone whole: only committed batches remain.
            assert snapshot(conn) == committed
            check_consistent(conn)
            assert _of_others(committed, list(histories)) == others
            left = _owned(conn, LEAVER)
        assert 0 < len(left) < len(histories)
        for sid in left:
            # What is left of a session is its newest messages, whole.
            ids = [m.id for m in storage.load(sid)]
            assert ids and ids == histories[sid][-len(ids) :], sid
            if len(ids) < len(histories[sid]):
                cut.add(sid)
            FIGURES["histories checked"] += 1
    assert cut, "no session was left erased in part: the kills missed what they test"
    monkeypatch.setattr(erasure, "ERASE_SESSIONS", SIZES[0])
    monkeypatch.setattr(erasure, "ERASE_MESSAGES", SIZES[1])
    assert storage.erase_owner(LEAVER) == len(left)
    with engine.connect() as conn:
        check_consistent(conn)
        after = snapshot(conn)
        assert _owned(conn, LEAVER) == []
    # Nothing of the leaver remains, in any table; the others' rows are as they were.
    assert _of_others(after, list(histories)) == after == others
    FIGURES["operations"] += 3


def test_a_session_larger_than_a_batch_is_erased_in_several_transactions_beside_a_writer(
    engine: sa.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure, "ERASE_MESSAGES", 10)
    storage = SqlStorage(engine)
    big = _history("big", 45, {0: _PNG[0], 1: _PNG[0], 12: _PNG[1], 40: _PNG[1], 44: _PNG[2]})
    storage.owned_by(LEAVER).append("big", *big)
    writer_view = storage.owned_by("writer")
    writer_view.append("busy", Message.user("first", id="busy/first"))
    storage.owned_by("stayer").append("still", *_history("still", 3, {0: _PNG[0]}))
    storage.append("anon", Message.user("nobody's", id="anon/0"))
    with engine.connect() as conn:
        before = snapshot(conn)

    # Another user's writer appends to their own session for the whole erasure.
    written = [0]
    writer_errors: list[BaseException] = []
    stop = threading.Event()

    def write() -> None:
        try:
            while not stop.is_set():
                n = written[0]
                writer_view.append("busy", Message.user(f"w{n}", id=f"busy/w{n}"))
                written[0] = n + 1
                time.sleep(0.002)  # a user's pace, not a tight loop
        except BaseException as exc:
            writer_errors.append(exc)

    # Each erase transaction, once committed: the database is consistent, the big
    # session lost at most a batch, and the writer got an append through since the
    # previous one (it is never blocked for the whole erasure).
    left: list[int] = []
    run: Callable[..., Any] = storage._run

    def run_and_check(action: str, write_: bool, fn: Callable[..., Any], *args: Any) -> Any:
        result = run(action, write_, fn, *args)
        if action == "erase_owner":
            with engine.connect() as conn:
                check_consistent(conn)
                left.append(
                    conn.scalar(sa.select(sa.func.count()).where(MESSAGES.c.session_id == "big"))
                    or 0
                )
            seen = written[0]
            deadline = time.monotonic() + TIMEOUT
            while written[0] == seen and not writer_errors:
                assert time.monotonic() < deadline, "the writer was blocked"
                time.sleep(0.001)
        return result

    monkeypatch.setattr(storage, "_run", run_and_check)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert storage.erase_owner(LEAVER) == 1
    finally:
        stop.set()
        writer.join(TIMEOUT)
    assert writer_errors == []
    # 45 messages, 10 a transaction: cut to 35, 25, 15 and 5, then deleted whole; the last
    # transaction finds nothing left.
    assert left == [35, 25, 15, 5, 0, 0]
    assert written[0] >= len(left)
    with engine.connect() as conn:
        check_consistent(conn)
        after = snapshot(conn)
    # Nothing of the leaver remains; the others' rows are as they were, and the writer's
    # session holds every append it made, after its first message.
    assert _of_others(after, ["busy"]) == _of_others(before, ["big", "busy"])
    assert [m.id for m in storage.load("busy")] == ["busy/first"] + [
        f"busy/w{n}" for n in range(written[0])
    ]
    FIGURES["operations"] += len(left) + written[0]
