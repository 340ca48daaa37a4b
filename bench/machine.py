"""What the results were measured on: machine, versions, git commit, file system."""

from __future__ import annotations

import os
import platform
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from timing import now_utc

import sqlmemory

REPO_ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> str | None:
    try:
        done = subprocess.run(  # noqa: S603 - fixed arguments, no shell
            ["git", "-C", str(REPO_ROOT), *args],  # noqa: S607 - git from PATH
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def filesystem_of(path: Path) -> str | None:
    """The type of the filesystem holding ``path`` (from /proc/mounts; Linux only)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    best, kind = "", None
    target = str(path.resolve())
    for line in mounts:
        parts = line.split()
        if len(parts) < 3 or len(parts[1]) < len(best):
            continue
        if target == parts[1] or target.startswith(parts[1].rstrip("/") + "/"):
            best, kind = parts[1], parts[2]
    return kind


def machine_info() -> dict[str, Any]:
    cpu = None
    memory = None
    with_proc = Path("/proc/cpuinfo")
    if with_proc.exists():
        for line in with_proc.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = line.split(":", 1)[1].strip()
                break
    status = git("status", "--porcelain", "--", "sqlmemory", "migrations")
    versions: dict[str, str | None] = {
        "sqlalchemy": sa.__version__,
        "sqlite": sqlite3.sqlite_version,
    }
    try:
        import psycopg

        versions["psycopg"] = psycopg.__version__
    except ImportError:
        versions["psycopg"] = None
    return {
        "when": now_utc().isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "memory": memory,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sqlmemory": sqlmemory.__version__,
        "sqlmemory_commit": git("rev-parse", "HEAD"),
        "sqlmemory_dirty": bool(status) if status is not None else None,
        "versions": versions,
    }
