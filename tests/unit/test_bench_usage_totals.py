"""bench/usage_totals.py still runs: a few owners on SQLite, every query timed and checked
against the raw driver's answer, the plan shown, the writes with and without usage."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "usage_totals.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sqlmemory_bench_usage_totals", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def test_every_query_and_both_writes_are_timed(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--owners", "8", "--sessions", "3", "--messages", "20", "--reps", "2"]
    argv += ["--write-reps", "4", "--backends", "sqlite", "--sqlite-dir", str(tmp_path)]
    (result,) = bench.main(argv)
    assert result["backend"] == "sqlite" and result["messages"] == 8 * 3 * 20
    reads = result["reads"]
    assert set(reads) == {"owner", "owner, 30 days", "session", "everything, 7 days"}
    assert reads["owner"]["messages"] == 3 * 10  # every second message of the owner's
    assert reads["session"]["messages"] == 10
    assert all(0 < r["median_ms"] <= r["p95_ms"] for r in reads.values())
    assert any("ix_sqlmemory_messages_usage" in line for line in result["plan"])
    assert [w["batch"] for w in result["writes"]] == [1, 50]
    assert all(w["with_ms"] > 0 and w["without_ms"] > 0 for w in result["writes"])
    out = capsys.readouterr().out
    assert "sqlite: 480 messages written" in out and "append of 50" in out
    assert list(tmp_path.iterdir()) == []  # the database went with its directory
