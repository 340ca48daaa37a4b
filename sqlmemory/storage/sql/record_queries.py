"""The statements of session records: read one, page through them, set one, prune them.

Plain functions over a ``Connection``, like :mod:`~sqlmemory.storage.sql.reads` and
:mod:`~sqlmemory.storage.sql.writes`; the writes here take the session lock of
:mod:`~sqlmemory.storage.sql.session_lock` first. The record is the ``sqlmemory_sessions``
row; every write of messages keeps its ``message_count`` and ``updated_at`` (through
``session_lock``) in the same transaction as the messages it changes.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    Select,
    and_,
    bindparam,
    delete,
    func,
    or_,
    select,
    tuple_,
    update,
)

from sqlmemory.storage.records import SessionInfo, info_of
from sqlmemory.storage.sql import base64_text
from sqlmemory.storage.sql.column_types import Key, UTCDateTime
from sqlmemory.storage.sql.schema import messages_table, sessions_table
from sqlmemory.storage.sql.session_lock import later, lock_session

__all__ = [
    "RECORD_COLUMNS",
    "delete_locked",
    "list_page",
    "prune",
    "record_of",
    "session_info",
    "update_session",
]

PRUNE_CHUNK = 500
"""Sessions locked and deleted per statement by :func:`prune`."""

_session = sessions_table.c
PAGE_INDEX = "ix_sqlmemory_sessions_updated_at_session_id"
"""The index every page of :func:`list_page` is a range scan of (``schema.py``)."""
OWNER_PAGE_INDEX = "ix_sqlmemory_sessions_owner_updated_at_session_id"
"""The index every page of one owner's sessions is a range scan of."""
RECORD_COLUMNS = (
    _session.session_id,
    _session.created_at,
    _session.updated_at,
    _session.message_count,
    _session.title,
    _session.metadata_json,
    _session.text_base64,
    _session.owner,
    _session.parent_id,
    _session.forked_at,
)


def session_info(conn: Connection, sid: str, owner: str | None = None) -> SessionInfo | None:
    """The session's record, or ``None`` (also when it is not ``owner``'s, if given)."""
    query = select(*RECORD_COLUMNS).where(_session.session_id == sid)
    if owner is not None:
        query = query.where(_session.owner == owner)
    row = conn.execute(query).first()
    return None if row is None else _info(row._mapping)


def record_of(row: Mapping[Any, Any]) -> SessionInfo:
    """The record of a row of :data:`RECORD_COLUMNS`."""
    return info_of(base64_text.decoded(row, base64_text.SESSION_TEXT))


_info = record_of


def _after(dialect: str, owned: bool) -> ColumnElement[bool]:
    """``(updated_at, session_id) < (:at, :sid)``, as each database ranges over the index
    (with ``owned``, over the owner's part of ``(owner, updated_at, session_id)``; the
    owner's equality is in the ``WHERE`` as well)."""
    at = bindparam("at", type_=UTCDateTime())
    sid = bindparam("after_sid", type_=Key())
    if dialect in ("mysql", "mariadb"):
        # MariaDB ranges over an index with the expanded form, not with row values.
        return or_(
            _session.updated_at < at, and_(_session.updated_at == at, _session.session_id < sid)
        )
    after = tuple_(_session.updated_at, _session.session_id) < tuple_(at, sid)
    if owned and dialect == "postgresql":
        # Both row values. The one over (updated_at, session_id) after the owner's
        # equality is where the backward scan of the owner index starts; alone, it lets
        # the planner prefer the (updated_at, session_id) index and filter the owner
        # (reading 510 rows for a page of 50 of an owner of a tenth of the sessions). The
        # one over the whole key keeps the owner index chosen; alone, the scan starts at
        # the owner's newest session and skips every entry down to the cursor (200 index
        # and heap pages for page 200 of 10,000 sessions, against 13 with both).
        owner = bindparam("owner", type_=Key())
        whole_key = tuple_(_session.owner, _session.updated_at, _session.session_id)
        return and_(whole_key < tuple_(owner, at, sid), after)
    # SQLite ranges over an index with an equality and then a row value over the next
    # columns; given the whole key it uses the owner's equality only, and scans the
    # owner's sessions from the newest down to the cursor.
    return after


@functools.cache
def _page_statement(dialect: str, prefixed: bool, after: bool, owned: bool) -> Select[Any]:
    """Newest first, ties by the greater id: a backward range scan of the
    ``(updated_at, session_id)`` index that stops after ``LIMIT`` rows; with ``owned``,
    of the ``:owner``'s range of ``(owner, updated_at, session_id)``."""
    query = (
        select(*RECORD_COLUMNS)
        .order_by(_session.updated_at.desc(), _session.session_id.desc())
        .limit(bindparam("limit", type_=Integer))
    )
    if owned:
        query = query.where(_session.owner == bindparam("owner", type_=Key()))
    if prefixed:
        pattern = bindparam("pattern", type_=Key())
        query = query.where(_session.session_id.like(pattern, escape="/"))
        if dialect == "sqlite":
            # SQLite's LIKE ignores ASCII case; the prefix must match exactly.
            length = bindparam("prefix_length", type_=Integer)
            prefix = bindparam("prefix", type_=Key())
            query = query.where(func.substr(_session.session_id, 1, length) == prefix)
    if after:
        query = query.where(_after(dialect, owned))
    if dialect in ("mysql", "mariadb"):
        # MariaDB's cost model prefers a full scan and a sort once the range holds most
        # rows, though LIMIT stops the index scan after a page.
        hint = f"FORCE INDEX ({OWNER_PAGE_INDEX if owned else PAGE_INDEX})"
        query = query.with_hint(sessions_table, hint, "mysql").with_hint(
            sessions_table, hint, "mariadb"
        )
    return query


def _like_prefix(prefix: str) -> str:
    """The ``LIKE`` pattern (escape ``/``) of the ids starting with ``prefix``."""
    for special in ("/", "%", "_"):
        prefix = prefix.replace(special, "/" + special)
    return prefix + "%"


def list_page(
    conn: Connection,
    prefix: str | None,
    limit: int,
    after: tuple[datetime, str] | None,
    owner: str | None = None,
) -> list[SessionInfo]:
    """At most ``limit`` records, the most recently updated first, after the ``after`` key;
    only ``owner``'s when given."""
    owned = owner is not None
    statement = _page_statement(conn.dialect.name, bool(prefix), after is not None, owned)
    params: dict[str, Any] = {"limit": limit}
    if owned:
        params["owner"] = owner
    if prefix:
        params.update(pattern=_like_prefix(prefix), prefix=prefix, prefix_length=len(prefix))
    if after is not None:
        params.update(at=after[0], after_sid=after[1])
    return [_info(row) for row in conn.execute(statement, params).mappings()]


def update_session(
    conn: Connection, sid: str, values: dict[str, Any], now: datetime, owner: str | None = None
) -> None:
    """Set the record's ``values`` (``title``, ``metadata_json``, ``owner``) under the
    session's lock, creating the record if needed; its ``updated_at`` moves to ``now``.
    With ``owner`` (an owned view), the session must be (or becomes) ``owner``'s."""
    lock_session(conn, sid, 0, now, now, keep_history=True, owner=owner)
    if "title" in values and conn.dialect.name == "postgresql":
        values = dict(values)
        base64_text.escape([values], base64_text.SESSION_TEXT)
    conn.execute(
        update(sessions_table)
        .where(_session.session_id == sid)
        .values(**values, updated_at=later(_session.updated_at, now))
    )


def prune(conn: Connection, cutoff: datetime, owner: str | None = None) -> int:
    """Delete every session whose ``updated_at`` is before ``cutoff`` (only ``owner``'s,
    when given); how many went.

    The candidates are found first, then locked in sorted id order (a chunk at a time)
    and checked again under the lock: a session written meanwhile is kept.
    """
    old = _session.updated_at < cutoff
    if owner is not None:
        old = and_(old, _session.owner == owner)
    candidates = sorted(conn.scalars(select(_session.session_id).where(old)))
    deleted = 0
    for start in range(0, len(candidates), PRUNE_CHUNK):
        deleted += delete_locked(conn, candidates[start : start + PRUNE_CHUNK], old)
    return deleted


def delete_locked(conn: Connection, ids: Sequence[str], condition: ColumnElement[bool]) -> int:
    """Lock the sessions ``ids`` that still meet ``condition`` (in sorted id order) and
    delete them with all they hold; how many went."""
    locked = list(
        conn.scalars(
            select(_session.session_id)
            .where(_session.session_id.in_(ids), condition)
            .order_by(_session.session_id)
            .with_for_update()
        )
    )
    if not locked:
        return 0
    # Messages first (their blocks go with them), then the records (and their blobs).
    conn.execute(delete(messages_table).where(messages_table.c.session_id.in_(locked)))
    conn.execute(delete(sessions_table).where(_session.session_id.in_(locked)))
    return len(locked)
