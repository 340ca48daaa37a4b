"""Revision 0007 (lineage) on a populated database, on every backend (docs/migrations.md).

Upgrading a database that 0005 filled leaves every row as it was, gives every session no
parent and adds the index ``branches`` reads; forks work at once. A database holding
forks keeps them on a downgrade, as plain sessions, with every other row as it was; and
the lineage of forks made at head is kept by an upgrade that runs again over them (the
revision adds nullable columns, rewriting no row).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from sqlmemory import SqlStorage, migrate
from tests.support.cases import chat, every_block_kind, tool_history

INDEX = "ix_sqlmemory_sessions_parent_id_created_at_session_id"
TABLES = ("sqlmemory_sessions", "sqlmemory_messages", "sqlmemory_blocks", "sqlmemory_blobs")
LINEAGE = ("parent_id", "forked_at")


def rows_of_0005(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every sqlmemory table, in the columns 0005 has."""
    found = {}
    for name in TABLES:
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        columns = [
            c for c in table.columns if c.name not in LINEAGE and not c.name.startswith("search_")
        ]
        rows = conn.execute(sa.select(*columns).order_by(*table.primary_key.columns)).all()
        found[name] = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]
    return found


def session_columns(db: sa.Engine) -> set[str]:
    return {c["name"] for c in sa.inspect(db).get_columns("sqlmemory_sessions")}


def session_indexes(db: sa.Engine) -> set[str | None]:
    return {i["name"] for i in sa.inspect(db).get_indexes("sqlmemory_sessions")}


def test_down_to_0006_keeps_the_forks_as_plain_sessions_and_up_again_forks(
    db: sa.Engine,
) -> None:
    storage = SqlStorage(db)
    storage.owned_by("alice").append("kinds", *every_block_kind())
    storage.append("tools", *tool_history())
    storage.append("chat", *chat(30))
    storage.update_session("chat", title="a title", metadata={"k": [1, 2]})
    storage.fork("chat", "chat-fork", at=storage.load("chat")[9].id)
    storage.owned_by("alice").fork("kinds", "kinds-fork")
    with db.connect() as conn:
        at_head = rows_of_0005(conn)

    migrate.downgrade(db, "0006")
    assert migrate.current(db) == "0006"
    assert not set(LINEAGE) & session_columns(db)
    assert INDEX not in session_indexes(db)
    with db.connect() as conn:
        assert rows_of_0005(conn) == at_head

    migrate.upgrade(db)
    migrate.check(db)
    assert set(LINEAGE) <= session_columns(db)
    assert INDEX in session_indexes(db)
    with db.connect() as conn:
        assert rows_of_0005(conn) == at_head

    storage = SqlStorage(db)
    assert {(i.parent_id, i.forked_at) for i in storage.list_sessions().items} == {(None, None)}
    assert storage.branches("chat") == []
    assert storage.load("chat-fork") == storage.load("chat")[:10]
    info = storage.fork("chat-fork", "again", at=storage.load("chat")[4].id)
    assert (info.parent_id, info.message_count, info.title) == ("chat-fork", 5, "a title")
    assert [b.session_id for b in storage.branches("chat-fork")] == ["again"]


def test_forks_work_right_after_an_upgrade_from_0006(db: sa.Engine) -> None:
    migrate.downgrade(db, "0006")
    with db.begin() as conn:
        sessions = sa.Table("sqlmemory_sessions", sa.MetaData(), autoload_with=conn)
        assert not set(LINEAGE) & {c.name for c in sessions.columns}
    migrate.upgrade(db)
    storage = SqlStorage(db)
    storage.append("chat", *chat(4))
    info = storage.fork("chat", "fork")
    assert (info.parent_id, info.forked_at, info.message_count) == ("chat", None, 4)
