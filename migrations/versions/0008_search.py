"""Full-text search: ``search_text`` on sqlmemory_messages, filled for every stored
message, and each backend's index over it (``docs/search.md``).

``search_text`` holds what search sees of a message (its text blocks, a tool result's
too; never a system or developer message, thinking, tool calls, opaque items, images or
documents), computed in Python (``search_rules.visible_text_of``) from the stored
message row and its text block rows, in batches, decoding the rows PostgreSQL keeps in
base64. Then the index: PostgreSQL's generated ``tsvector`` column and its GIN index
(text-search configuration: ``upgrade(..., search_config=...)``, else ``-x
search_config=...``, else ``$SQLMEMORY_SEARCH_CONFIG``, else ``simple``), SQLite's FTS5
table and triggers, InnoDB's ``FULLTEXT`` index (``search_index.py``).

Downgrade drops the index and the column; no other row changes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 15:30:00.000000
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from sqlmemory.storage.search_rules import visible_text_of
from sqlmemory.storage.sql import column_types
from sqlmemory.storage.sql.base64_text import decode
from sqlmemory.storage.sql.search_index import (
    DEFAULT_SEARCH_CONFIG,
    create_search_index,
    drop_search_index,
)

# revision identifiers, used by Alembic.
revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "sqlmemory_messages"
BATCH = 1000

_messages = sa.table(
    TABLE,
    sa.column("session_id", column_types.Key()),
    sa.column("seq", sa.BigInteger()),
    sa.column("role", sa.String()),
    sa.column("text", sa.Text()),
    sa.column("n_blocks", sa.Integer()),
    sa.column("text_base64", sa.Boolean()),
    sa.column("search_text", sa.Text()),
)
_blocks = sa.table(
    "sqlmemory_blocks",
    sa.column("session_id", column_types.Key()),
    sa.column("seq", sa.BigInteger()),
    sa.column("position", sa.Integer()),
    sa.column("kind", sa.String()),
    sa.column("text", sa.Text()),
    sa.column("text_base64", sa.Boolean()),
)
_SET_TEXT = (
    sa.update(_messages)
    .where(
        _messages.c.session_id == sa.bindparam("b_session_id", type_=column_types.Key()),
        _messages.c.seq == sa.bindparam("b_seq"),
    )
    .values(search_text=sa.bindparam("b_text"))
)


def _search_config() -> str:
    asked = context.config.attributes.get("search_config")
    if asked is None:
        asked = context.get_x_argument(as_dictionary=True).get("search_config")
    return asked or os.environ.get("SQLMEMORY_SEARCH_CONFIG") or DEFAULT_SEARCH_CONFIG


def _texts(value: str | None, flagged: bool) -> str | None:
    return decode(value) if flagged else value


def _block_texts(
    conn: sa.Connection, keys: list[tuple[Any, int]]
) -> dict[tuple[Any, int], list[str | None]]:
    found: dict[tuple[Any, int], list[str | None]] = {}
    if not keys:
        return found
    rows = conn.execute(
        sa.select(_blocks.c.session_id, _blocks.c.seq, _blocks.c.text, _blocks.c.text_base64)
        .where(
            _blocks.c.kind == "text",
            sa.tuple_(_blocks.c.session_id, _blocks.c.seq).in_(keys),
        )
        .order_by(_blocks.c.session_id, _blocks.c.seq, _blocks.c.position)
    )
    for sid, seq, text, flagged in rows:
        found.setdefault((sid, seq), []).append(_texts(text, flagged))
    return found


def _backfill(conn: sa.Connection) -> None:
    """Compute ``search_text`` of every stored message, a batch of rows at a time."""
    after: tuple[Any, int] | None = None
    columns = _messages.c
    while True:
        batch = (
            sa.select(
                columns.session_id,
                columns.seq,
                columns.role,
                columns.text,
                columns.n_blocks,
                columns.text_base64,
            )
            .order_by(columns.session_id, columns.seq)
            .limit(BATCH)
        )
        if after is not None:
            batch = batch.where(
                sa.or_(
                    columns.session_id > after[0],
                    sa.and_(columns.session_id == after[0], columns.seq > after[1]),
                )
            )
        rows = conn.execute(batch).all()
        if not rows:
            return
        after = (rows[-1][0], rows[-1][1])
        blocks = _block_texts(conn, [(r[0], r[1]) for r in rows if r[4]])
        updates = []
        for sid, seq, role, text, _, flagged in rows:
            texts = [_texts(text, flagged), *blocks.get((sid, seq), [])]
            visible = visible_text_of(role, texts)
            if visible is not None:
                updates.append({"b_session_id": sid, "b_seq": seq, "b_text": visible})
        if updates:
            conn.execute(_SET_TEXT, updates)


def upgrade() -> None:
    """Add the column, fill it, then build the index over it."""
    op.add_column(TABLE, sa.Column("search_text", column_types.SearchText, nullable=True))
    conn = op.get_bind()
    # Offline (--sql) there are no rows to read: the script leaves the stored messages
    # out of the index; an online upgrade fills them in.
    if not context.is_offline_mode():
        _backfill(conn)
    create_search_index(conn, _search_config())


def downgrade() -> None:
    """Drop the index, then the column."""
    drop_search_index(op.get_bind())
    # SQLite drops a column in place since 3.35 (its triggers are gone by now).
    op.drop_column(TABLE, "search_text")
