"""bench/agents_session.py still runs: every case, tiny sizes, SQLite, the SDK's sessions beside."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import bench_script, run_tiny_agents_bench


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with bench_script("agents_session.py") as module:
        yield module


def test_every_case_times_both_sqlmemory_storages_beside_both_sdk_sessions(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written, databases = run_tiny_agents_bench(bench, tmp_path)
    labels = [r["label"] for r in written["results"]]
    assert labels == [
        "add_items 1 turn x3",
        "get_items(limit=5) @8",
        "get_items(limit=5) @40",
        "get_items() @8",
        "get_items() @40",
    ]
    for r in written["results"]:
        assert set(r["results"]) == {
            "sqlmemory",
            "sqlmemory_sync",
            "agents_sqlalchemy",
            "agents_sqlite",
        }
        assert all(0 < s["median_ms"] <= s["p95_ms"] for s in r["results"].values())
        best = min(
            ("agents_sqlalchemy", "agents_sqlite"), key=lambda k: r["results"][k]["median_ms"]
        )
        assert r["best_sdk"] == best
        for ours in ("sqlmemory", "sqlmemory_sync"):
            mine = r["results"][ours]["median_ms"]
            assert r["vs_best_sdk"][ours] == pytest.approx(mine / r["results"][best]["median_ms"])
    table = capsys.readouterr().out
    assert all(label in table for label in labels)
    assert list(databases.iterdir()) == []  # every case's files went with the run


def test_a_turn_is_four_responses_items_with_its_own_ids(bench: ModuleType) -> None:
    turns = bench.Turns()
    first, second = turns.turn(0), turns.turn(1)
    assert [i.get("type", "message") for i in first] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert first[1]["call_id"] == first[2]["call_id"] != second[1]["call_id"]
    assert first[3]["id"] != second[3]["id"]
