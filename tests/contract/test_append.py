"""``append`` on every storage: order, no-ops, idempotency, conflicts, ``recorded_at``.

docs/contract/storage.md (the storage API) and docs/contract/persistence.md (order,
idempotency): appending a stored message again is a no-op, the same id with other content
raises ``DuplicateMessageError`` and writes nothing, and ``recorded_at`` is UTC and, when
the storage assigns it, never decreases within a session.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from sqlmemory import (
    DuplicateMessageError,
    ImageBlock,
    Message,
    TextBlock,
    ToolCall,
)
from tests.support.cases import (
    chat,
    ids,
    image_bytes,
    timeless,
    tool_history,
    value,
)
from tests.support.storages import Subject

SID = "api"


# --- order and no-ops ---------------------------------------------------------------------


def test_append_then_load_in_order(storage: Any) -> None:
    first, rest = chat(1), chat(3, "r")
    storage.append("s", *first)
    storage.append("s", *rest)
    loaded = storage.load("s")
    assert [value(m) for m in loaded] == [value(m) for m in first + rest]


def test_append_adds_at_the_end_in_order(storage: Any) -> None:
    history = tool_history()
    storage.append(SID, *history[:4])
    storage.append(SID, history[4])
    storage.append(SID, *history[5:])
    assert timeless(storage.load(SID)) == timeless(history)
    assert storage.count(SID) == len(history)


def test_append_keeps_every_field(storage: Any) -> None:
    call = ToolCall(id="c1", name="lookup", arguments={"z": 1, "a": [1, 2], "m": {"y": None}})
    messages = [
        Message(role="user", content=[TextBlock("q")], metadata={"k": "v"}, id="u-1"),
        Message.assistant("thinking aloud", tool_calls=[call]),
        Message.tool("c1", "result"),
    ]
    storage.append("s", *messages)
    loaded = storage.load("s")
    assert [value(m) for m in loaded] == [value(m) for m in messages]
    assert list(loaded[1].tool_calls[0].arguments) == ["z", "a", "m"]


def test_append_nothing_is_a_noop(storage: Any) -> None:
    storage.append("s")
    assert storage.load("s") == []
    assert storage.count("s") == 0
    assert "s" not in storage.sessions()


def test_append_of_no_messages_is_a_no_op(subject: Subject) -> None:
    storage = subject.storage
    storage.append(SID)
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)
    storage.append(SID, Message.user("one", id="one"))
    before = subject.state()
    storage.append(SID)
    assert subject.state() == before


def test_sessions_are_isolated(storage: Any) -> None:
    a, b = chat(2, "a"), chat(3, "b")
    storage.append("a", *a)
    storage.append("b", *b)
    assert ids(storage.load("a")) == ids(a)
    assert ids(storage.load("b")) == ids(b)
    storage.clear("a")
    assert ids(storage.load("b")) == ids(b)


# --- idempotency ----------------------------------------------------------------------------


def test_append_same_message_twice_is_a_noop(storage: Any) -> None:
    m = Message.user("once")
    storage.append("s", m)
    storage.append("s", m)
    storage.append("s", Message(role="user", content=[TextBlock("once")], id=m.id))
    assert ids(storage.load("s")) == [m.id]


def test_retry_of_a_batch_is_a_noop(storage: Any) -> None:
    batch = chat(3)
    storage.append("s", *batch)
    storage.append("s", *batch)
    assert ids(storage.load("s")) == ids(batch)


def test_appending_a_stored_message_again_is_a_no_op(subject: Subject) -> None:
    storage = subject.storage
    png = ImageBlock(image_bytes(16, 16), "image/png")
    first = Message.user(["with a picture", png], id="m1", metadata={"a": 1})
    storage.append(SID, first)
    before = subject.state()
    storage.append(SID, first)
    storage.append(SID, *storage.load(SID))  # a copy read back, recorded_at set
    storage.append(SID, Message.user(["with a picture", png], id="m1", metadata={"a": 1}))
    assert subject.state() == before
    # A retried batch that also holds new messages stores only the new ones, in order.
    second = Message.user("second", id="m2")
    storage.append(SID, first, second, first)
    assert ids(storage.load(SID)) == ["m1", "m2"]
    assert storage.count(SID) == 2


def test_ids_are_unique_per_session_not_globally(storage: Any) -> None:
    m = Message.user("shared")
    storage.append("a", m)
    storage.append("b", m)
    assert ids(storage.load("a")) == ids(storage.load("b")) == [m.id]


def test_the_same_id_in_another_session_is_another_message(storage: Any) -> None:
    storage.append(SID, Message.user("here", id="m"))
    storage.append("other", Message.user("there", id="m"))
    assert [m.text_content() for m in storage.load("other")] == ["there"]
    assert [m.text_content() for m in storage.load(SID)] == ["here"]


# --- conflicts: DuplicateMessageError, and nothing written ------------------------------------


def test_same_id_different_content_raises_and_writes_nothing(storage: Any) -> None:
    original = Message(role="user", content=[TextBlock("original")], id="k1")
    storage.append("s", original)
    fresh = Message.user("fresh")
    conflict = Message(role="user", content=[TextBlock("changed")], id="k1")
    with pytest.raises(DuplicateMessageError):
        storage.append("s", fresh, conflict)
    assert [value(m) for m in storage.load("s")] == [value(original)]


def test_same_id_different_role_raises(storage: Any) -> None:
    storage.append("s", Message(role="user", content=[TextBlock("x")], id="k1"))
    with pytest.raises(DuplicateMessageError):
        storage.append("s", Message(role="assistant", content=[TextBlock("x")], id="k1"))
    assert storage.count("s") == 1


@pytest.mark.parametrize(
    "conflict",
    [
        Message.user("different text", id="m1"),
        Message.user("original", id="m1", metadata={"changed": True}),
        Message.assistant("original", id="m1"),
        Message.user(["original", "two blocks"], id="m1"),
        Message.system("original", id="m1"),
    ],
    ids=["text", "metadata", "role", "blocks", "system"],
)
def test_appending_a_stored_id_with_other_content_raises_and_writes_nothing(
    subject: Subject, conflict: Message
) -> None:
    storage = subject.storage
    storage.append(SID, Message.user("original", id="m1"))
    before = subject.state()
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, Message.user("new and fine", id="m0"), conflict)
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, conflict, Message.user("new and fine", id="m2"))
    assert subject.state() == before
    with pytest.raises(DuplicateMessageError):
        storage.append(
            "fresh", Message.user("x", id="dup"), Message.user("y", id="dup")
        )  # within one batch
    assert subject.state() == before


@pytest.mark.parametrize(
    "first, second",
    [
        (
            Message.user("same", id="k", metadata={"a": 1, "b": 2}),
            Message.user("same", id="k", metadata={"b": 2, "a": 1}),
        ),
        (
            Message.assistant(tool_calls=[ToolCall("c1", "f", {"x": 1, "y": 2})], id="k"),
            Message.assistant(tool_calls=[ToolCall("c1", "f", {"y": 2, "x": 1})], id="k"),
        ),
    ],
    ids=["metadata", "arguments"],
)
def test_key_order_is_content_for_retries_and_within_a_batch(
    subject: Subject, first: Message, second: Message
) -> None:
    # "Identical" is equal wire forms, key order included (docs/contract/persistence.md),
    # however the storage compares: a stored row's digest or a message in the same batch.
    storage = subject.storage
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, first, second)
    assert storage.count(SID) == 0
    storage.append(SID, first)
    storage.append(SID, first)  # the same again: a retry
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, second)
    assert [value(m) for m in storage.load(SID)] == [value(first)]


# --- recorded_at ------------------------------------------------------------------------------


def test_recorded_at_is_filled_in_utc_and_never_decreases(storage: Any) -> None:
    before = datetime.now(timezone.utc)
    for m in chat(50):
        storage.append("s", m)
    storage.append("s", *chat(20, "batch"))
    after = datetime.now(timezone.utc)
    stamps = [m.recorded_at for m in storage.load("s")]
    assert all(t is not None for t in stamps)
    assert all(t.tzinfo is not None and t.utcoffset() == timedelta(0) for t in stamps)
    assert stamps == sorted(stamps)
    assert before - timedelta(seconds=1) <= stamps[0]
    assert stamps[-1] <= after + timedelta(seconds=1)


def test_store_assigned_recorded_at_is_aware_utc_now(storage: Any) -> None:
    before = datetime.now(timezone.utc)
    storage.append(SID, Message.user("now", id="now"))
    after = datetime.now(timezone.utc)
    (loaded,) = storage.load(SID)
    assert loaded.recorded_at is not None
    assert loaded.recorded_at.tzinfo is not None
    assert loaded.recorded_at.utcoffset() == timedelta(0)
    # Microseconds survive, so the bounds hold to the microsecond.
    assert before <= loaded.recorded_at <= after


def test_caller_message_keeps_recorded_at_none(storage: Any) -> None:
    m = Message.user("x")
    storage.append("s", m)
    assert m.recorded_at is None


def test_caller_supplied_recorded_at_is_kept(storage: Any) -> None:
    when = datetime(2020, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    storage.append("s", Message(role="user", content=[TextBlock("old")], recorded_at=when))
    assert storage.load("s")[0].recorded_at == when


def test_an_imported_recorded_at_does_not_move_the_session_clock(storage: Any) -> None:
    # docs/contract/persistence.md, "Clock": only the store's own stamps move it, so a
    # far-future import cannot pin every later message in the future.
    future = datetime.now(timezone.utc) + timedelta(days=2)
    past = datetime(2000, 1, 1, tzinfo=timezone.utc)
    storage.append(SID, Message.user("early", id="early"))
    storage.append(SID, Message.user("imported old", id="old", recorded_at=past))
    storage.append(SID, Message.user("imported future", id="future", recorded_at=future))
    before_after = datetime.now(timezone.utc)
    storage.append(SID, Message.user("after", id="after"))
    early, old, imported, after = storage.load(SID)
    assert old.recorded_at == past
    assert imported.recorded_at == future
    assert after.recorded_at is not None and early.recorded_at is not None
    assert early.recorded_at <= after.recorded_at < future
    assert after.recorded_at - before_after < timedelta(minutes=1)
    storage.save(SID, [*storage.load(SID), Message.user("saved", id="saved")])
    saved = storage.load(SID)[-1].recorded_at
    assert saved is not None and after.recorded_at <= saved < future
