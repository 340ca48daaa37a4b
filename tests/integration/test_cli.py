"""The ``sqlmemory`` command on every backend, and as a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from sqlmemory import migrate
from sqlmemory.cli import main

UNREACHABLE = "postgresql+psycopg://nobody@127.0.0.1:1/x"


def demo_sessions(url: str) -> list[str]:
    from sqlmemory import SqlStorage

    with SqlStorage.from_url(url, poolclass=NullPool) as storage:
        return storage.sessions(prefix="demo-")


def test_migrate_current_and_check(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--url", db_url]) == 0
    assert main(["current", "--url", db_url]) == 0
    assert main(["check", "--url", db_url]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].endswith(f"revision {migrate.head()}") or f"to {migrate.head()}" in lines[0]
    assert lines[1].endswith(f"{migrate.head()} (head)")
    assert "matching the models" in lines[2]
    assert migrate.current(db_url) == migrate.head()


def test_migrate_uses_sqlmemory_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path}/env.db"
    monkeypatch.setenv("SQLMEMORY_URL", url)
    assert main(["migrate"]) == 0
    assert "upgraded from base to" in capsys.readouterr().out
    assert migrate.current(url) == migrate.head()


def test_migrate_defaults_to_sqlmemory_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SQLMEMORY_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["migrate"]) == 0
    assert (tmp_path / "sqlmemory.db").is_file()


def test_demo_prints_history_and_windows(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--url", db_url]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "Session demo-" in out
    for text in (
        "system",
        "[image/png image",
        'get_weather({"city":"Oslo","unit":"celsius"})',
        "<- [call_1]",
        "Will it be dry tomorrow?",
        "groups [1] [2] [3 4] [5] [6]",
    ):
        assert text in out, text
    history = [line.split() for line in out.splitlines() if line[:4].strip().isdigit()]
    assert [row[:2] for row in history] == [
        ["1", "system"],
        ["2", "user"],
        ["3", "assistant"],
        ["4", "tool"],
        ["5", "assistant"],
        ["6", "user"],
    ]
    assert all(int(row[2]) > 0 for row in history)  # a token estimate per message
    assert "FixedWindow(2), the 2 newest groups: messages 5, 6 (" in out
    # The image message does not fit 200 tokens; the tool call and its result go together.
    assert "TokenWindow(200), the newest groups that fit 200 tokens: messages 3, 4, 5, 6 (" in out
    assert "Cleared session demo-" in out
    assert demo_sessions(db_url) == []


def test_demo_keep_keeps_the_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/demo.db"
    assert main(["demo", "--url", url, "--keep"]) == 0
    assert "Kept session demo-" in capsys.readouterr().out
    (session,) = demo_sessions(url)
    assert session.startswith("demo-") and len(session) == len("demo-") + 8


def test_unreachable_database_prints_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--url", UNREACHABLE]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(f"sqlmemory: error: migrate on {UNREACHABLE} failed: ")
    assert "Traceback" not in err


def test_a_database_without_the_schema_names_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path}/empty.db"
    engine = sa.create_engine(url)
    engine.dispose()
    assert main(["check", "--url", url]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert f"run `sqlmemory migrate --url {url}`" in err


@pytest.mark.parametrize(
    ("args", "status", "expected"),
    [
        (["--help"], 0, "migrate"),
        (["migrate", "--url", UNREACHABLE], 1, "sqlmemory: error: migrate on"),
        (["demo", "--url", "sqlite:////nonexistent-dir/x.db"], 1, "sqlmemory: error: demo on"),
        (["migrate", "--url", "nonsense"], 1, "sqlmemory: error: migrate on nonsense failed"),
        ([], 2, "the following arguments are required"),
    ],
)
def test_python_m_sqlmemory(tmp_path: Path, args: list[str], status: int, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SQLMEMORY_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "sqlmemory", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == status, done.stderr
    assert expected in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    if status == 1:
        assert len(done.stderr.splitlines()) == 1
