"""The SQL storages: ``SqlStorage`` (sync) and ``AsyncSqlStorage`` (asyncio).

Where each part lives:

- :mod:`~sqlmemory.storage.sql.schema` and :mod:`~sqlmemory.storage.sql.column_types`:
  the tables, ORM models and portable column types (migrations follow them);
- every statement, written once as functions over a ``Connection``:
  :mod:`~sqlmemory.storage.sql.reads` (whole histories, building messages from rows) and
  :mod:`~sqlmemory.storage.sql.tail_reads` (windows); :mod:`~sqlmemory.storage.sql.writes`
  (appends, ``save``) and :mod:`~sqlmemory.storage.sql.deletes` (``evict``, ``pop``,
  ``clear``); :mod:`~sqlmemory.storage.sql.session_lock` (the session lock every write
  takes first, and the upkeep of the session's record); :mod:`~sqlmemory.storage.sql.compact`
  and :mod:`~sqlmemory.storage.sql.record_queries` (the session records' methods);
- :mod:`~sqlmemory.storage.sql.save_plan`: how ``save`` decides what to write (pure);
- :mod:`~sqlmemory.storage.sql.codec`: messages to rows and back;
- :mod:`~sqlmemory.storage.sql.engine`: engine set-up per dialect;
- :mod:`~sqlmemory.storage.sql.storage_async`: the front door, written once, and
  :mod:`~sqlmemory.storage.sql.storage`, its generated sync twin.

``AsyncSqlStorage`` is imported on first use: SQLAlchemy's asyncio support needs
greenlet, which only the ``async``, ``postgres`` and ``mysql`` extras install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlmemory.storage.sql.storage import SqlStorage

if TYPE_CHECKING:
    from sqlmemory.storage.sql.storage_async import AsyncSqlStorage

__all__ = ["AsyncSqlStorage", "SqlStorage"]


def __getattr__(name: str) -> Any:
    if name == "AsyncSqlStorage":
        from sqlmemory.storage.sql.storage_async import AsyncSqlStorage

        return AsyncSqlStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
