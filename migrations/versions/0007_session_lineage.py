"""Lineage of sessions: ``parent_id`` and ``forked_at`` on sqlmemory_sessions, and the
index ``branches`` reads.

``storage.fork`` records on the new session the session it was forked from
(``parent_id``) and the message it ends at (``forked_at``, NULL for a whole copy); both
are plain ids, with no foreign key, so a fork keeps its lineage when its parent is
deleted. The index on ``(parent_id, created_at, session_id)`` makes
``branches(session_id)``, the forks of one session oldest first, an ordered range scan.
Every stored session starts with no parent.

Downgrade drops the index and the columns: the forks stay, as plain sessions.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-11 08:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sqlmemory.storage.sql import column_types

# revision identifiers, used by Alembic.
revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "sqlmemory_sessions"
INDEX = "ix_sqlmemory_sessions_parent_id_created_at_session_id"


def upgrade() -> None:
    """Add the two nullable columns (no row rewritten) and the index of ``branches``."""
    op.add_column(TABLE, sa.Column("parent_id", column_types.Key(), nullable=True))
    op.add_column(TABLE, sa.Column("forked_at", column_types.Key(), nullable=True))
    op.create_index(INDEX, TABLE, ["parent_id", "created_at", "session_id"], unique=False)


def downgrade() -> None:
    """Drop the index and the columns."""
    op.drop_index(INDEX, table_name=TABLE)
    # SQLite drops a column in place since 3.35: no table to rebuild, offline too.
    op.drop_column(TABLE, "forked_at")
    op.drop_column(TABLE, "parent_id")
