"""PostgreSQL: a ``save`` that only adds messages, in one statement.

The usual ``save`` (:func:`~sqlmemory.storage.sql.writes.save`) takes the lock, learns
from it how much of the history the last save left (its hash chain,
:mod:`~sqlmemory.storage.sql.history_chain`), then writes: five round trips with
``BEGIN`` and ``COMMIT``. When the new history extends the one the last save left (by
whichever process), the statement of :mod:`~sqlmemory.storage.sql.one_statement_append`
does it in one, in autocommit, with an update of the session's row as its lock: it
allocates the seqs, stores the new chain and count, and inserts the messages past the
stored ones.

Which messages are stored is read under the lock: a sub-select ``FOR UPDATE`` waits for
the session's row and reads its newest version (under ``READ COMMITTED`` a locking read
reads what the writer before it committed), and the update happens only if the stored
chain is the chain over that many of the messages given. The caller sends the rows of
the messages that may be new, with the chains they would follow: the ones past
``known`` when its storage saved the session last (``known`` messages), else the last
:data:`WINDOW`. A session that has no row yet is created by the same statement when
every message is sent. Otherwise (another writer came between, an append since, a
session with a row but no saved history, or grown by more than the window) the statement
returns no row, so writes nothing, and the caller saves the usual way.

Examples:
    >>> from sqlmemory.types import Message
    >>> history = [Message.user("hi"), Message.assistant("hello")]
    >>> grows(history, 1)
    True
    >>> grows(history, 2)  # nothing new: the usual save decides
    False
    >>> grows(history, None)  # the stored length is read under the lock
    True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Integer,
    Text,
    bindparam,
    cast,
    exists,
    false,
    literal,
    select,
    update,
)
from sqlalchemy.dialects import postgresql

from sqlmemory.storage.sql.codec import encode_message, time_is_stored
from sqlmemory.storage.sql.history_chain import history_digest, history_digests
from sqlmemory.storage.sql.one_statement_append import append_statement, fits
from sqlmemory.storage.sql.schema import sessions_table
from sqlmemory.storage.sql.session_lock import changed_record, later
from sqlmemory.types import Message

__all__ = ["WINDOW", "grows", "save_grown"]

WINDOW = 64
"""How many of the newest messages given a save sends as possibly new when its storage
does not know how many the last save left: a history that grew by more since is saved
the usual way."""


def _save_lock() -> Any:
    """The part that locks the session's row for a save, in two ways, one of which
    returns a row:

    - the update of a stored history of ``stored`` messages, ``:base`` or more and fewer
      than ``:total``, over which the stored chain is ``:chains[stored - base]`` (a JSON
      array): it records the chain ``:after`` over ``:total`` and returns ``first``, the
      offset of the first new message among the rows sent;
    - the creation of a session that has no row, when every message is sent (``:base``
      is 0): its record says ``:total`` messages with the chain ``:after``, and
      ``first`` is 0. A row created meanwhile by another writer makes it insert nothing
      (``ON CONFLICT DO NOTHING``, after waiting for that writer).

    Both return the session's ``next_seq`` past the new messages and its clock."""
    session = sessions_table.c
    prior = (
        select(session.history_len.label("stored"))
        .where(session.session_id == bindparam("sid"))
        .with_for_update()
        .cte("prior")
    )
    chains = cast(bindparam("chains", type_=Text()), postgresql.JSON)
    first = prior.c.stored - bindparam("base")
    grown = (
        update(sessions_table)
        .where(
            session.session_id == bindparam("sid"),
            prior.c.stored >= bindparam("base"),
            prior.c.stored < bindparam("total"),
            session.history_digest == chains[cast(first, Integer)].astext,
        )
        .values(
            next_seq=session.next_seq + bindparam("total") - prior.c.stored,
            last_recorded_at=later(session.last_recorded_at, bindparam("now")),
            **changed_record(
                bindparam("total"), bindparam("now"), (bindparam("after"), bindparam("total"))
            ),
        )
        .returning(session.next_seq, session.last_recorded_at, first.label("first"))
        .cte("grown")
    )
    record = {
        "session_id": bindparam("sid"),
        "next_seq": bindparam("total") + 1,
        "last_recorded_at": bindparam("now"),
        "created_at": bindparam("now"),
        "updated_at": bindparam("now"),
        "message_count": bindparam("total"),
        "history_digest": bindparam("after"),
        "history_len": bindparam("total"),
        "text_base64": false(),
    }
    absent = ~exists(select(prior.c.stored))
    created = (
        postgresql.insert(sessions_table)
        .from_select(list(record), select(*record.values()).where(bindparam("base") == 0, absent))
        .on_conflict_do_nothing()
        .returning(session.next_seq, session.last_recorded_at, literal(0).label("first"))
        .cte("created")
    )
    both = select(grown.c.next_seq, grown.c.last_recorded_at, grown.c.first).union_all(
        select(created.c.next_seq, created.c.last_recorded_at, created.c.first)
    )
    return both.cte("lock")


def grows(messages: Sequence[Message], known: int | None) -> bool:
    """Whether ``messages`` can be saved as the stored ones plus the rest: more than
    ``known`` of them (at least one when the stored length is not known), and no time
    given that may differ from a stored one."""
    return len(messages) > (known or 0) and all(time_is_stored(m) for m in messages)


def save_grown(
    conn: Connection, sid: str, messages: Sequence[Message], known: int | None, now: datetime
) -> bool:
    """Save ``messages`` as the stored ones plus the rest, in one statement (``conn`` in
    autocommit); ``False``, with nothing written, when the stored history is not a
    prefix of them the window covers (``known`` messages exactly, when given; else from
    :data:`WINDOW` messages before the end), or the rows are too large for one statement.
    A stored message id raises ``IntegrityError``, nothing written."""
    total = len(messages)
    base = known if known is not None else max(0, total - WINDOW)
    stop = base + 1 if known is not None else total
    encoded = [encode_message(m) for m in messages[base:]]
    if not fits(encoded):
        return False
    statement, params = append_statement(sid, encoded, _save_lock)
    params.update(
        base=base,
        total=total,
        chains=json.dumps(history_digests(messages, base, stop)),
        after=history_digest(messages, total),
        now=now,
    )
    return bool(conn.execute(statement, params).all())
