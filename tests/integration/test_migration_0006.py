"""Revision 0006 (usage) on a populated database, on every backend (docs/migrations.md).

Upgrading a database that 0005 filled leaves every row as it was and gives every message
no usage (its canonical form, and so its stored digest, is what it was: appending it
again is no duplicate), with the index of the totals. Downgrading drops the columns and
the index and leaves every row 0005 knows as it was.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, Usage, migrate
from tests.support.cases import chat, every_block_kind, tool_history

INDEX = "ix_sqlmemory_messages_usage"
TABLES = ("sqlmemory_sessions", "sqlmemory_messages", "sqlmemory_blocks", "sqlmemory_blobs")


def rows_of_0005(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every sqlmemory table, in the columns 0005 has."""
    found = {}
    for name in TABLES:
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        columns = [
            c
            for c in table.columns
            if not c.name.startswith(("usage_", "search_"))
            and c.name not in ("parent_id", "forked_at")
        ]
        rows = conn.execute(sa.select(*columns).order_by(*table.primary_key.columns)).all()
        found[name] = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]
    return found


def message_columns(db: sa.Engine) -> set[str]:
    return {c["name"] for c in sa.inspect(db).get_columns("sqlmemory_messages")}


def message_indexes(db: sa.Engine) -> set[str | None]:
    return {i["name"] for i in sa.inspect(db).get_indexes("sqlmemory_messages")}


def test_down_to_0005_and_up_again_keeps_every_row_and_forgets_usage(db: sa.Engine) -> None:
    storage = SqlStorage(db)
    plain = [*every_block_kind(), *tool_history(), *chat(30)]
    storage.owned_by("alice").append("plain", *plain)
    storage.append("costly", Message.user("q"), Message.assistant("a", usage=Usage("m", 7, 3)))
    assert storage.usage().total.input_tokens == 7
    with db.connect() as conn:
        at_head = rows_of_0005(conn)

    migrate.downgrade(db, "0005")
    assert migrate.current(db) == "0005"
    assert not {c for c in message_columns(db) if c.startswith("usage_")}
    assert INDEX not in message_indexes(db)
    with db.connect() as conn:
        assert rows_of_0005(conn) == at_head

    migrate.upgrade(db)
    migrate.check(db)
    assert INDEX in message_indexes(db)
    with db.connect() as conn:
        assert rows_of_0005(conn) == at_head

    storage = SqlStorage(db)
    assert all(m.usage is None for m in storage.load("costly"))
    assert storage.usage().messages == 0
    loaded = storage.owned_by("alice").load("plain")
    assert [m.usage for m in loaded] == [None] * len(plain)
    # The stored digests are those of the messages as they are now: no duplicate.
    storage.owned_by("alice").append("plain", *loaded)
    assert storage.count("plain") == len(plain)
    storage.append("costly", Message.assistant("b", usage=Usage("m", 5)))
    assert storage.usage(owner="alice").messages == 0
    assert storage.usage("costly").total == Usage(None, 5)
