"""The benchmark script (bench/bench.py) still runs: every scenario, tiny sizes, SQLite,
the async storage timed beside the sync one."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import bench_script


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with bench_script("bench.py") as module:
        yield module


def tiny(bench: ModuleType) -> object:
    return dataclasses.replace(
        bench.QUICK,
        append_one=6,
        append_warmup=1,
        batches=2,
        batch_size=4,
        batch_warmup=1,
        window_sessions=(30, 120),
        window=5,
        window_reps=3,
        window_warmup=1,
        full_read=120,
        full_reps=2,
        full_warmup=1,
        shared_sessions=3,
        shared_messages=12,
        shared_chunk=4,
        unbounded_window_limit=30,
        resave_turns=6,
        resave_tail=3,
        image_messages=15,
        image_every=5,
        image_side=16,
        image_reps=3,
        image_warmup=1,
        fill_batch=50,
    )


def test_every_scenario_runs_and_the_json_holds_positive_ratios(
    bench: ModuleType, tmp_path: Path
) -> None:
    out = tmp_path / "results.json"
    logged: list[str] = []
    report = bench.run(
        tiny(bench),
        ["sqlite"],
        bench.DEFAULT_PG_URL,
        out,
        sqlite_dir=tmp_path,
        log=logged.append,
        peers=[],  # the peers' own test is below: importing them takes seconds
    )
    written = json.loads(out.read_text())
    assert written["results"] == json.loads(json.dumps(report["results"], default=str))

    results = written["results"]
    assert {r["scenario"] for r in results} == set(bench.SCENARIOS)
    assert all(r["backend"] == "sqlite" for r in results)
    for r in results:
        for side in ("sqlmemory", "raw"):
            stats = r[side]
            assert stats["n"] > 0
            assert 0 < stats["median_ms"] <= stats["p95_ms"]
        assert isinstance(r["ratio"], float)
        assert math.isfinite(r["ratio"]) and r["ratio"] > 0
        assert r["ratio"] == pytest.approx(r["sqlmemory"]["median_ms"] / r["raw"]["median_ms"])

    assert all(r["peers"] == {} and r["best_peer"] is None for r in results)
    # The async storage ran every scenario beside the sync one, on aiosqlite.
    assert written["backends"]["sqlite"]["async_driver"] == "sqlite+aiosqlite"
    for r in results:
        stats = r["sqlmemory_async"]
        assert stats["n"] == r["sqlmemory"]["n"] > 0
        assert 0 < stats["median_ms"] <= stats["p95_ms"]
        assert r["async_x_sync"] == pytest.approx(stats["median_ms"] / r["sqlmemory"]["median_ms"])
        assert r["async_x_peer"] is None  # no peers here
    async_targets = [t for t in written["targets"] if t["target"].endswith(" async vs sync")]
    assert {t["target"] for t in async_targets} == {f"{r['label']} async vs sync" for r in results}
    assert all(t["limit"] == 1.3 for t in async_targets)
    windows = [r for r in results if r["scenario"] == "window_read"]
    assert {(r["variant"], r["messages"]) for r in windows} == {
        (variant, n) for variant in ("FixedWindow", "TokenWindow") for n in (30, 120)
    }
    # The token budget is the cost of the newest `window` messages: both pick the same.
    assert all(r["returned"] == 5 for r in windows)
    (image,) = [r for r in results if r["scenario"] == "image_window_read"]
    assert image["images_in_window"] == 1
    (resave,) = [r for r in results if r["scenario"] == "resave"]
    assert resave["vs_append_one"] > 0

    assert {s["variant"] for s in written["scaling"]} == {"FixedWindow", "TokenWindow"}
    assert all(s["sqlmemory"] > 0 and s["raw"] > 0 for s in written["scaling"])
    assert written["targets"] and all(isinstance(t["met"], bool) for t in written["targets"])

    machine = written["machine"]
    assert machine["cpu_count"] and machine["python"] and machine["platform"]
    sqlite_info = written["backends"]["sqlite"]
    assert sqlite_info["sqlite_version"]
    # The raw baseline runs with the settings sqlmemory gives its own connections.
    for key in ("journal_mode", "synchronous"):
        assert sqlite_info["raw"][key] == sqlite_info["sqlmemory"][key]
    assert sqlite_info["raw"]["journal_mode"] == "wal"

    table = bench.render(written)
    for r in results:
        assert r["label"] in table
    async_table = table[table.index("async storage (AsyncSqlStorage") :]
    for r in results:
        assert f"{r['async_x_sync']:.2f}x" in async_table, r["label"]


def test_async_none_leaves_the_async_storage_out(bench: ModuleType, tmp_path: Path) -> None:
    sizes = dataclasses.replace(tiny(bench), window_sessions=(30,), full_read=30)
    report = bench.run(
        sizes, ["sqlite"], bench.DEFAULT_PG_URL, None, tmp_path, [].append, [], False
    )
    assert {r["scenario"] for r in report["results"]} == set(bench.SCENARIOS)
    assert all(
        r["sqlmemory_async"] is None and r["async_x_sync"] is None for r in report["results"]
    )
    assert "async_driver" not in report["backends"]["sqlite"]
    assert not any("async" in t["target"] for t in report["targets"])
    assert "async storage" not in bench.render(report)


def test_the_installed_peers_run_every_scenario_beside_sqlmemory(
    bench: ModuleType, tmp_path: Path
) -> None:
    logged: list[str] = []
    report = bench.run(tiny(bench), ["sqlite"], bench.DEFAULT_PG_URL, None, tmp_path, logged.append)
    results = report["results"]
    assert {r["scenario"] for r in results} == set(bench.SCENARIOS)
    # Every installed peer ran every scenario beside sqlmemory (the `bench` extra; without
    # it, each is reported as not run, with the reason).
    on_sqlite = [p for p in bench.PEERS if "sqlite" in p.backends]
    installed = {p.name for p in on_sqlite if bench.missing(p) is None}
    bounded = {p.name for p in on_sqlite if p.bounded_window} & installed
    assert set(report["peers"]["skipped"]) == {p.name for p in on_sqlite} - installed
    assert all("[bench]" in why for why in report["peers"]["skipped"].values())
    for r in results:
        if r.get("variant") == "TokenWindow":
            expected = set()  # the peers have no token window
        elif r.get("messages", 0) > 30 and r["scenario"] == "window_read":
            expected = bounded  # past unbounded_window_limit
        else:
            expected = installed
        assert set(r["peers"]) == expected, r["label"]
        if expected:
            best = r["peers"][r["best_peer"]]["median_ms"]
            assert best == min(p["median_ms"] for p in r["peers"].values())
            assert r["vs_best_peer"] == pytest.approx(r["sqlmemory"]["median_ms"] / best)
        else:
            assert r["best_peer"] is None and r["vs_best_peer"] is None
        # The async storage against the async peer, where that one ran.
        peer = r["peers"].get("agents_sqlalchemy")
        async_median = r["sqlmemory_async"]["median_ms"]
        if peer is None:
            assert r["async_x_peer"] is None
        else:
            assert r["async_x_peer"] == pytest.approx(async_median / peer["median_ms"])

    table = bench.render(report)
    assert all(name in table for name in installed)


def test_cli_flags(bench: ModuleType) -> None:
    args = bench.parse_args(["--quick", "--backends", "sqlite", "--json", "x.json"])
    assert args.quick and args.backend_list == ["sqlite"] and args.json == Path("x.json")
    assert bench.parse_args([]).backend_list == ["sqlite", "postgresql"]
    assert bench.parse_args([]).peer_list is None
    assert bench.parse_args(["--peers", "none"]).peer_list == []
    assert bench.parse_args(["--peers", "langchain_sql"]).peer_list == ["langchain_sql"]
    assert bench.parse_args([]).async_side == "on"
    assert bench.parse_args(["--async", "none"]).async_side == "none"
    with pytest.raises(SystemExit):
        bench.parse_args(["--async", "off"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--peers", "mem0"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--backends", "oracle"])
