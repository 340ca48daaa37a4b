"""The session lock, and the upkeep of the session's record that every write shares.

Every write takes the session's lock (an upsert of its ``sqlmemory_sessions`` row, or a
``SELECT ... FOR UPDATE`` of a row that must exist already) before it reads or deletes
anything, so writers of one session queue on one row while writers of other sessions
never meet. The functions here take that lock, keep the record in step with the messages
a write changed (message count, ``updated_at``, the history chain ``save`` trusts) and
delete what a write leaves behind: a whole session, or blobs no block references.

Plain functions over a ``Connection``, used by :mod:`~sqlmemory.storage.sql.writes`,
:mod:`~sqlmemory.storage.sql.deletes`, :mod:`~sqlmemory.storage.sql.compact` and
:mod:`~sqlmemory.storage.sql.record_queries`. None of them commits.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Executable,
    bindparam,
    case,
    delete,
    exists,
    false,
    func,
    null,
    select,
    update,
)
from sqlalchemy.dialects import mysql, postgresql, sqlite

from sqlmemory.storage.owners import refuse
from sqlmemory.storage.sql.column_types import Key
from sqlmemory.storage.sql.driver_sql import run_statement
from sqlmemory.storage.sql.save_plan import SessionLock
from sqlmemory.storage.sql.schema import blobs_table, blocks_table, messages_table, sessions_table

__all__ = [
    "changed_record",
    "delete_session",
    "later",
    "lock_existing",
    "lock_session",
    "record_change",
    "remember_history",
    "set_session",
    "sweep_blobs",
]


def later(stored: Any, new: Any) -> Any:
    """SQL for the later of two times: a session's clocks never go backwards."""
    return case((stored > new, stored), else_=new)


@functools.cache
def _lock_statements(dialect: str, keep_history: bool) -> tuple[Executable, Executable | None]:
    """The session upsert of ``dialect`` (and, where it cannot RETURN, the read after it).

    ``keep_history`` says whether the session's history chain survives (``save``, which
    sets it itself once it knows the history it leaves, and ``update_session``) or is
    cleared (an append, which also counts its messages on the record and moves its
    ``updated_at``). A new record starts with ``k`` messages, updated now, owned by
    ``:owner`` (``NULL`` for the unscoped storage); an existing row keeps its owner, which
    the upsert returns for the caller to check under the lock it now holds.
    Built once: constructing SQLAlchemy statements costs more than sending them.
    """
    values: dict[str, Any] = {
        "session_id": bindparam("sid"),
        "owner": bindparam("owner", type_=Key()),
        "next_seq": bindparam("k") + 1,
        "last_recorded_at": bindparam("clock"),
        "created_at": bindparam("now"),
        "updated_at": bindparam("now"),
        "message_count": bindparam("k"),
        # The column's default as SQL: the upsert binds only its own parameters, so that
        # SQLite runs it, compiled once, on the driver's cursor (driver_sql.run_statement).
        "text_base64": false(),
    }
    session = sessions_table.c
    cleared: dict[str, Any] = {}
    if not keep_history:
        # An append: the record counts the new messages and its clock moves.
        cleared = {
            # null(), not None: the literal SQL NULL, which needs no parameter (a None
            # becomes one, which the upsert cannot bind inside a WITH).
            "history_digest": null(),
            "history_len": null(),
            "message_count": session.message_count + bindparam("k"),
            "updated_at": later(session.updated_at, bindparam("now")),
        }
    returned = (
        session.next_seq,
        session.last_recorded_at,
        session.history_digest,
        session.history_len,
        session.owner,
    )
    if dialect in ("mysql", "mariadb"):
        my = mysql.insert(sessions_table).values({**values, "next_seq": _told(values["next_seq"])})
        stored_ahead = case((session.last_recorded_at > my.inserted.last_recorded_at, 1), else_=0)
        upsert = my.on_duplicate_key_update(
            [
                # First: the flag reads the stored clock, before the next part moves it.
                ("next_seq", _told(session.next_seq + bindparam("k"), stored_ahead)),
                (
                    "last_recorded_at",
                    case(
                        (stored_ahead == 1, session.last_recorded_at),
                        else_=my.inserted.last_recorded_at,
                    ),
                ),
                *cleared.items(),
            ]
        )
        read = select(*returned).where(session.session_id == bindparam("sid"))
        return upsert, read
    insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
    ins = insert_of(sessions_table).values(values)
    upsert_returning = ins.on_conflict_do_update(
        index_elements=[session.session_id],
        set_={
            "next_seq": session.next_seq + bindparam("k"),
            "last_recorded_at": case(
                (
                    session.last_recorded_at > ins.excluded.last_recorded_at,
                    session.last_recorded_at,
                ),
                else_=ins.excluded.last_recorded_at,
            ),
            **cleared,
        },
    ).returning(*returned)
    return upsert_returning, None


def _told(next_seq: Any, stored_ahead: Any = 0) -> Any:
    """MySQL/MariaDB: ``next_seq``, also told to the client in the upsert's answer, which
    cannot return rows: as ``LAST_INSERT_ID(next_seq * 2 + stored_ahead)``, the id the
    server reports for the statement, halved again for the column. ``stored_ahead`` is 1
    when the session's stored clock is later than the writer's (its stamp is then not
    the writer's clock: the caller reads the row)."""
    return func.floor(func.last_insert_id(next_seq * 2 + stored_ahead) / 2)


def lock_session(
    conn: Connection,
    sid: str,
    k: int,
    clock: datetime,
    now: datetime,
    *,
    keep_history: bool = False,
    owner: str | None = None,
) -> SessionLock:
    """Take the session's lock, creating its row if needed, and allocate ``k`` seqs.

    The upsert takes the row lock in the same statement on every backend, so concurrent
    writers of one session queue here while writers of other sessions never meet. The
    session's history chain is cleared unless ``keep_history``. ``clock`` is the store's
    stamp for the messages, ``now`` the wall clock (the record's ``updated_at``).

    With ``owner`` (an owned view's write), a new session is created as ``owner``'s, and
    an existing one must be ``owner``'s: checked on the row the upsert locked, so two
    owners racing to create one id end with one owner, and the other's write fails here.

    Raises:
        SessionOwnerError: the session is another owner's, or no one's; the caller's
            transaction must roll back (the upsert touched the row).
    """
    upsert, read = _lock_statements(conn.dialect.name, keep_history)
    params: dict[str, Any] = {"sid": sid, "k": k, "clock": clock, "now": now, "owner": owner}
    if read is None:
        (row,) = run_statement(conn, upsert, [params])
    else:
        told = conn.execute(upsert, params).lastrowid
        if not keep_history and owner is None and told and told % 2 == 0:
            # MySQL/MariaDB: the seqs came with the upsert's answer (see _told), and the
            # stamp is the writer's clock, which the stored one did not pass; an append
            # needs no history chain and no owner, so no read of the row.
            return SessionLock(told // 2 - k, clock, None, None)
        row = conn.execute(read, params).one()
    if owner is not None and row[4] != owner:
        raise refuse(sid, owner)
    return SessionLock(int(row[0]) - k, row[1], row[2], row[3])


@functools.cache
def _lock_existing_statement(owned: bool) -> Executable:
    locked = select(sessions_table.c.session_id).where(
        sessions_table.c.session_id == bindparam("sid")
    )
    if owned:
        locked = locked.add_columns(sessions_table.c.owner)
    return locked.with_for_update()


def lock_existing(conn: Connection, sid: str, owner: str | None = None) -> bool:
    """Lock the session's row if it exists (SQLite's write lock is already held).

    Returns whether it exists, for ``owner`` when given: a session of another owner (or
    of none) is locked but reported absent, so the caller leaves it as it is.
    """
    found = conn.execute(_lock_existing_statement(owner is not None), {"sid": sid}).first()
    if found is None:
        return False
    return owner is None or found[1] == owner


def remember_history(conn: Connection, sid: str, digest: str | None, length: int | None) -> None:
    """Set (or with ``None``, clear) the session's history digest."""
    conn.execute(
        update(sessions_table)
        .where(sessions_table.c.session_id == sid)
        .values(history_digest=digest, history_len=length)
    )


def set_session(
    conn: Connection,
    sid: str,
    next_seq: int,
    clock: datetime,
    history: tuple[str, int],
    now: datetime,
) -> None:
    """Record on the locked session row the seqs used, the clock and the history chain
    that a save left, with its message count and ``updated_at``."""
    params = {
        "sid": sid,
        "seq_after": next_seq,
        "clock": clock,
        "chain": history[0],
        "count": history[1],
        "now": now,
    }
    run_statement(conn, _set_session_statement(), [params])


@functools.cache
def _set_session_statement() -> Executable:
    """:func:`set_session`'s ``UPDATE``, built once (building it cost a fifth of a save
    on SQLite, where the statement itself runs in process)."""
    session = sessions_table.c
    count = bindparam("count", type_=session.history_len.type)
    now = bindparam("now", type_=session.updated_at.type)
    chain = bindparam("chain", type_=session.history_digest.type)
    return (
        update(sessions_table)
        .where(session.session_id == bindparam("sid"))
        .values(
            next_seq=bindparam("seq_after", type_=session.next_seq.type),
            last_recorded_at=bindparam("clock", type_=session.last_recorded_at.type),
            **changed_record(count, now, (chain, count)),
        )
    )


def changed_record(count: Any, now: Any, history: tuple[Any, Any]) -> dict[str, Any]:
    """The values of a session row after a write that changed its messages: the message
    count (``count``), ``updated_at`` moved to ``now`` (never back), and the history
    chain (its digest and length). Values or SQL: inside a ``WITH`` a ``NULL`` must be
    ``null()``, which needs no parameter."""
    session = sessions_table.c
    return {
        "message_count": count,
        "updated_at": later(session.updated_at, now),
        "history_digest": history[0],
        "history_len": history[1],
    }


def record_change(
    conn: Connection, sid: str, count: Any, now: datetime, history: tuple[str | None, int | None]
) -> None:
    """After a write that changed the session's messages: its record's message count
    (``count``, a number or SQL), ``updated_at`` and history chain."""
    conn.execute(
        update(sessions_table)
        .where(sessions_table.c.session_id == sid)
        .values(changed_record(count, now, history))
    )


def sweep_blobs(conn: Connection, sid: str) -> None:
    """Delete the session's blobs that no block references any more."""
    conn.execute(
        delete(blobs_table).where(
            blobs_table.c.session_id == sid,
            ~exists().where(
                blocks_table.c.session_id == blobs_table.c.session_id,
                blocks_table.c.blob_sha256 == blobs_table.c.sha256,
            ),
        )
    )


def delete_session(conn: Connection, sid: str) -> int:
    """Delete the session, its messages, blocks and blobs; returns messages deleted."""
    deleted = conn.execute(
        delete(messages_table).where(messages_table.c.session_id == sid)
    ).rowcount
    conn.execute(delete(sessions_table).where(sessions_table.c.session_id == sid))
    return int(deleted)
