"""Revision 0002 on a populated database, on every backend (docs/migrations.md).

Upgrading a database that 0001 filled keeps every message equal, tool calls in their
order with their arguments' key order, and recomputes the digests so that appending the
same messages again is a no-op. Downgrading gives back exactly the rows 0001 wrote, and
refuses, changing nothing, a database holding what 0001 cannot represent.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import (
    DocumentBlock,
    FixedWindow,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    SchemaError,
    SqlStorage,
    TextBlock,
    ThinkingBlock,
    TokenWindow,
    ToolCall,
    migrate,
)
from sqlmemory.storage.checks import content_digest
from sqlmemory.types import canonical_json
from tests.support.cases import (
    every_block_kind,
    fidelity_messages,
    image_bytes,
    image_sizes,
    timeless,
    tool_history,
)
from tests.support.legacy import STAMP, encode_0001, legacy_rows, write_0001
from tests.support.tables import MESSAGES, snapshot

ORDERED_CALLS = Message.assistant(
    "calling three tools",
    tool_calls=[
        ToolCall("k3", "third", {"z": [3, {"y": 1, "x": 2}], "a": 1.5}),
        ToolCall("k1", "first", {"b": True, "a": None, "big": 10**18}),
        ToolCall("k2", "second"),
    ],
    id="ordered-calls",
)


def legacy_histories() -> dict[str, list[Message]]:
    """What 0001 could hold: every block kind, tool calls, metadata, odd texts."""
    return {
        "every-kind": every_block_kind(),
        "tools": [*tool_history(), ORDERED_CALLS]
        + [Message.tool(k, f"result {k}", id=f"r-{k}") for k in ("k3", "k1", "k2")],
        "fidelity": fidelity_messages(),
    }


def populate_0001(db: sa.Engine) -> dict[str, list[Message]]:
    migrate.downgrade(db, "base")
    migrate.upgrade(db, "0001")
    with db.begin() as conn:
        return {sid: write_0001(conn, sid, ms) for sid, ms in legacy_histories().items()}


def assert_loads_back(storage: SqlStorage, stored: dict[str, list[Message]]) -> None:
    for sid, history in stored.items():
        loaded = storage.load(sid)
        assert loaded == history  # recorded_at included
        assert timeless(loaded) == timeless(history)
        assert [canonical_json(m) for m in loaded] == [canonical_json(m) for m in history]
        assert image_sizes(loaded) == image_sizes(history)
        for before, after in zip(history, loaded, strict=True):
            assert [b.kind for b in after.content] == [b.kind for b in before.content]
            assert [c.arguments_json for c in after.tool_calls] == [
                c.arguments_json for c in before.tool_calls
            ]


def test_upgrading_a_populated_0001_database_keeps_every_message(db: sa.Engine) -> None:
    stored = populate_0001(db)
    with db.connect() as conn:
        before = legacy_rows(conn)

    migrate.upgrade(db)
    migrate.check(db)

    storage = SqlStorage(db)
    assert_loads_back(storage, stored)
    calls = next(m for m in storage.load("tools") if m.id == "ordered-calls").tool_calls
    assert [c.id for c in calls] == ["k3", "k1", "k2"]
    assert list(calls[0].arguments or {}) == ["z", "a"]
    assert list(calls[0].arguments["z"][1]) == ["y", "x"]  # type: ignore[index]
    assert calls[1].arguments == {"b": True, "a": None, "big": 10**18}
    assert calls[2].arguments == {} and calls[2].arguments_text is None
    with db.connect() as conn:
        digests = dict(conn.execute(sa.select(MESSAGES.c.message_id, MESSAGES.c.digest)).all())
    for history in stored.values():
        for message in history:
            assert digests[message.id] == content_digest(message)

    # Windows still come from the message rows alone (call ids kept).
    for policy in (FixedWindow(2), FixedWindow(5), TokenWindow(300)):
        assert storage.load("tools", policy) == policy.apply(storage.load("tools"))

    # The same messages again: nothing changes, by append (a retry) or save.
    with db.connect() as conn:
        rows = snapshot(conn)
    for sid, history in legacy_histories().items():
        storage.append(sid, *history)
        storage.append(sid, *stored[sid])
        storage.save(sid, stored[sid])
    with db.connect() as conn:
        after = snapshot(conn)
    del rows["sessions"], after["sessions"]  # save records its hash chain there
    assert after == rows

    migrate.downgrade(db, "0001")
    with db.connect() as conn:
        assert legacy_rows(conn) == before
    migrate.upgrade(db)
    assert_loads_back(SqlStorage(db), stored)


def without_session(rows: list[tuple[Any, ...]], sid: str) -> list[tuple[Any, ...]]:
    return [r[1:] for r in rows if r[0] == sid]


def test_what_0002_wrote_in_its_own_layout_goes_down_as_0001_wrote_it(db: sa.Engine) -> None:
    # At head, a leading text stays in the message row while the other blocks are rows
    # from position 1, and tool calls are rows. Down at 0001, the rows are those 0001
    # itself writes for the same messages, digests included.
    png = ImageBlock(image_bytes(9, 7), "image/png")
    messages = [
        Message.user(["look", png, "thanks"], id="text-first", metadata={"b": 1, "a": 2}),
        ORDERED_CALLS,
        Message.assistant(
            [ThinkingBlock("hm", signature="s"), TextBlock("ok")],
            tool_calls=[ToolCall("c9", "f", {"y": 1, "x": 2})],
            id="thinking-first",
        ),
        Message.tool("c9", "done", id="c9-result"),
        Message.user([DocumentBlock(b"%PDF-1.4", "application/pdf", title="t")], id="doc"),
        Message.assistant("", tool_calls=[ToolCall("c8", "g")], id="empty-text-and-call"),
        Message.tool("c8", [TextBlock("a"), TextBlock("")], id="c8-result"),
    ]
    messages = [m.with_recorded_at(STAMP) for m in messages]
    storage = SqlStorage(db)
    storage.append("head", *messages)
    loaded = storage.load("head")

    migrate.downgrade(db, "0001")
    with db.begin() as conn:
        write_0001(conn, "legacy", messages)
        rows = legacy_rows(conn)
    for table in ("messages", "blocks", "blobs"):
        assert without_session(rows[table], "head") == without_session(rows[table], "legacy")

    migrate.upgrade(db)
    assert SqlStorage(db).load("head") == loaded


NEW_ONLY: dict[str, Message] = {
    "is_error": Message.tool("c1", "failed", is_error=True),
    "extras": Message.user("x", extras={"name": "bob"}),
    "empty tool": Message.tool("c1"),
    "redacted": Message.assistant(RedactedThinkingBlock("opaque")),
    "opaque": Message.assistant(OpaqueBlock("openai", {"type": "web_search_call"})),
    "block extras": Message.user([TextBlock("x"), TextBlock("y", extras={"c": 1})]),
    "file id": Message.user(ImageBlock(file_id="file-1")),
    "detail": Message.user(ImageBlock(url="https://example.com/a.png", detail="low")),
    "no media type": Message.user(ImageBlock(url="https://example.com/a.png")),
    "document url": Message.user(DocumentBlock(url="https://example.com/a.pdf")),
    "arguments text": Message.assistant(ToolCall("c1", "f", arguments_text='{"a": 1}')),
    "interleaved": Message.assistant([ToolCall("c1", "f"), TextBlock("after")]),
}


@pytest.mark.parametrize("name", NEW_ONLY)
def test_downgrade_refuses_what_0001_cannot_hold_and_changes_nothing(
    db: sa.Engine, name: str
) -> None:
    storage = SqlStorage(db)
    storage.append("s", Message.user("fine", id="fine"), NEW_ONLY[name])
    with db.connect() as conn:
        before = snapshot(conn)
    with pytest.raises(SchemaError, match="cannot represent") as caught:
        migrate.downgrade(db, "0001")
    assert "Nothing was changed" in str(caught.value)
    assert migrate.current(db) == migrate.head()
    migrate.check(db)
    with db.connect() as conn:
        assert snapshot(conn) == before


def test_downgrade_names_each_kind_of_data_it_refuses(db: sa.Engine) -> None:
    SqlStorage(db).append("s", *NEW_ONLY.values())
    with pytest.raises(SchemaError) as caught:
        migrate.downgrade(db, "base")
    message = str(caught.value)
    for words in ("is_error", "message extras", "empty tool results", "opaque", "file id"):
        assert words in message
    assert migrate.current(db) == migrate.head()


def test_the_digests_of_0001_are_not_those_of_0002() -> None:
    # So the re-append checks above fail if the upgrade forgot to recompute a digest.
    for message in every_block_kind():
        row, _ = encode_0001(message, {})
        assert row["digest"] != content_digest(message)
