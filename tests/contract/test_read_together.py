"""``read_together`` on every storage: one session's window and several records, at once.

The joint read of ``docs/contract/storage.md`` (joint reads): the records of the session
and of the ids named, ``None`` for one that does not exist or is another owner's, and the
session's messages (a window policy's window, read from the tail on SQL).
"""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import FixedWindow, InvalidSessionIdError, Message, TokenWindow
from tests.support.cases import chat


def texts(messages: list[Message]) -> list[str]:
    return [m.text_content() for m in messages]


def test_it_reads_the_window_and_every_record(storage: Any) -> None:
    storage.append("chat", *chat(6))
    storage.update_session("totals", metadata={"seen": 3})
    read = storage.read_together("chat", FixedWindow(2), records=["totals", "missing"])
    assert texts(read.messages) == ["m4", "m5"]
    assert sorted(read.records) == ["chat", "missing", "totals"]
    assert read.records["chat"] == storage.session_info("chat")
    assert read.records["chat"].message_count == 6
    assert read.records["totals"].metadata == {"seen": 3}
    assert read.records["missing"] is None


def test_no_policy_reads_the_whole_history_and_any_policy_its_window(storage: Any) -> None:
    storage.append("chat", *chat(5))
    assert read_texts(storage, None) == [f"m{i}" for i in range(5)]
    assert read_texts(storage, TokenWindow(1)) == texts(storage.load("chat", TokenWindow(1)))


def read_texts(storage: Any, policy: Any) -> list[str]:
    return texts(storage.read_together("chat", policy).messages)


def test_a_missing_session_reads_as_no_messages_and_no_record(storage: Any) -> None:
    read = storage.read_together("nothing-here", FixedWindow(3), records=("nothing-here",))
    assert read.messages == [] and read.records == {"nothing-here": None}


def test_an_owned_view_reads_only_its_owners_sessions(storage: Any) -> None:
    alice, bob = storage.owned_by("alice"), storage.owned_by("bob")
    alice.append("a-chat", *chat(2))
    alice.update_session("a-state", metadata={"k": 1})
    bob.append("b-chat", *chat(2))
    read = alice.read_together("a-chat", records=["a-state", "b-chat"])
    assert texts(read.messages) == ["m0", "m1"]
    assert read.records["a-state"] is not None and read.records["b-chat"] is None
    theirs = alice.read_together("b-chat", records=["a-chat"])
    assert theirs.messages == [] and theirs.records["b-chat"] is None


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (("",), {}, InvalidSessionIdError),
        ((3,), {}, TypeError),
        (("chat", "not a policy"), {}, TypeError),
        (("chat",), {"records": "totals"}, TypeError),
        (("chat",), {"records": [None]}, TypeError),
    ],
    ids=["empty-id", "int-id", "bad-policy", "str-records", "none-record"],
)
def test_bad_arguments_are_refused(storage: Any, args: Any, kwargs: Any, error: Any) -> None:
    with pytest.raises(error):
        storage.read_together(*args, **kwargs)
