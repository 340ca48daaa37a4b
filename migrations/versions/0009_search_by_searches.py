"""SQLite's full-text index kept by the searches: a write no longer indexes its rows.

FTS5 writes a segment of its index at the end of every transaction that adds to it,
which made the ``INSERT`` trigger of ``0008`` the largest part of an append on SQLite.
From this revision the first search that reads the index indexes the rows written since
the last one, in bulk, inside its own write transaction: what a write commits is still
found at once. ``sqlmemory_search_state`` records how far the index goes; the ``DELETE``
and ``UPDATE`` triggers keep it and the index true (``storage/sql/search_lag.py``).
Every row stored before this revision is indexed already, by ``0008``'s triggers.

PostgreSQL and MySQL/MariaDB index a row in the write itself, at a small cost: nothing
changes there.

Downgrade indexes the rows that wait, drops the table and brings back ``0008``'s
triggers.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05 00:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sqlmemory.storage.sql.search_lag import DEFER, UNDEFER

# revision identifiers, used by Alembic.
revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _run(statements: Sequence[str]) -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        for statement in statements:
            conn.execute(sa.text(statement))


def upgrade() -> None:
    """On SQLite, the state table and the triggers that keep the index by searches."""
    _run(DEFER)


def downgrade() -> None:
    """On SQLite, catch up, then ``0008``'s triggers again."""
    _run(UNDEFER)
