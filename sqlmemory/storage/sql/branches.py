"""``fork`` and ``branches``: a session copied by the database, and the lineage it leaves.

A fork is one transaction. It locks the source's row and creates the new session's row
in sorted id order (``docs/contract/persistence.md#locking``), then copies the source's
blob rows, message rows and block rows with one ``INSERT ... SELECT`` each: no row goes
through Python, however long the history. The copies keep every column (``seq``,
message ids, ``recorded_at``, the ``text_base64`` flags), and the column lists are built
from the Core tables, so a column added to a table is copied without a change here.
Blobs are rows per ``(session_id, sha256)``: the fork gets rows of its own for the
bytes its blocks reference, so a later delete on either side never reaches the other's.

Plain functions over a ``Connection``, like :mod:`~sqlmemory.storage.sql.writes`; none of
them commits.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Executable,
    Table,
    bindparam,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from sqlmemory.storage.lineage import no_source, not_a_message, taken
from sqlmemory.storage.owners import refuse
from sqlmemory.storage.records import SessionInfo, info_of
from sqlmemory.storage.sql import base64_text
from sqlmemory.storage.sql.column_types import Key
from sqlmemory.storage.sql.record_queries import RECORD_COLUMNS, session_info
from sqlmemory.storage.sql.schema import blobs_table, blocks_table, messages_table, sessions_table
from sqlmemory.storage.sql.session_lock import lock_existing

__all__ = ["fork_session", "list_branches", "set_lineage"]

_session = sessions_table.c

SOURCE_RECORD = select(
    _session.next_seq,
    _session.last_recorded_at,
    _session.history_digest,
    _session.history_len,
    _session.title,
    _session.metadata_json,
    _session.text_base64,
    _session.owner,
).where(_session.session_id == bindparam("sid", type_=Key()))
"""What the fork takes of the source's record, read under the source's lock."""

FORK_POINT = select(messages_table.c.seq).where(
    messages_table.c.session_id == bindparam("sid", type_=Key()),
    messages_table.c.message_id == bindparam("at", type_=Key()),
)
"""The ``seq`` of the message ``at`` of the source (the unique ``(session_id, message_id)``)."""

NEW_OWNER = select(_session.owner).where(_session.session_id == bindparam("new", type_=Key()))
"""Who holds the taken id of a failed fork: the view's owner or another."""


@functools.cache
def _claim_statement(dialect: str) -> Executable:
    """Insert the new session's row unless the id is taken (then insert nothing)."""
    row = {
        "session_id": bindparam("new", type_=Key()),
        "next_seq": 1,
        "last_recorded_at": None,
        "created_at": bindparam("now"),
        "updated_at": bindparam("now"),
        "message_count": 0,
        "owner": bindparam("owner", type_=Key()),
    }
    # The rowcount of an INSERT says whether the row went in (SQLAlchemy keeps it only
    # when asked to).
    if dialect in ("mysql", "mariadb"):
        # The rows are ours: IGNORE can only skip the duplicate key.
        claim = insert(sessions_table).values(row).prefix_with("IGNORE")
    else:
        insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
        claim = insert_of(sessions_table).values(row).on_conflict_do_nothing()
    return claim.execution_options(preserve_rowcount=True)


def _copy_columns(table: Table) -> list[str]:
    """Every column of ``table`` but ``session_id``: what a copy takes as it is."""
    return [column.name for column in table.columns if column.name != "session_id"]


@functools.cache
def _copy_statement(name: str, prefix: bool) -> Executable:
    """``INSERT INTO name SELECT :new, <every other column> FROM name WHERE session_id =
    :sid`` (and, with ``prefix``, only the rows of the messages up to ``seq = :cut``)."""
    table = {t.name: t for t in (messages_table, blocks_table, blobs_table)}[name]
    names = _copy_columns(table)
    rows = select(
        bindparam("new", type_=Key()).label("session_id"), *(table.c[n] for n in names)
    ).where(table.c.session_id == bindparam("sid", type_=Key()))
    if table is blobs_table:
        if prefix:
            # Only the bytes the copied blocks reference: a range of the blocks' primary
            # key, probed into the blobs' (a whole copy takes them all: a session holds
            # no blob its blocks do not reference).
            block = blocks_table.c
            used = select(block.blob_sha256).where(
                block.session_id == bindparam("sid", type_=Key()),
                block.seq <= bindparam("cut"),
                block.blob_sha256.is_not(None),
            )
            rows = rows.where(blobs_table.c.sha256.in_(used))
    elif prefix:
        rows = rows.where(table.c.seq <= bindparam("cut"))
    copy = insert(table).from_select(["session_id", *names], rows)
    return copy.execution_options(preserve_rowcount=True)


def _claim(conn: Connection, new: str, now: datetime, owner: str | None) -> bool:
    """Create the new session's row (it locks the id); ``False`` when the id is taken."""
    claimed = conn.execute(
        _claim_statement(conn.dialect.name), {"new": new, "now": now, "owner": owner}
    )
    return claimed.rowcount == 1


def _refuse_taken(conn: Connection, new: str, owner: str | None) -> Exception:
    """The error of a fork into the taken id ``new``: through a view, a session of
    another owner (or of none) is refused as the view refuses any write to it."""
    if owner is not None and conn.scalar(NEW_OWNER, {"new": new}) != owner:
        return refuse(new, owner)
    return taken(new)


def _cut(conn: Connection, sid: str, at: str | None) -> int | None:
    """The ``seq`` the fork ends at (``None``: the whole history)."""
    if at is None:
        return None
    cut = conn.scalar(FORK_POINT, {"sid": sid, "at": at})
    if cut is None:
        raise not_a_message(sid, at)
    return int(cut)


def fork_session(
    conn: Connection,
    sid: str,
    new: str,
    at: str | None,
    now: datetime,
    owner: str | None = None,
) -> SessionInfo:
    """Copy session ``sid`` up to and including message ``at`` (all of it when ``None``)
    into the new session ``new``, under the source's lock; returns the new record.

    The locks are taken in sorted id order: the source's row (``lock_existing``) and the
    new session's (its insert). Then the blob, message and block rows are copied, each
    with one ``INSERT ... SELECT``, and the new record gets the source's title, metadata,
    owner and clock, the lineage, its message count and the ``next_seq`` after the
    copied seqs. The source's history chain is kept only for a whole copy, the one
    history it describes.

    Raises:
        SessionNotFoundError: ``sid`` does not exist (or is not ``owner``'s).
        MessageNotFoundError: ``at`` is not a message of ``sid``.
        ConflictError: ``new`` exists already.
        SessionOwnerError: through ``owner``'s view, ``new`` is another owner's (or no
            one's).
    """
    if sid == new:
        if not lock_existing(conn, sid, owner):
            raise no_source(sid)
        _cut(conn, sid, at)
        raise _refuse_taken(conn, new, owner)
    claimed: bool | None = None
    if new < sid:
        claimed = _claim(conn, new, now, owner)
    if not lock_existing(conn, sid, owner):
        raise no_source(sid)
    cut = _cut(conn, sid, at)
    if claimed is None:
        claimed = _claim(conn, new, now, owner)
    if not claimed:
        raise _refuse_taken(conn, new, owner)
    source = conn.execute(SOURCE_RECORD, {"sid": sid}).one()._mapping
    params: dict[str, Any] = {"sid": sid, "new": new}
    if cut is not None:
        params["cut"] = cut
    prefix = cut is not None
    conn.execute(_copy_statement(blobs_table.name, prefix), params)
    copied = conn.execute(_copy_statement(messages_table.name, prefix), params).rowcount
    conn.execute(_copy_statement(blocks_table.name, prefix), params)
    whole = cut is None
    conn.execute(
        update(sessions_table)
        .where(_session.session_id == new)
        .values(
            next_seq=source["next_seq"] if cut is None else cut + 1,
            last_recorded_at=source["last_recorded_at"],
            history_digest=source["history_digest"] if whole else None,
            history_len=source["history_len"] if whole else None,
            message_count=copied,
            title=source["title"],
            metadata_json=source["metadata_json"],
            text_base64=source["text_base64"],
            owner=source["owner"],
            parent_id=sid,
            forked_at=at,
        )
    )
    found = session_info(conn, new)
    assert found is not None  # noqa: S101 - created above, in this transaction
    return found


@functools.cache
def _branches_statement(owned: bool) -> Executable:
    """The records whose parent is ``:sid``, oldest first (the ``parent_id`` index)."""
    query = (
        select(*RECORD_COLUMNS)
        .where(_session.parent_id == bindparam("sid", type_=Key()))
        .order_by(_session.created_at, _session.session_id)
    )
    if owned:
        query = query.where(_session.owner == bindparam("owner", type_=Key()))
    return query


def list_branches(conn: Connection, sid: str, owner: str | None = None) -> list[SessionInfo]:
    """The sessions forked from ``sid``, oldest first (only ``owner``'s, when given),
    whether or not ``sid`` still exists."""
    params = {"sid": sid, "owner": owner}
    rows = conn.execute(_branches_statement(owner is not None), params).mappings()
    return [info_of(base64_text.decoded(row, base64_text.SESSION_TEXT)) for row in rows]


def set_lineage(conn: Connection, sid: str, parent_id: str | None, forked_at: str | None) -> bool:
    """Give the existing session ``sid`` its lineage, under its lock (an import of an
    exported fork); whether the session exists."""
    if not lock_existing(conn, sid):
        return False
    conn.execute(
        update(sessions_table)
        .where(_session.session_id == sid)
        .values(parent_id=parent_id, forked_at=forked_at)
    )
    return True
