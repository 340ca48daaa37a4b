"""Every SQL statement sqlmemory runs, written once as plain functions over a Connection.

The sync storage calls these inside ``engine.begin()``; the async storage calls the very
same functions through ``AsyncConnection.run_sync``. None of them commits: each public
storage method is one transaction around one call, so the caller decides its bounds.
Writes live in ``_sqlwrite``, reads in ``_sqlread``.
"""

from sqlmemory.storage._sqlread import count, read_all, read_tail, session_ids
from sqlmemory.storage._sqlwrite import append_fresh, append_idempotent, clear, evict, save

__all__ = [
    "append_fresh",
    "append_idempotent",
    "clear",
    "count",
    "evict",
    "read_all",
    "read_tail",
    "save",
    "session_ids",
]
