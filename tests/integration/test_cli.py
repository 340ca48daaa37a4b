"""The ``sqlmemory`` command on every backend, through Click's test runner (docs/cli.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from sqlalchemy.pool import NullPool

from sqlmemory import DocumentBlock, ImageBlock, Message, SqlStorage, ToolCall, migrate
from sqlmemory.cli import main
from sqlmemory.cli.transfer import export_line
from tests.support.cases import image_bytes

UNREACHABLE = "postgresql+psycopg://nobody@127.0.0.1:1/x"


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def ok(*args: str, input: str | None = None) -> Result:
    result = invoke(*args, input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def tool_exchange() -> list[Message]:
    return [
        Message.user("What is 6 x 7?"),
        Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"b": 7, "a": 6})]),
        Message.tool("c1", "42"),
        Message.assistant("6 x 7 = 42."),
    ]


@pytest.fixture
def stored(engine: sa.Engine) -> SqlStorage:
    """Clean tables holding three sessions: a tool exchange, an image, a document."""
    storage = SqlStorage(engine)
    storage.append("chat/1", *tool_exchange())
    storage.append("chat/2", Message.user([ImageBlock(image_bytes(40, 30), "image/png")]))
    storage.append("other", Message.user([DocumentBlock(b"notes", "text/plain", title="n")]))
    return storage


def histories(storage: SqlStorage) -> dict[str, list[dict[str, object]]]:
    return {sid: [m.to_dict() for m in storage.load(sid)] for sid in storage.sessions()}


# -- schema ---------------------------------------------------------------------------------


def test_migrate_current_and_check(db_url: str, engine: sa.Engine) -> None:
    head = migrate.head()
    assert ok("migrate", "--url", db_url).stdout.endswith(f"already at revision {head}\n")
    assert ok("current", "--url", db_url).stdout.endswith(f": {head} (head)\n")
    assert ok("check", "--url", db_url).stdout.endswith(f"at head {head}, matching the models\n")


def test_downgrade_asks_then_drops_and_migrate_restores(db_url: str, engine: sa.Engine) -> None:
    head = migrate.head()
    refused = invoke("downgrade", "base", "--url", db_url, input="n\n")
    assert refused.exit_code == 1
    assert f"from {head} to base? What it drops is lost" in refused.stderr
    assert migrate.current(db_url) == head

    try:
        done = ok("downgrade", "base", "--url", db_url, input="y\n")
        assert done.stdout.endswith(f"sqlmemory schema downgraded from {head} to base\n")
        assert migrate.current(db_url) is None
        assert (
            "no sqlmemory schema; run `sqlmemory migrate" in ok("current", "--url", db_url).stdout
        )
        failed = invoke("check", "--url", db_url)
        assert failed.exit_code == 1 and "run `sqlmemory migrate --url" in failed.stderr
        again = invoke("downgrade", "base", "--yes", "--url", db_url)
        assert again.exit_code == 1 and "no sqlmemory schema to downgrade" in again.stderr
    finally:
        upgraded = ok("migrate", "--url", db_url)
    assert upgraded.stdout.endswith(f"upgraded from base to {head}\n")


def test_an_async_url_runs_through_the_sync_driver(async_db_url: str, engine: sa.Engine) -> None:
    assert ok("current", "--url", async_db_url).stdout.endswith(f"{migrate.head()} (head)\n")
    assert ok("sessions", "--url", async_db_url).stderr.startswith("no sessions in ")


def test_unreachable_database_prints_one_line() -> None:
    result = invoke("migrate", "--url", UNREACHABLE)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"sqlmemory: error: migrate on {UNREACHABLE} failed: ")
    assert len(result.stderr.splitlines()) == 1


# -- sessions, show, delete ----------------------------------------------------------------


def test_sessions_is_a_table_of_records_newest_first(db_url: str, stored: SqlStorage) -> None:
    stored.update_session("chat/1", title="Multiplying  six\nby seven")
    lines = ok("sessions", "--url", db_url).stdout.splitlines()
    assert lines[0].split() == ["session", "title", "updated", "(UTC)", "messages"]
    rows = [line.split() for line in lines[1:]]
    assert [(row[0], row[-1]) for row in rows] == [("chat/1", "4"), ("other", "1"), ("chat/2", "1")]
    assert rows[0][1:5] == ["Multiplying", "six", "by", "seven"]  # one line
    updated = stored.session_info("chat/1").updated_at  # type: ignore[union-attr]
    assert updated.strftime("%Y-%m-%d %H:%M:%S") in lines[1]
    assert len({len(line) for line in lines}) == 1  # the counts are right-aligned

    first = ok("sessions", "--prefix", "chat/", "--limit", "1", "--url", db_url)
    assert [line.split()[0] for line in first.stdout.splitlines()] == ["session", "chat/1"]
    assert first.stderr.startswith("more sessions: the next page is --cursor ")
    cursor = first.stderr.split()[-1]
    second = ok(
        "sessions", "--prefix", "chat/", "--limit", "1", "--cursor", cursor, "--url", db_url
    )
    assert [line.split()[0] for line in second.stdout.splitlines()] == ["session", "chat/2"]
    assert second.stderr == ""
    nothing = ok("sessions", "--prefix", "zzz", "--url", db_url)
    assert nothing.stdout == "" and "no sessions starting with 'zzz'" in nothing.stderr
    bad = invoke("sessions", "--cursor", "nonsense", "--url", db_url)
    assert bad.exit_code == 2 and "cursor is not one that list_sessions returned" in bad.stderr


def test_prune_deletes_the_sessions_not_updated_for_a_while(
    db_url: str, stored: SqlStorage
) -> None:
    refused = invoke("prune", "--older-than", "0s", "--url", db_url, input="n\n")
    assert refused.exit_code == 1 and "not updated in 0:00:00?" in refused.stderr
    kept = ok("prune", "--older-than", "30d", "--yes", "--url", db_url)
    assert kept.stdout == "Pruned 0 sessions not updated in 30 days, 0:00:00\n"
    assert stored.sessions() == ["chat/1", "chat/2", "other"]
    done = ok("prune", "--older-than", "0s", "--url", db_url, input="y\n")
    assert done.stdout == "Pruned 3 sessions not updated in 0:00:00\n"
    assert stored.sessions() == []
    bad = invoke("prune", "--older-than", "30 days", "--url", db_url)
    assert bad.exit_code == 2 and "is not a duration" in bad.stderr
    missing = invoke("prune", "--url", db_url)
    assert missing.exit_code == 2 and "--older-than" in missing.stderr


def test_show_prints_the_history_and_its_windows(db_url: str, stored: SqlStorage) -> None:
    stored.update_session("chat/1", title="Sums", metadata={"user": 7})
    out = ok("show", "chat/1", "--url", db_url).stdout.splitlines()
    assert out[0] == "Session chat/1: 4 messages"
    info = stored.session_info("chat/1")
    assert info is not None
    assert out[1:4] == [
        "  title: Sums",
        f"  created: {info.created_at:%Y-%m-%d %H:%M:%S.%f}, "
        f"updated: {info.updated_at:%Y-%m-%d %H:%M:%S.%f} (UTC)",
        '  metadata: {"user":7}',
    ]
    out = out[3:]
    assert out[2].split() == ["#", "recorded", "at", "(UTC)", "role", "tokens", "content"]
    rows = [line.split() for line in out[3:]]
    assert [row[0] for row in rows] == ["1", "2", "3", "4"]
    assert [row[3] for row in rows] == ["user", "assistant", "tool", "assistant"]
    assert out[4].endswith('-> [c1] multiply({"b":7,"a":6})')
    assert out[5].endswith("<- [c1] 42")

    window = ok("show", "chat/1", "--window", "1", "--url", db_url).stdout.splitlines()
    assert window[0] == "Session chat/1: 4 messages; FixedWindow(n=1) keeps 1"
    assert [line.split()[0] for line in window[6:]] == ["4"]  # positions in the whole history
    budget = ok("show", "chat/1", "--max-tokens", "1000", "--url", db_url).stdout.splitlines()
    assert [line.split()[0] for line in budget[6:]] == ["1", "2", "3", "4"]

    image = ok("show", "chat/2", "--url", db_url).stdout
    assert "[image/png image, 40x30]" in image


def test_show_json_is_the_wire_form(db_url: str, stored: SqlStorage) -> None:
    printed = json.loads(ok("show", "chat/1", "--json", "--url", db_url).stdout)
    assert printed == [m.to_dict() for m in stored.load("chat/1")]
    windowed = json.loads(ok("show", "chat/1", "--json", "--window", "2", "--url", db_url).stdout)
    assert [m["role"] for m in windowed] == ["assistant", "tool", "assistant"]


def test_show_of_an_unknown_session_fails(db_url: str, stored: SqlStorage) -> None:
    result = invoke("show", "nobody", "--url", db_url)
    assert result.exit_code == 1
    assert result.stderr.startswith("sqlmemory: error: no session 'nobody' in ")


def test_delete_asks_and_deletes_only_what_it_names(db_url: str, stored: SqlStorage) -> None:
    before = histories(stored)
    refused = invoke("delete", "chat/1", "--url", db_url, input="n\n")
    assert refused.exit_code == 1 and "Delete 'chat/1' from" in refused.stderr
    unknown = invoke("delete", "chat/1", "nobody", "--yes", "--url", db_url)
    assert unknown.exit_code == 1 and "no session 'nobody'" in unknown.stderr
    assert histories(stored) == before

    done = ok("delete", "chat/1", "other", "--url", db_url, input="y\n")
    assert "Deleted session 'chat/1' (4 messages)" in done.stdout
    assert "Deleted session 'other' (1 message)" in done.stdout
    assert stored.sessions() == ["chat/2"]


# -- export and import ---------------------------------------------------------------------


def test_export_writes_one_message_a_line(db_url: str, stored: SqlStorage, tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    result = ok("export", "--out", str(out), "--url", db_url)
    assert result.stdout == f"Exported 6 messages of 3 sessions to {out}\n"
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["session_id"] for r in records] == ["chat/1"] * 4 + ["chat/2", "other"]
    assert [r["message"] for r in records[:4]] == [m.to_dict() for m in stored.load("chat/1")]
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left

    chosen = ok("export", "other", "chat/2", "--out", "-", "--url", db_url)
    assert [json.loads(line)["session_id"] for line in chosen.stdout.splitlines()] == [
        "other",
        "chat/2",
    ]
    assert chosen.stderr == "Exported 2 messages of 2 sessions to stdout\n"
    prefixed = ok("export", "--prefix", "chat/", "--out", "-", "--url", db_url)
    assert len(prefixed.stdout.splitlines()) == 5


def test_export_of_an_unknown_session_writes_nothing(
    db_url: str, stored: SqlStorage, tmp_path: Path
) -> None:
    out = tmp_path / "x.jsonl"
    result = invoke("export", "chat/1", "nobody", "--out", str(out), "--url", db_url)
    assert result.exit_code == 1 and "no session 'nobody'" in result.stderr
    nowhere = invoke("export", "--out", str(tmp_path / "no" / "x.jsonl"), "--url", db_url)
    assert nowhere.exit_code == 1 and "no directory" in nowhere.stderr
    assert list(tmp_path.iterdir()) == []


def test_import_restores_an_export_and_twice_changes_nothing(
    db_url: str, stored: SqlStorage, tmp_path: Path
) -> None:
    backup = tmp_path / "backup.jsonl"
    ok("export", "--out", str(backup), "--url", db_url)
    exported = histories(stored)
    for sid in stored.sessions():
        stored.clear(sid)

    first = ok("import", str(backup), "--url", db_url)
    assert first.stdout.endswith(": 6 messages of 3 sessions, 6 new, 0 already stored\n")
    assert histories(stored) == exported  # ids, times, blocks, tool calls: all kept

    second = ok("import", str(backup), "--url", db_url)
    assert second.stdout.endswith(": 6 messages of 3 sessions, 0 new, 6 already stored\n")
    assert histories(stored) == exported


def test_export_and_import_carry_titles_and_metadata(
    db_url: str, stored: SqlStorage, tmp_path: Path
) -> None:
    stored.update_session("chat/1", title="Sums", metadata={"z": 1, "a": ["ü", None]})
    stored.update_session("empty", title="no messages yet")
    backup = tmp_path / "backup.jsonl"
    assert ok("export", "--out", str(backup), "--url", db_url).stdout == (
        f"Exported 6 messages of 4 sessions to {backup}\n"
    )
    lines = [json.loads(line) for line in backup.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {
        "session_id": "chat/1",
        "session": {"title": "Sums", "metadata": {"z": 1, "a": ["ü", None]}},
    }
    assert lines[6] == {
        "session_id": "empty",
        "session": {"title": "no messages yet", "metadata": {}},
    }
    for sid in stored.sessions():
        stored.clear(sid)

    first = ok("import", str(backup), "--url", db_url)
    assert first.stdout.endswith(
        ": 6 messages of 4 sessions, 6 new, 0 already stored, 2 titles or metadata set\n"
    )
    records = {sid: stored.session_info(sid) for sid in stored.sessions()}
    assert records["chat/1"].title == "Sums"  # type: ignore[union-attr]
    assert list(records["chat/1"].metadata) == ["z", "a"]  # type: ignore[union-attr]
    assert records["empty"].message_count == 0  # type: ignore[union-attr]
    assert records["other"].title is None  # type: ignore[union-attr]

    second = ok("import", str(backup), "--url", db_url)
    assert second.stdout.endswith(": 6 messages of 4 sessions, 0 new, 6 already stored\n")
    assert {sid: stored.session_info(sid) for sid in stored.sessions()} == records

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"session_id": "x", "session": {"title": 5}}) + "\n")
    refused = invoke("import", str(bad), "--url", db_url)
    assert refused.exit_code == 1 and f"{bad}:1: title must be a str" in refused.stderr
    assert stored.session_info("x") is None


def test_import_finishes_an_interrupted_import(
    db_url: str, stored: SqlStorage, tmp_path: Path
) -> None:
    backup = tmp_path / "backup.jsonl"
    ok("export", "chat/1", "--out", str(backup), "--url", db_url)
    exported = histories(stored)
    stored.evict("chat/1", 0)
    stored.append("chat/1", *[Message.from_dict(m) for m in exported["chat/1"][:2]])

    result = ok("import", str(backup), "--url", db_url)
    assert result.stdout.endswith("4 messages of 1 session, 2 new, 2 already stored\n")
    assert histories(stored) == exported


def test_import_checks_every_line_before_writing(
    db_url: str, stored: SqlStorage, tmp_path: Path
) -> None:
    before = histories(stored)
    good = export_line("new", Message.user("fine"))
    clash = Message.user("first", id="m1")
    cases = {
        "bad-json": good + "{not json\n",
        "bad-message": good + json.dumps({"session_id": "new", "message": {"role": "x"}}) + "\n",
        "clash-in-file": good
        + export_line("new", clash)
        + export_line("new", Message.user("other", id="m1")),
    }
    for name, text in cases.items():
        source = tmp_path / f"{name}.jsonl"
        source.write_text(text, encoding="utf-8")
        result = invoke("import", str(source), "--url", db_url)
        assert result.exit_code == 1, name
        assert result.stderr.startswith(f"sqlmemory: error: {source}:"), result.stderr
        assert histories(stored) == before, name


def test_import_stops_at_an_id_stored_with_other_content(
    db_url: str, stored: SqlStorage, tmp_path: Path
) -> None:
    taken = stored.load("chat/1")[0]
    source = tmp_path / "clash.jsonl"
    source.write_text(
        export_line("fresh", Message.user("kept"))
        + export_line("chat/1", Message.user("not the same", id=taken.id)),
        encoding="utf-8",
    )
    result = invoke("import", str(source), "--url", db_url)
    assert result.exit_code == 1
    assert f"{source}:2-2: " in result.stderr and repr(taken.id) in result.stderr
    assert [m.text_content() for m in stored.load("fresh")] == ["kept"]
    assert stored.load("chat/1")[0] == taken


def test_import_reads_stdin(db_url: str, engine: sa.Engine) -> None:
    text = (
        export_line("piped", Message.user("one")) + "\n" + export_line("piped", Message.user("two"))
    )
    result = ok("import", "-", "--url", db_url, input=text)
    assert result.stdout.startswith("Imported stdin into ")
    storage = SqlStorage(engine)
    assert [m.text_content() for m in storage.load("piped")] == ["one", "two"]


# -- demo -----------------------------------------------------------------------------------


def test_demo_prints_history_and_windows(db_url: str, engine: sa.Engine) -> None:
    out = ok("demo", "--url", db_url).stdout
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
    history = [line.split() for line in out.splitlines() if line[:2].strip().isdigit()]
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
    # Windows that keep the system prompt pin message 1 at their head.
    assert "starting at a user turn: messages 1, 6 (" in out
    assert "fit what is left: messages 1, 3, 4, 5, 6 (" in out
    assert "Cleared session demo-" in out
    assert SqlStorage(engine).sessions(prefix="demo-") == []


def test_demo_keep_keeps_the_session(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/demo.db"
    assert "Kept session demo-" in ok("demo", "--url", url, "--keep").stdout
    engine = sa.create_engine(url, poolclass=NullPool)
    try:
        (session,) = SqlStorage(engine).sessions(prefix="demo-")
    finally:
        engine.dispose()
    assert len(session) == len("demo-") + 8
    row = ok("sessions", "--url", url).stdout.splitlines()[1].split()
    assert (row[0], row[-1]) == (session, "6")
