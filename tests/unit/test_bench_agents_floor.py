"""bench/agents_floor.py still runs: every case, tiny sizes, SQLite, the SDK's session beside."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import bench_script, run_tiny_agents_bench


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with bench_script("agents_floor.py") as module:
        yield module


def test_every_case_replays_sqlmemorys_statements_beside_the_sdk_session(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written, databases = run_tiny_agents_bench(bench, tmp_path)
    assert [r["label"] for r in written["results"]] == [
        "add_items 1 turn",
        "get_items(limit=5) @8",
        "get_items() @8",
        "get_items(limit=5) @40",
        "get_items() @40",
    ]
    for r in written["results"]:
        assert r["sdk"] == "agents_sqlite"
        reads = r["scenario"] != "add_items"
        expected = {"agents_sqlite", "sql_only", *(["sql_and_json"] if reads else [])}
        assert set(r["results"]) == expected
        peer = r["results"]["agents_sqlite"]["median_ms"]
        for name in expected - {"agents_sqlite"}:
            ratio = r["results"][name]["median_ms"] / peer
            assert r["floor_x_sdk"][name] == pytest.approx(ratio)
    assert "get_items() @40" in capsys.readouterr().out
    assert list(databases.iterdir()) == []  # every database went with the run


def test_a_replayed_read_fetches_the_rows_sqlmemory_reads(
    bench: ModuleType, tmp_path: Path
) -> None:
    import asyncio

    place = bench.SqlitePlace(tmp_path)
    loop = asyncio.new_event_loop()
    floor = bench.Floor(place, loop)
    try:
        floor.add([i for turn in bench.Turns().turns(0, 3) for i in turn])
        statements = floor.recorder.record(lambda: floor.storage.load(bench.SID))
        # Each message row once, and each block row once more: what the storage reads.
        messages = floor.storage.count(bench.SID)
        assert floor.replay.read(statements, parse=True) >= messages == 12
        writes = floor.recorder.record(lambda: floor.storage.clear("nothing"))
        assert writes  # the recorder sees every statement of a call, writes too
    finally:
        floor.close()
        loop.close()
        place.close()
