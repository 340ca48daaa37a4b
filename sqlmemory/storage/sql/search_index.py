"""The full-text index of each backend over ``sqlmemory_messages.search_text``.

The visible text of a message is computed in Python when its row is written (the codec
puts it in the row), so the index is kept by the row's own ``INSERT`` and ``DELETE``, in
the write's transaction (on SQLite, the ``INSERT``'s part by the next search that reads
the index), and every write that deletes messages removes them from it:

- PostgreSQL: a stored generated ``tsvector`` column, ``search_vector``, computed with the
  text-search configuration chosen when the index is created (``simple`` by default;
  it is kept as the column's comment, which :func:`search_config` reads), and a GIN
  index on it;
- SQLite: the FTS5 table ``sqlmemory_search`` (tokenizer ``unicode61 remove_diacritics
  2``) over the messages table as its external content, its rowid the message row's
  rowid, kept by three triggers (since revision ``0009`` by the searches instead:
  ``search_lag.py``);
- MySQL/MariaDB: an InnoDB ``FULLTEXT`` index on ``search_text`` (whose collation folds
  case and accents).

None of these objects is in the models of ``schema.py``: revision ``0008`` creates them
with :func:`create_search_index`, and the migrations' comparison leaves them out
(``sqlmemory/_tables.py``).
"""

from __future__ import annotations

import re

from sqlalchemy import Connection, text

__all__ = [
    "DEFAULT_SEARCH_CONFIG",
    "FTS_TABLE",
    "SEARCH_INDEX",
    "SEARCH_VECTOR",
    "check_search_config",
    "create_search_index",
    "drop_search_index",
    "search_config",
]

DEFAULT_SEARCH_CONFIG = "simple"
"""PostgreSQL's text-search configuration by default: no stemming and no stop words, so
every language is searched alike (``docs/search.md``)."""
SEARCH_VECTOR = "search_vector"
"""PostgreSQL's generated ``tsvector`` column."""
SEARCH_INDEX = "ix_sqlmemory_messages_search"
"""The GIN index (PostgreSQL) or the ``FULLTEXT`` index (MySQL/MariaDB)."""
FTS_TABLE = "sqlmemory_search"
"""SQLite's FTS5 table (and the prefix of its shadow tables)."""

_CONFIG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?")

_SQLITE_CREATE = (
    "CREATE VIRTUAL TABLE sqlmemory_search USING fts5(search_text, "
    "content='sqlmemory_messages', content_rowid='rowid', "
    "tokenize='unicode61 remove_diacritics 2')",
    # A NULL text is indexed as no word: every message row has its entry, so the
    # 'delete' of the triggers always finds what the insert put in.
    "CREATE TRIGGER sqlmemory_search_insert AFTER INSERT ON sqlmemory_messages BEGIN "
    "INSERT INTO sqlmemory_search(rowid, search_text) VALUES (new.rowid, new.search_text); "
    "END",
    "CREATE TRIGGER sqlmemory_search_delete AFTER DELETE ON sqlmemory_messages BEGIN "
    "INSERT INTO sqlmemory_search(sqlmemory_search, rowid, search_text) "
    "VALUES ('delete', old.rowid, old.search_text); END",
    "CREATE TRIGGER sqlmemory_search_update AFTER UPDATE OF search_text "
    "ON sqlmemory_messages BEGIN "
    "INSERT INTO sqlmemory_search(sqlmemory_search, rowid, search_text) "
    "VALUES ('delete', old.rowid, old.search_text); "
    "INSERT INTO sqlmemory_search(rowid, search_text) VALUES (new.rowid, new.search_text); "
    "END",
    "INSERT INTO sqlmemory_search(sqlmemory_search) VALUES ('rebuild')",
)
_SQLITE_DROP = (
    "DROP TABLE IF EXISTS sqlmemory_search_state",  # revision 0009 (search_lag.py)
    "DROP TRIGGER IF EXISTS sqlmemory_search_update",
    "DROP TRIGGER IF EXISTS sqlmemory_search_delete",
    "DROP TRIGGER IF EXISTS sqlmemory_search_insert",
    "DROP TABLE IF EXISTS sqlmemory_search",
)
_POSTGRES_DROP = (
    f"DROP INDEX IF EXISTS {SEARCH_INDEX}",
    f"ALTER TABLE sqlmemory_messages DROP COLUMN IF EXISTS {SEARCH_VECTOR}",
)
_MYSQL_CREATE = (f"CREATE FULLTEXT INDEX {SEARCH_INDEX} ON sqlmemory_messages (search_text)",)
_MYSQL_DROP = (f"DROP INDEX {SEARCH_INDEX} ON sqlmemory_messages",)


def check_search_config(config: object) -> str:
    """``config`` if it can name a PostgreSQL text-search configuration, else raise.

    Raises:
        TypeError: it is not a ``str``.
        ValueError: it is not an identifier (optionally schema-qualified).

    Examples:
        >>> check_search_config("english")
        'english'
        >>> check_search_config("english'; DROP TABLE x")
        Traceback (most recent call last):
        ...
        ValueError: not a text-search configuration name: "english'; DROP TABLE x"
    """
    if not isinstance(config, str):
        raise TypeError(f"search_config must be a str, not {type(config).__name__}")
    if not _CONFIG_NAME.fullmatch(config):
        raise ValueError(f"not a text-search configuration name: {config!r}")
    return config


def _postgres_create(config: str) -> tuple[str, ...]:
    # A generated column's expression cannot take a parameter: the name is checked by
    # check_search_config and cast to regconfig, which fails for an unknown one.
    return (
        f"ALTER TABLE sqlmemory_messages ADD COLUMN {SEARCH_VECTOR} tsvector "
        f"GENERATED ALWAYS AS (to_tsvector('{config}'::regconfig, search_text)) STORED",
        f"CREATE INDEX {SEARCH_INDEX} ON sqlmemory_messages USING gin ({SEARCH_VECTOR})",
        f"COMMENT ON COLUMN sqlmemory_messages.{SEARCH_VECTOR} IS '{config}'",
    )


def create_search_index(conn: Connection, config: str = DEFAULT_SEARCH_CONFIG) -> None:
    """Create the backend's index over the ``search_text`` already stored.

    ``config`` is PostgreSQL's text-search configuration; the other backends ignore it.
    """
    dialect = conn.dialect.name
    statements: tuple[str, ...]
    if dialect == "postgresql":
        statements = _postgres_create(check_search_config(config))
    elif dialect == "sqlite":
        statements = _SQLITE_CREATE
    else:
        statements = _MYSQL_CREATE
    for statement in statements:
        conn.execute(text(statement))


def drop_search_index(conn: Connection) -> None:
    """Drop what :func:`create_search_index` created."""
    dialect = conn.dialect.name
    statements: tuple[str, ...]
    if dialect == "postgresql":
        statements = _POSTGRES_DROP
    elif dialect == "sqlite":
        statements = _SQLITE_DROP
    else:
        statements = _MYSQL_DROP
    for statement in statements:
        conn.execute(text(statement))


SEARCH_CONFIG_QUERY = text(
    "SELECT col_description(attrelid, attnum) FROM pg_attribute "
    "WHERE attrelid = to_regclass('sqlmemory_messages') AND attname = :column"
)
"""The configuration PostgreSQL's ``search_vector`` was created with (its comment)."""


def search_config(conn: Connection) -> str:
    """The text-search configuration of PostgreSQL's index, as :func:`create_search_index`
    recorded it (``simple`` when the comment is missing)."""
    found = conn.execute(SEARCH_CONFIG_QUERY, {"column": SEARCH_VECTOR}).scalar()
    return found if isinstance(found, str) and found else DEFAULT_SEARCH_CONFIG
