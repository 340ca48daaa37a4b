"""``update_together`` on every storage: several records, and messages, in one transaction.

The joint write of ``docs/contract/storage.md`` (joint writes): each named session is
locked in sorted id order, its ``metadata`` function sees its record as locked, and
anything raised leaves every session as it was (``subject.state()`` compares every row of
every table on SQL).
"""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import (
    DuplicateMessageError,
    InvalidMessageError,
    InvalidSessionIdError,
    Message,
    SessionInfo,
    SessionOwnerError,
)
from sqlmemory.storage.joint import RecordChange
from tests.support.cases import chat
from tests.support.storages import Subject


class Refused(Exception):
    """What a metadata function raises to refuse the write."""


def bump(key: str) -> Any:
    """A metadata function adding one to ``key``."""

    def update(info: SessionInfo | None) -> dict[str, Any]:
        assert info is not None
        return {**info.metadata, key: info.metadata.get(key, 0) + 1}

    return update


def refuse(info: SessionInfo | None) -> None:
    raise Refused(info)


def test_it_appends_and_sets_metadata_of_several_sessions(storage: Any) -> None:
    seen: list[tuple[str, Any]] = []

    def look(name: str) -> Any:
        def update(info: SessionInfo | None) -> dict[str, Any]:
            seen.append((name, None if info is None else (info.message_count, info.metadata)))
            return {"name": name}

        return update

    storage.append("b-chat", *chat(2))
    storage.update_together(
        [
            RecordChange("b-chat", chat(1), metadata=look("b")),
            RecordChange("a-totals", metadata=look("a")),
            RecordChange("c-plain", chat(3)),
        ]
    )
    # Sorted order; a new record is seen empty; an existing one as stored.
    assert seen == [("a", (0, {})), ("b", (2, {}))]
    assert storage.session_info("a-totals").metadata == {"name": "a"}
    assert storage.session_info("a-totals").message_count == 0
    assert storage.session_info("b-chat").metadata == {"name": "b"}
    assert storage.count("b-chat") == 3 and storage.count("c-plain") == 3
    assert storage.session_info("c-plain").metadata == {}


def test_metadata_left_out_or_none_keeps_what_is_stored(storage: Any) -> None:
    storage.update_session("chat", metadata={"keep": True}, title="T")
    storage.update_together([RecordChange("chat", chat(1), metadata=lambda info: None)])
    info = storage.session_info("chat")
    assert (info.metadata, info.title, info.message_count) == ({"keep": True}, "T", 1)


def test_a_metadata_change_moves_updated_at(storage: Any) -> None:
    storage.update_session("chat", metadata={"n": 0})
    before = storage.session_info("chat").updated_at
    storage.update_together([RecordChange("chat", metadata=bump("n"))])
    after = storage.session_info("chat")
    assert after.metadata == {"n": 1} and after.updated_at >= before


@pytest.mark.parametrize("refusing", ["a", "m", "z"])
def test_a_refusal_anywhere_leaves_every_session_as_it_was(subject: Subject, refusing: str) -> None:
    storage = subject.storage
    storage.append("m", *chat(2))
    storage.update_session("z", metadata={"n": 1})
    before = subject.state()
    changes = [
        RecordChange(sid, chat(2), metadata=refuse if sid == refusing else bump("n"))
        for sid in ("z", "m", "a")
    ]
    with pytest.raises(Refused):
        storage.update_together(changes)
    assert subject.state() == before


def test_a_session_that_must_exist_and_does_not_is_left_absent(subject: Subject) -> None:
    storage = subject.storage
    seen: list[Any] = []
    storage.update_together(
        [
            RecordChange("gone", chat(2), metadata=lambda info: seen.append(info), create=False),
            RecordChange("here", chat(1)),
        ]
    )
    assert seen == [None]
    assert storage.session_info("gone") is None and storage.count("here") == 1
    before = subject.state()
    with pytest.raises(Refused):
        storage.update_together(
            [RecordChange("here", chat(1)), RecordChange("x", create=False, metadata=refuse)]
        )
    assert subject.state() == before


def test_create_false_writes_to_a_session_that_exists(storage: Any) -> None:
    storage.append("chat", *chat(1))
    storage.update_together([RecordChange("chat", chat(1), bump("n"), create=False)])
    assert storage.count("chat") == 2 and storage.session_info("chat").metadata == {"n": 1}


def test_owners_are_checked_under_the_lock(subject: Subject) -> None:
    storage = subject.storage
    storage.update_together(
        [RecordChange("alice-chat", chat(1), owner="alice"), RecordChange("app", owner="app")]
    )
    assert storage.session_info("alice-chat").owner == "alice"
    assert storage.session_info("app").owner == "app"
    before = subject.state()
    with pytest.raises(SessionOwnerError):
        storage.update_together(
            [RecordChange("b", chat(1), owner="bob"), RecordChange("alice-chat", owner="bob")]
        )
    assert subject.state() == before
    # A session of another owner that need not exist is seen as absent, and left alone.
    seen: list[Any] = []
    storage.update_together(
        [RecordChange("alice-chat", chat(2), lambda i: seen.append(i), create=False, owner="bob")]
    )
    assert seen == [None] and subject.state() == before


def test_through_an_owned_view_every_change_is_the_views_owner(subject: Subject) -> None:
    storage = subject.storage
    alice = storage.owned_by("alice")
    alice.update_together([RecordChange("mine", chat(1)), RecordChange("too", owner="alice")])
    assert storage.session_info("mine").owner == "alice"
    assert storage.session_info("too").owner == "alice"
    storage.owned_by("bob").append("bobs", *chat(1))
    before = subject.state()
    with pytest.raises(SessionOwnerError):
        alice.update_together([RecordChange("mine", chat(1), owner="bob")])
    with pytest.raises(SessionOwnerError):
        alice.update_together([RecordChange("mine", chat(1)), RecordChange("bobs")])
    seen: list[Any] = []
    alice.update_together([RecordChange("bobs", metadata=seen.append, create=False)])
    assert seen == [None] and subject.state() == before


def test_stored_messages_are_skipped_and_changed_ones_refused(subject: Subject) -> None:
    storage = subject.storage
    first = chat(2)
    storage.append("chat", *first)
    storage.update_together([RecordChange("chat", first, bump("n"))])
    assert [m.id for m in storage.load("chat")] == [m.id for m in first]
    assert storage.session_info("chat").metadata == {"n": 1}
    before = subject.state()
    changed = Message.user("other words", id=first[0].id)
    with pytest.raises(DuplicateMessageError):
        storage.update_together([RecordChange("chat", [changed], bump("n"))])
    assert subject.state() == before


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        (None, TypeError),
        ("chat", TypeError),
        ([("chat", [])], TypeError),
        ([RecordChange("chat"), RecordChange("chat")], ValueError),
        ([RecordChange(" chat")], InvalidSessionIdError),
        ([RecordChange(5)], TypeError),  # type: ignore[arg-type]
        ([RecordChange("chat", [object()])], InvalidMessageError),  # type: ignore[list-item]
        ([RecordChange("chat", "hi")], TypeError),  # type: ignore[arg-type]
        ([RecordChange("chat", metadata=5)], TypeError),  # type: ignore[arg-type]
        ([RecordChange("chat", create=1)], TypeError),  # type: ignore[arg-type]
        ([RecordChange("chat", owner="")], InvalidSessionIdError),
        ([RecordChange("chat", chat(1)), RecordChange("b", metadata=lambda i: 5)], TypeError),
        ([RecordChange("chat", chat(1)), RecordChange("b", metadata=lambda i: {1: 2})], ValueError),
        ([RecordChange("b", metadata=lambda i: {"x": float("nan")})], ValueError),
    ],
)
def test_bad_changes_are_refused_and_nothing_is_written(
    subject: Subject, changes: Any, error: type[Exception]
) -> None:
    subject.storage.append("chat", *chat(1))
    before = subject.state()
    with pytest.raises(error):
        subject.storage.update_together(changes)
    assert subject.state() == before


def test_an_empty_call_writes_nothing(subject: Subject) -> None:
    before = subject.state()
    subject.storage.update_together([])
    assert subject.state() == before
