"""``save``, ``evict`` and ``clear`` on every storage.

docs/contract/storage.md (the storage API): ``save`` replaces the whole history and ``[]``
clears it; ``evict(keep)`` deletes the oldest messages so that at most ``keep`` remain,
and more so that no tool message is left at the head; ``clear`` deletes the session.
docs/contract/persistence.md: a caller-supplied ``recorded_at`` is stored as given.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

from sqlmemory import (
    DuplicateMessageError,
    ImageBlock,
    InMemoryStorage,
    Message,
    Role,
    ToolCall,
)
from tests.support.cases import (
    EVICT_CASES,
    EVICT_ORPHAN_CASES,
    chat,
    ids,
    image_bytes,
    orphan_history,
    timeless,
    tool_history,
)
from tests.support.storages import Subject

SID = "api"


# --- save -----------------------------------------------------------------------------------


def test_save_replaces_the_whole_history(storage: Any) -> None:
    storage.append(SID, *tool_history())
    fresh = [Message.user("fresh start", id="fresh"), Message.assistant("ok", id="ok")]
    storage.save(SID, fresh)
    assert timeless(storage.load(SID)) == fresh
    assert storage.count(SID) == 2


def test_save_replaces_a_chat(storage: Any) -> None:
    storage.append("s", *chat(4))
    replacement = chat(2, "new")
    storage.save("s", replacement)
    assert ids(storage.load("s")) == ids(replacement)


def test_save_extending_the_stored_history(storage: Any) -> None:
    history = chat(3)
    storage.save("s", history)
    extended = storage.load("s") + chat(2, "more")
    storage.save("s", extended)
    assert ids(storage.load("s")) == ids(extended)


def test_save_of_a_grown_history_keeps_the_stored_messages(storage: Any) -> None:
    # The rows kept are checked in tests/integration/test_sql_storage.py.
    history = tool_history()
    storage.save(SID, history[:5])
    stored = storage.load(SID)
    storage.save(SID, history)  # the caller's own copies: no recorded_at
    loaded = storage.load(SID)
    assert loaded[:5] == stored  # recorded_at of the kept messages unchanged too
    assert timeless(loaded) == timeless(history)
    grown = [*loaded, Message.user("and one more", id="more")]
    storage.save(SID, grown)
    assert storage.load(SID)[: len(loaded)] == loaded


def test_save_of_a_changed_reordered_or_shortened_history_is_stored_as_given(
    storage: Any,
) -> None:
    history = tool_history()
    storage.save(SID, history)
    changed = [*history[:3], Message.tool("c2", "a corrected answer", id="t2"), *history[4:]]
    storage.save(SID, changed)
    assert timeless(storage.load(SID)) == timeless(changed)
    storage.save(SID, [history[8], history[0]])
    assert ids(storage.load(SID)) == ["a4", "u1"]
    storage.save(SID, [history[0]])
    assert ids(storage.load(SID)) == ["u1"]


def test_save_empty_clears(storage: Any) -> None:
    storage.append("s", *chat(3))
    storage.save("s", [])
    assert storage.load("s") == []
    assert storage.count("s") == 0


def test_save_of_nothing_clears_the_session(subject: Subject) -> None:
    storage = subject.storage
    png = ImageBlock(image_bytes(8, 8), "image/png")
    storage.append(SID, *tool_history(), Message.user(["pic", png], id="pic"))
    storage.append("other", Message.user("stays", id="stays"))
    storage.save(SID, [])
    assert storage.load(SID) == []
    assert storage.count(SID) == 0
    assert storage.sessions() == ["other"]
    subject.assert_counts(sessions=1, messages=1, blocks=0, blobs=0)
    storage.save("never-stored", [])
    subject.assert_counts(sessions=1, messages=1, blocks=0, blobs=0)


def test_save_stores_a_given_recorded_at_even_on_an_unchanged_message(storage: Any) -> None:
    # docs/contract/persistence.md: a caller-supplied recorded_at is stored as given.
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


def test_save_with_conflicting_ids_writes_nothing(subject: Subject) -> None:
    storage = subject.storage
    storage.save(SID, tool_history())
    before = subject.state()
    conflicting = [Message.user("x", id="same"), Message.user("y", id="same")]
    with pytest.raises(DuplicateMessageError):
        storage.save(SID, conflicting)
    assert subject.state() == before


# --- evict ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "cases"),
    [(tool_history, EVICT_CASES), (orphan_history, EVICT_ORPHAN_CASES)],
    ids=["tool-history", "orphan-history"],
)
def test_evict_deletes_the_oldest_and_never_leaves_a_tool_message_at_the_head(
    storage: Any,
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


def test_evict_keeps_newest(storage: Any) -> None:
    history = chat(10)
    storage.append("s", *history)
    assert storage.evict("s", 4) == 6
    assert ids(storage.load("s")) == ids(history[-4:])
    assert storage.evict("s", 4) == 0
    assert storage.evict("s", 100) == 0
    assert storage.count("s") == 4


def test_evict_zero_clears(storage: Any) -> None:
    storage.append("s", *chat(5))
    assert storage.evict("s", 0) == 5
    assert storage.load("s") == []


def test_evict_never_leaves_a_tool_message_at_the_head(storage: Any) -> None:
    history = [
        Message.user("q"),
        Message.assistant(tool_calls=[ToolCall(id="c1", name="f", arguments={})]),
        Message.tool("c1", "r"),
        Message.assistant("a"),
    ]
    storage.append("s", *history)
    assert storage.evict("s", 2) == 3
    assert ids(storage.load("s")) == [history[3].id]


def test_evict_removes_orphan_that_would_head(storage: Any) -> None:
    history = [Message.user("q"), Message.tool("zz", "stray"), Message.assistant("a")]
    storage.append("s", *history)
    assert storage.evict("s", 2) == 2
    assert ids(storage.load("s")) == [history[2].id]


# --- clear ----------------------------------------------------------------------------------


def test_clear_returns_number_deleted(storage: Any) -> None:
    storage.append("s", *chat(7))
    assert storage.clear("s") == 7
    assert storage.count("s") == 0
    assert storage.load("s") == []
    assert "s" not in storage.sessions()
    assert storage.clear("s") == 0


def test_clear_deletes_one_session_and_returns_its_message_count(subject: Subject) -> None:
    storage = subject.storage
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
    # "kept" stays in its message row (a leading text block), the image is a block row.
    subject.assert_counts(sessions=1, messages=1, blocks=1, blobs=1)
