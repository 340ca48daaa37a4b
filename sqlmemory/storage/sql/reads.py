"""The reads of whole histories, and building messages from their rows.

Plain functions over a ``Connection``: the whole history (``load`` without a window), the
number of messages, the ids of the sessions, the newest message (what ``pop`` takes), and
what every message read shares: running a statement for its rows, the newest-first page
statements, and building messages from rows with their block rows and blob bytes. The
windowed tail read is in :mod:`~sqlmemory.storage.sql.tail_reads`.

Both front doors run these: the sync storage inside ``engine.begin()``, the async one
through ``AsyncConnection.run_sync``. None of them commits.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast, overload

from sqlalchemy import (
    Connection,
    Executable,
    Integer,
    Select,
    bindparam,
    exists,
    func,
    select,
)

from sqlmemory._gc import gc_paused
from sqlmemory.policy.groups import Entry
from sqlmemory.storage.sql.codec import (
    DIGEST,
    MESSAGE_FIELDS,
    N_BLOCKS,
    RECORDED_AT,
    SEQ,
    TOKENS,
    decode_block,
    decode_message,
)
from sqlmemory.storage.sql.driver_sql import compiled_statement, driver_rows
from sqlmemory.storage.sql.message_cache import MESSAGE_OVERHEAD, MessageCache
from sqlmemory.storage.sql.schema import (
    MESSAGE_COLUMNS,
    blobs_table,
    blocks_table,
    messages_table,
    sessions_table,
)
from sqlmemory.types import Block, Message

__all__ = [
    "ENTRIES",
    "MESSAGES",
    "OWNED",
    "BlockRows",
    "Row",
    "build_messages",
    "count",
    "fetch_rows",
    "forget_built_messages",
    "newest",
    "owner_params",
    "page_statements",
    "read_all",
    "scoped",
    "session_ids",
]

# A message row is a tuple of MESSAGE_FIELDS (see codec).
Row = Sequence[Any]
if tuple(c.name for c in MESSAGE_COLUMNS) != MESSAGE_FIELDS:  # pragma: no cover
    raise ImportError("MESSAGE_COLUMNS and codec.MESSAGE_FIELDS disagree")
BlockRows = dict[int, list[Mapping[str, Any]]]
"""Block rows by message seq, as read with their page."""
MESSAGES: MessageCache[Message] = MessageCache()
"""The messages the reads have built, kept to be handed out again
(:mod:`~sqlmemory.storage.sql.message_cache`): one per process, shared by every storage."""
ENTRIES: MessageCache[Entry] = MessageCache(max_bytes=8 * 1024 * 1024)
"""The window policies' entries built from message rows, kept as :data:`MESSAGES` keeps
messages: by digest, ``recorded_at`` and the stored token count."""


def forget_built_messages() -> None:
    """Empty :data:`MESSAGES` and :data:`ENTRIES` (in this process)."""
    MESSAGES.clear()
    ENTRIES.clear()


def fetch_rows(conn: Connection, statement: Executable, params: Mapping[str, Any]) -> list[Row]:
    """The rows of a message read, as tuples of :data:`MESSAGE_FIELDS`.

    On SQLite the statement, compiled once from Core, runs as driver SQL: its values need
    no conversion there but the timestamp's, which :func:`decode_message` parses for the
    messages it builds, so SQLAlchemy's per-row processing (a third of a full read's time)
    is skipped; and unless something listens to the cursor events, it runs on the driver's
    cursor (:mod:`~sqlmemory.storage.sql.driver_sql`).
    """
    if conn.dialect.name != "sqlite":
        return list(conn.execute(statement, params).all())
    compiled = compiled_statement(statement, conn.dialect, tuple(params))
    assert compiled is not None  # noqa: S101 - reads bind every parameter they need
    return driver_rows(conn, compiled.sql, compiled.values(params))


OWNED = exists().where(
    sessions_table.c.session_id == bindparam("sid"), sessions_table.c.owner == bindparam("owner")
)
"""Whether the session ``:sid`` belongs to ``:owner``: the condition an owned view's reads
add to the statement that reads the session's rows, so the check and the read are one
statement, one snapshot (and a windowed read still one round trip)."""

S = TypeVar("S", bound=Select[Any])


def scoped(statement: S, owned: bool) -> S:
    """``statement`` limited to the sessions of ``:owner`` when ``owned``."""
    return statement.where(OWNED) if owned else statement


def owner_params(sid: str, owner: str | None, **params: Any) -> dict[str, Any]:
    """The parameters of a read of ``sid``, with ``owner`` when the read is owned."""
    params["sid"] = sid
    if owner is not None:
        params["owner"] = owner
    return params


@functools.cache
def _count_statement(owned: bool) -> Select[Any]:
    counted = (
        select(func.count())
        .select_from(messages_table)
        .where(messages_table.c.session_id == bindparam("sid"))
    )
    return scoped(counted, owned)


def count(conn: Connection, sid: str, owner: str | None = None) -> int:
    """The number of messages stored in the session (0 when it is not ``owner``'s)."""
    found = conn.scalar(_count_statement(owner is not None), owner_params(sid, owner))
    return int(found or 0)


def session_ids(conn: Connection, prefix: str | None, owner: str | None = None) -> list[str]:
    """Ids of every stored session, sorted, optionally by prefix and by owner."""
    query = select(sessions_table.c.session_id)
    if owner is not None:
        query = query.where(sessions_table.c.owner == owner)
    if prefix:
        query = query.where(sessions_table.c.session_id.startswith(prefix, autoescape=True))
    # Filtered and sorted again here: SQLite's LIKE ignores ASCII case, and database
    # collations disagree on order; Python compares code points.
    found = conn.scalars(query)
    return sorted(sid for sid in found if not prefix or sid.startswith(prefix))


def _block_rows(conn: Connection, sid: str, wanted: set[int], known: BlockRows | None) -> list[Any]:
    """The block rows of the messages ``wanted``, by seq and position: those ``known``
    already, then the others from one statement."""
    block_rows: list[Any] = []
    if known:
        for seq in sorted(wanted & known.keys()):
            block_rows += known[seq]
        wanted = wanted - known.keys()
    if not wanted:
        return block_rows
    found = conn.execute(
        select(blocks_table)
        .where(
            blocks_table.c.session_id == sid,
            blocks_table.c.seq.between(min(wanted), max(wanted)),
        )
        .order_by(blocks_table.c.seq, blocks_table.c.position)
    ).mappings()
    return block_rows + [b for b in found if b["seq"] in wanted]


def _blobs(
    conn: Connection, sid: str, block_rows: Sequence[Any]
) -> dict[str, tuple[bytes, Any, Any]]:
    """The bytes, width and height of the blobs the block rows point at, by hash."""
    shas = {b["blob_sha256"] for b in block_rows if b["blob_sha256"] is not None}
    if not shas:
        return {}
    found = conn.execute(
        select(
            blobs_table.c.sha256,
            blobs_table.c.data,
            blobs_table.c.width,
            blobs_table.c.height,
        ).where(blobs_table.c.session_id == sid, blobs_table.c.sha256.in_(shas))
    )
    return {sha: (bytes(data), width, height) for sha, data, width, height in found}


def _blocks(
    conn: Connection, sid: str, wanted: set[int], known: BlockRows | None, missing_ok: bool
) -> tuple[dict[int, list[Block]], set[int]] | None:
    """The decoded blocks of the messages ``wanted``, by seq, and the seqs of those that
    hold blob bytes; ``None`` with ``missing_ok`` when a blob pointed at is not found."""
    by_seq: dict[int, list[Block]] = {}
    with_blobs: set[int] = set()
    if not wanted:
        return by_seq, with_blobs
    block_rows = _block_rows(conn, sid, wanted, known)
    blobs = _blobs(conn, sid, block_rows)
    if missing_ok and any(
        b["blob_sha256"] is not None and b["blob_sha256"] not in blobs for b in block_rows
    ):
        return None
    for b in block_rows:
        by_seq.setdefault(b["seq"], []).append(decode_block(b, blobs))
        if b["blob_sha256"] is not None:
            with_blobs.add(b["seq"])
    return by_seq, with_blobs


@overload
def build_messages(
    conn: Connection, sid: str, rows: Sequence[Row], known: BlockRows | None = None
) -> list[Message]: ...


@overload
def build_messages(
    conn: Connection, sid: str, rows: Sequence[Row], known: BlockRows | None, missing_ok: bool
) -> list[Message] | None: ...


def build_messages(
    conn: Connection,
    sid: str,
    rows: Sequence[Row],
    known: BlockRows | None = None,
    missing_ok: bool = False,
) -> list[Message] | None:
    """Build messages from their rows, reading block rows (those not ``known`` already)
    and blob bytes only for them. With ``missing_ok``, ``None`` if a blob the block rows
    point at is not found (read outside a transaction, its messages deleted since).

    A message built before and still in :data:`MESSAGES` is taken from there: its row's
    digest and ``recorded_at`` say it is the same message
    (:mod:`~sqlmemory.storage.sql.message_cache`); its block rows are not read.
    """
    keys = [(r[DIGEST], r[RECORDED_AT]) for r in rows]
    found = [MESSAGES.get(key) for key in keys]
    wanted = {r[SEQ] for r, m in zip(rows, found, strict=True) if m is None and r[N_BLOCKS]}
    blocks = _blocks(conn, sid, wanted, known, missing_ok)
    if blocks is None:
        return None
    by_seq, with_blobs = blocks
    for i, r in enumerate(rows):
        if found[i] is None:
            message = found[i] = decode_message(r, by_seq.get(r[SEQ], ()))
            if r[SEQ] not in with_blobs:
                MESSAGES.put(keys[i], message, MESSAGE_OVERHEAD + 4 * r[TOKENS])
    return cast(list[Message], found)


@functools.cache
def _history_statement(owned: bool) -> Executable:
    history = (
        select(*MESSAGE_COLUMNS)
        .where(messages_table.c.session_id == bindparam("sid"))
        .order_by(messages_table.c.seq)
    )
    return scoped(history, owned)


def read_all(conn: Connection, sid: str, owner: str | None = None) -> list[Message]:
    """The whole history of the session, oldest first (``[]`` when not ``owner``'s)."""
    with gc_paused():
        statement = _history_statement(owner is not None)
        rows = fetch_rows(conn, statement, owner_params(sid, owner))
        return build_messages(conn, sid, rows)


@functools.cache
def page_statements(owned: bool = False) -> tuple[Select[Any], Select[Any]]:
    """Newest-first pages of a session: the first one, and the one before a seq (what
    :func:`newest` reads, and the pages of :mod:`~sqlmemory.storage.sql.tail_reads`);
    limited to ``:owner``'s session when ``owned``."""
    newest = scoped(
        select(*MESSAGE_COLUMNS)
        .where(messages_table.c.session_id == bindparam("sid"))
        .order_by(messages_table.c.seq.desc())
        .limit(bindparam("page", type_=Integer)),
        owned,
    )
    return newest, newest.where(messages_table.c.seq < bindparam("before"))


def newest(conn: Connection, sid: str) -> tuple[int, Message, bool] | None:
    """The newest message with its seq, and whether an older one exists; ``None`` if empty.

    One statement reads the two newest rows; content is read for the newest only.
    """
    first_page, _ = page_statements()
    rows = fetch_rows(conn, first_page, {"sid": sid, "page": 2})
    if not rows:
        return None
    return int(rows[0][SEQ]), build_messages(conn, sid, rows[:1])[0], len(rows) > 1
