"""Owners racing to create one session id, from real processes, on every backend.

docs/many-users.md (why the check sits inside the write): a write through an owned view
takes the session's lock with an upsert that creates the row as the view's owner, or
returns the owner of the row it locked; so of several owners creating one id at once,
one gets the session and every other gets ``SessionOwnerError`` with nothing stored.

Each round, three processes (released together by a barrier) write a batch with an image
of their own to that round's brand-new session id, each through the view of its own
owner: an ``append`` or a ``save``. Small by default; ``SQLMEMORY_SOAK=N`` runs N times
as many rounds.
"""

from __future__ import annotations

import hashlib

import pytest
import sqlalchemy as sa

from sqlmemory import SqlStorage
from tests.reliability.figures import FIGURES
from tests.reliability.workers import TIMEOUT, batch, run_workers, scale
from tests.support.owner_workers import (
    REFUSED,
    WON,
    race_sid,
    race_worker,
    racer_image,
    racer_owner,
)
from tests.support.tables import BLOBS, BLOCKS, MESSAGES, SESSIONS, orphan_blobs, row_counts

RACERS = 3
ROUNDS = 12


def _stored(conn: sa.Connection, sid: str) -> tuple[object, list[str], list[str], list[str]]:
    """The session's owner, message ids (in order), blob hashes, and the sessions its
    blocks say they belong to."""
    owner = conn.scalar(sa.select(SESSIONS.c.owner).where(SESSIONS.c.session_id == sid))
    ids = conn.scalars(
        sa.select(MESSAGES.c.message_id)
        .where(MESSAGES.c.session_id == sid)
        .order_by(MESSAGES.c.seq)
    ).all()
    blobs = conn.scalars(sa.select(BLOBS.c.sha256).where(BLOBS.c.session_id == sid)).all()
    blocks = conn.scalars(
        sa.select(BLOCKS.c.blob_sha256).where(
            BLOCKS.c.session_id == sid, BLOCKS.c.blob_sha256.is_not(None)
        )
    ).all()
    return owner, list(ids), list(blobs), list(blocks)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_owners_creating_one_id_at_once_end_with_one_owner_and_nothing_of_the_others(
    engine: sa.Engine, db_url: str, kind: str
) -> None:
    rounds = ROUNDS * scale()
    reports = dict(
        run_workers(
            RACERS,
            race_worker,
            db_url,
            lambda i: (kind, rounds),
            TIMEOUT * rounds,
        )
    )
    assert sorted(reports) == list(range(RACERS))
    errors = [o for outcomes in reports.values() for o in outcomes if o not in (WON, REFUSED)]
    assert errors == []
    storage = SqlStorage(engine)
    with engine.connect() as conn:
        for r in range(rounds):
            sid = race_sid(r)
            winners = [i for i in range(RACERS) if reports[i][r] == WON]
            # One owner won the round; every other racer got SessionOwnerError.
            assert len(winners) == 1, (sid, [reports[i][r] for i in range(RACERS)])
            winner = racer_owner(winners[0])
            owner, ids, blobs, blocks = _stored(conn, sid)
            assert owner == winner
            # The winner's batch is whole, and none of a loser's messages or blobs is there.
            assert ids == [m.id for m in batch(winner, f"r{r}")]
            assert blobs == [hashlib.sha256(racer_image(winners[0])).hexdigest()]
            assert blocks == blobs
            info = storage.session_info(sid)
            assert info is not None and info.message_count == len(ids)
            for loser in (i for i in range(RACERS) if i != winners[0]):
                view = storage.owned_by(racer_owner(loser))
                assert view.load(sid) == [] and view.session_info(sid) is None
            FIGURES["histories checked"] += 1
        # Nothing else was written anywhere: only the winners' batches.
        counts = row_counts(conn)
        assert counts["sessions"] == rounds
        assert counts["messages"] == rounds * len(batch("w", "t"))
        assert counts["blobs"] == rounds
        assert orphan_blobs(conn) == []
    FIGURES["operations"] += RACERS * rounds
