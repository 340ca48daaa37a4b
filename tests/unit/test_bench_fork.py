"""bench/fork.py still runs: a short session on SQLite, every contender timed."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "fork.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sqlmemory_bench_fork", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def test_every_contender_forks_the_session_and_is_timed(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    argv = ["--messages", "60", "--reps", "2", "--warmup", "0", "--backends", "sqlite"]
    assert bench.main([*argv, "--sqlite-dir", str(tmp_path), "--json", str(out)]) == 0
    found = json.loads(out.read_text())["backends"]["sqlite"]
    assert (found["messages"], found["images"], found["peer_items"]) == (60, 6, 60)
    timed = found["contenders"]
    assert set(timed) == {"sqlmemory", "raw", "AdvancedSQLiteSession"}
    assert all(t["n"] == 2 and 0 < t["median_ms"] <= t["p95_ms"] for t in timed.values())
    assert "sqlite      sqlmemory" in capsys.readouterr().out
