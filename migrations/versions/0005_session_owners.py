"""Owners of sessions: ``owner`` on sqlmemory_sessions, and the index of one owner's pages.

Every stored session starts with no owner (``NULL``): only the operator's unscoped
storage sees it until ``update_session(session_id, owner=...)`` gives it one
(``docs/many-users.md``). The index on ``(owner, updated_at, session_id)`` makes a page of
one owner's sessions, newest first, an ordered range scan of that owner's entries, and
lets ``erase_owner`` find the owner's sessions without reading anyone else's.

Downgrade drops the index and the column: who owned what is lost, the sessions stay.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 08:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sqlmemory.storage.sql import column_types

# revision identifiers, used by Alembic.
revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "sqlmemory_sessions"
INDEX = "ix_sqlmemory_sessions_owner_updated_at_session_id"


def upgrade() -> None:
    """Add the nullable owner column (no row rewritten) and its index."""
    op.add_column(TABLE, sa.Column("owner", column_types.Key(), nullable=True))
    op.create_index(INDEX, TABLE, ["owner", "updated_at", "session_id"], unique=False)


def downgrade() -> None:
    """Drop the index and the column."""
    op.drop_index(INDEX, table_name=TABLE)
    # SQLite drops a column in place since 3.35: no table to rebuild, offline too.
    op.drop_column(TABLE, "owner")
