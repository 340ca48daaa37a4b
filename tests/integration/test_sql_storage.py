"""The storage API of SPEC section 3 on SQL: each method's results and what it stores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone

import pytest
import sqlalchemy as sa

from sqlmemory import (
    DuplicateMessageError,
    FixedWindow,
    ImageBlock,
    InMemoryStorage,
    InvalidSessionIdError,
    Message,
    NoOp,
    Policy,
    Role,
    SqlStorage,
    TokenWindow,
    ToolCall,
)
from tests.support.cases import (
    EVICT_CASES,
    EVICT_ORPHAN_CASES,
    RECENT_CASES,
    RECENT_ORPHAN_CASES,
    ids,
    image_bytes,
    orphan_history,
    timeless,
    tool_history,
)
from tests.support.tables import EMPTY, counts, rows, seqs

SID = "api"


# --- append, load, count --------------------------------------------------------------


def test_append_of_no_messages_is_a_no_op(storage: SqlStorage, engine: sa.Engine) -> None:
    storage.append(SID)
    assert counts(engine) == EMPTY
    storage.append(SID, Message.user("one", id="one"))
    before = rows(engine)
    storage.append(SID)
    assert rows(engine) == before


def test_reads_of_an_unknown_session_are_empty_and_write_nothing(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    assert storage.load("nobody") == []
    assert storage.load("nobody", FixedWindow(3)) == []
    assert storage.load("nobody", TokenWindow(100)) == []
    assert storage.load("nobody", NoOp()) == []
    assert storage.recent("nobody", 5) == []
    assert storage.count("nobody") == 0
    assert storage.evict("nobody", 0) == 0
    assert storage.evict("nobody", 3) == 0
    assert storage.clear("nobody") == 0
    assert storage.sessions() == []
    assert counts(engine) == EMPTY


def test_append_adds_at_the_end_in_order(storage: SqlStorage) -> None:
    history = tool_history()
    storage.append(SID, *history[:4])
    storage.append(SID, history[4])
    storage.append(SID, *history[5:])
    assert timeless(storage.load(SID)) == timeless(history)
    assert storage.count(SID) == len(history)


class EverySecond:
    """A policy that is not a window policy: the storage must read the whole history."""

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[::2])


def long_history(groups: int = 40) -> list[Message]:
    """Tool exchanges, images, and orphans, long enough to need several tail pages."""
    messages: list[Message] = []
    for k in range(groups):
        messages.append(Message.user(f"question {k} " + "x" * (k * 7 % 50), id=f"u{k}"))
        if k % 5 == 0:
            messages.append(Message.tool(f"stray{k}", "orphan", id=f"orphan{k}"))
        calls = [ToolCall(f"c{k}a", "f", {"k": k}), ToolCall(f"c{k}b", "g", {})]
        messages.append(Message.assistant(tool_calls=calls, id=f"a{k}"))
        messages.append(Message.tool(f"c{k}a", f"result {k}a", id=f"ta{k}"))
        messages.append(Message.tool(f"c{k}b", f"result {k}b", id=f"tb{k}"))
        if k % 7 == 3:
            png = ImageBlock(image_bytes(64 * (k % 4 + 1), 64, seed=k), "image/png")
            messages.append(Message.user([f"image {k}", png], id=f"img{k}"))
        messages.append(Message.assistant(f"answer {k}", id=f"r{k}"))
    return messages


POLICIES: list[Policy] = [
    NoOp(),
    EverySecond(),
    FixedWindow(-1),
    FixedWindow(0),
    FixedWindow(1),
    FixedWindow(2),
    FixedWindow(3),
    FixedWindow(30),
    FixedWindow(79),
    FixedWindow(80),
    FixedWindow(10_000),
    TokenWindow(1),
    TokenWindow(9),
    TokenWindow(60),
    TokenWindow(400),
    TokenWindow(1500),
    TokenWindow(5000),
    TokenWindow(10**9),
    TokenWindow(25, tokenizer=lambda m: 10),
    TokenWindow(300, tokenizer=lambda m: len(m.text_content()) - 5),
]


def test_load_with_a_policy_is_the_policy_applied_to_the_history(storage: SqlStorage) -> None:
    history = long_history()
    for start in range(0, len(history), 50):
        storage.append(SID, *history[start : start + 50])
    loaded = storage.load(SID)
    assert timeless(loaded) == timeless(history)
    for policy in POLICIES:
        window = storage.load(SID, policy)
        assert window == policy.apply(loaded), policy
        assert timeless(window) == timeless(policy.apply(history)), policy
        if window and not isinstance(policy, (NoOp, EverySecond)):
            assert window[0].role is not Role.TOOL, policy


def test_load_with_a_policy_on_the_reference_examples(storage: SqlStorage) -> None:
    cases: list[tuple[Policy, list[str], list[str]]] = [
        (FixedWindow(2), ["one", "two", "three", "four", "five"], ["four", "five"]),
        (TokenWindow(8), ["one", "two", "bye", "ok"], ["bye", "ok"]),
        (
            TokenWindow(25, tokenizer=lambda m: 10),
            ["first", "second", "third"],
            ["second", "third"],
        ),
    ]
    for index, (policy, texts, expected) in enumerate(cases):
        sid = f"example-{index}"
        storage.append(sid, *(Message.user(t) for t in texts))
        assert [m.text_content() for m in storage.load(sid, policy)] == expected


# --- save ------------------------------------------------------------------------------


def test_save_replaces_the_whole_history(storage: SqlStorage) -> None:
    storage.append(SID, *tool_history())
    fresh = [Message.user("fresh start", id="fresh"), Message.assistant("ok", id="ok")]
    storage.save(SID, fresh)
    assert timeless(storage.load(SID)) == fresh
    assert storage.count(SID) == 2


def test_save_of_nothing_clears_the_session(storage: SqlStorage, engine: sa.Engine) -> None:
    png = ImageBlock(image_bytes(8, 8), "image/png")
    storage.append(SID, *tool_history(), Message.user(["pic", png], id="pic"))
    storage.append("other", Message.user("stays", id="stays"))
    storage.save(SID, [])
    assert storage.load(SID) == []
    assert storage.count(SID) == 0
    assert storage.sessions() == ["other"]
    assert counts(engine) == {"sessions": 1, "messages": 1, "blocks": 0, "blobs": 0}
    storage.save("never-stored", [])
    assert counts(engine) == {"sessions": 1, "messages": 1, "blocks": 0, "blobs": 0}


def test_save_of_a_grown_history_keeps_the_stored_rows(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    history = tool_history()
    storage.save(SID, history[:5])
    stored = storage.load(SID)
    before = seqs(engine, SID)
    storage.save(SID, history)  # the caller's own copies: no recorded_at
    after = seqs(engine, SID)
    assert {k: after[k] for k in before} == before
    assert min(after[m.id] for m in history[5:]) > max(before.values())
    loaded = storage.load(SID)
    assert loaded[:5] == stored  # recorded_at of the kept rows unchanged too
    assert timeless(loaded) == timeless(history)
    # The usual pattern: load, extend, save.
    grown = [*loaded, Message.user("and one more", id="more")]
    storage.save(SID, grown)
    again = seqs(engine, SID)
    assert {k: again[k] for k in after} == after
    assert storage.load(SID)[: len(loaded)] == loaded


def test_save_of_a_changed_history_rewrites_from_the_first_difference(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    history = tool_history()
    storage.save(SID, history)
    before = seqs(engine, SID)
    changed = [*history[:3], Message.tool("c2", "a corrected answer", id="t2"), *history[4:]]
    storage.save(SID, changed)
    assert timeless(storage.load(SID)) == timeless(changed)
    after = seqs(engine, SID)
    assert {k: after[k] for k in ("u1", "a1", "t1")} == {k: before[k] for k in ("u1", "a1", "t1")}
    assert after["t2"] > max(before.values())
    # A reordered or shortened history is stored as given.
    storage.save(SID, [history[8], history[0]])
    assert ids(storage.load(SID)) == ["a4", "u1"]
    storage.save(SID, [history[0]])
    assert ids(storage.load(SID)) == ["u1"]


def test_save_stores_a_given_recorded_at_even_on_an_unchanged_message(
    storage: SqlStorage,
) -> None:
    # SPEC 4: a caller-supplied recorded_at is stored as given; InMemoryStorage does so.
    when = datetime(2020, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc)
    history = tool_history()
    storage.save(SID, history)
    corrected = [history[0].with_recorded_at(when), *storage.load(SID)[1:]]
    storage.save(SID, corrected)
    assert storage.load(SID)[0].recorded_at == when
    oracle = InMemoryStorage()
    oracle.save(SID, history)
    oracle.save(SID, corrected)
    assert oracle.load(SID)[0].recorded_at == when


def test_save_with_conflicting_ids_writes_nothing(storage: SqlStorage, engine: sa.Engine) -> None:
    storage.save(SID, tool_history())
    before = rows(engine)
    conflicting = [Message.user("x", id="same"), Message.user("y", id="same")]
    with pytest.raises(DuplicateMessageError):
        storage.save(SID, conflicting)
    assert rows(engine) == before


# --- recent ----------------------------------------------------------------------------


def test_recent_returns_whole_groups_newest_last(storage: SqlStorage) -> None:
    storage.append(SID, *tool_history())
    for n, expected in RECENT_CASES:
        assert ids(storage.recent(SID, n)) == expected, n
    storage.append("orphans", *orphan_history())
    for n, expected in RECENT_ORPHAN_CASES:
        assert ids(storage.recent("orphans", n)) == expected, n
    # A newest group larger than n gives nothing rather than a tool message alone.
    storage.save("open", tool_history()[:8])
    assert storage.recent("open", 1) == []
    assert ids(storage.recent("open", 2)) == ["a3", "t3"]


# --- evict, clear ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "cases"),
    [(tool_history, EVICT_CASES), (orphan_history, EVICT_ORPHAN_CASES)],
    ids=["tool-history", "orphan-history"],
)
def test_evict_deletes_the_oldest_and_never_leaves_a_tool_message_at_the_head(
    storage: SqlStorage,
    history: Callable[[], list[Message]],
    cases: list[tuple[int, int, list[str]]],
) -> None:
    messages = history()
    for keep, deleted, remaining in cases:
        storage.clear(SID)
        storage.append(SID, *messages)
        assert storage.evict(SID, keep) == deleted, keep
        loaded = storage.load(SID)
        assert ids(loaded) == remaining, keep
        assert storage.count(SID) == len(remaining)
        assert not loaded or loaded[0].role is not Role.TOOL
        assert storage.evict(SID, keep) == 0, keep  # nothing more to do
        assert (SID in storage.sessions()) == bool(remaining)


def test_evict_keeps_seq_growing(storage: SqlStorage, engine: sa.Engine) -> None:
    storage.append(SID, *tool_history())
    highest = max(seqs(engine, SID).values())
    storage.evict(SID, 1)
    storage.append(SID, Message.user("after evict", id="after"))
    assert seqs(engine, SID)["after"] > highest


def test_clear_deletes_one_session_and_returns_its_message_count(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    png = ImageBlock(image_bytes(8, 8), "image/png")
    storage.append(SID, *tool_history(), Message.user(["pic", png], id="pic"))
    storage.append("other", Message.user(["kept", png], id="kept"))
    before_other = storage.load("other")
    assert storage.clear(SID) == 10
    assert storage.load(SID) == []
    assert storage.count(SID) == 0
    assert storage.clear(SID) == 0
    assert storage.load("other") == before_other
    assert storage.sessions() == ["other"]
    assert counts(engine) == {"sessions": 1, "messages": 1, "blocks": 2, "blobs": 1}


# --- sessions, session view -------------------------------------------------------------


def test_sessions_lists_ids_sorted_and_filters_by_a_literal_prefix(
    storage: SqlStorage,
) -> None:
    names = ["a%b", "a%c", "aXb", "a_b", "abb", "a\\b", "a/b", "ab", "b", "é", "x%y"]
    for name in names:
        storage.append(name, Message.user(name))
    assert storage.sessions() == sorted(names)
    assert storage.sessions(None) == sorted(names)
    assert storage.sessions("") == sorted(names)
    assert storage.sessions("a%") == ["a%b", "a%c"]
    assert storage.sessions("a_") == ["a_b"]
    assert storage.sessions("a\\") == ["a\\b"]
    assert storage.sessions("a/") == ["a/b"]
    assert storage.sessions("ab") == ["ab", "abb"]
    assert storage.sessions("zzz") == []
    assert storage.sessions("a%bc") == []


def test_sessions_prefix_is_case_sensitive(storage: SqlStorage) -> None:
    for name in ("abc", "ABC", "Abc", "aBc", "éa", "Éa"):
        storage.append(name, Message.user(name))
    assert storage.sessions("a") == ["aBc", "abc"]
    assert storage.sessions("A") == ["ABC", "Abc"]
    assert storage.sessions("ab") == ["abc"]
    assert storage.sessions("é") == ["éa"]


def test_sessions_refuses_a_prefix_that_is_not_a_str(storage: SqlStorage) -> None:
    with pytest.raises(TypeError):
        storage.sessions(1)  # type: ignore[arg-type]


def test_session_view_binds_every_method_to_one_session(storage: SqlStorage) -> None:
    view = storage.session(SID)
    assert view.session_id == SID
    history = tool_history()
    view.append(*history)
    storage.append("other", Message.user("elsewhere"))
    assert timeless(view.load()) == timeless(history)
    assert ids(view.load(FixedWindow(1))) == ["a4"]
    assert ids(view.recent(3)) == ["a3", "t3", "a4"]
    assert view.count() == 9
    assert view.evict(3) == 6
    view.save([*view.load(), Message.user("saved", id="saved")])
    assert ids(view.load()) == ["a3", "t3", "a4", "saved"]
    assert view.clear() == 4
    assert view.count() == 0
    assert storage.count("other") == 1
    with pytest.raises(InvalidSessionIdError):
        storage.session(" padded")
