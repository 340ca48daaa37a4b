"""The wheel ships the migrations and the package data (installing it is tools/check_extras.py).

Built with the installed hatchling (``--no-isolation``): no virtualenv and no download, so
it costs about a second. Installing the wheel into clean virtualenvs, one per extra, is
the extras check's job (docs/development.md), which CI runs as its own step.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_ships_every_migration_and_the_package_data(tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("sqlmemory-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    migrations = {
        f"sqlmemory/migrations/{path.relative_to(REPO / 'migrations').as_posix()}"
        for path in (REPO / "migrations").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert "sqlmemory/migrations/env.py" in migrations
    assert any(name.startswith("sqlmemory/migrations/versions/") for name in migrations)
    expected = migrations | {
        "sqlmemory/alembic.ini",
        "sqlmemory/py.typed",
        "sqlmemory/migrate.py",
        "sqlmemory/cli/__init__.py",
        "sqlmemory/__main__.py",
    }
    assert expected <= names, sorted(expected - names)
    assert "sqlmemory = sqlmemory.cli:run" in scripts
