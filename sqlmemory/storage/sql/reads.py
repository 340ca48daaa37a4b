"""Every statement that reads, as plain functions over a ``Connection``.

Both front doors run these: the sync storage inside ``engine.begin()``, the async one
through ``AsyncConnection.run_sync``. None of them commits.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Executable, Integer, bindparam, func, select
from sqlalchemy.engine import RowMapping

from sqlmemory.policy import TailPolicy
from sqlmemory.storage.sql.codec import decode_block, decode_message, entry_of
from sqlmemory.storage.sql.schema import (
    MESSAGE_COLUMNS,
    blobs_table,
    blocks_table,
    messages_table,
    sessions_table,
)
from sqlmemory.types import Block, Message

__all__ = ["DEFAULT_PAGE", "count", "read_all", "read_tail", "session_ids"]

DEFAULT_PAGE = 64
"""Messages read by the first page of a tail read, for policies that give no hint."""
MAX_PAGE = 2**31 - 1
"""The largest page bound into ``LIMIT`` (PostgreSQL binds it as a 32-bit integer); a
policy asking for more (``recent(10**30)``) reads pages of this size until it is done."""


def count(conn: Connection, sid: str) -> int:
    """The number of messages stored in the session."""
    return int(
        conn.scalar(
            select(func.count())
            .select_from(messages_table)
            .where(messages_table.c.session_id == sid)
        )
        or 0
    )


def session_ids(conn: Connection, prefix: str | None) -> list[str]:
    """Ids of the sessions that hold messages, sorted, optionally by prefix."""
    query = select(sessions_table.c.session_id)
    if prefix:
        query = query.where(sessions_table.c.session_id.startswith(prefix, autoescape=True))
    # Filtered and sorted again here: SQLite's LIKE ignores ASCII case, and database
    # collations disagree on order; Python compares code points.
    found = conn.scalars(query)
    return sorted(sid for sid in found if not prefix or sid.startswith(prefix))


def _messages(conn: Connection, sid: str, rows: Sequence[RowMapping]) -> list[Message]:
    """Build messages from their rows, reading block rows and blob bytes only for them."""
    wanted = {r["seq"] for r in rows if r["n_blocks"]}
    by_seq: dict[int, list[Block]] = {}
    if wanted:
        block_rows = [
            b
            for b in conn.execute(
                select(blocks_table)
                .where(
                    blocks_table.c.session_id == sid,
                    blocks_table.c.seq.between(min(wanted), max(wanted)),
                )
                .order_by(blocks_table.c.seq, blocks_table.c.position)
            ).mappings()
            if b["seq"] in wanted
        ]
        shas = {b["blob_sha256"] for b in block_rows if b["blob_sha256"] is not None}
        blobs: dict[str, tuple[bytes, Any, Any]] = {}
        if shas:
            for sha, data, width, height in conn.execute(
                select(
                    blobs_table.c.sha256,
                    blobs_table.c.data,
                    blobs_table.c.width,
                    blobs_table.c.height,
                ).where(blobs_table.c.session_id == sid, blobs_table.c.sha256.in_(shas))
            ):
                blobs[sha] = (bytes(data), width, height)
        for b in block_rows:
            by_seq.setdefault(b["seq"], []).append(decode_block(b, blobs))
    return [decode_message(r, by_seq.get(r["seq"], ())) for r in rows]


@functools.cache
def _history_statement() -> Executable:
    return (
        select(*MESSAGE_COLUMNS)
        .where(messages_table.c.session_id == bindparam("sid"))
        .order_by(messages_table.c.seq)
    )


def read_all(conn: Connection, sid: str) -> list[Message]:
    """The whole history of the session, oldest first."""
    rows = conn.execute(_history_statement(), {"sid": sid}).mappings().all()
    return _messages(conn, sid, rows)


@functools.cache
def _page_statements() -> tuple[Executable, Executable]:
    """Newest-first pages of a session: the first one, and the one before a seq."""
    newest = (
        select(*MESSAGE_COLUMNS)
        .where(messages_table.c.session_id == bindparam("sid"))
        .order_by(messages_table.c.seq.desc())
        .limit(bindparam("page", type_=Integer))
    )
    return newest, newest.where(messages_table.c.seq < bindparam("before"))


def _older_page(
    conn: Connection, sid: str, page: int, before: RowMapping | None
) -> list[RowMapping]:
    """The ``page`` messages before ``before`` (the newest if ``None``), oldest first."""
    first_page, older_page = _page_statements()
    if before is None:
        chunk = conn.execute(first_page, {"sid": sid, "page": page}).mappings().all()
    else:
        params = {"sid": sid, "page": page, "before": before["seq"]}
        chunk = conn.execute(older_page, params).mappings().all()
    return list(reversed(chunk))


def _has_blocks(rows: Sequence[RowMapping]) -> bool:
    return any(r["n_blocks"] for r in rows)


def read_tail(
    conn: Connection, sid: str, policy: TailPolicy, *, one_statement: bool = False
) -> list[Message] | None:
    """The policy's window, reading pages of the newest messages until it is decided.

    Pages double in size, so a window over w messages costs O(log w) queries whatever
    the history's length; blocks and blob bytes are read only for the messages chosen.
    With ``one_statement``, returns ``None`` instead of running a second statement (the
    caller then reads again inside a snapshot transaction).
    """
    page = min(max(int(getattr(policy, "page_hint", DEFAULT_PAGE)), 1), MAX_PAGE)
    rows: list[RowMapping] = []
    items: list[Any] = []
    while True:
        older = _older_page(conn, sid, page, rows[0] if rows else None)
        rows = older + rows
        if not policy.needs_content:
            items = [entry_of(r) for r in older] + items
        elif one_statement and _has_blocks(older):
            return None
        else:
            items = _messages(conn, sid, older) + items
        chosen = policy.select(items, len(older) < page)
        if chosen is not None:
            break
        if one_statement:
            return None
        page = min(page * 2, MAX_PAGE)
    if policy.needs_content:
        return [items[i] for i in chosen]
    picked = [rows[i] for i in chosen]
    if one_statement and _has_blocks(picked):
        return None
    return _messages(conn, sid, picked)
