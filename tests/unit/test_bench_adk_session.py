"""bench/adk_session.py still runs: every case, tiny sizes, SQLite, ADK's service beside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scripts import bench_script

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_every_case_times_both_services_and_gives_their_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with bench_script("adk_session.py") as bench:
        sizes = bench.Sizes(histories=(4, 12), recent=3, sessions=5, reps=2, list_reps=2, warmup=1)
        bench.QUICK = sizes
        out = tmp_path / "adk.json"
        assert bench.main(["--quick", "--backends", "sqlite", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["backends"]["sqlite"]
    assert [r["label"] for r in rows] == [
        "get_session(num_recent_events=3) @4 events",
        "get_session(num_recent_events=3) @12 events",
        "append_event @12 events",
        "list_sessions @5 sessions",
    ]
    for row in rows:
        ours, theirs = row["results"]["sqlmemory"], row["results"]["adk_database"]
        assert 0 < ours["median_ms"] <= ours["p95_ms"] and theirs["n"] == ours["n"]
        assert row["ratio"] == pytest.approx(ours["median_ms"] / theirs["median_ms"])
    assert "list_sessions @5 sessions" in capsys.readouterr().out


def test_the_events_are_a_tool_conversation_with_state() -> None:
    with bench_script("adk_session.py") as bench:
        made = bench.events(8, 100.0)
    assert [e.author for e in made[:4]] == ["user", "calc", "calc", "calc"]
    assert (
        made[1].content.parts[0].function_call.id == made[2].content.parts[0].function_response.id
    )
    assert [e.timestamp for e in made] == [100.0 + i / 1000 for i in range(8)]
    assert made[5].actions.state_delta == {"turn": 1}
