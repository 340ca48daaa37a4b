"""PostgreSQL: an append in one statement, so one round trip in all.

A data-modifying ``WITH`` does in one statement what :func:`~sqlmemory.storage.sql.writes.append`
does in three or more: the upsert of the session row that takes its lock and allocates
the seqs (``lock``), the blobs the session does not hold yet (``ON CONFLICT DO
NOTHING``), the message rows and the block rows, their seqs counted from what ``lock``
returned. Sent in autocommit, the statement is its own transaction: no ``BEGIN``, no
``COMMIT``, all or nothing. Every part reads ``lock``'s row, so the session's lock is
taken before any row is written, as in the transaction; a stored message id makes the
unique index fail the whole statement, and the caller then decides under the lock
(:func:`~sqlmemory.storage.sql.writes.append_idempotent`), as after the other append.

The message rows and the block rows travel as one JSON array each
(``json_to_recordset``, every column typed as its table's), the blobs as one array per
column (``unnest``), so the statement is the same text whatever the batch's size:
compiled by SQLAlchemy, and prepared by psycopg, once.

The rows are the codec's row dicts (:func:`~sqlmemory.storage.sql.codec.encode_message`),
whatever columns they hold: a column the codec adds flows through. Only the unscoped
storage takes this path: an owned view's append checks the owner the upsert returns
before it writes
(:func:`~sqlmemory.storage.sql.session_lock.lock_session`).

Examples:
    >>> from sqlmemory.storage.sql.codec import encode_message
    >>> from sqlmemory.types import Message
    >>> statement, params = append_statement("chat-1", [encode_message(Message.user("hi"))])
    >>> params["k"]
    1
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Executable,
    Integer,
    Text,
    bindparam,
    cast,
    column,
    func,
    select,
    true,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.expression import ColumnElement

from sqlmemory.storage.sql import base64_text
from sqlmemory.storage.sql.codec import EncodedMessage
from sqlmemory.storage.sql.schema import blobs_table, blocks_table, messages_table
from sqlmemory.storage.sql.session_lock import _lock_statements

__all__ = ["MAX_VALUES", "append_in_one_statement", "append_statement", "fits"]

MAX_VALUES = 200_000
"""The most values one statement carries. They travel as a few JSON documents and
arrays, so the drivers' limits on bound parameters do not apply; past this a batch is
appended by the statements of a transaction, which insert its rows in batches, so that
one statement's parameters stay a bounded size in memory."""

_OFFSET = "sqlmemory_offset"
"""The column of the rows that says which message of the batch a row is of."""
_BLOB_COLUMNS = ("sha256", "data", "size", "width", "height")

_Shape = tuple[tuple[str, ...], tuple[str, ...], bool]
"""What a statement depends on: the message rows' columns, the block rows' columns (none
when the batch has no blocks), and whether it has blobs. The batch's size never changes
it: a statement is built, compiled and prepared by the server once for every size."""


def _rows(table: Any, names: Sequence[str], prefix: str) -> Any:
    """The rows of ``names`` (``table``'s columns, or :data:`_OFFSET`) from the JSON array
    of objects bound as ``prefix``, each value typed as its column
    (``json_to_recordset``)."""
    columns = [column(c, Integer() if c == _OFFSET else table.c[c].type) for c in names]
    rows = cast(bindparam(prefix, type_=Text()), postgresql.JSON)
    return (
        func.json_to_recordset(rows)
        .table_valued(*columns)
        .render_derived(name=prefix, with_types=True)
    )


def _blob_rows() -> Any:
    """The blobs, as ``unnest`` of one array parameter per column, ``f_<column index>``
    (bytes have no JSON form)."""
    types = [blobs_table.c[c].type for c in _BLOB_COLUMNS]
    arrays = [
        cast(bindparam(f"f_{j}", type_=postgresql.ARRAY(t)), postgresql.ARRAY(t))
        for j, t in enumerate(types)
    ]
    return func.unnest(*arrays).table_valued(*_BLOB_COLUMNS).render_derived(name="f")


def _insert_rows(table: Any, names: Sequence[str], lock: Any, prefix: str) -> Any:
    """``INSERT INTO table SELECT ...`` of the rows, each at the seq of its message."""
    found = _rows(table, [*names, _OFFSET], prefix)
    seq: ColumnElement[Any] = lock.c.next_seq - bindparam("k") + found.c[_OFFSET]
    chosen: list[Any] = [found.c[c] for c in names if c != "recorded_at"]
    targets = [c for c in names if c != "recorded_at"]
    if "recorded_at" in names:
        # A message without a time of its own gets the session clock the lock moved.
        chosen.append(func.coalesce(found.c.recorded_at, lock.c.last_recorded_at))
        targets.append("recorded_at")
    chosen += [bindparam("sid"), seq]
    targets += ["session_id", "seq"]
    rows_select = select(*chosen).select_from(found).join(lock, true())
    if "first" in lock.c:
        # A save's lock says which of the rows sent are new: those from ``first`` on.
        rows_select = rows_select.where(found.c[_OFFSET] >= lock.c.first)
    return table.insert().from_select(targets, rows_select).cte(f"{prefix}written")


def _append_lock() -> Any:
    """The append's lock: the session upsert, allocating ``:k`` seqs."""
    return _lock_statements("postgresql", False)[0].cte("lock")  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=64)
def _statement(shape: _Shape, locking: Callable[[], Any] = _append_lock) -> Executable:
    """The statement of one :data:`_Shape`, built once: SQLAlchemy then finds it compiled
    in its cache, and psycopg prepares it on the server, as for any other statement.

    ``locking`` builds the first part, which locks the session's row and returns its
    ``next_seq`` (past the ``:k`` seqs allocated) and ``last_recorded_at``: the append's
    upsert, or a save's conditional update
    (:mod:`~sqlmemory.storage.sql.one_statement_save`), which also returns ``first``, the
    offset of the first row to insert. Every other part reads its row, so nothing is
    written when it returns none."""
    message_names, block_names, has_blobs = shape
    lock = locking()
    parts = [_insert_rows(messages_table, message_names, lock, "m")]
    if block_names:
        parts.append(_insert_rows(blocks_table, block_names, lock, "b"))
    if has_blobs:
        found = _blob_rows()
        chosen = [found.c[c] for c in _BLOB_COLUMNS]
        rows_select = select(*chosen, bindparam("sid")).select_from(found).join(lock, true())
        insert_blobs = (
            postgresql.insert(blobs_table)
            .from_select([*_BLOB_COLUMNS, "session_id"], rows_select)
            .on_conflict_do_nothing()
        )
        parts.append(insert_blobs.cte("fwritten"))
    return select(lock.c.next_seq).add_cte(*parts)


def _json(rows: Sequence[dict[str, Any]]) -> str:
    """``rows`` as a JSON array of objects, times as ISO 8601 text.

    No value holds NUL, which PostgreSQL cannot turn into text: ids refuse control
    characters, free text that holds NUL is in base64 by now, and the search text has it
    as a space."""
    for row in rows:
        at = row.get("recorded_at")
        if at is not None:
            row["recorded_at"] = at.isoformat()
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def fits(encoded: Sequence[EncodedMessage]) -> bool:
    """Whether appending ``encoded`` carries few enough values for one statement, its rows
    all of the same columns (as the codec makes them)."""
    values = 0
    keys = encoded[0].row.keys()
    block_keys = None
    for e in encoded:
        if e.row.keys() != keys:
            return False
        for block in e.blocks:
            block_keys = block_keys or block.keys()
            if block.keys() != block_keys:
                return False
        values += len(e.row) + 2 + sum(len(b) + 1 for b in e.blocks) + 5 * len(e.blobs)
        if values > MAX_VALUES:
            return False
    return True


def append_statement(
    sid: str, encoded: Sequence[EncodedMessage], locking: Callable[[], Any] = _append_lock
) -> tuple[Executable, dict[str, Any]]:
    """The statement appending ``encoded`` to ``sid`` and the parameters it takes
    (besides the clock ``clock``, ``now`` and the ``owner``)."""
    message_rows: list[dict[str, Any]] = []
    block_rows: list[dict[str, Any]] = []
    for offset, e in enumerate(encoded):
        message_rows.append({**e.row, "recorded_at": e.message.recorded_at, _OFFSET: offset})
        block_rows.extend({**block, _OFFSET: offset} for block in e.blocks)
    base64_text.escape(message_rows, base64_text.MESSAGE_TEXT)
    base64_text.escape(block_rows, base64_text.BLOCK_TEXT)
    blobs = list({b.sha256: b for e in encoded for b in e.blobs}.values())
    message_names = tuple(n for n in message_rows[0] if n != _OFFSET)
    block_names = tuple(n for n in block_rows[0] if n != _OFFSET) if block_rows else ()
    params: dict[str, Any] = {"sid": sid, "k": len(encoded)}
    params["m"] = _json(message_rows)
    if block_rows:
        params["b"] = _json(block_rows)
    for j, values in enumerate(
        zip(*((b.sha256, b.data, len(b.data), b.width, b.height) for b in blobs), strict=True)
    ):
        params[f"f_{j}"] = list(values)
    return _statement((message_names, block_names, bool(blobs)), locking), params


def append_in_one_statement(
    conn: Connection, sid: str, encoded: Sequence[EncodedMessage], now: datetime
) -> None:
    """Append ``encoded`` to ``sid`` in one statement (``conn`` in autocommit: one round
    trip); a stored message id raises ``IntegrityError`` and nothing is written."""
    statement, params = append_statement(sid, encoded)
    conn.execute(statement, {**params, "clock": now, "now": now, "owner": None}).all()
