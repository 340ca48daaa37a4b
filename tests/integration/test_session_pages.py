"""Pages of ``list_sessions`` on every backend: keyset order with ties, and a cost that
does not grow with depth (docs/contract/storage.md, session records; docs/performance.md).

The records are inserted with plain SQL, many sharing one ``updated_at``, so that ties
are certain. The cost is read from the database itself: PostgreSQL's ``EXPLAIN ANALYZE``
row counts, MySQL/MariaDB's handler counters, SQLite's query plan.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import SqlStorage
from sqlmemory.storage.sql.schema import sessions_table

SESSIONS = 3000
TIES = 7
"""Sessions sharing each ``updated_at``."""
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def fill(engine: sa.Engine, n: int = SESSIONS, owner: Callable[[int], str] | None = None) -> None:
    """``n`` records ``s00000``..., ``TIES`` to an ``updated_at``; session ``i`` is
    ``owner(i)``'s when given."""
    rows = [
        {
            "session_id": f"s{i:05d}",
            "next_seq": 1,
            "last_recorded_at": START,
            "created_at": START,
            "updated_at": START + timedelta(seconds=i // TIES),
            "message_count": 0,
            "owner": None if owner is None else owner(i),
        }
        for i in range(n)
    ]
    with engine.begin() as conn:
        conn.execute(sa.insert(sessions_table), rows)
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql("ANALYZE sqlmemory_sessions")
        elif engine.dialect.name in ("mysql", "mariadb"):
            conn.exec_driver_sql("ANALYZE TABLE sqlmemory_sessions")


def test_a_walk_through_tied_pages_meets_every_session_once_in_order(engine: sa.Engine) -> None:
    fill(engine, 200)
    storage = SqlStorage(engine)
    seen: list[tuple[datetime, str]] = []
    cursor = None
    while True:
        page = storage.list_sessions(limit=TIES - 2, cursor=cursor)
        seen += [(i.updated_at, i.session_id) for i in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(seen) == 200 == len(set(seen))
    assert seen == sorted(seen, reverse=True)
    prefixed = storage.list_sessions("s001", limit=3)
    assert [i.session_id for i in prefixed.items] == ["s00199", "s00198", "s00197"]


def captured_page(engine: sa.Engine, storage: SqlStorage, cursor: str, limit: int) -> Any:
    """The statement and parameters ``list_sessions`` sends for the page after ``cursor``
    (``storage`` may be an owned view)."""
    sent: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor_: Any, statement: str, parameters: Any, *args: Any) -> None:
        if "FROM sqlmemory_sessions" in statement and "ORDER BY" in statement:
            sent.append((statement, parameters))

    sa.event.listen(engine, "before_cursor_execute", capture)
    try:
        page = storage.list_sessions(limit=limit, cursor=cursor)
    finally:
        sa.event.remove(engine, "before_cursor_execute", capture)
    assert len(page.items) == limit
    assert len(sent) == 1
    return sent[0]


def rows_examined(conn: sa.Connection, statement: str, parameters: Any) -> int:
    """How many rows of the sessions table the database read to answer the statement."""
    dialect = conn.dialect.name
    if dialect == "postgresql":
        plan = conn.exec_driver_sql(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters
        ).scalar()
        plan = plan if isinstance(plan, list) else json.loads(plan)
        scans = [
            n for n in _nodes(plan[0]["Plan"]) if n.get("Relation Name") == "sqlmemory_sessions"
        ]
        assert [n["Node Type"] for n in scans] in (["Index Scan"], ["Index Only Scan"])
        return sum(n["Actual Rows"] + n.get("Rows Removed by Filter", 0) for n in scans)
    # MySQL/MariaDB: the handler calls the statement makes, against those of a no-op.
    before = _handler_reads(conn)
    conn.exec_driver_sql(statement, parameters).all()
    during = _handler_reads(conn) - before
    before = _handler_reads(conn)
    baseline = _handler_reads(conn) - before
    return during - baseline


def _handler_reads(conn: sa.Connection) -> int:
    rows = conn.exec_driver_sql("SHOW SESSION STATUS LIKE 'Handler_read%%'").all()
    return sum(int(value) for name, value in rows if name != "Handler_read_rnd_deleted")


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    found = [node]
    for child in node.get("Plans", []):
        found += _nodes(child)
    return found


@pytest.mark.parametrize("limit", [10, 50])
def test_a_deep_page_reads_only_its_rows(engine: sa.Engine, limit: int) -> None:
    fill(engine)
    storage = SqlStorage(engine)
    deep = storage.list_sessions(limit=SESSIONS - 2 * limit).next_cursor
    first = storage.list_sessions(limit=1).next_cursor
    assert deep is not None and first is not None
    for cursor in (first, deep):
        statement, parameters = captured_page(engine, storage, cursor, limit)
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                plan = " | ".join(
                    row[-1]
                    for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
                )
                assert "USING INDEX ix_sqlmemory_sessions_updated_at_session_id" in plan, plan
                assert "((updated_at,session_id)<(?,?))" in plan, plan
                assert "TEMP B-TREE" not in plan, plan
            else:
                # limit + 1 rows (the one after the page says whether there is more),
                # plus, on MySQL, the index dive that positions the scan.
                assert rows_examined(conn, statement, parameters) <= limit + 3


def scan_buffers(conn: sa.Connection, statement: str, parameters: Any) -> int:
    """PostgreSQL: the index and heap pages the scan of the sessions table touched."""
    explain = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement
    plan = conn.exec_driver_sql(explain, parameters).scalar()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    (scan,) = [n for n in _nodes(plan[0]["Plan"]) if n.get("Relation Name") == "sqlmemory_sessions"]
    assert scan["Index Name"] == "ix_sqlmemory_sessions_owner_updated_at_session_id", scan
    return int(scan["Shared Hit Blocks"] + scan["Shared Read Blocks"])


@pytest.mark.parametrize("limit", [10, 50])
def test_a_deep_page_of_one_owner_reads_only_its_rows(engine: sa.Engine, limit: int) -> None:
    # Every third session is o0's, scattered among the others': its pages are a range of
    # the owner index, which the scan must enter at the cursor, not at the owner's newest
    # session, and not a filter of the (updated_at, session_id) index.
    fill(engine, 3 * SESSIONS, owner=lambda i: f"o{i % 3}")
    view = SqlStorage(engine).owned_by("o0")
    deep = view.list_sessions(limit=SESSIONS - 2 * limit).next_cursor
    first = view.list_sessions(limit=1).next_cursor
    assert deep is not None and first is not None
    pages_read = []
    for cursor in (first, deep):
        page = view.list_sessions(limit=limit, cursor=cursor)
        assert {info.owner for info in page.items} == {"o0"}
        statement, parameters = captured_page(engine, view, cursor, limit)
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                plan = " | ".join(
                    row[-1]
                    for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
                )
                index = "USING INDEX ix_sqlmemory_sessions_owner_updated_at_session_id"
                assert f"{index} (owner=? AND (updated_at,session_id)<(?,?))" in plan, plan
                assert "TEMP B-TREE" not in plan, plan
                continue
            assert rows_examined(conn, statement, parameters) <= limit + 3
            if engine.dialect.name == "postgresql":
                # Entries the index condition rejects are not rows: count pages instead.
                pages_read.append(scan_buffers(conn, statement, parameters))
    if pages_read:
        # 2,900 of o0's index entries lie between its newest session and the deep page.
        assert pages_read[1] <= pages_read[0] + 2, pages_read
