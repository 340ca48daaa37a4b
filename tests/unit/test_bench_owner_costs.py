"""bench/owner_costs.py still runs: every measure, tiny sizes, SQLite; servers left out
with the reason."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import bench_script


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with bench_script("owner_costs.py") as module:
        yield module


def test_every_measure_runs_and_unreachable_servers_are_left_out(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sizes = bench.Sizes(
        sessions=600,
        owners=5,
        big_every=5,
        limit=2,
        page_reps=2,
        append_reps=3,
        append_warmup=1,
        window_messages=30,
        window=4,
        window_reps=3,
        window_warmup=1,
        erase_sessions=3,
        erase_messages=2_000,
        image_every=500,
        image_side=8,
    )
    databases = tmp_path / "db"
    databases.mkdir()
    out = tmp_path / "owners.json"
    argv = [
        *("--backends", "sqlite,postgresql,mysql", "--sqlite-dir", str(databases)),
        *("--pg-url", "postgresql+psycopg://nobody@127.0.0.1:1/none", "--json", str(out)),
    ]
    report = bench.main(argv, sizes=sizes)
    assert json.loads(out.read_text())["sizes"]["sessions"] == 600
    (sqlite,) = report["backends"]
    assert sqlite["backend"] == "sqlite"
    assert "unreachable" in report["skipped"]["postgresql"]
    assert "--mysql-url" in report["skipped"]["mysql"]

    # The owner holds every fifth of 600 sessions: 60 pages of 2, the last one 59.
    pages = {(r["scope"], r["page"]): r for r in sqlite["pages"]}
    assert sorted(pages) == [
        ("all", 0),
        ("all", 10),
        ("all", 50),
        ("all", 299),
        ("owner", 0),
        ("owner", 10),
        ("owner", 50),
        ("owner", 59),
    ]
    assert pages[("owner", 59)]["last"] and not pages[("owner", 50)]["last"]
    assert all(0 < r["median_ms"] <= r["p95_ms"] for r in pages.values())
    assert pages[("owner", 0)]["x_first"] == pages[("all", 0)]["x_first"] == 1.0

    calls = {(r["call"], r["flavour"]) for r in sqlite["views"]}
    assert calls == {(c, f) for c in ("append 1", "FixedWindow(4) @30") for f in ("sync", "async")}
    for r in sqlite["views"]:
        assert r["owned_x_unscoped"] == pytest.approx(
            r["owned"]["median_ms"] / r["unscoped"]["median_ms"]
        )

    # A batch holds at most 5,000 messages: two sessions of 2,000 each, and one more
    # transaction finds nothing left.
    erasure = sqlite["erasure"]
    assert erasure["sessions"] == 3 and erasure["messages"] == 6_000
    assert erasure["blobs"] == 3 * 4  # one image in 500 messages, each its own bytes
    assert erasure["transactions"] == math.ceil(3 / 2) + 1
    assert erasure["rollbacks"] == 0

    printed = capsys.readouterr().out
    assert "59 (last)" in printed and "postgresql: left out" in printed
    assert list(databases.iterdir()) == []  # the database went with its directory
