"""The ``sqlmemory`` entry point as a process: the console script, ``python -m``, a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from sqlmemory import Message, SqlStorage, __version__
from sqlmemory.migrate import upgrade

SCRIPT = Path(sys.executable).parent / "sqlmemory"


def run(
    *args: str | Path, cwd: Path, stderr: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SQLMEMORY_URL"}
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_console_script_and_python_m_run(tmp_path: Path) -> None:
    version = run(SCRIPT, "--version", cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith(f"sqlmemory {__version__} (")

    migrated = run(sys.executable, "-m", "sqlmemory", "migrate", cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert migrated.stdout.startswith("sqlite:///sqlmemory.db: sqlmemory schema upgraded")
    assert (tmp_path / "sqlmemory.db").is_file()


@pytest.mark.parametrize(
    ("args", "status", "expected"),
    [
        (["migrate", "--url", "nonsense"], 1, "sqlmemory: error: 'nonsense' is not a database URL"),
        (
            ["show", "x", "--url", "sqlite:///absent.db"],
            1,
            "sqlmemory: error: sqlite:///absent.db:",
        ),
        ([], 2, "Usage: sqlmemory [OPTIONS] COMMAND"),
    ],
)
def test_errors_are_one_line_without_traceback(
    tmp_path: Path, args: list[str], status: int, expected: str
) -> None:
    done = run(SCRIPT, *args, cwd=tmp_path)
    assert done.returncode == status
    assert expected in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if status == 1:
        assert len(done.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_export_shows_a_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    upgrade(url)
    with SqlStorage.from_url(url) as storage:
        for n in range(3):
            storage.append(f"chat-{n}", Message.user("hi"), Message.assistant("hello"))

    piped = run(SCRIPT, "export", "--out", tmp_path / "piped.jsonl", "--url", url, cwd=tmp_path)
    assert piped.returncode == 0
    assert "Exporting" not in piped.stderr + piped.stdout

    controller, terminal = pty.openpty()
    try:
        shown = run(
            SCRIPT,
            "export",
            "--out",
            tmp_path / "tty.jsonl",
            "--url",
            url,
            cwd=tmp_path,
            stderr=terminal,
        )
        os.close(terminal)
        terminal = -1
        screen = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            screen += chunk
    finally:
        os.close(controller)
        if terminal >= 0:
            os.close(terminal)
    assert shown.returncode == 0
    assert b"Exporting" in screen and b"100%" in screen
    assert shown.stdout == f"Exported 6 messages of 3 sessions to {tmp_path / 'tty.jsonl'}\n"
    assert (tmp_path / "tty.jsonl").read_text() == (tmp_path / "piped.jsonl").read_text()
