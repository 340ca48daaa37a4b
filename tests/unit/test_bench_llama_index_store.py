"""bench/llama_index_store.py still runs: every case, tiny sizes, SQLite, the peer beside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scripts import bench_script

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def test_every_case_times_the_stores_and_gives_their_ratios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with bench_script("llama_index_store.py") as bench:
        bench.QUICK = bench.Sizes(histories=(4, 12), read_reps=(2, 2), add_reps=2, window=3)
        out = tmp_path / "llama.json"
        assert bench.main(["--quick", "--sqlite-only", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["backends"]["sqlite"]
    assert [r["label"] for r in rows] == [
        "get_messages @4 messages",
        "newest 3 of 4 messages",
        "get_messages @12 messages",
        "newest 3 of 12 messages",
        "add_message @12 messages",
    ]
    for row in rows:
        peer = row["results"]["sqlalchemy_chat_store"]
        for name, ratio in row["ratios"].items():
            ours = row["results"][name]
            assert 0 < ours["median_ms"] <= ours["p95_ms"] and ours["n"] == peer["n"]
            assert ratio == pytest.approx(ours["median_ms"] / peer["median_ms"])
    assert "add_message @12 messages" in capsys.readouterr().out


def test_the_conversation_pairs_each_call_with_its_result() -> None:
    with bench_script("llama_index_store.py") as bench:
        made = bench.conversation(8, "t")
    assert [m.role.value for m in made[:4]] == ["user", "assistant", "tool", "assistant"]
    call = made[1].additional_kwargs["tool_calls"][0]
    assert call["id"] == made[2].additional_kwargs["tool_call_id"] == "t-call-0"
