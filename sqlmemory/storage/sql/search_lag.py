"""SQLite's full-text index, brought up to date by the search that needs it, not by each write.

FTS5 writes a segment of its index at the end of every transaction that adds to it: a
commit of one message row cost about 200 us with the index kept by an ``INSERT``
trigger against 100 without, and a batch of 100 rows 1.5 ms against 0.3 (``docs/
performance.md``). Since revision ``0009`` the messages' rows are indexed in bulk
instead, by the first search that reads the index after they were written, inside that
search's write transaction (``BEGIN IMMEDIATE``), so what a write commits is still found
at once:

- ``sqlmemory_search_state`` holds one row, ``indexed_upto``: the message rows whose
  ``rowid`` is at most it are in the index, with their current ``search_text``; the rows
  above it are not;
- :data:`CATCH_UP` indexes the rows above it and moves it to the largest ``rowid``;
- the ``DELETE`` trigger removes a row from the index only when it is in it, and lowers
  ``indexed_upto`` to the largest ``rowid`` left: SQLite gives a new row the largest
  ``rowid`` plus one, so a ``rowid`` freed at the top is used again, and the row that
  takes it must count as not indexed;
- the ``UPDATE`` trigger re-indexes a changed ``search_text`` of an indexed row.

A search reads the state in its own snapshot (:func:`index_is_behind`): when rows are
waiting it raises :class:`IndexBehind` before reading anything else, and the storage runs
it again as a write that catches up first (:func:`catch_up`).
"""

from __future__ import annotations

from sqlalchemy import Connection, text

__all__ = [
    "DEFER",
    "STATE_TABLE",
    "UNDEFER",
    "IndexBehind",
    "catch_up",
    "index_is_behind",
]

STATE_TABLE = "sqlmemory_search_state"
"""The one-row table of ``indexed_upto`` (a search object: its name starts with
``sqlmemory_search_``, so the comparison of the migrations leaves it out)."""

_INDEX_OLD = (
    "INSERT INTO sqlmemory_search(sqlmemory_search, rowid, search_text) "
    "VALUES ('delete', old.rowid, old.search_text); "
)
_INDEX_NEW = (
    "INSERT INTO sqlmemory_search(rowid, search_text) VALUES (new.rowid, new.search_text); "
)

DEFER = (
    "CREATE TABLE sqlmemory_search_state (indexed_upto INTEGER NOT NULL)",
    "INSERT INTO sqlmemory_search_state (indexed_upto) "
    "SELECT coalesce(max(rowid), 0) FROM sqlmemory_messages",
    "DROP TRIGGER sqlmemory_search_insert",
    "DROP TRIGGER sqlmemory_search_delete",
    "DROP TRIGGER sqlmemory_search_update",
    "CREATE TRIGGER sqlmemory_search_delete AFTER DELETE ON sqlmemory_messages BEGIN "
    "INSERT INTO sqlmemory_search(sqlmemory_search, rowid, search_text) "
    "SELECT 'delete', old.rowid, old.search_text FROM sqlmemory_search_state "
    "WHERE old.rowid <= indexed_upto; "
    "UPDATE sqlmemory_search_state "
    "SET indexed_upto = (SELECT coalesce(max(rowid), 0) FROM sqlmemory_messages) "
    "WHERE indexed_upto > (SELECT coalesce(max(rowid), 0) FROM sqlmemory_messages); END",
    "CREATE TRIGGER sqlmemory_search_update AFTER UPDATE OF search_text "
    "ON sqlmemory_messages "
    "WHEN old.rowid <= (SELECT indexed_upto FROM sqlmemory_search_state) BEGIN "
    "INSERT INTO sqlmemory_search(sqlmemory_search, rowid, search_text) "
    "VALUES ('delete', old.rowid, old.search_text); "
    "INSERT INTO sqlmemory_search(rowid, search_text) VALUES (new.rowid, new.search_text); "
    "END",
)
"""Revision ``0009`` on SQLite: from the triggers of ``0008``, which index every row as it
is written (so every row is indexed), to the index kept by the searches."""

CATCH_UP = (
    text(
        "INSERT INTO sqlmemory_search(rowid, search_text) "
        "SELECT m.rowid, m.search_text FROM sqlmemory_messages AS m "
        "WHERE m.rowid > (SELECT indexed_upto FROM sqlmemory_search_state) ORDER BY m.rowid"
    ),
    text(
        "UPDATE sqlmemory_search_state "
        "SET indexed_upto = (SELECT coalesce(max(rowid), 0) FROM sqlmemory_messages)"
    ),
)
"""Index the rows written since the last search that read the index."""

UNDEFER = (
    *(str(statement) for statement in CATCH_UP),
    "DROP TRIGGER sqlmemory_search_delete",
    "DROP TRIGGER sqlmemory_search_update",
    "DROP TABLE sqlmemory_search_state",
    "CREATE TRIGGER sqlmemory_search_insert AFTER INSERT ON sqlmemory_messages BEGIN "
    + _INDEX_NEW
    + "END",
    "CREATE TRIGGER sqlmemory_search_delete AFTER DELETE ON sqlmemory_messages BEGIN "
    + _INDEX_OLD
    + "END",
    "CREATE TRIGGER sqlmemory_search_update AFTER UPDATE OF search_text "
    "ON sqlmemory_messages BEGIN " + _INDEX_OLD + _INDEX_NEW + "END",
)
"""The downgrade of ``0009``: catch up, then the triggers of ``0008`` again."""

_BEHIND = text(
    "SELECT indexed_upto < (SELECT coalesce(max(rowid), 0) FROM sqlmemory_messages) "
    "FROM sqlmemory_search_state"
)


class IndexBehind(Exception):
    """Rows wait to be indexed: run the search again in a write transaction."""


def index_is_behind(conn: Connection) -> bool:
    """Whether message rows written since the last catch-up wait for the index."""
    return bool(conn.execute(_BEHIND).scalar())


def catch_up(conn: Connection) -> None:
    """Index every message row that is not yet (in a write transaction)."""
    for statement in CATCH_UP:
        conn.execute(statement)
