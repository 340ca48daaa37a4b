"""bench/search_costs.py still runs: a few owners on SQLite, every query timed at two
sizes and finding hits, the writes timed with the index and without, the index back."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "search_costs.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sqlmemory_bench_search_costs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def test_every_query_is_timed_at_each_size_and_both_writes(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--sizes", "400,1200", "--owners", "4", "--sessions", "5", "--reps", "3"]
    argv += ["--write-reps", "3", "--backends", "sqlite", "--sqlite-dir", str(tmp_path)]
    (result,) = bench.main(argv)
    assert result["backend"] == "sqlite"
    assert list(result["reads"]) == [400, 1200]
    for reads in result["reads"].values():
        assert set(reads) == set(bench.QUERIES)
        assert all(0 < r["p50_ms"] <= r["p95_ms"] for r in reads.values())
    assert result["reads"][1200]["common word"]["hits"] == 20  # a word of one in six
    assert [w["batch"] for w in result["writes"]] == [1, 50]
    assert all(w["with_ms"] > 0 and w["without_ms"] > 0 for w in result["writes"])
    out = capsys.readouterr().out
    assert "sqlite: 1,200 messages" in out and "append of 50" in out
    assert list(result["catch_up_us"]) == [400, 1200]
    assert all(us > 0 for us in result["catch_up_us"].values())
    assert list(tmp_path.iterdir()) == []  # the database went with its directory
