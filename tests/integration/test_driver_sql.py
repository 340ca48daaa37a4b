"""SQLite reads run on the driver's cursor unless something watches the engine
(``sqlmemory/storage/sql/driver_sql.py``, ``docs/performance.md``).

The direct path is SQLite's alone (``reads.fetch_rows``), so these run on a SQLite file;
the storage contract tests run both paths on every backend (those that record statements
install a cursor listener, the others do not).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import FixedWindow, Message, SqlStorage, StorageError, ToolCall
from sqlmemory.migrate import upgrade
from sqlmemory.storage.sql.driver_sql import driver_rows, is_watched
from sqlmemory.storage.sql.engine import READY


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqlStorage]:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    upgrade(url)
    storage = SqlStorage.from_url(url)
    try:
        yield storage
    finally:
        storage.close()


def _traced(storage: SqlStorage) -> list[str]:
    """The SQL sqlite3 itself runs on the pool's connection, whoever sends it."""
    seen: list[str] = []
    with storage.engine.connect() as conn:
        dbapi = conn.connection.dbapi_connection
        assert dbapi is not None
        dbapi.set_trace_callback(seen.append)
    return seen


def test_an_unwatched_engine_reads_on_the_driver_cursor(
    storage: SqlStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage.append("s", *(Message.user(f"m{i}") for i in range(5)))
    sqlite_saw = _traced(storage)
    through_sqlalchemy: list[str] = []
    dialect = storage.engine.dialect
    real = dialect.do_execute

    def do_execute(cursor: Any, statement: str, *args: Any) -> None:
        through_sqlalchemy.append(statement)
        real(cursor, statement, *args)

    monkeypatch.setattr(dialect, "do_execute", do_execute)
    window = storage.load("s", FixedWindow(2))
    assert [m.text_content() for m in window] == ["m3", "m4"]
    assert any("FROM sqlmemory_messages" in sql for sql in sqlite_saw)
    assert not any("FROM sqlmemory_messages" in sql for sql in through_sqlalchemy)


def test_a_watched_engine_sees_every_statement(storage: SqlStorage) -> None:
    storage.append("s", *(Message.user(f"m{i}") for i in range(5)))
    seen: list[str] = []

    def watch(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    sa.event.listen(storage.engine, "before_cursor_execute", watch)
    try:
        window = storage.load("s", FixedWindow(2))
        history = storage.load("s")
    finally:
        sa.event.remove(storage.engine, "before_cursor_execute", watch)
    assert [m.text_content() for m in window] == ["m3", "m4"]
    assert len(history) == 5
    assert sum("FROM sqlmemory_messages" in sql for sql in seen) == 2


@pytest.mark.parametrize("watched", [False, True], ids=["direct", "watched"])
def test_a_driver_error_is_wrapped_as_sqlalchemy_wraps_it(
    storage: SqlStorage, watched: bool
) -> None:
    def watch(*args: Any) -> None:
        pass

    if watched:
        sa.event.listen(storage.engine, "before_cursor_execute", watch)
    try:
        with storage.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")  # the connection is set up
            assert is_watched(conn) is watched
            with pytest.raises(sa.exc.OperationalError, match="no such table"):
                driver_rows(conn, "SELECT * FROM nowhere WHERE x = ?", (1,))
    finally:
        if watched:
            sa.event.remove(storage.engine, "before_cursor_execute", watch)


def test_a_storage_error_not_a_driver_error_reaches_the_caller(storage: SqlStorage) -> None:
    storage.append("s", Message.user(["hello", "world"]))  # its second text: a block row
    with storage.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE sqlmemory_blocks")
    with pytest.raises(StorageError):
        storage.load("s", FixedWindow(2))


def test_a_new_connection_is_set_up_before_its_first_direct_read(storage: SqlStorage) -> None:
    storage.append("s", Message.user("hello"))
    storage.engine.dispose()  # every connection from here on is new
    assert [m.text_content() for m in storage.load("s", FixedWindow(2))] == ["hello"]
    raw = storage.engine.raw_connection()  # the pool's one connection, as the read left it
    try:
        assert raw.info.get(READY)
        assert raw.cursor().execute("PRAGMA busy_timeout").fetchone() == (30_000,)
        assert raw.cursor().execute("PRAGMA foreign_keys").fetchone() == (1,)
    finally:
        raw.close()


def test_writes_on_the_driver_cursor_store_what_sqlalchemy_stores(storage: SqlStorage) -> None:
    # The same messages appended unwatched (driver cursor) and watched (SQLAlchemy):
    # every stored column is the same, bind processing (times, flags) included.
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=5)))
    batch = [
        Message.user("hi", recorded_at=at, metadata={"k": [1, 2]}),
        Message.assistant(tool_calls=[ToolCall("c1", "f", {"a": 1})], recorded_at=at),
        Message.tool("c1", "failed", is_error=True, recorded_at=at),
    ]
    storage.append("direct", *batch)

    def watch(*args: Any) -> None:
        pass

    sa.event.listen(storage.engine, "before_cursor_execute", watch)
    try:
        storage.append("watched", *batch)  # ids are unique per session
    finally:
        sa.event.remove(storage.engine, "before_cursor_execute", watch)
    with storage.engine.connect() as conn:
        rows = {
            sid: [
                tuple(r)
                for r in conn.exec_driver_sql(
                    "SELECT seq, role, tool_call_id, text, n_blocks, call_ids, metadata_json, "
                    "is_error, recorded_at, digest, tokens FROM sqlmemory_messages "
                    "WHERE session_id = ? ORDER BY seq",
                    (sid,),
                )
            ]
            for sid in ("direct", "watched")
        }
        blocks = {
            sid: [
                tuple(r)
                for r in conn.exec_driver_sql(
                    "SELECT seq, position, kind, call_id, name, value_json FROM sqlmemory_blocks "
                    "WHERE session_id = ? ORDER BY seq, position",
                    (sid,),
                )
            ]
            for sid in ("direct", "watched")
        }
    assert rows["direct"] == rows["watched"]
    assert blocks["direct"] == blocks["watched"]
    assert rows["direct"][0][8].startswith("2026-01-01 22:04:05.678901")  # stored as UTC
    assert storage.load("direct")[0].recorded_at == at
