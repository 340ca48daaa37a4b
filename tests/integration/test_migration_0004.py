"""Revision 0004 (text columns) on a populated database, on every backend
(docs/migrations.md, docs/contract/persistence.md).

Down to 0003 and up again loses nothing: on PostgreSQL the text columns go back to
``bytea`` holding each string's UTF-8 bytes (NUL included) and come up as ``text``, rows
whose text holds NUL flagged and base64. Elsewhere only the flag columns come and go.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, migrate
from sqlmemory.storage.sql.base64_text import (
    BLOCK_TEXT,
    FLAG,
    MESSAGE_TEXT,
    SESSION_TEXT,
    decoded,
)
from sqlmemory.storage.sql.schema import blocks_table, messages_table, sessions_table
from sqlmemory.types import DocumentBlock, ImageBlock, TextBlock, ThinkingBlock, ToolCall
from tests.support.cases import chat, every_block_kind, timeless, tool_history

LONG_NUL = "line one\x00 " + "é✓😀 " * 60
"""Text with NUL that PostgreSQL's base64 breaks over several lines."""
FREE_TEXT = {
    "sqlmemory_sessions": SESSION_TEXT,
    "sqlmemory_messages": MESSAGE_TEXT,
    "sqlmemory_blocks": BLOCK_TEXT,
}


def nul_history() -> list[Message]:
    """NUL in every free-text column, and in JSON values, beside text without any."""
    return [
        Message.user(LONG_NUL, id="inline-nul", metadata={"k": "v\x00w"}),
        Message.user("no nul here, é✓😀", id="inline-plain"),
        Message.assistant(
            [ThinkingBlock("think\x00", signature="sig\x00"), TextBlock("a\x00b", extras={"e": 1})],
            tool_calls=[ToolCall("call-1", "name\x00", {"q": "\x00"})],
            id="blocks-nul",
        ),
        Message.tool("call-1", "result", id="tool"),
        Message.user(
            [
                ImageBlock(url="https://example.com/\x00.png", media_type="image/png"),
                DocumentBlock(file_id="file-1", title="title\x00", media_type="text/plain"),
            ],
            id="references-nul",
        ),
    ]


def stored_text(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """The strings of the free-text columns of every row, by table (key order): ``bytea``
    decoded, a flagged row's base64 too."""
    found = {}
    for name, columns in FREE_TEXT.items():
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        flag = [table.c[FLAG]] if FLAG in table.c else [sa.false().label(FLAG)]
        query = sa.select(*(table.c[c] for c in columns), *flag)
        rows = conn.execute(query.order_by(*table.primary_key.columns)).mappings()
        found[name] = [
            tuple(
                bytes(v).decode() if isinstance(v, (bytes, memoryview)) else v
                for v in (decoded(row, columns)[c] for c in columns)
            )
            for row in rows
        ]
    return found


def blob_index_where(db: sa.Engine) -> Any:
    (index,) = [
        i
        for i in sa.inspect(db).get_indexes("sqlmemory_blocks")
        if i["name"] == "ix_sqlmemory_blocks_session_id_blob_sha256"
    ]
    return index.get("dialect_options", {}).get("postgresql_where")


def column_types(db: sa.Engine, table: str) -> dict[str, str]:
    return {c["name"]: str(c["type"]) for c in sa.inspect(db).get_columns(table)}


def test_down_to_0003_and_up_again_keeps_every_string(db: sa.Engine) -> None:
    histories = {
        "nul": nul_history(),
        "kinds": every_block_kind(),
        "tools": tool_history(),
        "chat": chat(30),
    }
    storage = SqlStorage(db)
    for sid, history in histories.items():
        storage.append(sid, *history)
    storage.update_session("nul", title="title\x00", metadata={"m": "\x00"})
    storage.update_session("chat", title="plain title")
    with db.connect() as conn:
        at_head = stored_text(conn)

    migrate.downgrade(db, "0003")
    assert migrate.current(db) == "0003"
    assert FLAG not in column_types(db, "sqlmemory_messages")
    if db.dialect.name == "postgresql":
        assert column_types(db, "sqlmemory_messages")["text"] == "BYTEA"
        assert column_types(db, "sqlmemory_blocks")["value_json"] == "BYTEA"
        assert blob_index_where(db) is None
    with db.connect() as conn:
        assert stored_text(conn) == at_head

    migrate.upgrade(db)
    migrate.check(db)
    if db.dialect.name == "postgresql":
        assert column_types(db, "sqlmemory_messages")["text"] == "TEXT"
        assert column_types(db, "sqlmemory_sessions")["metadata_json"] == "TEXT"
        # Blocks without bytes are left out of the index that finds a blob's blocks.
        assert blob_index_where(db) == "(blob_sha256 IS NOT NULL)"
    storage = SqlStorage(db)
    for sid, history in histories.items():
        assert timeless(storage.load(sid)) == timeless(history)
    nul = storage.session_info("nul")
    assert nul is not None and nul.title == "title\x00" and nul.metadata == {"m": "\x00"}
    plain = storage.session_info("chat")
    assert plain is not None and plain.title == "plain title"


def flagged(conn: sa.Connection, table: sa.Table) -> set[Any]:
    key = table.c.message_id if table is messages_table else table.c.session_id
    return set(conn.scalars(sa.select(key).where(table.c[FLAG])))


def test_only_rows_whose_text_holds_nul_are_flagged_and_only_on_postgresql(
    db: sa.Engine,
) -> None:
    storage = SqlStorage(db)
    storage.append("s", *nul_history())
    storage.update_session("s", title="t\x00")
    storage.update_session("p", title="plain")
    postgres = db.dialect.name == "postgresql"

    def check() -> None:
        with db.connect() as conn:
            expected = {"inline-nul"} if postgres else set()
            assert flagged(conn, messages_table) == expected
            assert flagged(conn, sessions_table) == ({"s"} if postgres else set())
            kinds = conn.scalars(sa.select(blocks_table.c.kind).where(blocks_table.c[FLAG]))
            # Each block row of the two messages with blocks holds NUL in some column.
            expected_kinds = ["thinking", "text", "tool_call", "image", "document"]
            assert sorted(kinds) == (sorted(expected_kinds) if postgres else [])
            plain = conn.scalar(
                sa.select(messages_table.c.text).where(
                    messages_table.c.message_id == "inline-plain"
                )
            )
            # Text without NUL is stored as itself, for any SQL client to read.
            assert plain == "no nul here, é✓😀"

    check()
    migrate.downgrade(db, "0003")
    migrate.upgrade(db)
    check()  # the migration flags the same rows the writes do
    assert timeless(SqlStorage(db).load("s")) == timeless(nul_history())

    # A title without NUL clears the flag; metadata alone leaves title and flag alone.
    storage = SqlStorage(db)
    storage.update_session("s", metadata={"x": 1})
    assert storage.session_info("s").title == "t\x00"  # type: ignore[union-attr]
    storage.update_session("s", title="clean")
    with db.connect() as conn:
        assert flagged(conn, sessions_table) == set()
    assert storage.session_info("s").title == "clean"  # type: ignore[union-attr]
