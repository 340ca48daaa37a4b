"""Check each framework adapter alone, at the lowest and the latest framework version supported.

For each adapter extra (``[langchain]``, ``[pydantic-ai]``, ...) and each of the two pin
files, ``constraints/integrations-lowest.txt`` (the extras' lower bounds) and
``constraints/integrations.txt`` (the latest versions tested), a clean virtualenv gets the
wheel built from this checkout with only that extra, under those pins, then runs
``tools/adapters_smoke.py`` from a directory outside the checkout: the framework's own
offline model, two turns over a conversation kept in SQLite.

Time is kept small: the wheel is built once with the installed hatchling, the virtualenvs
are made without pip and filled by this interpreter's pip (``--python``), whose cache
serves every download after the first, two at a time::

    python tools/check_adapters.py               # every adapter, lowest and latest
    python tools/check_adapters.py langchain     # one adapter

CI (``.ci/run``) runs it beside ``tools/check_extras.py``, and skips both with
``--skip-extras`` (``SQLMEMORY_SKIP_EXTRAS=1``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from check_extras import ROOT, build_wheel, run

SMOKE = ROOT / "tools" / "adapters_smoke.py"
ADAPTERS = ("langchain", "pydantic-ai", "openai-agents", "adk", "agent-framework", "llama-index")
"""The adapter extras, each named as in ``pyproject.toml`` and in ``adapters_smoke.py``."""
PINS = {
    "lowest": ROOT / "constraints" / "integrations-lowest.txt",
    "latest": ROOT / "constraints" / "integrations.txt",
}


def pinned(path: Path) -> list[str]:
    """The ``name==version`` lines of a constraints file."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if "==" in line and not line.startswith("#")]


def pins_for(extra: str, path: Path, work: Path) -> Path:
    """The pins of ``path`` that apply to ``extra``, as a file in ``work``.

    A pin ending ``# only: a b`` applies to the adapters named only: a dependency of the
    day that one old release needs and another framework's lowest release refuses.
    """
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        _, marked, names = line.partition("# only:")
        if not marked or line.startswith("#") or extra in names.split():
            kept.append(line)
    scoped = work / f"pins-{extra}-{path.name}"
    scoped.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return scoped


def check(extra: str, level: str, wheel: Path, work: Path) -> tuple[float, str]:
    """Install the wheel with ``extra`` under the ``level`` pins; run the adapter's smoke test."""
    started = time.monotonic()
    pins = pins_for(extra, PINS[level], work)
    env_dir = work / f"venv-{extra}-{level}"
    run([sys.executable, "-m", "venv", "--without-pip", env_dir])
    python = env_dir / "bin" / "python"
    pip: list[str | Path] = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    pip += ["--python", python]
    run([*pip, "install", "--quiet", "--constraint", pins, f"{wheel}[{extra}]"])
    versions = run([*pip, "list", "--format=freeze"])
    names = {line.split("==")[0].lower() for line in pinned(pins)}
    found = [v for v in versions.split() if v.split("==")[0].lower() in names]
    outside = work / f"run-{extra}-{level}"  # not the checkout: its sources must not be imported
    outside.mkdir()
    run([python, "-W", "ignore::DeprecationWarning", SMOKE, extra], cwd=outside)
    return time.monotonic() - started, " ".join(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("adapters", nargs="*", help=f"some of {', '.join(ADAPTERS)} (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel installs")
    args = parser.parse_args(argv)
    names = args.adapters or list(ADAPTERS)
    unknown = sorted(set(names) - set(ADAPTERS))
    if unknown:
        parser.error(f"unknown adapters {unknown}; choose from {', '.join(ADAPTERS)}")
    started = time.monotonic()
    jobs = [(extra, level) for extra in names for level in PINS]
    with tempfile.TemporaryDirectory(prefix="sqlmemory-adapters-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work / "dist")
        failed = 0
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {job: pool.submit(check, *job, wheel, work) for job in jobs}
            for (extra, level), future in futures.items():
                label = f"sqlmemory[{extra}] {level}"
                try:
                    took, versions = future.result()
                    print(f"ok     {label:<32} {took:3.0f} s  {versions}", flush=True)
                except Exception as exc:
                    failed += 1
                    print(f"FAILED {label}\n{exc}", flush=True)
    # Worded apart from a test runner's "N passed, N failed": CI reads pytest's line.
    works, took = len(jobs) - failed, time.monotonic() - started
    print(f"adapters check: {works} of {len(jobs)} installs work ({took:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
