"""Appends are safe to retry, and order and time only ever move forward."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from sqlmemory import (
    DuplicateMessageError,
    ImageBlock,
    Message,
    SqlStorage,
)
from tests.support.cases import (
    ids,
    image_bytes,
)
from tests.support.tables import rows, seqs

SID = "api"


# --- idempotency ---------------------------------------------------------------------


def test_appending_a_stored_message_again_is_a_no_op(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    png = ImageBlock(image_bytes(16, 16), "image/png")
    first = Message.user(["with a picture", png], id="m1", metadata={"a": 1})
    storage.append(SID, first)
    before = rows(engine)
    storage.append(SID, first)
    storage.append(SID, *storage.load(SID))  # a copy read back, recorded_at set
    storage.append(SID, Message.user(["with a picture", png], id="m1", metadata={"a": 1}))
    assert rows(engine) == before
    # A retried batch that also holds new messages stores only the new ones, in order.
    second = Message.user("second", id="m2")
    storage.append(SID, first, second, first)
    assert ids(storage.load(SID)) == ["m1", "m2"]
    assert storage.count(SID) == 2


def test_the_same_id_in_another_session_is_another_message(storage: SqlStorage) -> None:
    storage.append(SID, Message.user("here", id="m"))
    storage.append("other", Message.user("there", id="m"))
    assert [m.text_content() for m in storage.load("other")] == ["there"]
    assert [m.text_content() for m in storage.load(SID)] == ["here"]


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
    storage: SqlStorage, engine: sa.Engine, conflict: Message
) -> None:
    storage.append(SID, Message.user("original", id="m1"))
    before = rows(engine)
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, Message.user("new and fine", id="m0"), conflict)
    with pytest.raises(DuplicateMessageError):
        storage.append(SID, conflict, Message.user("new and fine", id="m2"))
    assert rows(engine) == before
    with pytest.raises(DuplicateMessageError):
        storage.append(
            "fresh", Message.user("x", id="dup"), Message.user("y", id="dup")
        )  # within one batch
    assert rows(engine) == before


# --- order and time ----------------------------------------------------------------------


def test_seq_grows_and_assigned_recorded_at_never_decreases(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    for k in range(5):
        storage.append(SID, Message.user(f"m{k}", id=f"m{k}"), Message.user(f"n{k}", id=f"n{k}"))
    storage.save(SID, [*storage.load(SID), Message.user("saved", id="saved")])
    storage.evict(SID, 6)
    storage.append(SID, Message.user("last", id="last"))
    loaded = storage.load(SID)
    order = seqs(engine, SID)
    assert [order[m.id] for m in loaded] == sorted(order[m.id] for m in loaded)
    assert len(set(order.values())) == len(order)
    times = [m.recorded_at for m in loaded]
    assert all(t is not None and t.utcoffset() == timedelta(0) for t in times)
    assert times == sorted(times)  # type: ignore[type-var]


def test_assigned_recorded_at_never_goes_below_an_imported_later_time(
    storage: SqlStorage,
) -> None:
    future = datetime.now(timezone.utc) + timedelta(days=2)
    past = datetime(2000, 1, 1, tzinfo=timezone.utc)
    storage.append(SID, Message.user("early", id="early"))
    storage.append(SID, Message.user("imported old", id="old", recorded_at=past))
    storage.append(SID, Message.user("imported future", id="future", recorded_at=future))
    storage.append(SID, Message.user("after", id="after"))
    early, old, imported, after = storage.load(SID)
    assert old.recorded_at == past
    assert imported.recorded_at == future
    assert after.recorded_at is not None and early.recorded_at is not None
    assert after.recorded_at >= future >= early.recorded_at
