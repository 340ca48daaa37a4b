"""``_splice`` on every storage: a span taken by position, decided under the session lock.

The adapters' primitive of ``docs/contract/storage.md`` (joint writes): the plan sees the
session's record as locked, the span ``[start:stop]`` of that history is returned (and
deleted when asked), messages are appended and the plan's metadata stored, all in one
transaction; anything raised leaves every table as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import Message, SessionInfo, SessionOwnerError
from sqlmemory.storage.joint import Splice
from tests.support.cases import chat
from tests.support.storages import Subject


def texts(messages: list[Message]) -> list[str]:
    return [m.text_content() for m in messages]


def test_a_span_is_read_deleted_and_replaced_in_one_write(storage: Any) -> None:
    storage.append("chat", *chat(5))
    seen: list[tuple[int, Any]] = []

    def plan(info: SessionInfo | None) -> Splice:
        assert info is not None
        seen.append((info.message_count, dict(info.metadata)))
        return Splice(1, 3, delete=True, metadata={"cut": 2})

    taken = storage._splice("chat", plan, [Message.user("new")])

    assert texts(taken) == ["m1", "m2"] and seen == [(5, {})]
    assert texts(storage.load("chat")) == ["m0", "m3", "m4", "new"]
    info = storage.session_info("chat")
    assert (info.message_count, info.metadata) == (4, {"cut": 2})
    # A read-only span, clamped to the history; then every message deleted: no session.
    assert texts(storage._splice("chat", lambda info: Splice(2, 99))) == ["m4", "new"]
    assert len(storage._splice("chat", lambda info: Splice(-3, 99, delete=True))) == 4
    assert storage.session_info("chat") is None and storage.sessions() == []
    assert storage._splice("chat", lambda info: Splice(0, 1, delete=True)) == []


def test_a_refused_plan_or_append_leaves_every_table_as_it_was(subject: Subject) -> None:
    storage = subject.storage
    storage.append("chat", *chat(3))
    before = subject.state()

    def refuse(info: SessionInfo | None) -> Splice:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        storage._splice("chat", refuse, [Message.user("x")])
    with pytest.raises(TypeError):
        storage._splice("chat", lambda info: (0, 1))
    with pytest.raises(ValueError, match="not JSON"):
        storage._splice("chat", lambda info: Splice(0, 1, delete=True, metadata={"x": object()}))
    assert subject.state() == before


def test_an_owned_view_splices_only_its_own_sessions(storage: Any) -> None:
    storage.owned_by("alice").append("chat", *chat(2))
    bob = storage.owned_by("bob")

    assert bob._splice("chat", lambda info: Splice(0, 2, delete=info is not None)) == []
    with pytest.raises(SessionOwnerError):
        bob._splice("chat", lambda info: Splice(), [Message.user("mine?")])
    assert texts(storage.load("chat")) == ["m0", "m1"]
