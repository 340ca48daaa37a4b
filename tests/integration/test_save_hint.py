"""A save of a history the last save left, grown: one statement on PostgreSQL
(``one_statement_save.py``), from the storage that saved last or from any other, whose
condition (the stored hash chain over the stored length, read under the lock) must catch
every write that came between, from another storage or this one
(``docs/performance.md``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import DuplicateMessageError, InvalidMessageError, Message, SqlStorage
from sqlmemory.storage.sql.one_statement_save import WINDOW
from tests.integration.test_sql_efficiency import recording


def _history(n: int, tag: str = "m") -> list[Message]:
    return [Message.user(f"{tag}{i}") for i in range(n)]


BETWEEN: dict[str, Callable[[SqlStorage, list[Message]], Any]] = {
    "append": lambda other, h: other.append("s", Message.user("appended")),
    "save": lambda other, h: other.save("s", [*h[:5], Message.user("theirs")]),
    # As many messages as this storage saved, other ones: only the chain tells.
    "save_as_many": lambda other, h: other.save("s", [*h[:9], Message.user("theirs")]),
    "pop": lambda other, h: other.pop("s"),
    "evict": lambda other, h: other.evict("s", 3),
    "clear": lambda other, h: other.clear("s"),
    "update_session": lambda other, h: other.update_session("s", title="renamed"),
    "nothing": lambda other, h: None,
}


@pytest.mark.parametrize("saved_by", ["this storage", "another"])
@pytest.mark.parametrize("between", list(BETWEEN))
def test_a_grown_save_after_another_write_is_the_history_given(
    storage: Any, engine: sa.Engine, between: str, saved_by: str
) -> None:
    # Saved first by this storage (it knows the length it left) or by another (a
    # process's, say: the stored length is read under the lock, among the last WINDOW).
    history = _history(10)
    (storage if saved_by == "this storage" else SqlStorage(engine)).save("s", history)
    BETWEEN[between](SqlStorage(engine), history)
    grown = [*history, Message.user("one more"), Message.assistant("sure")]
    storage.save("s", grown)
    assert [m.id for m in storage.load("s")] == [m.id for m in grown]
    info = storage.session_info("s")
    assert info is not None and info.message_count == len(grown)
    if between == "update_session":
        assert info.title == "renamed"
    # And the chain it left vouches for the next save, whichever path wrote it.
    again = [*grown, Message.user("and again")]
    storage.save("s", again)
    assert [m.id for m in storage.load("s")] == [m.id for m in again]


def test_a_grown_save_after_this_storages_own_append(storage: Any) -> None:
    history = _history(4)
    storage.save("s", history)
    storage.append("s", Message.user("mine"))
    grown = [*history, Message.user("given instead")]
    storage.save("s", grown)
    assert [m.text_content() for m in storage.load("s")] == [m.text_content() for m in grown]


def test_a_grown_save_whose_new_id_is_stored_with_other_content_is_refused(
    storage: Any,
) -> None:
    history = _history(3)
    storage.save("s", history)
    twin = Message.user("different", id=history[0].id)
    with pytest.raises((InvalidMessageError, DuplicateMessageError)):
        storage.save("s", [*history, twin])
    assert [m.id for m in storage.load("s")] == [m.id for m in history]


@pytest.mark.parametrize("stored", [0, 1, 30, 63, 64, 65, 100])
def test_a_save_grown_by_any_count_stores_the_history_given(
    storage: Any, engine: sa.Engine, backend: str, stored: int
) -> None:
    history = _history(100)
    SqlStorage(engine).save("s", history[:stored])
    assert storage.count("s") == stored  # the schema check, before the recording
    with recording(storage.sync_engine) as rec:
        storage.save("s", history)
    assert [m.id for m in storage.load("s")] == [m.id for m in history]
    assert storage.session_info("s").message_count == 100
    seqs = _seqs(engine)
    assert seqs == sorted(set(seqs)) and len(seqs) == 100
    if backend == "postgresql":
        # One statement when the stored history is within the window (grown by 1 to
        # 64): otherwise it writes nothing and the usual save follows.
        one = 0 < stored < 100 and 100 - stored <= WINDOW
        assert (len(rec.data_statements()) == 1) == one, rec.data_statements()


def test_a_fresh_storages_save_is_one_statement_on_postgresql(
    storage: Any, engine: sa.Engine, backend: str
) -> None:
    history = _history(10, "h")
    SqlStorage(engine).save("s", history)
    loaded = storage.load("s")
    with recording(storage.sync_engine) as rec:
        storage.save("s", [*loaded, Message.user("next turn")])
    assert [m.text_content() for m in storage.load("s")][-2:] == ["h9", "next turn"]
    if backend == "postgresql":
        assert rec.shape() == ["WITH sqlmemory_sessions"]
        assert rec.autocommit == [True]


@pytest.mark.parametrize("n", [1, WINDOW, WINDOW + 1])
def test_a_first_save_creates_the_session_in_one_statement_on_postgresql(
    storage: Any, engine: sa.Engine, backend: str, n: int
) -> None:
    # A session with no row, every message sent (at most WINDOW): the statement creates
    # its record; a longer one takes the usual path, as does a session with a row.
    history = _history(n, "f")
    assert storage.count("s") == 0  # the schema check, before the recording
    with recording(storage.sync_engine) as rec:
        storage.save("s", history)
    assert [m.id for m in storage.load("s")] == [m.id for m in history]
    info = storage.session_info("s")
    assert info is not None and info.message_count == n
    assert info.created_at == info.updated_at
    assert _seqs(engine) == list(range(1, n + 1))
    if backend == "postgresql":
        assert (rec.shape() == ["WITH sqlmemory_sessions"]) == (n <= WINDOW), rec.shape()
    # The record it made vouches for the next save, and places the next append.
    other = SqlStorage(engine)  # another process's, say
    assert other.count("s") == n
    with recording(engine) as rec:
        other.save("s", [*history, Message.user("grown")])
    storage.append("s", Message.user("appended"))
    assert _seqs(engine) == list(range(1, n + 3))
    assert [m.text_content() for m in storage.load("s")][-2:] == ["grown", "appended"]
    if backend == "postgresql":
        assert rec.shape() == ["WITH sqlmemory_sessions"]
    storage.update_session("t", title="a record first")
    storage.save("t", history)  # a row without a history: the usual save
    assert [m.id for m in storage.load("t")] == [m.id for m in history]
    assert storage.session_info("t").title == "a record first"


def _seqs(engine: sa.Engine) -> list[int]:
    with engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT seq FROM sqlmemory_messages WHERE session_id = 's' ORDER BY seq"
        )
        return [int(r[0]) for r in rows]
