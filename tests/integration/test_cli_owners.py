"""Owners on the command line, on every backend (docs/cli.md, docs/many-users.md):
``sessions --owner``, the owner in ``sessions`` and ``show``, ``erase-owner``, and owners
carried by ``export`` and ``import``."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from sqlmemory import ImageBlock, Message, SqlStorage
from tests.integration.test_cli import invoke, ok
from tests.support.cases import image_bytes


@pytest.fixture
def owned(engine: sa.Engine) -> SqlStorage:
    """Clean tables: two sessions of alice (one with an image), one of bob, one of nobody."""
    storage = SqlStorage(engine)
    alice = storage.owned_by("alice")
    alice.append("a/1", Message.user("Hi"), Message.assistant("Hello."))
    alice.append("a/2", Message.user([ImageBlock(image_bytes(8, 8), "image/png")]))
    storage.owned_by("bob").append("b/1", Message.user("Hey"))
    storage.append("anon", Message.user("Anyone?"))
    return storage


def test_sessions_shows_owners_and_filters_by_one(db_url: str, owned: SqlStorage) -> None:
    lines = ok("sessions", "--url", db_url).stdout.splitlines()
    assert lines[0].split() == ["session", "owner", "title", "updated", "(UTC)", "messages"]
    rows = {line.split()[0]: line.split()[1] for line in lines[1:]}
    assert rows["a/1"] == "alice" and rows["b/1"] == "bob"
    assert not rows["anon"].isalpha()  # no owner: the title column is empty, a date follows
    alices = ok("sessions", "--owner", "alice", "--url", db_url).stdout.splitlines()[1:]
    assert [line.split()[0] for line in alices] == ["a/2", "a/1"]
    nobody = ok("sessions", "--owner", "carol", "--url", db_url)
    assert nobody.stdout == "" and "of owner 'carol'" in nobody.stderr


def test_sessions_without_owners_keeps_its_columns(db_url: str, engine: sa.Engine) -> None:
    SqlStorage(engine).append("plain", Message.user("Hi"))
    header = ok("sessions", "--url", db_url).stdout.splitlines()[0]
    assert header.split() == ["session", "title", "updated", "(UTC)", "messages"]


def test_a_bad_owner_option_is_a_usage_error(db_url: str, owned: SqlStorage) -> None:
    for bad in ("", "x" * 256):
        result = invoke("sessions", "--owner", bad, "--url", db_url)
        assert result.exit_code == 2 and "'--owner'" in result.stderr


def test_show_prints_the_owner(db_url: str, owned: SqlStorage) -> None:
    assert "  owner: alice" in ok("show", "a/1", "--url", db_url).stdout.splitlines()
    assert "owner:" not in ok("show", "anon", "--url", db_url).stdout


def test_erase_owner_asks_then_erases_only_that_owner(db_url: str, owned: SqlStorage) -> None:
    refused = invoke("erase-owner", "alice", "--url", db_url, input="n\n")
    assert refused.exit_code == 1
    assert "Delete the 2 sessions of owner 'alice' from" in refused.stderr
    assert owned.sessions(owner="alice") == ["a/1", "a/2"]
    done = ok("erase-owner", "alice", "--url", db_url, input="y\n")
    assert done.stdout.endswith("Erased owner 'alice': 2 sessions deleted\n")
    assert owned.sessions() == ["anon", "b/1"]
    again = ok("erase-owner", "alice", "--yes", "--url", db_url)
    assert again.stdout == "Erased owner 'alice': 0 sessions deleted\n"


def test_export_and_import_carry_owners(
    db_url: str, owned: SqlStorage, tmp_path: Path, engine: sa.Engine
) -> None:
    backup = tmp_path / "backup.jsonl"
    ok("export", "--out", str(backup), "--url", db_url)
    before = {i.session_id: i.owner for i in owned.list_sessions().items}
    for sid in owned.sessions():
        owned.clear(sid)
    ok("import", str(backup), "--url", db_url)
    after = {i.session_id: i.owner for i in owned.list_sessions().items}
    assert after == before == {"a/1": "alice", "a/2": "alice", "b/1": "bob", "anon": None}
    assert owned.owned_by("alice").load("a/2")[0].content[0].data == image_bytes(8, 8)
    # Twice changes nothing, owners included.
    second = ok("import", str(backup), "--url", db_url).stdout
    assert "0 new" in second and "metadata set" not in second


def test_import_of_an_owner_line_transfers_the_session(
    db_url: str, owned: SqlStorage, tmp_path: Path
) -> None:
    line = '{"session_id": "anon", "session": {"title": null, "metadata": {}, "owner": "bob"}}\n'
    source = tmp_path / "claim.jsonl"
    source.write_text(line, encoding="utf-8")
    ok("import", str(source), "--url", db_url)
    assert owned.session_info("anon").owner == "bob"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(line.replace('"bob"', '""'), encoding="utf-8")
    result = invoke("import", str(bad), "--url", db_url)
    assert result.exit_code == 1 and "bad.jsonl:1: owner must not be empty" in result.stderr
