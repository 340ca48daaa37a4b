"""Revision 0008 (search) on a populated database, on every backend (docs/migrations.md).

Upgrading a database that 0007 holds computes the visible text of every stored message
from its rows (inline text, text block rows, PostgreSQL's base64 rows) exactly as the
codec computes it on a write, and builds the index over it: old messages are found at
once. A downgrade drops the column and the index and leaves every other row as it was;
upgrading again finds them again. On PostgreSQL the text-search configuration is chosen
by ``upgrade(..., search_config=...)``.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, TextBlock, migrate
from sqlmemory.storage.sql.search_index import search_config
from tests.support.cases import chat, every_block_kind, tool_history

TABLES = ("sqlmemory_sessions", "sqlmemory_messages", "sqlmemory_blocks", "sqlmemory_blobs")


def rows_of_0007(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every sqlmemory table, in the columns 0007 has."""
    found = {}
    for name in TABLES:
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        columns = [c for c in table.columns if not c.name.startswith("search_")]
        rows = conn.execute(sa.select(*columns).order_by(*table.primary_key.columns)).all()
        found[name] = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]
    return found


def search_texts(conn: sa.Connection) -> dict[tuple[str, int], str | None]:
    messages = sa.Table("sqlmemory_messages", sa.MetaData(), autoload_with=conn)
    rows = conn.execute(sa.select(messages.c.session_id, messages.c.seq, messages.c.search_text))
    return {(bytes(s).decode() if isinstance(s, bytes) else s, q): t for s, q, t in rows}


def message_columns(db: sa.Engine) -> set[str]:
    return {c["name"] for c in sa.inspect(db).get_columns("sqlmemory_messages")}


def fill(storage: SqlStorage) -> None:
    storage.owned_by("alice").append("kinds", *every_block_kind())
    storage.append("tools", *tool_history())
    storage.append("chat", *chat(30))
    storage.append(
        "odd",
        Message.user("nul\x00separated zebra", id="nul"),
        Message.user([TextBlock("first block"), TextBlock("second\x00block quokka")], id="nb"),
    )


def test_upgrade_from_0007_indexes_every_stored_message_as_a_write_would(db: sa.Engine) -> None:
    storage = SqlStorage(db)
    fill(storage)
    with db.connect() as conn:
        at_head, written = rows_of_0007(conn), search_texts(conn)
    assert sum(text is not None for text in written.values()) > 30

    migrate.downgrade(db, "0007")
    assert migrate.current(db) == "0007"
    assert not {"search_text", "search_vector"} & message_columns(db)
    with db.connect() as conn:
        assert rows_of_0007(conn) == at_head

    migrate.upgrade(db)
    migrate.check(db)
    with db.connect() as conn:
        assert rows_of_0007(conn) == at_head
        assert search_texts(conn) == written
    storage = SqlStorage(db)
    assert {h.message_id for h in storage.search("zebra").hits} == {"nul"}
    assert {h.message_id for h in storage.search("quokka").hits} == {"nb"}
    assert {h.message_id for h in storage.search('"result one"').hits} == {"tool-1"}
    assert {h.message_id for h in storage.search("imported answer").hits} == {"imported"}
    assert storage.search("terse").hits == []  # a system message
    assert len(storage.search("m1", limit=100).hits) == 11  # m1, m10..m19
    assert [h.session_id for h in storage.owned_by("alice").search("thanks").hits] == ["kinds"]

    storage.append("chat", Message.user("after the upgrade"))
    assert len(storage.search("upgrade").hits) == 1
    migrate.downgrade(db, "0007")
    migrate.upgrade(db)
    assert len(SqlStorage(db).search("upgrade").hits) == 1


def test_the_search_configuration_is_chosen_at_upgrade(db: sa.Engine) -> None:
    postgres = db.dialect.name == "postgresql"
    storage = SqlStorage(db)
    storage.append("s", Message.user("She runs every morning"))
    assert storage.search("running").hits == []
    migrate.downgrade(db, "0007")
    migrate.upgrade(db, search_config="english")  # PostgreSQL's alone: others ignore it
    hits = SqlStorage(db).search("running").hits
    assert len(hits) == (1 if postgres else 0)  # english stems both to "run"
    if postgres:
        with db.connect() as conn:
            assert search_config(conn) == "english"
        assert hits[0].snippet == "She runs every morning"
    migrate.downgrade(db, "0007")
    with pytest.raises(ValueError, match="configuration"):
        migrate.upgrade(db, search_config="english'; DROP TABLE x")
    migrate.upgrade(db)
    assert SqlStorage(db).search("running").hits == []
