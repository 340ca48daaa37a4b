"""SQLite inserts a batch of texts alone from their plain values
(``sqlmemory/storage/sql/plain_inserts.py``), and what it stores is what the row dicts
store; any other batch, or a watched engine, takes the row dicts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlmemory import Message, SqlStorage, TextBlock
from sqlmemory.migrate import upgrade
from sqlmemory.storage.search_rules import MAX_SEARCH_TEXT
from sqlmemory.storage.sql import writes
from sqlmemory.storage.sql.codec import encode_message
from sqlmemory.storage.sql.schema import blocks_table, messages_table
from sqlmemory.types import canonical_json
from sqlmemory.types._message_checks import new_id
from tests.support.strategies import ids, messages, times

EDGES = [" ", "\x00", "a\x00b", "é" * 9, "\U0001f600 ok", "x" * (MAX_SEARCH_TEXT + 3)]
texts = st.text(max_size=40) | st.sampled_from(EDGES)
ROLES = ("user", "assistant", "system", "developer")


@st.composite
def texts_alone(draw: st.DrawFn) -> Message:
    """A message of one text block without extras, metadata or usage, of any role."""
    text, when = draw(texts), draw(times)
    if draw(st.booleans()):
        call = draw(ids)
        return Message.tool(call, text, is_error=draw(st.booleans()), recorded_at=when)
    # An empty text is no content, which only a tool result may have.
    return Message(draw(st.sampled_from(ROLES)), text or " ", recorded_at=when)


@pytest.fixture(scope="module")
def storage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlStorage]:
    url = f"sqlite:///{Path(tmp_path_factory.mktemp('plain')) / 'plain.db'}"
    upgrade(url)
    with SqlStorage.from_url(url) as made:
        yield made


def stored(storage: SqlStorage, sid: str, table: sa.Table = messages_table) -> list[dict[str, Any]]:
    """The rows of ``table`` of ``sid`` in order, without the session's id."""
    query = sa.select(table).where(table.c.session_id == sid)
    with storage.engine.connect() as conn:
        rows = conn.execute(query.order_by(*table.primary_key.columns)).mappings().all()
    return [{k: v for k, v in row.items() if k != "session_id"} for row in rows]


def inserts_sent(storage: SqlStorage, sid: str, batch: list[Message]) -> list[str]:
    """Append ``batch`` to ``sid``, and the ``INSERT``s of messages the driver ran."""
    sent: list[str] = []
    traced: list[Any] = []

    def trace(dbapi: Any, record: Any, proxy: Any) -> None:  # a pool event: not watched
        dbapi.set_trace_callback(sent.append)
        traced.append(dbapi)

    sa.event.listen(storage.engine, "checkout", trace)
    try:
        storage.append(sid, *batch)
    finally:
        sa.event.remove(storage.engine, "checkout", trace)
        for dbapi in traced:
            dbapi.set_trace_callback(None)
    # The driver traces an executemany's statement once per row, its values in it.
    inserts = [sql for sql in sent if sql.startswith("INSERT INTO sqlmemory_messages")]
    return sorted({sql[: sql.index(")") + 1] for sql in inserts})


def spying(left: list[int]) -> Callable[..., Any]:
    """``insert_plain``, how many messages it left each time put in ``left``."""
    insert_plain = writes.insert_plain

    def spy(*args: Any) -> Any:
        rest = insert_plain(*args)
        left.append(len(rest))
        return rest

    return spy


def columns_of(insert: str) -> set[str]:
    return set(insert[insert.index("(") + 1 : insert.index(")")].split(", "))


def same_stamps(rows: list[dict[str, Any]], batch: list[Message]) -> list[Any]:
    """The stored ``recorded_at`` of each row, the store's stamp replaced by one name."""
    return [
        row["recorded_at"] if message.recorded_at is not None else "stamp"
        for row, message in zip(rows, batch, strict=True)
    ]


def general_path(conn: Any, sid: str, encoded: Any, first_seq: int, stamp: Any) -> Any:
    """``insert_plain`` declining every message: the row dicts insert them all."""
    return list(enumerate(encoded, first_seq))


def both_ways(storage: SqlStorage, batch: list[Message]) -> tuple[str, str, list[int], list[str]]:
    """``batch`` appended to a new session as the storage appends it, and to another with
    every message taking the row dicts; the sessions, how many messages ``insert_plain``
    left each time it ran, and the ``INSERT``s of messages of the first."""
    fast, general = new_id(), new_id()
    left: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writes, "insert_plain", spying(left))
        inserts = inserts_sent(storage, fast, batch)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writes, "insert_plain", general_path)
        storage.append(general, *batch)
    return fast, general, left, inserts


def assert_same_storage(storage: SqlStorage, fast: str, general: str, batch: list[Message]) -> None:
    fast_rows, general_rows = stored(storage, fast), stored(storage, general)
    assert len(fast_rows) == len(batch)
    stamped = [m.recorded_at is None for m in batch]
    for rows in (fast_rows, general_rows):  # one stamp for every message without its own
        assert len({r["recorded_at"] for r, s in zip(rows, stamped, strict=True) if s}) <= 1
    assert same_stamps(fast_rows, batch) == same_stamps(general_rows, batch)
    assert [{k: v for k, v in r.items() if k != "recorded_at"} for r in fast_rows] == [
        {k: v for k, v in r.items() if k != "recorded_at"} for r in general_rows
    ]
    assert stored(storage, fast, blocks_table) == stored(storage, general, blocks_table)
    given_forms = [canonical_json(m) for m in batch]
    assert [canonical_json(m) for m in storage.load(fast)] == given_forms
    assert [canonical_json(m) for m in storage.load(general)] == given_forms


@settings(max_examples=60, deadline=None)
@given(batch=st.lists(texts_alone(), min_size=1, max_size=8))
def test_texts_alone_are_stored_as_their_row_dicts_store_them(
    storage: SqlStorage, batch: list[Message]
) -> None:
    fast, general, left, (insert,) = both_ways(storage, batch)
    assert left == [0]  # all inserted from their values, in one statement
    columns = columns_of(insert)
    assert_same_storage(storage, fast, general, batch)
    # The columns NULL in every row are not bound; the rest are.
    rows = stored(storage, fast)
    for name in ("tool_call_id", "search_text"):
        assert (name in columns) == any(r[name] is not None for r in rows)


@settings(max_examples=60, deadline=None)
@given(batch=st.lists(texts_alone() | messages(), min_size=1, max_size=6, unique_by=lambda m: m.id))
def test_any_batch_is_stored_as_the_row_dicts_store_it(
    storage: SqlStorage, batch: list[Message]
) -> None:
    fast, general, left, _ = both_ways(storage, batch)
    others = [m for m in batch if encode_message(m).plain is None]
    assert left == [len(others)]  # the texts alone from their values, the others not
    assert_same_storage(storage, fast, general, batch)


def test_a_batch_with_another_message_inserts_it_apart(
    storage: SqlStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    left: list[int] = []
    monkeypatch.setattr(writes, "insert_plain", spying(left))
    sid = new_id()
    batch = [Message.user("alone"), Message.user([TextBlock("two"), TextBlock("blocks")])]
    storage.append(sid, Message.user("alone"), Message.assistant("alone too"), *batch)
    assert left == [1]
    assert [r["n_blocks"] for r in stored(storage, sid)] == [0, 0, 0, 1]
    assert [canonical_json(m) for m in storage.load(sid)[2:]] == list(map(canonical_json, batch))


def test_a_watched_engine_sees_the_insert(storage: SqlStorage) -> None:
    seen: list[str] = []

    def watch(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        seen.append(statement)

    sa.event.listen(storage.engine, "before_cursor_execute", watch)
    try:
        storage.append(new_id(), Message.user("seen"), Message.assistant("too"))
    finally:
        sa.event.remove(storage.engine, "before_cursor_execute", watch)
    assert any(s.startswith("INSERT INTO sqlmemory_messages") for s in seen)


def test_a_message_of_its_own_time_keeps_it(storage: SqlStorage) -> None:
    when = datetime.fromisoformat("2020-01-02T03:04:05.678901+00:00")
    sid = new_id()
    storage.append(sid, Message.user("then", recorded_at=when), Message.user("now"))
    first, second = storage.load(sid)
    assert first.recorded_at == when
    assert second.recorded_at is not None and second.recorded_at > when
