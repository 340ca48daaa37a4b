"""The round trips each call makes, pinned per backend (issue 30).

A round trip is a request the client sends and waits on: a statement, ``BEGIN``,
``COMMIT``, ``ROLLBACK`` or a pool's ping; ``bench/round_trips.py`` counts them from the
engine's events, knowing what each driver sends (its docstring), and prints the same
table for a benchmark run. Over a network each one costs the network's round trip, so
these counts, not local timings, decide what a call costs in production.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
import sqlalchemy as sa

from tests.support.scripts import bench_script

EXPECTED = {
    # operation: (sqlite, postgresql, mysql)
    "append_one": (4, 1, 3),
    "append_batch": (7, 1, 6),
    "image_window_read": (5, 2, 3),
    "window_read": (3, 1, 2),
    "full_read": (5, 5, 4),
    "save": (5, 1, 5),
    "first_save": (6, 1, 6),
    "pop": (6, 1, 4),
}
COLUMN = {"sqlite": 0, "postgresql": 1, "mysql": 2}
AIOSQLITE = {"window_read": 1, "image_window_read": 2}
"""Through ``aiosqlite`` a window is one statement (blob bytes a second) outside a
transaction, its block rows joined: each call into SQLite is a hand-off to its thread,
so ``BEGIN`` and ``COMMIT`` are not free there (``tail_reads._joins_blocks``)."""


@pytest.fixture(scope="module")
def round_trips() -> Iterator[ModuleType]:
    with bench_script("round_trips.py") as module:
        yield module


def test_each_call_makes_the_round_trips_pinned(
    round_trips: ModuleType, storage: Any, backend: str
) -> None:
    found = round_trips.measure(storage, "trips", storage.sync_engine)
    assert list(found) == list(EXPECTED)
    counts = {name: found[name]["count"] for name in found}
    expected = {name: EXPECTED[name][COLUMN[backend]] for name in EXPECTED}
    if backend == "sqlite" and storage.sync_engine.dialect.is_async:
        expected.update(AIOSQLITE)
    assert counts == expected, {name: found[name]["log"] for name in found}
    # The calls did their work: measure's last call popped the message save added.
    assert [m.text_content() for m in storage.load("trips")][-1] == "text 19"


def test_the_counter_sees_a_pool_ping(round_trips: ModuleType, db_url: str) -> None:
    # A ping runs below the statement events: counted apart, one per checkout.
    logs = []
    for pre_ping in (False, True):
        engine = sa.create_engine(db_url, pool_pre_ping=pre_ping)
        trips = round_trips.RoundTrips(engine)
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
            with trips.counting(), engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
            logs.append(trips.log)
        finally:
            engine.dispose()
    assert "SELECT 1" in logs[0]
    assert logs[1] == ["ping", *logs[0]]
