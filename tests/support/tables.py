"""Reading sqlmemory's tables directly, to check what a storage wrote (or did not).

Functions over a sync ``Connection`` (an async suite runs them through
``AsyncConnection.run_sync``), plus ``Engine`` shorthands for sync test bodies.
"""

from __future__ import annotations

from typing import Any, cast

import sqlalchemy as sa

from sqlmemory.storage.sql.schema import BlobRow, BlockRow, MessageRow, SessionRow

SESSIONS = cast(sa.Table, SessionRow.__table__)
MESSAGES = cast(sa.Table, MessageRow.__table__)
BLOCKS = cast(sa.Table, BlockRow.__table__)
BLOBS = cast(sa.Table, BlobRow.__table__)
TABLES = {"sessions": SESSIONS, "messages": MESSAGES, "blocks": BLOCKS, "blobs": BLOBS}


def row_counts(conn: sa.Connection) -> dict[str, int]:
    """The number of rows of each sqlmemory table."""
    return {
        name: int(conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0)
        for name, table in TABLES.items()
    }


def snapshot(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every sqlmemory table, in primary-key order."""
    result = {}
    for name, table in TABLES.items():
        rows = conn.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
        result[name] = [
            tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows
        ]
    return result


def orphan_blobs(conn: sa.Connection) -> list[tuple[str, str]]:
    """``(session_id, sha256)`` of blobs that no block references."""
    referenced = sa.exists().where(
        BLOCKS.c.session_id == BLOBS.c.session_id, BLOCKS.c.blob_sha256 == BLOBS.c.sha256
    )
    query = sa.select(BLOBS.c.session_id, BLOBS.c.sha256).where(~referenced)
    return [(str(sid), str(sha)) for sid, sha in conn.execute(query)]


def blob_rows(conn: sa.Connection, session_id: str | None = None) -> list[dict[str, Any]]:
    """The blob rows (``data`` left out), optionally of one session."""
    query = sa.select(
        BLOBS.c.session_id, BLOBS.c.sha256, BLOBS.c.size, BLOBS.c.width, BLOBS.c.height
    ).order_by(BLOBS.c.session_id, BLOBS.c.sha256)
    if session_id is not None:
        query = query.where(BLOBS.c.session_id == session_id)
    return [dict(r) for r in conn.execute(query).mappings()]


def message_seqs(conn: sa.Connection, session_id: str) -> dict[str, int]:
    """``message_id -> seq`` of a session, read from the messages table."""
    rows = conn.execute(
        sa.select(MESSAGES.c.message_id, MESSAGES.c.seq).where(MESSAGES.c.session_id == session_id)
    )
    return {message_id: int(seq) for message_id, seq in rows}


def delete_everything(conn: sa.Connection) -> None:
    """Empty every sqlmemory table, children first."""
    for table in (BLOCKS, MESSAGES, BLOBS, SESSIONS):
        conn.execute(table.delete())


# --- the same, each in its own connection of an engine -------------------------------


def counts(engine: sa.Engine) -> dict[str, int]:
    """:func:`row_counts` read through ``engine``."""
    with engine.connect() as conn:
        return row_counts(conn)


def rows(engine: sa.Engine) -> dict[str, list[tuple[Any, ...]]]:
    """:func:`snapshot` read through ``engine``."""
    with engine.connect() as conn:
        return snapshot(conn)


def seqs(engine: sa.Engine, session_id: str) -> dict[str, int]:
    """:func:`message_seqs` read through ``engine``."""
    with engine.connect() as conn:
        return message_seqs(conn, session_id)


EMPTY = {"sessions": 0, "messages": 0, "blocks": 0, "blobs": 0}
"""What :func:`row_counts` gives for a database without any session."""
