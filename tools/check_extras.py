"""Check that each install of sqlmemory works alone: core, ``[postgres]``, ``[mysql]``, ``[async]``.

For each, a clean virtualenv gets the wheel built from this checkout with only that
extra, then runs ``tools/extras_smoke.py`` from a directory outside the checkout (a sync
and an async storage round trip on the extra's database; for the core, SQLite, the CLI
and the errors naming each extra). So a dependency that only the dev environment brings
(greenlet, for one) fails here instead of on a user's machine.

Time is kept small: the wheel is built once with the installed hatchling; every
dependency is downloaded once into a wheelhouse (pip's cache and configured indexes
apply), then each virtualenv is made without pip and installed from the wheelhouse only
(``--no-index``, so an extra that forgot a dependency cannot fetch it), in parallel::

    python tools/check_extras.py                  # all four
    python tools/check_extras.py postgres async   # some of them

CI (``.ci/run``) runs it as a step of its own; ``SQLMEMORY_SKIP_EXTRAS=1`` (or
``.ci/run --skip-extras``) skips that step locally. Servers come from the same variables
as the tests (``SQLMEMORY_TEST_POSTGRES_URL``, ``SQLMEMORY_TEST_MYSQL_URL``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tools" / "extras_smoke.py"
EXTRAS = {"core": "", "postgres": "[postgres]", "mysql": "[mysql]", "async": "[async]"}
"""Each install checked, and the extras it names (the core: none)."""


def run(args: list[str | Path], *, cwd: Path | None = None, timeout: float = 600) -> str:
    """Run a command; on failure raise with its output, which says what went wrong."""
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def build_wheel(out: Path) -> Path:
    run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, ROOT])
    (wheel,) = out.glob("sqlmemory-*.whl")
    return wheel


def download(wheel: Path, wheelhouse: Path) -> None:
    """Every dependency of every extra, once; the installs below never reach an index."""
    every = ",".join(extra.strip("[]") for extra in EXTRAS.values() if extra)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    run([*pip, "download", "--quiet", "--dest", wheelhouse, f"{wheel}[{every}]"])


def check(name: str, wheel: Path, wheelhouse: Path, work: Path) -> float:
    """Install the wheel with one extra into a new virtualenv and run the smoke test."""
    started = time.monotonic()
    env_dir = work / f"venv-{name}"
    run([sys.executable, "-m", "venv", "--without-pip", env_dir])
    python = env_dir / "bin" / "python"
    pip: list[str | Path] = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    pip += ["--python", python]
    run(
        [
            *pip,
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            wheelhouse,
            f"{wheel}{EXTRAS[name]}",
        ]
    )
    outside = work / f"run-{name}"  # not the checkout: its sources must not be imported
    outside.mkdir()
    run([python, SMOKE, name], cwd=outside)
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("extras", nargs="*", help=f"some of {', '.join(EXTRAS)} (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel installs")
    args = parser.parse_args(argv)
    names = args.extras or list(EXTRAS)
    unknown = sorted(set(names) - set(EXTRAS))
    if unknown:
        parser.error(f"unknown extras {unknown}; choose from {', '.join(EXTRAS)}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sqlmemory-extras-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work / "dist")
        download(wheel, work / "wheelhouse")
        prepared = time.monotonic() - started
        print(f"wheel and wheelhouse ready in {prepared:.0f} s", flush=True)
        failed = 0
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {
                name: pool.submit(check, name, wheel, work / "wheelhouse", work) for name in names
            }
            for name, future in futures.items():
                label = f"sqlmemory{EXTRAS[name]}"
                try:
                    print(f"ok     {label:<22} {future.result():.0f} s", flush=True)
                except Exception as exc:
                    failed += 1
                    print(f"FAILED {label}\n{exc}", flush=True)
    # Worded apart from a test runner's "N passed, N failed": CI reads pytest's line.
    works, took = len(names) - failed, time.monotonic() - started
    print(f"extras check: {works} of {len(names)} installs work ({took:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
