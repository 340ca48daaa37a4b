"""The ``sqlmemory`` command without a database server: help, usage, URLs, missing drivers.

Every expected failure prints one line, ``sqlmemory: error: ...`` naming the fix, and exits
with status 1 (docs/cli.md); a command that only reads never creates a SQLite file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy.exc import OperationalError

from sqlmemory.cli import SECTIONS, main
from sqlmemory.cli._command import _one_line, _reason
from sqlmemory.cli.render import Column, table
from sqlmemory.cli.transfer import export_line, parse_line
from sqlmemory.errors import StorageError
from sqlmemory.types import Message

COMMANDS = [name for names in SECTIONS.values() for name in names if name in main.commands]


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def assert_one_line_error(result: Result, *fragments: str) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("sqlmemory: error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def test_help_lists_every_command_by_section() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("Usage: sqlmemory [OPTIONS] COMMAND")
    for title in ("Schema:", "Sessions:", "Try it:"):
        assert title in out
    for name in ("migrate", "current", "check", "downgrade", "sessions", "show", "export"):
        assert f"\n  {name} " in out
    assert "SQLMEMORY_URL" in out
    # Short help lines are whole sentences: none is cut with "...".
    assert "..." not in out.split("Schema:")[1]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_url(command: str) -> None:
    result = invoke(command, "--help")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: sqlmemory {command} ")
    assert "--url URL" in result.stdout
    assert "SQLMEMORY_URL" in result.stdout


def test_version_names_the_versions() -> None:
    from sqlmemory import __version__

    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"sqlmemory {__version__} (SQLAlchemy ")
    assert "Alembic" in result.stdout and "Python" in result.stdout


@pytest.mark.parametrize(
    "args",
    [[], ["nosuch"], ["migrate", "--bogus"], ["show"], ["sessions", "--limit", "0"]],
    ids=["no-command", "unknown-command", "unknown-option", "missing-sid", "limit-0"],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert "Usage: sqlmemory" in result.output


def test_show_refuses_two_windows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/x.db"
    result = invoke("show", "s", "--window", "2", "--max-tokens", "10", "--url", url)
    assert result.exit_code == 2
    assert "not both" in result.output


BAD_URLS = [
    pytest.param("nonsense", ("'nonsense' is not a database URL", "sqlite:///"), id="not-a-url"),
    pytest.param(
        "postgresql://u:secret@h:port/d",
        ("is not a database URL", "postgresql+psycopg://"),
        id="bad-port",
    ),
    pytest.param(
        "oracle://u@h/d",
        ("does not support the database 'oracle'", "mysql+pymysql://"),
        id="unsupported-database",
    ),
    pytest.param(
        "postgresql+nosuch://u@h/d",
        ("unknown driver 'nosuch'", "postgresql+psycopg://"),
        id="bad-driver",
    ),
]


@pytest.mark.parametrize("command", ["migrate", "current", "check", "sessions", "demo"])
@pytest.mark.parametrize(("url", "fragments"), BAD_URLS)
def test_a_bad_url_is_one_line_naming_the_right_form(
    command: str, url: str, fragments: tuple[str, ...]
) -> None:
    line = assert_one_line_error(invoke(command, "--url", url), *fragments)
    assert "secret" not in line


@pytest.mark.parametrize(
    ("module", "url", "extra"),
    [
        ("psycopg", "postgresql+psycopg://u@127.0.0.1:1/db", "postgres"),
        ("psycopg", "postgresql://u@127.0.0.1:1/db", "postgres"),
        ("pymysql", "mysql+pymysql://u@127.0.0.1:1/db", "mysql"),
        # An async URL runs through the backend's sync driver.
        ("psycopg", "postgresql+asyncpg://u@127.0.0.1:1/db", "postgres"),
        ("pymysql", "mysql+aiomysql://u@127.0.0.1:1/db", "mysql"),
        ("pymysql", "mariadb+asyncmy://u@127.0.0.1:1/db", "mysql"),
    ],
)
@pytest.mark.parametrize("command", ["migrate", "current", "sessions", "export"])
def test_a_missing_driver_names_the_extra(
    module: str, url: str, extra: str, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now fails
    args = [command, "--url", url] + (["--out", "-"] if command == "export" else [])
    assert_one_line_error(
        invoke(*args),
        f"the database driver '{module}' is not installed",
        f"pip install 'sqlmemory[{extra}]'",
    )


def test_mysql_without_a_driver_names_mysql_pymysql(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "MySQLdb", None)
    line = assert_one_line_error(invoke("migrate", "--url", "mysql://u@127.0.0.1:1/db"))
    assert "selects the driver 'MySQLdb', which sqlmemory does not install" in line
    assert "use mysql+pymysql://" in line
    assert "pip install 'sqlmemory[mysql]'" in line


READ_ONLY = [
    ["current"],
    ["check"],
    ["sessions"],
    ["show", "chat-1"],
    ["show", "chat-1", "--json"],
    ["export", "--out", "-"],
    ["delete", "chat-1", "--yes"],
    ["downgrade", "base", "--yes"],
]


@pytest.mark.parametrize("args", READ_ONLY, ids=[" ".join(a) for a in READ_ONLY])
def test_commands_that_read_never_create_a_sqlite_file(tmp_path: Path, args: list[str]) -> None:
    database = tmp_path / "absent.db"
    result = invoke(*args, "--url", f"sqlite:///{database}")
    assert not database.exists()
    assert list(tmp_path.iterdir()) == []
    if args == ["current"]:
        assert result.exit_code == 0
        assert "no database file; run `sqlmemory migrate --url" in result.stdout
    else:
        assert_one_line_error(result, f"no database file '{database}'", "sqlmemory migrate --url")


def test_import_never_creates_a_sqlite_file(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(export_line("chat-1", Message.user("hi")), encoding="utf-8")
    database = tmp_path / "absent.db"
    assert_one_line_error(
        invoke("import", str(source), "--url", f"sqlite:///{database}"), "no database file"
    )
    assert not database.exists()


def test_a_sqlite_file_in_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/no/such/dir/x.db"
    assert_one_line_error(invoke("migrate", "--url", url), "migrate on", "unable to open")


def test_url_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLMEMORY_URL", f"sqlite:///{tmp_path}/env.db")
    result = invoke("migrate")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "env.db").is_file()


def test_default_url_is_sqlmemory_db_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SQLMEMORY_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert invoke("migrate").exit_code == 0
    assert (tmp_path / "sqlmemory.db").is_file()


def test_one_line_drops_sqlalchemy_decorations() -> None:
    text = "boom\n\tsecond line\n[SQL: SELECT 1]\n(Background on this error at: x)"
    assert _one_line(text) == "boom second line"


def test_reason_uses_the_driver_message() -> None:
    driver_error = RuntimeError("connection refused\nIs the server running?")
    wrapped = OperationalError("SELECT 1", {}, driver_error)
    error = StorageError("upgrade failed")
    error.__cause__ = wrapped
    assert _reason(error) == "RuntimeError: connection refused Is the server running?"


def test_table_pads_columns_and_never_the_last() -> None:
    columns: list[Column[tuple[str, int, str]]] = [
        Column("id", lambda r: r[0]),
        Column("n", lambda r: r[1], align=">"),
        Column("text", lambda r: r[2]),
    ]
    lines = table(columns, [("a", 5, "x"), ("bbbb", 12, "")])
    assert lines == ["id     n  text", "a      5  x", "bbbb  12"]


@pytest.mark.parametrize("text", ["hi", "line\u2028separator\u2029", "nul \x00 and \n and 😀"])
def test_export_lines_are_one_line_and_read_back(text: str) -> None:
    message = Message.user(text)
    line = export_line("chat/1", message)
    assert line.endswith("\n") and len(line.splitlines()) == 1
    record = parse_line(line, "f.jsonl", 7)
    assert (record.session_id, record.message, record.line) == ("chat/1", message, 7)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{", "f.jsonl:3: not JSON"),
        ("[]", 'f.jsonl:3: expected {"session_id": ..., "message": ...}'),
        ('{"session_id": "s"}', "expected"),
        ('{"session_id": " s", "message": {}}', "f.jsonl:3: session id has leading"),
        ('{"session_id": 5, "message": {}}', "f.jsonl:3: session id must be a str"),
        ('{"session_id": "s", "message": {"content": []}}', "f.jsonl:3: message.role is missing"),
    ],
)
def test_a_bad_line_names_file_and_line(line: str, fragment: str) -> None:
    from sqlmemory.cli._command import CliError

    with pytest.raises(CliError) as raised:
        parse_line(line, "f.jsonl", 3)
    assert fragment in raised.value.format_message()
