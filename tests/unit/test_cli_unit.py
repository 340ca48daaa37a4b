"""The ``sqlmemory`` command without a database: parsing, messages, missing drivers."""

from __future__ import annotations

import sys

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from sqlmemory import migrate
from sqlmemory.cli import _one_line, _reason, _redact, main
from sqlmemory.errors import StorageError


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: sqlmemory")
    for command in ("migrate", "current", "check", "demo", "SQLMEMORY_URL"):
        assert command in out


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["migrate", "--bogus"]) == 2
    assert "sqlmemory: error:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("module", "url", "extra"),
    [
        ("psycopg", "postgresql+psycopg://u@localhost/db", "postgres"),
        ("pymysql", "mysql+pymysql://u@localhost/db", "mysql"),
        ("asyncpg", "postgresql+asyncpg://u@localhost/db", "postgres"),
    ],
)
def test_a_missing_driver_names_the_extra(
    module: str,
    url: str,
    extra: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # An async URL runs migrations through the sync driver: hide both.
    for name in (module, "psycopg", "pymysql"):
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["migrate", "--url", url]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("sqlmemory: error: the database driver")
    assert f"pip install 'sqlmemory[{extra}]'" in err


def test_redact_hides_passwords() -> None:
    assert _redact("postgresql+psycopg://u:secret@h/db") == "postgresql+psycopg://u:***@h/db"
    assert "secret" not in _redact("postgresql://u:secret@h:notaport/db")


def test_one_line_drops_sqlalchemy_decorations() -> None:
    text = "boom\n\tsecond line\n[SQL: SELECT 1]\n(Background on this error at: x)"
    assert _one_line(text) == "boom second line"


def test_reason_uses_the_driver_message() -> None:
    driver_error = RuntimeError("connection refused\nIs the server running?")
    wrapped = OperationalError("SELECT 1", {}, driver_error)
    error = StorageError("upgrade failed")
    error.__cause__ = wrapped
    assert _reason(error) == "RuntimeError: connection refused Is the server running?"


def test_migrate_command_in_schema_errors_hides_the_password() -> None:
    command = migrate._migrate_command(make_url("postgresql+asyncpg://u:secret@h/db"))
    assert command == "sqlmemory migrate --url 'postgresql+psycopg://u:***@h/db'"
