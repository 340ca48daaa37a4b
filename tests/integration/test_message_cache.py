"""The reads' cache of built messages (``sqlmemory/storage/sql/message_cache.py``).

A read hands out again a message it built before when the stored row says it is the
same message (digest and ``recorded_at``): what it returns must be exactly what building
the row again returns, whatever was written, rewritten or deleted in between.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import (
    FixedWindow,
    ImageBlock,
    Message,
    SqlStorage,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from sqlmemory.storage.sql.reads import ENTRIES, MESSAGES
from tests.integration.test_sql_efficiency import _png, recording
from tests.support.strategies import messages

AT = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def uncached() -> Iterator[None]:
    """Reads that build every message, then the caches as they were configured."""
    bound, entries = MESSAGES.max_bytes, ENTRIES.max_bytes
    MESSAGES.max_bytes = ENTRIES.max_bytes = 0
    MESSAGES.clear()
    ENTRIES.clear()
    try:
        yield
    finally:
        MESSAGES.max_bytes, ENTRIES.max_bytes = bound, entries


def _agent_turns(n: int) -> list[Message]:
    history = []
    for i in range(n):
        call = ToolCall(f"c{i}", "lookup", {"q": i, "deep": [1, {"x": None}]})
        history += [
            Message.user(f"question {i}", metadata={"turn": i}),
            Message.assistant(
                [ThinkingBlock("hmm", signature="sig"), "let me look"],
                tool_calls=[call],
                usage=Usage(model="m", input_tokens=10, output_tokens=5),
            ),
            Message.tool(f"c{i}", f"answer {i}", is_error=i % 2 == 0),
            Message.assistant(f"done {i}"),
        ]
    return history


def test_a_second_read_hands_out_the_messages_the_first_built(storage: Any) -> None:
    storage.append("s", *_agent_turns(5))
    MESSAGES.clear()
    first = storage.load("s")
    second = storage.load("s")
    assert second == first
    assert all(a is b for a, b in zip(first, second, strict=True))
    window = storage.recent("s", 6)
    assert all(any(m is f for f in first) for m in window)


def test_what_the_cache_hands_out_is_what_building_gives(storage: Any) -> None:
    storage.append("s", *_agent_turns(5))
    storage.append("s", Message.user(["see", ImageBlock(_png(1), "image/png")]))
    cached = (storage.load("s"), storage.load("s", FixedWindow(3)), storage.recent("s", 5))
    MESSAGES.clear()
    ENTRIES.clear()
    bound = MESSAGES.max_bytes
    MESSAGES.max_bytes = 0
    try:
        built = (storage.load("s"), storage.load("s", FixedWindow(3)), storage.recent("s", 5))
    finally:
        MESSAGES.max_bytes = bound
    assert cached == built
    assert [m.recorded_at for m in cached[0]] == [m.recorded_at for m in built[0]]
    assert [m.usage for m in cached[0]] == [m.usage for m in built[0]]


def test_a_message_holding_bytes_is_built_on_every_read(storage: Any) -> None:
    storage.append("s", Message.user(["see", ImageBlock(_png(1), "image/png")]), Message.user("x"))
    first, second = storage.load("s"), storage.load("s")
    assert first == second
    assert first[0] is not second[0]  # bytes are not kept
    assert first[1] is second[1]


def test_the_same_message_stored_at_another_time_reads_with_its_own_time(storage: Any) -> None:
    message = Message.user("same", id="m1")
    storage.append("a", dataclasses.replace(message, recorded_at=AT))
    storage.append("b", dataclasses.replace(message, recorded_at=AT.replace(hour=13)))
    storage.append("c", dataclasses.replace(message, recorded_at=AT))
    a, b, c = (storage.load(sid)[0] for sid in "abc")
    assert (a.recorded_at.hour, b.recorded_at.hour, c.recorded_at.hour) == (12, 13, 12)
    assert a == c  # same row content: the one message may be handed out for both


def test_a_message_rewritten_under_its_id_reads_as_rewritten(storage: Any) -> None:
    storage.append("s", Message.user("first", id="m1"), Message.assistant("reply", id="m2"))
    assert [m.text_content() for m in storage.load("s")] == ["first", "reply"]
    storage.save("s", [Message.user("first, edited", id="m1"), Message.assistant("reply", id="m2")])
    assert [m.text_content() for m in storage.load("s")] == ["first, edited", "reply"]
    storage.pop("s")
    storage.append("s", Message.assistant("another reply", id="m2"))
    assert [m.text_content() for m in storage.recent("s", 2)] == ["first, edited", "another reply"]
    storage.clear("s")
    storage.append("s", Message.user("first", id="m1", recorded_at=AT))
    assert [m.text_content() for m in storage.load("s")] == ["first"]


def test_a_second_window_reads_no_block_rows_with_sqlite3(storage: Any, backend: str) -> None:
    storage.append("s", *_agent_turns(20))
    storage.recent("s", 8)  # SQLite learns the window's span: one page from now on
    MESSAGES.clear()
    with recording(storage.sync_engine) as first:
        storage.recent("s", 8)
    with recording(storage.sync_engine) as second:
        again = storage.recent("s", 8)
    assert again == storage.load("s")[-8:]
    if backend == "sqlite" and not storage.sync_engine.dialect.is_async:
        # The page alone: every message of the window was built by the first read.
        assert first.shape() == ["SELECT sqlmemory_messages", "SELECT sqlmemory_blocks"]
        assert second.shape() == ["SELECT sqlmemory_messages"]
    else:
        # One statement brings the page with its block rows, cached or not (aiosqlite:
        # a statement is three hand-offs to its thread).
        assert first.shape() == second.shape() == ["SELECT sqlmemory_messages"]


def test_rows_dropped_under_the_cache_are_not_handed_out(storage: Any, engine: sa.Engine) -> None:
    # What decides is the row read: deleted behind the storage's back, a cached message
    # is gone from every read.
    storage.append("s", *_agent_turns(2))
    assert len(storage.load("s")) == 8
    with engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM sqlmemory_messages WHERE seq > 4")
    assert [m.text_content() for m in storage.load("s")] == [
        m.text_content() for m in _agent_turns(2)[:4]
    ]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=st.lists(messages(), min_size=1, max_size=8), k=st.integers(0, 8))
def test_cached_reads_equal_built_reads(storage: Any, drawn: list[Message], k: int) -> None:
    for sid in storage.sessions():
        storage.clear(sid)
    history = [Message.from_dict({**m.to_dict(), "id": f"h{i}"}) for i, m in enumerate(drawn)]
    storage.append("s", *history)
    reads = (lambda: storage.load("s"), lambda: storage.recent("s", k))
    cached = [read() for read in reads] + [read() for read in reads]
    bound = MESSAGES.max_bytes
    MESSAGES.max_bytes = 0
    MESSAGES.clear()
    try:
        built = [read() for read in reads] * 2
    finally:
        MESSAGES.max_bytes = bound
    assert cached == built
    times = [[m.recorded_at for m in r] for r in (*cached, *built)]
    assert times[: len(cached)] == times[len(cached) :]


def test_reads_build_every_message_with_the_cache_off(storage: Any, uncached: None) -> None:
    storage.append("s", *_agent_turns(3))
    first, second = storage.load("s"), storage.load("s")
    assert first == second
    assert not any(a is b for a, b in zip(first, second, strict=True))
    assert len(MESSAGES) == len(ENTRIES) == 0


def test_threads_reading_while_others_write_get_what_is_stored(
    storage: Any, engine: sa.Engine
) -> None:
    # One process, so one cache, shared by readers and writers on several threads: every
    # message read is the one stored under its id, in order, whatever ran meanwhile.
    def content(i: int) -> str:
        return f"message {i} " * (i % 7 + 1)

    storage.append("s", *(Message.user(content(i), id=f"m{i}") for i in range(40)))
    writer = SqlStorage(sa.create_engine(engine.url))
    stop = threading.Event()
    seen: list[list[Message]] = []
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for i in range(40, 80):
                writer.append("s", Message.user(content(i), id=f"m{i}"))
                if i % 3 == 0:
                    writer.pop("s")
                    writer.append("s", Message.user(content(i), id=f"m{i}"))
        except BaseException as exc:
            failures.append(exc)
        finally:
            stop.set()

    def read() -> None:
        try:
            while not stop.is_set():
                seen.append(storage.load("s"))
                seen.append(storage.recent("s", 7))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=write), *(threading.Thread(target=read) for _ in range(2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    writer.engine.dispose()
    assert not failures
    assert len(seen) > 4
    for read in seen:
        numbers = [int(m.id[1:]) for m in read]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        assert [m.text_content() for m in read] == [content(n) for n in numbers]
    assert [m.id for m in storage.load("s")] == [f"m{i}" for i in range(80)]


def test_erasing_an_owner_forgets_the_messages_built_from_their_rows(storage: Any) -> None:
    ann = storage.owned_by("ann")
    ann.append("s", *_agent_turns(2))
    assert len(ann.load("s")) == 8
    assert len(MESSAGES) >= 8
    storage.erase_owner("ann")
    assert len(MESSAGES) == len(ENTRIES) == 0
    assert ann.load("s") == []
