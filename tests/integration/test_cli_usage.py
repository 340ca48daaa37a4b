"""Usage on the command line, on every backend (docs/cli.md, docs/usage.md): ``sqlmemory
usage`` prints the totals per model as a table, filtered by session, owner and age; and
``export`` and ``import`` carry every message's usage."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, Usage
from sqlmemory.types import utc_now
from tests.integration.test_cli import histories, invoke, ok

OLD = utc_now() - timedelta(days=40)


@pytest.fixture
def costly(engine: sa.Engine) -> SqlStorage:
    """Clean tables: alice's session with two models and one usage without a model, an
    old message of hers, and bob's session."""
    storage = SqlStorage(engine)
    alice = storage.owned_by("alice")
    alice.append(
        "a/1",
        Message.user("Hi"),
        Message.assistant("Hello.", usage=Usage("gpt-4o", 1200, 80, 1024, 0, 16)),
        Message.assistant("Again.", usage=Usage("claude-x", 30, 4, 0, 2000, 0)),
        Message.assistant("No model.", usage=Usage(None, 5)),
    )
    alice.append("a/old", Message.assistant("Old.", usage=Usage("gpt-4o", 7), recorded_at=OLD))
    storage.owned_by("bob").append("b/1", Message.assistant("Hey.", usage=Usage("gpt-4o", 100)))
    return storage


def rows(stdout: str) -> dict[str, list[str]]:
    lines = stdout.splitlines()
    assert lines[1].split() == [
        "model",
        "input",
        "output",
        "cache",
        "read",
        "cache",
        "write",
        "reasoning",
    ]
    return {line.split()[0]: line.split()[1:] for line in lines[2:]}


def test_usage_prints_every_model_and_the_total(db_url: str, costly: SqlStorage) -> None:
    result = ok("usage", "--url", db_url)
    assert result.stdout.splitlines()[0] == "5 messages with usage"
    table = rows(result.stdout)
    assert table["gpt-4o"] == ["1,307", "80", "1,024", "0", "16"]
    assert table["claude-x"] == ["30", "4", "0", "2,000", "0"]
    assert table["(no"] == ["model)", "5", "0", "0", "0", "0"]
    assert table["total"] == ["1,342", "84", "1,024", "2,000", "16"]


def test_usage_filters_by_session_owner_and_age(db_url: str, costly: SqlStorage) -> None:
    assert rows(ok("usage", "--session", "b/1", "--url", db_url).stdout)["total"][0] == "100"
    alices = ok("usage", "--owner", "alice", "--url", db_url).stdout
    assert alices.startswith("4 messages") and rows(alices)["total"][0] == "1,242"
    recent = ok("usage", "--owner", "alice", "--since", "30d", "--url", db_url).stdout
    assert rows(recent)["gpt-4o"][0] == "1,200"
    assert ok("usage", "--owner", "carol", "--url", db_url).stdout == "0 messages with usage\n"


@pytest.mark.parametrize(
    ("options", "hint"),
    [
        (("--session", ""), "'--session'"),
        (("--owner", "x" * 256), "'--owner'"),
        (("--since", "30 days"), "'--since'"),
    ],
)
def test_bad_options_are_usage_errors(
    db_url: str, costly: SqlStorage, options: tuple[str, ...], hint: str
) -> None:
    result = invoke("usage", *options, "--url", db_url)
    assert result.exit_code == 2 and hint in result.stderr


def test_export_and_import_carry_usage(db_url: str, costly: SqlStorage, tmp_path: Path) -> None:
    backup = tmp_path / "backup.jsonl"
    ok("export", "--out", str(backup), "--url", db_url)
    exported = histories(costly)
    before = costly.usage()
    for sid in costly.sessions():
        costly.clear(sid)
    assert costly.usage().messages == 0
    ok("import", str(backup), "--url", db_url)
    assert histories(costly) == exported
    assert costly.usage() == before
    assert costly.load("a/1")[1].usage == Usage("gpt-4o", 1200, 80, 1024, 0, 16)
