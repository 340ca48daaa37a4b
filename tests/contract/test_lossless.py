"""Every field of the lossless model survives every storage, exactly.

docs/contract/messages.md (blocks, tool calls in content, extras, the canonical form) and
docs/contract/persistence.md (idempotency, what is stored where): what goes in comes back
equal, with its canonical form, key order, argument text and image sizes; storing it
again is a no-op; and a difference that only the canonical form sees (key order, ``True``
against ``1``) is a different message for a retry and within a batch alike.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from sqlmemory import (
    DuplicateMessageError,
    FixedWindow,
    Message,
    OpaqueBlock,
    TextBlock,
    ToolCall,
    estimate_tokens,
    groups,
)
from sqlmemory.types import canonical_json
from tests.support.cases import ids, image_sizes, timeless
from tests.support.lossless import every_new_field
from tests.support.storages import Subject
from tests.support.tables import snapshot

SID = "lossless"


def assert_exact(loaded: list[Message], history: list[Message]) -> None:
    """Equal, and equal in what ``==`` does not see: key order, sizes, the canonical form."""
    assert timeless(loaded) == timeless(history)
    assert [canonical_json(m) for m in loaded] == [canonical_json(m) for m in history]
    assert image_sizes(loaded) == image_sizes(history)
    assert [estimate_tokens(m) for m in loaded] == [estimate_tokens(m) for m in history]
    for before, after in zip(history, loaded, strict=True):
        assert [type(b) for b in after.content] == [type(b) for b in before.content]
        assert after.is_error is before.is_error
        assert after.call_ids == before.call_ids
        for b, a in zip(before.tool_calls, after.tool_calls, strict=True):
            assert a.arguments_text == b.arguments_text
            assert a.arguments_json == b.arguments_json
            assert (a.arguments is None) == (b.arguments is None)


def test_every_new_field_round_trips_through_append(storage: Any) -> None:
    history = every_new_field()
    storage.append(SID, *history)
    assert_exact(storage.load(SID), history)


def test_every_new_field_round_trips_through_save(storage: Any) -> None:
    history = every_new_field()
    storage.save(SID, history)
    assert_exact(storage.load(SID), history)


def stored(subject: Subject) -> object:
    """The session's history and its message, block and blob rows (not its session row,
    where ``save`` records its hash chain)."""
    history = subject.storage.load(SID)
    if subject.engine is None:
        return history
    with subject.engine.connect() as conn:
        rows = snapshot(conn)
    del rows["sessions"]
    return history, rows


def test_storing_the_same_messages_again_changes_nothing(subject: Subject) -> None:
    storage = subject.storage
    history = every_new_field()
    storage.append(SID, *history)
    before = stored(subject)
    storage.append(SID, *every_new_field())  # new, equal values: a retry
    storage.append(SID, *storage.load(SID))  # the loaded values
    storage.save(SID, every_new_field())
    storage.save(SID, storage.load(SID))
    storage.append(SID, *every_new_field())
    assert stored(subject) == before


def test_tool_calls_keep_their_place_among_the_blocks(storage: Any) -> None:
    history = every_new_field()
    storage.append(SID, *history)
    loaded = {m.id: m for m in storage.load(SID)}
    assert [b.kind for b in loaded["interleaved"].content] == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_call",
        "text",
        "tool_call",
        "opaque",
        "opaque",
    ]
    calls = loaded["responses-output"].tool_calls
    assert [c.arguments_text for c in calls] == [
        '{"city": "Oslo", "units": "metric"',
        "[1, 2]",
        '{"b":1,"a":{"d":2,"c":3}}',
        '{"a": 1}',
    ]
    assert [c.arguments for c in calls] == [None, None, {"b": 1, "a": {"d": 2, "c": 3}}, {"a": 1}]
    assert list(calls[2].arguments["a"]) == ["d", "c"]  # type: ignore[index]


def test_loaded_messages_copy_and_pickle(storage: Any) -> None:
    storage.append(SID, *every_new_field())
    loaded = storage.load(SID)
    assert copy.deepcopy(loaded) == loaded
    assert pickle.loads(pickle.dumps(loaded)) == loaded  # noqa: S301 - our own bytes
    assert [canonical_json(m) for m in copy.deepcopy(loaded)] == [canonical_json(m) for m in loaded]


@pytest.mark.parametrize("n", range(1, 12))
def test_windows_over_opaque_calls_match_the_policy(storage: Any, n: int) -> None:
    # The computer call (an opaque item with a call_id) and its output form one group,
    # and the window the storage reads equals the policy applied to the whole history.
    history = every_new_field()
    storage.append(SID, *history)
    window = storage.load(SID, FixedWindow(n))
    assert ids(window) == ids(FixedWindow(n).apply(storage.load(SID)))
    assert ids(window) == ids(FixedWindow(n).apply(history))
    output = ids(history).index("computer-output")
    grouped = [ids(g) for g in groups(history)]
    assert any("responses-output" in g and "computer-output" in g for g in grouped)
    assert "computer-output" not in ids(window) or "responses-output" in ids(window)
    assert output > 0


TWINS: list[tuple[Message, Message]] = [
    (
        Message.assistant(OpaqueBlock("openai", {"type": "x", "a": 1}), id="k"),
        Message.assistant(OpaqueBlock("openai", {"a": 1, "type": "x"}), id="k"),
    ),
    (
        Message.assistant(OpaqueBlock("openai", {"flag": True}), id="k"),
        Message.assistant(OpaqueBlock("openai", {"flag": 1}), id="k"),
    ),
    (
        Message.user("x", id="k", extras={"n": 1}),
        Message.user("x", id="k", extras={"n": 1.0}),
    ),
    (
        Message.user([TextBlock("x", extras={"a": 1, "b": 2})], id="k"),
        Message.user([TextBlock("x", extras={"b": 2, "a": 1})], id="k"),
    ),
    (
        Message.assistant(ToolCall("c1", "f", arguments_text='{"a": 1}'), id="k"),
        Message.assistant(ToolCall("c1", "f", arguments_text='{"a":1}'), id="k"),
    ),
    (
        Message.tool("c1", "x", id="k"),
        Message.tool("c1", "x", id="k", is_error=True),
    ),
    (
        Message.assistant(["a", ToolCall("c1", "f"), "b"], id="k"),
        Message.assistant(["a", "b", ToolCall("c1", "f")], id="k"),
    ),
]
"""Pairs that differ only where ``==`` may not look (key order, True/1, 1/1.0, text)."""


@pytest.mark.parametrize(("first", "second"), TWINS, ids=range(len(TWINS)))
def test_a_difference_the_canonical_form_sees_is_a_conflict_everywhere(
    subject: Subject, first: Message, second: Message
) -> None:
    storage = subject.storage
    assert canonical_json(first) != canonical_json(second)
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, first, second)  # within one batch
    with pytest.raises(DuplicateMessageError):
        storage.save(SID, [first, second])
    assert storage.count(SID) == 0
    storage.append(SID, first)
    storage.append(SID, first)  # a retry: a no-op
    before = subject.state()
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, second)  # against the stored row
    assert subject.state() == before
