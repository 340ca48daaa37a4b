"""Loading a benchmark script of ``bench/`` as a module, for the tests that run it."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench"


@contextmanager
def bench_script(filename: str) -> Iterator[ModuleType]:
    """``bench/<filename>``, loaded by path; it puts bench/ on sys.path for its siblings.

    Afterwards sys.path and sys.modules are as they were: the siblings have plain names
    (sizes, report, ...) that must not linger for other tests.
    """
    path = BENCH / filename
    spec = importlib.util.spec_from_file_location(f"sqlmemory_bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)
        for name in set(sys.modules) - saved_modules:
            origin = getattr(sys.modules[name], "__file__", None)
            if origin is not None and Path(origin).resolve().parent == BENCH:
                del sys.modules[name]
        sys.path[:] = saved_path


def run_tiny_agents_bench(module: ModuleType, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """Run ``module.main`` (``agents_session.py`` or ``agents_floor.py``) on SQLite at tiny
    sizes; returns the JSON it wrote and the directory of its databases (empty after)."""
    sizes = module.Sizes(
        add_reps=3,
        add_warmup=1,
        histories=(8, 40),
        limit=5,
        limit_reps=3,
        limit_warmup=1,
        full_reps=(2, 2),
        full_warmup=1,
        fill_turns=3,
    )
    databases = tmp_path / "db"
    databases.mkdir()
    out = tmp_path / "report.json"
    argv = ["--backends", "sqlite", "--sqlite-dir", str(databases), "--json", str(out)]
    report = module.main(argv, sizes=sizes)
    written: dict[str, Any] = json.loads(out.read_text())
    assert written["results"] == json.loads(json.dumps(report["results"], default=str))
    return written, databases
