"""Revision 0003 (session records) on a populated database, on every backend
(docs/migrations.md).

Upgrading a database that 0002 filled gives every session a record: its message count,
its clock as ``updated_at``, no title. Downgrading drops the record columns and the index
and leaves every row 0002 knows as it was.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, migrate
from sqlmemory.storage.sql.column_types import Key, UTCDateTime
from tests.support.cases import IMPORTED_AT, chat, every_block_kind, tool_history

INDEX = "ix_sqlmemory_sessions_updated_at_session_id"
CLOCKS = sa.table(
    "sqlmemory_sessions",
    sa.column("session_id", Key()),
    sa.column("last_recorded_at", UTCDateTime()),
)
RECORD_COLUMNS = {"updated_at", "message_count", "title", "metadata_json"}


def rows_of_0002(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every sqlmemory table, in the columns 0002 has."""
    found = {}
    for name in ("sqlmemory_sessions", "sqlmemory_messages", "sqlmemory_blocks", "sqlmemory_blobs"):
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        columns = [c for c in table.columns if c.name not in RECORD_COLUMNS]
        rows = conn.execute(sa.select(*columns).order_by(*table.primary_key.columns)).all()
        found[name] = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]
    return found


def session_columns(db: sa.Engine) -> set[str]:
    return {c["name"] for c in sa.inspect(db).get_columns("sqlmemory_sessions")}


def session_indexes(db: sa.Engine) -> set[str | None]:
    return {i["name"] for i in sa.inspect(db).get_indexes("sqlmemory_sessions")}


def test_upgrading_a_populated_0002_database_gives_every_session_its_record(
    db: sa.Engine,
) -> None:
    histories = {
        "tools": tool_history(),
        "kinds": every_block_kind(),
        "long": chat(40),
        "imported": [Message.user("from 2001", id="i", recorded_at=IMPORTED_AT)],
    }
    storage = SqlStorage(db)
    for sid, history in histories.items():
        storage.append(sid, *history)
    storage.evict("long", 25)
    storage.update_session("tools", title="lost on the way down")

    migrate.downgrade(db, "0002")
    assert migrate.current(db) == "0002"
    assert not RECORD_COLUMNS & session_columns(db)
    assert INDEX not in session_indexes(db)
    with db.connect() as conn:
        at_0002 = rows_of_0002(conn)
        clocks = dict(conn.execute(sa.select(CLOCKS.c.session_id, CLOCKS.c.last_recorded_at)).all())

    migrate.upgrade(db, "0003")
    assert session_columns(db) >= RECORD_COLUMNS
    assert INDEX in session_indexes(db)
    with db.connect() as conn:
        assert rows_of_0002(conn) == at_0002
    migrate.upgrade(db)
    migrate.check(db)

    storage = SqlStorage(db)
    records = {i.session_id: i for i in storage.list_sessions().items}
    assert set(records) == set(histories)
    for sid, record in records.items():
        assert record.message_count == storage.count(sid)
        assert record.title is None and record.metadata == {}
        assert record.updated_at == clocks[sid]
    assert records["long"].message_count == 25

    # The records go on from there: every write keeps them.
    storage.append("long", *chat(2, "more"))
    assert storage.session_info("long").message_count == 27  # type: ignore[union-attr]
    assert storage.list_sessions(limit=1).items[0].session_id == "long"
    assert storage.prune(timedelta(0)) == 4


def test_0003_goes_down_and_up_on_an_empty_database(db: sa.Engine) -> None:
    migrate.downgrade(db, "0002")
    migrate.upgrade(db, "0003")
    assert migrate.current(db) == "0003"
    migrate.upgrade(db)
    migrate.check(db)
    storage = SqlStorage(db)
    storage.update_session("s", title="t")
    assert storage.session_info("s").title == "t"  # type: ignore[union-attr]
