"""Which tables are sqlmemory's, and the Alembic name filters built on that one rule.

A table is sqlmemory's when its name starts with ``sqlmemory_`` (the version table
``sqlmemory_alembic_version`` included). The rule is used both ways:

- :func:`include_name` / :func:`include_object` leave sqlmemory's tables out, for a host
  application's own Alembic environment (re-exported by :mod:`sqlmemory.migrate`);
- :func:`only_sqlmemory_name` / :func:`only_sqlmemory_object` keep only them, for
  sqlmemory's own environment (``migrations/env.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.runtime.environment import NameFilterParentNames, NameFilterType
    from sqlalchemy.schema import SchemaItem

__all__ = [
    "SEARCH_OBJECTS",
    "TABLE_PREFIX",
    "VERSION_TABLE",
    "include_name",
    "include_object",
    "is_search_object",
    "is_sqlmemory_table",
    "only_sqlmemory_name",
    "only_sqlmemory_object",
]

TABLE_PREFIX = "sqlmemory_"
"""Prefix of every table sqlmemory owns; migrations see no other table."""

VERSION_TABLE = "sqlmemory_alembic_version"
"""The table holding sqlmemory's schema revision; never the host's ``alembic_version``."""


def is_sqlmemory_table(name: str | None) -> bool:
    """Whether the table called ``name`` is sqlmemory's (its name starts with ``sqlmemory_``).

    Examples:
        >>> is_sqlmemory_table("sqlmemory_messages"), is_sqlmemory_table("users")
        (True, False)
    """
    return name is not None and name.startswith(TABLE_PREFIX)


SEARCH_OBJECTS = frozenset({"sqlmemory_search", "search_vector", "ix_sqlmemory_messages_search"})
"""The search index of revision 0008 (``storage/sql/search_index.py``): each backend's
own objects, outside the models, which the comparison of the migrations leaves out.
SQLite's FTS5 table ``sqlmemory_search`` has shadow tables named after it."""


def is_search_object(name: str | None) -> bool:
    """Whether ``name`` is a part of the full-text search index (:data:`SEARCH_OBJECTS`).

    Examples:
        >>> is_search_object("sqlmemory_search_data"), is_search_object("sqlmemory_blocks")
        (True, False)
    """
    if name is None:
        return False
    return name in SEARCH_OBJECTS or name.startswith("sqlmemory_search_")


def _owner_of_name(
    name: str | None, type_: NameFilterType, parent_names: NameFilterParentNames
) -> bool | None:
    """True: sqlmemory's; False: not; None: not about a table (a schema)."""
    if type_ == "schema":
        return None
    if type_ == "table":
        return is_sqlmemory_table(name)
    return is_sqlmemory_table(parent_names.get("table_name"))


def _owner_of_object(obj: SchemaItem, name: str | None, type_: NameFilterType) -> bool | None:
    if type_ == "table":
        return is_sqlmemory_table(name)
    table_name = getattr(getattr(obj, "table", None), "name", None)
    return None if table_name is None else is_sqlmemory_table(table_name)


def include_name(
    name: str | None, type_: NameFilterType, parent_names: NameFilterParentNames
) -> bool:
    """Alembic ``include_name`` hook of a host application: leave sqlmemory's tables out.

    Pass it to ``context.configure(include_name=...)`` in your own ``env.py``; then your
    ``alembic revision --autogenerate`` and ``alembic check`` neither reflect nor propose
    anything for the ``sqlmemory_*`` tables (nor their columns, indexes and constraints)
    and sqlmemory's version table. Every other name is included.

    Examples:
        >>> from sqlmemory.migrate import include_name
        >>> include_name("sqlmemory_messages", "table", {})
        False
        >>> include_name("users", "table", {})
        True
        >>> include_name("ix_sqlmemory_messages_seq", "index", {"table_name": "sqlmemory_messages"})
        False
    """
    return _owner_of_name(name, type_, parent_names) is not True


def include_object(
    obj: SchemaItem,
    name: str | None,
    type_: NameFilterType,
    reflected: bool,
    compare_to: SchemaItem | None,
) -> bool:
    """Alembic ``include_object`` hook of a host application: leave sqlmemory's tables out.

    Pass it to ``context.configure(include_object=...)`` beside :func:`include_name`: it
    also drops sqlmemory's tables when they come from a ``MetaData`` (a host whose models
    import sqlmemory's, for one), so autogenerate never creates, alters or drops them.

    Examples:
        >>> import sqlalchemy as sa
        >>> from sqlmemory.migrate import include_object
        >>> table = sa.Table("sqlmemory_sessions", sa.MetaData(), sa.Column("id", sa.Integer))
        >>> include_object(table, table.name, "table", False, None)
        False
        >>> include_object(table.c.id, "id", "column", False, None)
        False
        >>> users = sa.Table("users", sa.MetaData(), sa.Column("id", sa.Integer))
        >>> include_object(users, "users", "table", False, None)
        True
    """
    return _owner_of_object(obj, name, type_) is not True


def only_sqlmemory_name(
    name: str | None, type_: NameFilterType, parent_names: NameFilterParentNames
) -> bool:
    """The complement of :func:`include_name` for sqlmemory's own environment, without
    the objects of the search index (:func:`is_search_object`), which are not models.

    Examples:
        >>> only_sqlmemory_name("users", "table", {}), only_sqlmemory_name(None, "schema", {})
        (False, True)
        >>> only_sqlmemory_name("sqlmemory_search", "table", {})
        False
    """
    if type_ != "schema" and is_search_object(name):
        return False
    return _owner_of_name(name, type_, parent_names) is not False


def only_sqlmemory_object(
    obj: SchemaItem,
    name: str | None,
    type_: NameFilterType,
    reflected: bool,
    compare_to: SchemaItem | None,
) -> bool:
    """The complement of :func:`include_object` for sqlmemory's own environment.

    Examples:
        >>> import sqlalchemy as sa
        >>> users = sa.Table("users", sa.MetaData())
        >>> only_sqlmemory_object(users, "users", "table", True, None)
        False
    """
    return _owner_of_object(obj, name, type_) is not False
