"""bench/session_pages.py still runs: a few hundred sessions on SQLite, every depth timed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "session_pages.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sqlmemory_bench_session_pages", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def test_every_depth_is_timed_on_a_page_of_limit_sessions(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--sessions", "300", "--limit", "20", "--reps", "2", "--backends", "sqlite"]
    results = bench.main([*argv, "--sqlite-dir", str(tmp_path)])
    assert [r["depth"] for r in results] == list(bench.DEPTHS)
    assert all(r["backend"] == "sqlite" and r["sessions"] == 300 for r in results)
    assert all(0 < r["median_ms"] <= r["p95_ms"] for r in results)
    out = capsys.readouterr().out
    assert "sqlite: 300 sessions written" in out
    assert list(tmp_path.iterdir()) == []  # the database went with its directory


def test_a_cursor_points_at_the_depth_it_names(bench: ModuleType) -> None:
    from sqlmemory.storage.records import decode_cursor

    assert bench.cursor_at("r", 1000, 0.0, 50) is None
    at, sid = decode_cursor(bench.cursor_at("r", 1000, 0.5, 50))
    assert sid == bench.session_id("r", 500) and at == bench.updated_at(500)
    # Never deeper than the last full page.
    _, last = decode_cursor(bench.cursor_at("r", 1000, 0.99, 50))
    assert last == bench.session_id("r", 50)
