"""Revision 0005 (owners) on a populated database, on every backend (docs/migrations.md).

Upgrading a database that 0004 filled leaves every row as it was and gives every session
no owner, with the index of one owner's pages; owned views work at once. Downgrading
drops the column and the index and leaves every row 0004 knows as it was.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import Message, SessionOwnerError, SqlStorage, migrate
from tests.support.cases import chat, every_block_kind, tool_history

INDEX = "ix_sqlmemory_sessions_owner_updated_at_session_id"
TABLES = ("sqlmemory_sessions", "sqlmemory_messages", "sqlmemory_blocks", "sqlmemory_blobs")


def rows_of_0004(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every sqlmemory table, in the columns 0004 has."""
    found = {}
    for name in TABLES:
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        # Columns of later revisions too: 0004 has none of them.
        columns = [
            c
            for c in table.columns
            if c.name not in ("owner", "parent_id", "forked_at")
            and not c.name.startswith(("usage_", "search_"))
        ]
        rows = conn.execute(sa.select(*columns).order_by(*table.primary_key.columns)).all()
        found[name] = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]
    return found


def session_columns(db: sa.Engine) -> set[str]:
    return {c["name"] for c in sa.inspect(db).get_columns("sqlmemory_sessions")}


def session_indexes(db: sa.Engine) -> set[str | None]:
    return {i["name"] for i in sa.inspect(db).get_indexes("sqlmemory_sessions")}


def test_down_to_0004_and_up_again_keeps_every_row_and_forgets_owners(db: sa.Engine) -> None:
    storage = SqlStorage(db)
    storage.owned_by("alice").append("kinds", *every_block_kind())
    storage.owned_by("bob").append("tools", *tool_history())
    storage.append("chat", *chat(30))
    storage.update_session("chat", title="a title", metadata={"k": [1, 2]})
    with db.connect() as conn:
        at_head = rows_of_0004(conn)

    migrate.downgrade(db, "0004")
    assert migrate.current(db) == "0004"
    assert "owner" not in session_columns(db)
    assert INDEX not in session_indexes(db)
    with db.connect() as conn:
        assert rows_of_0004(conn) == at_head

    migrate.upgrade(db)
    migrate.check(db)
    assert "owner" in session_columns(db)
    assert INDEX in session_indexes(db)
    with db.connect() as conn:
        assert rows_of_0004(conn) == at_head

    storage = SqlStorage(db)
    assert {i.owner for i in storage.list_sessions().items} == {None}
    alice = storage.owned_by("alice")
    assert alice.sessions() == [] and alice.load("kinds") == []
    with pytest.raises(SessionOwnerError):
        alice.append("kinds", Message.user("mine?"))
    storage.update_session("kinds", owner="alice")
    assert alice.load("kinds") == storage.load("kinds")
    assert len(alice.load("kinds")) == len(every_block_kind())
