"""What the SQL storages keep in their tables: seqs, kept rows, inline text.

The storage API itself, on every storage: tests/contract/ (docs/contract/storage.md).
These check the rows behind it (docs/contract/persistence.md, order): a save of a grown
history keeps the stored rows, a changed one is rewritten from the first difference,
``seq`` only grows, and a message of one text block keeps it inline.
"""

from __future__ import annotations

import gc
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, TextBlock, ThinkingBlock, ToolCall
from tests.support.cases import ids, timeless, tool_history
from tests.support.tables import MESSAGES, seqs

SID = "api"


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


def test_evict_keeps_seq_growing(storage: SqlStorage, engine: sa.Engine) -> None:
    storage.append(SID, *tool_history())
    highest = max(seqs(engine, SID).values())
    storage.evict(SID, 1)
    storage.append(SID, Message.user("after evict", id="after"))
    assert seqs(engine, SID)["after"] > highest


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


def test_a_leading_text_block_is_kept_inline(storage: SqlStorage, engine: sa.Engine) -> None:
    # The first block stays in the message row when it is a text without extras: a message
    # of one text needs no block row, and "text, then tool calls" needs one per call.
    storage.append(
        SID,
        Message.user("inline", id="one"),
        Message.user([TextBlock("two"), TextBlock("blocks")], id="two"),
        Message.assistant("calling", tool_calls=[ToolCall("c1", "f")], id="call"),
        Message.user([TextBlock("cached", extras={"cache_control": {}})], id="extras"),
        Message.assistant([ThinkingBlock("hmm"), TextBlock("then text")], id="thinking"),
    )
    with engine.connect() as conn:
        rows = dict(
            conn.execute(
                sa.select(MESSAGES.c.message_id, MESSAGES.c.n_blocks).where(
                    MESSAGES.c.session_id == SID
                )
            ).all()
        )
    assert rows == {"one": 0, "two": 1, "call": 1, "extras": 1, "thinking": 2}
    assert [m.content for m in storage.load(SID)] == [
        (TextBlock("inline"),),
        (TextBlock("two"), TextBlock("blocks")),
        (TextBlock("calling"), ToolCall("c1", "f")),
        (TextBlock("cached", extras={"cache_control": {}}),),
        (ThinkingBlock("hmm"), TextBlock("then text")),
    ]


@pytest.mark.parametrize("enabled", [True, False])
def test_a_load_leaves_the_garbage_collector_as_it_found_it(storage: Any, enabled: bool) -> None:
    # A whole-history read pauses the cyclic collector while it builds the messages.
    storage.append("s", *(Message.user(f"m{i}") for i in range(50)))
    was = gc.isenabled()
    try:
        if enabled:
            gc.enable()
        else:
            gc.disable()
        loaded = storage.load("s")
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
    assert [m.text_content() for m in loaded] == [f"m{i}" for i in range(50)]
    assert all(
        m.recorded_at is not None and m.recorded_at.utcoffset() == timedelta(0) for m in loaded
    )
