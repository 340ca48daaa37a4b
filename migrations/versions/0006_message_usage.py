"""Usage of messages: the model and token counts of a reply, on sqlmemory_messages.

Six nullable columns (``usage_input_tokens``, ``usage_output_tokens``,
``usage_cache_read_tokens``, ``usage_cache_write_tokens``, ``usage_reasoning_tokens``,
``usage_model``) hold a message's ``Usage``; every stored message starts without one
(all NULL), so no row is rewritten and no stored digest changes (a message without usage
has the canonical form it had). The index ``ix_sqlmemory_messages_usage`` on
``(session_id, recorded_at)``, partial on PostgreSQL and SQLite (only the messages that
carry usage), is what the totals of a session or an owner over a time range read.

Downgrade drops the index and the columns: the usage recorded is lost, the messages stay.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-10 08:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sqlmemory.storage.sql import column_types

# revision identifiers, used by Alembic.
revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "sqlmemory_messages"
INDEX = "ix_sqlmemory_messages_usage"
HAS_USAGE = "usage_input_tokens IS NOT NULL"
COUNTS = (
    "usage_input_tokens",
    "usage_output_tokens",
    "usage_cache_read_tokens",
    "usage_cache_write_tokens",
    "usage_reasoning_tokens",
)


def upgrade() -> None:
    """Add the nullable usage columns (no row rewritten) and the index of the totals."""
    for name in COUNTS:
        op.add_column(TABLE, sa.Column(name, sa.BigInteger(), nullable=True))
    op.add_column(TABLE, sa.Column("usage_model", column_types.Key(), nullable=True))
    op.create_index(
        INDEX,
        TABLE,
        ["session_id", "recorded_at"],
        unique=False,
        postgresql_where=sa.text(HAS_USAGE),
        sqlite_where=sa.text(HAS_USAGE),
    )


def downgrade() -> None:
    """Drop the index and the columns."""
    op.drop_index(INDEX, table_name=TABLE)
    # SQLite drops a column in place since 3.35: no table to rebuild, offline too.
    for name in (*COUNTS, "usage_model"):
        op.drop_column(TABLE, name)
