"""The storage API of SPEC section 3 on InMemoryStorage, and ShortTermMemory over it.

Bad session ids and the blob limit: test_storage_validation.py; threads: test_memory_threads.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from sqlmemory import (
    DuplicateMessageError,
    FixedWindow,
    InMemoryStorage,
    InvalidSessionIdError,
    Message,
    NoOp,
    ShortTermMemory,
    TextBlock,
    TokenWindow,
    ToolCall,
)


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def texts(messages: list[Message]) -> list[str]:
    return [m.text_content() for m in messages]


def value(m: Message) -> tuple[Any, ...]:
    """Everything a message carries except the store-assigned ``recorded_at``."""
    return (m.id, m.role, m.content, m.tool_calls, m.tool_call_id, dict(m.metadata))


def chat(n: int, prefix: str = "m") -> list[Message]:
    return [
        Message.user(f"{prefix}{i}") if i % 2 == 0 else Message.assistant(f"{prefix}{i}")
        for i in range(n)
    ]


@pytest.fixture
def store() -> InMemoryStorage:
    return InMemoryStorage()


# --- append / load --------------------------------------------------------------------------


def test_append_then_load_in_order(store: InMemoryStorage) -> None:
    first, rest = chat(1), chat(3, "r")
    store.append("s", *first)
    store.append("s", *rest)
    loaded = store.load("s")
    assert [value(m) for m in loaded] == [value(m) for m in first + rest]


def test_append_keeps_every_field(store: InMemoryStorage) -> None:
    call = ToolCall(id="c1", name="lookup", arguments={"z": 1, "a": [1, 2], "m": {"y": None}})
    messages = [
        Message(role="user", content=[TextBlock("q")], metadata={"k": "v"}, id="u-1"),
        Message.assistant("thinking aloud", tool_calls=[call]),
        Message.tool("c1", "result"),
    ]
    store.append("s", *messages)
    loaded = store.load("s")
    assert [value(m) for m in loaded] == [value(m) for m in messages]
    assert list(loaded[1].tool_calls[0].arguments) == ["z", "a", "m"]


def test_append_nothing_is_a_noop(store: InMemoryStorage) -> None:
    store.append("s")
    assert store.load("s") == []
    assert store.count("s") == 0
    assert "s" not in store.sessions()


def test_unknown_session(store: InMemoryStorage) -> None:
    assert store.load("nobody") == []
    assert store.count("nobody") == 0
    assert store.recent("nobody", 5) == []
    assert store.evict("nobody", 0) == 0
    assert store.clear("nobody") == 0


def test_sessions_are_isolated(store: InMemoryStorage) -> None:
    a, b = chat(2, "a"), chat(3, "b")
    store.append("a", *a)
    store.append("b", *b)
    assert ids(store.load("a")) == ids(a)
    assert ids(store.load("b")) == ids(b)
    store.clear("a")
    assert ids(store.load("b")) == ids(b)


def test_load_with_policy(store: InMemoryStorage) -> None:
    history = chat(5)
    store.append("s", *history)
    assert ids(store.load("s", policy=FixedWindow(2))) == ids(history[-2:])
    assert ids(store.load("s", policy=TokenWindow(10, tokenizer=lambda m: 5))) == ids(history[-2:])
    assert ids(store.load("s", policy=NoOp())) == ids(history)
    assert store.count("s") == 5  # the policy applies at read time only


def test_load_with_policy_drops_orphans_but_storage_keeps_them(store: InMemoryStorage) -> None:
    history = [Message.tool("gone", "stray"), Message.user("hi")]
    store.append("s", *history)
    assert ids(store.load("s", policy=FixedWindow(5))) == [history[1].id]
    assert ids(store.load("s")) == ids(history)


# --- copy semantics -------------------------------------------------------------------------


def test_mutating_the_returned_list_does_not_change_the_store(store: InMemoryStorage) -> None:
    history = chat(3)
    store.append("s", *history)
    loaded = store.load("s")
    loaded.clear()
    store.recent("s", 2).append(Message.user("intruder"))
    store.load("s", policy=NoOp()).pop()
    assert ids(store.load("s")) == ids(history)


def test_mutating_the_saved_list_does_not_change_the_store(store: InMemoryStorage) -> None:
    history = chat(3)
    store.save("s", history)
    history.append(Message.user("late"))
    history[0] = Message.user("swapped")
    assert store.count("s") == 3
    assert texts(store.load("s")) == ["m0", "m1", "m2"]


def test_caller_metadata_dict_does_not_reach_the_store(store: InMemoryStorage) -> None:
    meta: dict[str, Any] = {"n": 1, "tags": ["a"]}
    store.append("s", Message(role="user", content=[TextBlock("x")], metadata=meta))
    meta["n"] = 2
    meta["tags"].append("b")
    stored = store.load("s")[0].metadata
    assert stored["n"] == 1
    assert list(stored["tags"]) == ["a"]


def test_loaded_messages_are_values(store: InMemoryStorage) -> None:
    store.append("s", Message.user("x"))
    loaded = store.load("s")[0]
    with pytest.raises((AttributeError, TypeError)):
        loaded.content = (TextBlock("y"),)  # type: ignore[misc]
    assert texts(store.load("s")) == ["x"]


# --- recorded_at ------------------------------------------------------------------------------


def test_recorded_at_is_filled_in_utc_and_never_decreases(store: InMemoryStorage) -> None:
    before = datetime.now(timezone.utc)
    for m in chat(50):
        store.append("s", m)
    store.append("s", *chat(20, "batch"))
    after = datetime.now(timezone.utc)
    stamps = [m.recorded_at for m in store.load("s")]
    assert all(t is not None for t in stamps)
    assert all(t.tzinfo is not None and t.utcoffset() == timedelta(0) for t in stamps)
    assert stamps == sorted(stamps)
    assert before - timedelta(seconds=1) <= stamps[0]
    assert stamps[-1] <= after + timedelta(seconds=1)


def test_caller_message_keeps_recorded_at_none(store: InMemoryStorage) -> None:
    m = Message.user("x")
    store.append("s", m)
    assert m.recorded_at is None


def test_caller_supplied_recorded_at_is_kept(store: InMemoryStorage) -> None:
    when = datetime(2020, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    store.append("s", Message(role="user", content=[TextBlock("old")], recorded_at=when))
    assert store.load("s")[0].recorded_at == when


# --- idempotency ------------------------------------------------------------------------------


def test_append_same_message_twice_is_a_noop(store: InMemoryStorage) -> None:
    m = Message.user("once")
    store.append("s", m)
    store.append("s", m)
    store.append("s", Message(role="user", content=[TextBlock("once")], id=m.id))
    assert ids(store.load("s")) == [m.id]


def test_retry_of_a_batch_is_a_noop(store: InMemoryStorage) -> None:
    batch = chat(3)
    store.append("s", *batch)
    store.append("s", *batch)
    assert ids(store.load("s")) == ids(batch)


def test_same_id_different_content_raises_and_writes_nothing(store: InMemoryStorage) -> None:
    original = Message(role="user", content=[TextBlock("original")], id="k1")
    store.append("s", original)
    fresh = Message.user("fresh")
    conflict = Message(role="user", content=[TextBlock("changed")], id="k1")
    with pytest.raises(DuplicateMessageError):
        store.append("s", fresh, conflict)
    assert [value(m) for m in store.load("s")] == [value(original)]


def test_same_id_different_role_raises(store: InMemoryStorage) -> None:
    store.append("s", Message(role="user", content=[TextBlock("x")], id="k1"))
    with pytest.raises(DuplicateMessageError):
        store.append("s", Message(role="assistant", content=[TextBlock("x")], id="k1"))
    assert store.count("s") == 1


def test_ids_are_unique_per_session_not_globally(store: InMemoryStorage) -> None:
    m = Message.user("shared")
    store.append("a", m)
    store.append("b", m)
    assert ids(store.load("a")) == ids(store.load("b")) == [m.id]


# --- save / clear / count / sessions -------------------------------------------------------


def test_save_replaces_the_whole_history(store: InMemoryStorage) -> None:
    store.append("s", *chat(4))
    replacement = chat(2, "new")
    store.save("s", replacement)
    assert ids(store.load("s")) == ids(replacement)


def test_save_extending_the_stored_history(store: InMemoryStorage) -> None:
    history = chat(3)
    store.save("s", history)
    extended = store.load("s") + chat(2, "more")
    store.save("s", extended)
    assert ids(store.load("s")) == ids(extended)


def test_save_empty_clears(store: InMemoryStorage) -> None:
    store.append("s", *chat(3))
    store.save("s", [])
    assert store.load("s") == []
    assert store.count("s") == 0


def test_clear_returns_number_deleted(store: InMemoryStorage) -> None:
    store.append("s", *chat(7))
    assert store.clear("s") == 7
    assert store.count("s") == 0
    assert store.load("s") == []
    assert "s" not in store.sessions()
    assert store.clear("s") == 0


def test_count(store: InMemoryStorage) -> None:
    assert store.count("s") == 0
    store.append("s", *chat(3))
    store.append("s", *chat(2))
    assert store.count("s") == 5


def test_sessions_and_prefix(store: InMemoryStorage) -> None:
    for sid in ["user-1", "user-2", "bot-1", "user_x", "userA"]:
        store.append(sid, Message.user("x"))
    assert sorted(store.sessions()) == ["bot-1", "user-1", "user-2", "userA", "user_x"]
    assert sorted(store.sessions(prefix="user-")) == ["user-1", "user-2"]
    assert sorted(store.sessions("user")) == ["user-1", "user-2", "userA", "user_x"]
    assert list(store.sessions(prefix="nobody")) == []


@pytest.mark.parametrize(("prefix", "expected"), [("a_", ["a_1"]), ("a%", ["a%1"])])
def test_sessions_prefix_is_literal(
    store: InMemoryStorage, prefix: str, expected: list[str]
) -> None:
    for sid in ["a_1", "ab1", "a%1", "abc"]:
        store.append(sid, Message.user("x"))
    assert sorted(store.sessions(prefix)) == expected


# --- recent / evict -------------------------------------------------------------------------


def test_recent_newest_last(store: InMemoryStorage) -> None:
    history = chat(6)
    store.append("s", *history)
    assert ids(store.recent("s", 3)) == ids(history[-3:])
    assert ids(store.recent("s", 100)) == ids(history)
    assert store.recent("s", 0) == []


def test_recent_never_splits_a_tool_group(store: InMemoryStorage) -> None:
    history = [
        Message.user("q"),
        Message.assistant(tool_calls=[ToolCall(id="c1", name="f", arguments={})]),
        Message.tool("c1", "r"),
        Message.assistant("a"),
    ]
    store.append("s", *history)
    assert ids(store.recent("s", 1)) == [history[3].id]
    assert ids(store.recent("s", 2)) == [history[3].id]  # the group of two does not fit
    assert ids(store.recent("s", 3)) == ids(history[1:])


def test_recent_leaves_out_a_newest_group_that_does_not_fit(store: InMemoryStorage) -> None:
    history = [
        Message.user("q"),
        Message.assistant(tool_calls=[ToolCall(id="c1", name="f", arguments={})]),
        Message.tool("c1", "r"),
    ]
    store.append("s", *history)
    assert store.recent("s", 1) == []
    assert ids(store.recent("s", 2)) == ids(history[1:])


def test_recent_drops_orphans(store: InMemoryStorage) -> None:
    history = [Message.user("q"), Message.tool("zz", "stray"), Message.assistant("a")]
    store.append("s", *history)
    assert ids(store.recent("s", 3)) == [history[0].id, history[2].id]
    assert ids(store.recent("s", 2)) == [history[0].id, history[2].id]


def test_evict_keeps_newest(store: InMemoryStorage) -> None:
    history = chat(10)
    store.append("s", *history)
    assert store.evict("s", 4) == 6
    assert ids(store.load("s")) == ids(history[-4:])
    assert store.evict("s", 4) == 0
    assert store.evict("s", 100) == 0
    assert store.count("s") == 4


def test_evict_zero_clears(store: InMemoryStorage) -> None:
    store.append("s", *chat(5))
    assert store.evict("s", 0) == 5
    assert store.load("s") == []


def test_evict_never_leaves_a_tool_message_at_the_head(store: InMemoryStorage) -> None:
    history = [
        Message.user("q"),
        Message.assistant(tool_calls=[ToolCall(id="c1", name="f", arguments={})]),
        Message.tool("c1", "r"),
        Message.assistant("a"),
    ]
    store.append("s", *history)
    assert store.evict("s", 2) == 3
    assert ids(store.load("s")) == [history[3].id]


def test_evict_removes_orphan_that_would_head(store: InMemoryStorage) -> None:
    history = [Message.user("q"), Message.tool("zz", "stray"), Message.assistant("a")]
    store.append("s", *history)
    assert store.evict("s", 2) == 2
    assert ids(store.load("s")) == [history[2].id]


@pytest.mark.parametrize("bad", [-1, -100])
def test_recent_and_evict_reject_negative(store: InMemoryStorage, bad: int) -> None:
    store.append("s", *chat(3))
    with pytest.raises(ValueError):
        store.recent("s", bad)
    with pytest.raises(ValueError):
        store.evict("s", bad)
    assert store.count("s") == 3


@pytest.mark.parametrize("bad", [True, False, 1.0, 2.5, "3", None])
def test_recent_and_evict_reject_non_int(store: InMemoryStorage, bad: Any) -> None:
    store.append("s", *chat(3))
    with pytest.raises(TypeError):
        store.recent("s", bad)
    with pytest.raises(TypeError):
        store.evict("s", bad)
    assert store.count("s") == 3


# --- bound view -------------------------------------------------------------------------------


def test_session_view_has_the_same_methods(store: InMemoryStorage) -> None:
    view = store.session("s")
    history = chat(5)
    view.append(*history)
    assert ids(view.load()) == ids(history)
    assert ids(store.load("s")) == ids(history)
    assert ids(view.load(policy=FixedWindow(2))) == ids(history[-2:])
    assert view.count() == 5
    assert ids(view.recent(2)) == ids(history[-2:])
    assert view.evict(3) == 2
    assert ids(store.load("s")) == ids(history[-3:])
    view.save(history[:1])
    assert ids(view.load()) == ids(history[:1])
    assert view.clear() == 1
    assert store.count("s") == 0
    view.append()
    assert view.count() == 0


def test_session_views_are_isolated(store: InMemoryStorage) -> None:
    a, b = store.session("a"), store.session("b")
    a.append(Message.user("for a"))
    assert b.load() == []
    assert texts(a.load()) == ["for a"]


# --- ShortTermMemory ------------------------------------------------------------------------


def test_short_term_memory_default_policy_is_noop(store: InMemoryStorage) -> None:
    memory = ShortTermMemory(store, "s")
    history = chat(4)
    memory.append(*history[:2])
    memory.append(history[2], history[3])
    assert ids(memory.messages()) == ids(history)
    assert ids(store.load("s")) == ids(history)


def test_short_term_memory_applies_its_policy_at_read_time(store: InMemoryStorage) -> None:
    memory = ShortTermMemory(store, "s", policy=FixedWindow(2))
    history = chat(5)
    memory.append(*history)
    assert ids(memory.messages()) == ids(history[-2:])
    assert store.count("s") == 5
    assert ids(ShortTermMemory(store, "s", FixedWindow(3)).messages()) == ids(history[-3:])


def test_short_term_memory_sessions_are_isolated(store: InMemoryStorage) -> None:
    ShortTermMemory(store, "a").append(Message.user("a"))
    assert ShortTermMemory(store, "b").messages() == []


def test_short_term_memory_rejects_bad_session_id(store: InMemoryStorage) -> None:
    with pytest.raises(InvalidSessionIdError):
        ShortTermMemory(store, " bad").append(Message.user("x"))
