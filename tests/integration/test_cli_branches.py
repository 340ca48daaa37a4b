"""Branches on the command line, on every backend (docs/cli.md, docs/branches.md):
``fork``, the lineage and the branches in ``show``, and the lineage carried by ``export``
and ``import``, also once the parent is gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from sqlmemory import ImageBlock, Message, SqlStorage, TextBlock
from tests.integration.test_cli import invoke, ok
from tests.support.cases import image_bytes


@pytest.fixture
def chats(engine: sa.Engine) -> SqlStorage:
    """Clean tables: ``chat`` of alice (4 messages m0..m3, an image, a title)."""
    storage = SqlStorage(engine)
    alice = storage.owned_by("alice")
    picture = ImageBlock(image_bytes(8, 8), "image/png")
    alice.append(
        "chat",
        Message.user([TextBlock("look"), picture], id="m0"),
        Message.assistant("a picture", id="m1"),
        Message.user("and?", id="m2"),
        Message.assistant("that is all", id="m3"),
    )
    alice.update_session("chat", title="pictures")
    return storage


def test_fork_copies_a_session_up_to_a_message(db_url: str, chats: SqlStorage) -> None:
    done = ok("fork", "chat", "chat-v2", "--at", "m1", "--url", db_url)
    assert done.stdout == "Forked 'chat' into 'chat-v2': 2 messages up to message 'm1'\n"
    assert chats.load("chat-v2") == chats.load("chat")[:2]
    info = chats.session_info("chat-v2")
    assert (info.parent_id, info.forked_at, info.owner, info.title) == (
        "chat",
        "m1",
        "alice",
        "pictures",
    )
    whole = ok("fork", "chat", "chat-v3", "--url", db_url)
    assert whole.stdout == "Forked 'chat' into 'chat-v3': 4 messages\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("chat", "chat"), "'chat' exists already; nothing was written"),
        (("nope", "new"), "session 'nope' does not exist; nothing was written"),
        (("chat", "new", "--at", "m9"), "message 'm9' is not a message of session 'chat'"),
        (("chat", " new"), "session id has leading or trailing whitespace"),
    ],
)
def test_a_refused_fork_says_why_in_one_line_and_writes_nothing(
    db_url: str, chats: SqlStorage, engine: sa.Engine, args: tuple[str, ...], said: str
) -> None:
    before = chats.sessions()
    result = invoke("fork", *args, "--url", db_url)
    assert result.exit_code == 1, result.output
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == "" and chats.sessions() == before


def test_show_prints_the_parent_the_fork_point_and_the_branches(
    db_url: str, chats: SqlStorage
) -> None:
    chats.fork("chat", "chat-v2", at="m1")
    chats.fork("chat", "chat-v3")
    parent = ok("show", "chat", "--url", db_url).stdout.splitlines()
    assert "  branches (2): 'chat-v2', 'chat-v3'" in parent
    assert not any("forked from" in line for line in parent)
    child = ok("show", "chat-v2", "--url", db_url).stdout.splitlines()
    assert "  forked from: 'chat' at message 'm1'" in child
    whole = ok("show", "chat-v3", "--url", db_url).stdout.splitlines()
    assert "  forked from: 'chat' (the whole history)" in whole
    chats.clear("chat")
    assert "  forked from: 'chat' at message 'm1'" in ok("show", "chat-v2", "--url", db_url).stdout


def test_export_and_import_carry_the_lineage_also_without_the_parent(
    db_url: str, chats: SqlStorage, tmp_path: Path
) -> None:
    chats.fork("chat", "chat-v2", at="m1")
    chats.append("chat-v2", Message.user("edited", id="e1"))
    chats.fork("chat-v2", "chat-v3")
    backup = tmp_path / "backup.jsonl"
    ok("export", "chat-v2", "chat-v3", "--out", str(backup), "--url", db_url)
    lines = [json.loads(line) for line in backup.read_text().splitlines()]
    assert lines[0]["session"]["parent_id"] == "chat" and lines[0]["session"]["forked_at"] == "m1"
    before = {sid: (chats.load(sid), chats.session_info(sid)) for sid in ("chat-v2", "chat-v3")}
    for sid in chats.sessions():
        chats.clear(sid)
    ok("import", str(backup), "--url", db_url)
    for sid, (history, info) in before.items():
        again = chats.session_info(sid)
        assert chats.load(sid) == history
        assert (again.parent_id, again.forked_at, again.owner, again.title) == (
            info.parent_id,
            info.forked_at,
            info.owner,
            info.title,
        )
    assert [b.session_id for b in chats.branches("chat")] == ["chat-v2"]
    assert [b.session_id for b in chats.branches("chat-v2")] == ["chat-v3"]
    # A second import changes nothing.
    state = {sid: chats.session_info(sid) for sid in chats.sessions()}
    ok("import", str(backup), "--url", db_url)
    assert {sid: chats.session_info(sid) for sid in chats.sessions()} == state


def test_import_refuses_a_fork_point_without_a_parent(db_url: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    record = {"session_id": "s", "session": {"title": None, "metadata": {}, "forked_at": "m1"}}
    bad.write_text(json.dumps(record) + "\n")
    result = invoke("import", str(bad), "--url", db_url)
    assert result.exit_code == 1 and '"forked_at" needs a "parent_id"' in result.stderr
