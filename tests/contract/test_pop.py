"""``pop`` on every storage.

docs/contract/storage.md (the storage API, and "pop and groups"): ``pop(session_id)``
removes and returns the newest message exactly as ``load`` gave it, or ``None`` when the
session holds none; one transaction under the session's lock, like every write. It takes
exactly one message whatever its group: the call left unanswered makes an incomplete
group, which every window leaves out while ``load()`` still returns it.
"""

from __future__ import annotations

import threading
from typing import Any

from sqlmemory import FixedWindow, ImageBlock, Message, TokenWindow
from tests.support.cases import chat, every_block_kind, ids, image_bytes, tool_history
from tests.support.storages import Subject
from tests.support.windows import window_problems

SID = "pop"


def test_pop_returns_the_newest_message_as_stored_and_removes_it(storage: Any) -> None:
    storage.append(SID, *chat(3))
    stored = storage.load(SID)
    assert storage.pop(SID) == stored[-1]  # recorded_at included
    assert storage.load(SID) == stored[:-1]
    assert storage.count(SID) == 2
    assert storage.pop(SID) == stored[-2]
    assert storage.pop(SID) == stored[0]
    assert storage.pop(SID) is None
    assert storage.load(SID) == []
    assert SID not in storage.sessions()


def test_pop_of_an_unknown_session_is_none_and_writes_nothing(subject: Subject) -> None:
    subject.storage.append("other", *chat(2))
    before = subject.state()
    assert subject.storage.pop(SID) is None
    assert subject.state() == before


def test_pop_touches_no_other_session(subject: Subject) -> None:
    storage = subject.storage
    storage.append(SID, *chat(2))
    storage.append("other", *tool_history())
    other = storage.load("other")
    storage.pop(SID)
    storage.pop(SID)
    assert storage.load("other") == other
    assert storage.sessions() == ["other"]


def test_popped_messages_round_trip_every_block_kind(subject: Subject) -> None:
    storage = subject.storage
    storage.append(SID, *every_block_kind())
    stored = storage.load(SID)
    popped = [storage.pop(SID) for _ in stored]
    assert popped == list(reversed(stored))
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)


def test_pop_deletes_bytes_no_message_uses_any_more(subject: Subject) -> None:
    storage = subject.storage
    shared = ImageBlock(image_bytes(9, 9, seed=1), "image/png")
    own = ImageBlock(image_bytes(7, 7, seed=2), "image/png")
    storage.append(
        SID,
        Message.user(["first", shared], id="first"),
        Message.user(["second", shared, own], id="second"),
    )
    subject.assert_counts(sessions=1, messages=2, blocks=3, blobs=2)  # leading texts: in the row
    popped = storage.pop(SID)
    assert popped.id == "second" and popped.content[1:] == (shared, own)
    subject.assert_counts(sessions=1, messages=1, blocks=1, blobs=1)
    assert storage.load(SID)[0].content[1] == shared


def test_pop_takes_exactly_one_message_and_windows_keep_complete_groups(storage: Any) -> None:
    history = tool_history()  # [u1] [a1 t1 t2] [a2] [u2] [a3 t3] [a4]
    storage.append(SID, *history)
    assert storage.pop(SID).id == "a4"
    assert storage.pop(SID).id == "t3"
    stored = storage.load(SID)
    assert ids(stored) == ["u1", "a1", "t1", "t2", "a2", "u2", "a3"]  # as stored
    for window in (
        storage.load(SID, FixedWindow(10)),
        storage.load(SID, TokenWindow(10_000)),
        storage.recent(SID, 10),
    ):
        assert ids(window) == ["u1", "a1", "t1", "t2", "a2", "u2"]  # a3 is unanswered
        assert window_problems(stored, window) == []
    assert storage.pop(SID).id == "a3"
    assert storage.pop(SID).id == "u2"
    assert storage.pop(SID).id == "a2"
    assert storage.pop(SID).id == "t2"  # a1 keeps one of its two answers
    assert ids(storage.load(SID, FixedWindow(10))) == ["u1"]


def test_a_popped_id_can_be_appended_again_after_the_rest(storage: Any) -> None:
    history = chat(3)
    storage.append(SID, *history)
    popped = storage.pop(SID)
    storage.append(SID, Message.user("instead", id="instead"))
    storage.append(SID, Message.user("changed", id=popped.id))  # gone: no conflict
    assert ids(storage.load(SID)) == [*ids(history[:2]), "instead", popped.id]
    assert storage.load(SID)[-1].text_content() == "changed"
    stamps = [m.recorded_at for m in storage.load(SID)]
    assert stamps == sorted(stamps)


def test_concurrent_pops_hand_out_each_message_once(storage: Any) -> None:
    history = chat(40)
    storage.append(SID, *history)
    got: list[list[Message | None]] = [[] for _ in range(4)]

    def popper(mine: list[Message | None]) -> None:
        for _ in range(12):
            mine.append(storage.pop(SID))

    threads = [threading.Thread(target=popper, args=(mine,)) for mine in got]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    popped = [m for mine in got for m in mine if m is not None]
    assert sorted(ids(popped)) == sorted(ids(history))
    assert sum(m is None for mine in got for m in mine) == 8
    for mine in got:  # each popper saw newer messages first
        seen = [history.index(next(h for h in history if h.id == m.id)) for m in mine if m]
        assert seen == sorted(seen, reverse=True)
    assert storage.count(SID) == 0
