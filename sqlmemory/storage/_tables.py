"""The sqlmemory tables as Core objects, and the message columns every read selects."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from sqlmemory.orm import BlobRow, BlockRow, MessageRow, SessionRow

__all__ = ["BL", "DEFAULT_PAGE", "MESSAGE_COLUMNS", "B", "M", "S"]

S = cast(Table, SessionRow.__table__)
M = cast(Table, MessageRow.__table__)
B = cast(Table, BlockRow.__table__)
BL = cast(Table, BlobRow.__table__)

MESSAGE_COLUMNS = (
    M.c.seq,
    M.c.message_id,
    M.c.role,
    M.c.tool_call_id,
    M.c.text,
    M.c.n_blocks,
    M.c.call_ids,
    M.c.tool_calls,
    M.c.metadata_json,
    M.c.recorded_at,
    M.c.tokens,
    M.c.digest,
)
DEFAULT_PAGE = 64
