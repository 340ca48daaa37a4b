"""Text columns PostgreSQL reads without Python: ``text`` instead of ``bytea``.

Every table gains ``text_base64`` (false): true on a row whose text columns hold the
base64 of their UTF-8 bytes. That happens on PostgreSQL only, whose ``text`` cannot hold
NUL, for a row whose text holds one; the other databases keep every string as it is.

On PostgreSQL the ``bytea`` text columns become ``text``:

- JSON columns (``call_ids``, ``metadata_json``, ``extras_json``, ``value_json``) never
  hold NUL (JSON writes it ``\\u0000``): each value is its UTF-8 bytes read as text;
- free-text columns (a message's ``text``, a block's ``text``, ``signature``, ``url``,
  ``file_id``, ``title`` and ``name``, a session's ``title``): a row with NUL in any of them
  gets its flag and all of them base64 (``encode(..., 'base64')``), every other row its
  text as it is.

On PostgreSQL the index of the blocks on ``(session_id, blob_sha256)`` becomes partial
(``WHERE blob_sha256 IS NOT NULL``): blocks without bytes are not in it, and a planner
without statistics yet no longer probes it for a message's blocks.

Downgrade turns them back into ``bytea`` (base64 decoded where the flag says so) and
drops the flags: nothing is lost either way. On SQLite and MySQL/MariaDB only the flag
columns come and go.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03 08:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sqlmemory.storage.sql import column_types

# revision identifiers, used by Alembic.
revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FLAG = "text_base64"
FREE_TEXT = {
    "sqlmemory_sessions": ("title",),
    "sqlmemory_messages": ("text",),
    "sqlmemory_blocks": ("text", "signature", "url", "file_id", "title", "name"),
}
"""The columns that may hold NUL, by table: base64 on a flagged row."""
JSON_TEXT = {
    "sqlmemory_sessions": ("metadata_json",),
    "sqlmemory_messages": ("call_ids", "metadata_json", "extras_json"),
    "sqlmemory_blocks": ("value_json", "extras_json"),
}
"""The columns that hold JSON text, which never holds NUL."""
BLOB_INDEX = "ix_sqlmemory_blocks_session_id_blob_sha256"
NUL = "position('\\x00'::bytea IN {column}) > 0"


def _flag_nul_rows(table: str) -> None:
    """Flag the rows whose free text holds NUL (still ``bytea``)."""
    holds_nul = " OR ".join(NUL.format(column=c) for c in FREE_TEXT[table])
    op.execute(f"UPDATE {table} SET {FLAG} = true WHERE {holds_nul}")  # noqa: S608


def _blob_index(where: str | None) -> None:
    op.drop_index(BLOB_INDEX, table_name="sqlmemory_blocks")
    op.create_index(
        BLOB_INDEX,
        "sqlmemory_blocks",
        ["session_id", "blob_sha256"],
        postgresql_where=None if where is None else sa.text(where),
    )


def _retype(table: str, column: str, to_text: bool, using: str) -> None:
    """``column`` from ``bytea`` to ``text`` (or back), its values converted by ``using``."""
    text, legacy = column_types.Utf8Text, column_types.LegacyUtf8Text()
    op.alter_column(
        table,
        column,
        type_=text if to_text else legacy,
        existing_type=legacy if to_text else text,
        postgresql_using=using,
    )


def upgrade() -> None:
    """Add the flags; on PostgreSQL, turn the ``bytea`` text columns into ``text``."""
    for table in FREE_TEXT:
        op.add_column(
            table, sa.Column(FLAG, sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    if op.get_context().dialect.name != "postgresql":
        return
    _blob_index("blob_sha256 IS NOT NULL")
    for table, columns in FREE_TEXT.items():
        _flag_nul_rows(table)
        for c in columns:
            base64 = f"encode({c}, 'base64')"
            _retype(
                table, c, True, f"CASE WHEN {FLAG} THEN {base64} ELSE convert_from({c}, 'UTF8') END"
            )
        for c in JSON_TEXT[table]:
            _retype(table, c, True, f"convert_from({c}, 'UTF8')")


def downgrade() -> None:
    """Turn the text columns back into ``bytea`` on PostgreSQL; drop the flags."""
    if op.get_context().dialect.name == "postgresql":
        _blob_index(None)
        for table, columns in FREE_TEXT.items():
            for c in columns:
                base64 = f"decode({c}, 'base64')"
                _retype(
                    table,
                    c,
                    False,
                    f"CASE WHEN {FLAG} THEN {base64} ELSE convert_to({c}, 'UTF8') END",
                )
            for c in JSON_TEXT[table]:
                _retype(table, c, False, f"convert_to({c}, 'UTF8')")
    for table in FREE_TEXT:
        # SQLite drops a column in place since 3.35: no table to rebuild, offline too.
        op.drop_column(table, FLAG)
