"""The first page of a window on SQLite's own driver, learned per session
(``storage/sql/first_pages.py``): a guess changes how many rows and statements a window
takes, never the window. On every backend, a window read after the session grew past
what the last read learned is the policy over the whole history; on SQLite, a window is
one statement, of the policy's hint the first time and of what it spans after."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import FixedWindow, Message, SqlStorage, TokenWindow, ToolCall
from sqlmemory.storage.sql.first_pages import MARGIN, FirstPages
from sqlmemory.storage.sql.tail_reads import FIRST_PAGES
from tests.support.cases import ids


def agent_turns(start: int, count: int) -> list[Message]:
    turns = []
    for i in range(start, start + count):
        call = ToolCall(f"c{i}", "lookup", {"q": i})
        turns += [
            Message.user(f"question {i}", id=f"u{i}"),
            Message.assistant("looking", tool_calls=[call], id=f"a{i}"),
            Message.tool(call.id, f"answer {i}", id=f"t{i}"),
            Message.assistant(f"it is {i}", id=f"r{i}"),
        ]
    return turns


@contextmanager
def counted(engine: sa.Engine) -> Iterator[list[tuple[str, Any]]]:
    """The statements ``engine`` sends while the block runs, with their parameters
    (``BEGIN``/``COMMIT`` aside)."""
    sent: list[tuple[str, Any]] = []

    def record(*args: Any) -> None:
        sent.append((args[2], args[3]))

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def test_the_first_page_is_the_hint_then_the_span_learned() -> None:
    pages = FirstPages(max_sessions=2)
    assert pages.first("s", 42) == 42
    pages.learn("s", 42, 30)
    assert pages.first("s", 42) == 30 + MARGIN
    assert pages.first("s", 12) == 12  # another policy: its own span
    pages.learn("t", 42, 5)
    pages.learn("u", 42, 7)  # the bound: forgotten whole, then this one kept
    assert pages.first("s", 42) == 42
    assert pages.first("u", 42) == 7 + MARGIN
    pages.clear()
    assert pages.first("u", 42) == 42


@pytest.mark.parametrize("policy", [FixedWindow(5), TokenWindow(60)], ids=["fixed", "tokens"])
def test_a_window_past_what_was_learned_is_the_policy_over_the_whole_history(
    storage: Any, policy: Any
) -> None:
    FIRST_PAGES._spans.clear()
    storage.append("s", *[Message.user(f"chat {i}", id=f"m{i}") for i in range(40)])
    assert ids(storage.load("s", policy)) == ids(policy.apply(storage.load("s")))
    storage.append("s", *agent_turns(0, 12))  # groups of four: the span learned is short
    assert ids(storage.load("s", policy)) == ids(policy.apply(storage.load("s")))
    storage.append("s", *[Message.user(f"chat again {i}") for i in range(30)])
    assert ids(storage.load("s", policy)) == ids(policy.apply(storage.load("s")))


def test_on_sqlite_a_window_is_one_statement_and_reads_what_it_spans_once_learned(
    tmp_path: Any,
) -> None:
    from sqlmemory import migrate

    engine = sa.create_engine(f"sqlite:///{tmp_path}/pages.db")
    migrate.upgrade(engine)
    storage = SqlStorage(engine)
    storage.append("chat", *[Message.user(f"chat {i}") for i in range(100)])
    storage.append("agent", *agent_turns(0, 30))
    FIRST_PAGES._spans.clear()
    policy = FixedWindow(10)
    expected = {sid: ids(policy.apply(storage.load(sid))) for sid in ("chat", "agent")}
    pages = []
    for sid in ("chat", "agent", "chat", "agent"):
        with counted(engine) as sent:
            assert ids(storage.load(sid, policy)) == expected[sid]
        pages.append([p[1] for sql, p in sent if "FROM sqlmemory_messages" in sql])
    hint = policy.page_hint
    spans = {sid: len(window) + MARGIN for sid, window in expected.items()}
    # One statement each: the hint's rows first, then what the window spans.
    assert pages == [[hint], [hint], [spans["chat"]], [spans["agent"]]]
    assert spans["chat"] < spans["agent"] < hint
    engine.dispose()
