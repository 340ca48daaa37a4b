"""Owners and owned views on every storage (docs/many-users.md, docs/contract/storage.md).

Through ``storage.owned_by(owner)`` a session of another owner, or one with no owner,
behaves exactly as a session that does not exist: reads see nothing, deleting writes
leave it as it is and answer as for an absent session, and a write that would create or
change it raises ``SessionOwnerError`` leaving every table as it was (``subject.state()``
compares every row of every table on SQL). The unscoped storage is the operator's view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sqlmemory import (
    FixedWindow,
    ImageBlock,
    InvalidSessionIdError,
    Message,
    SessionOwnerError,
    ShortTermMemory,
    TextBlock,
)
from tests.support.cases import chat, image_bytes, tool_history
from tests.support.storages import Subject

THEIRS = "theirs"
"""A session of another owner (bob's)."""
NOBODYS = "nobodys"
"""A session written through the unscoped storage: no owner."""
FOREIGN = (THEIRS, NOBODYS)


def with_image(text: str, seed: int = 0) -> Message:
    return Message.user([TextBlock(text), ImageBlock(image_bytes(4, 4, seed=seed), "image/png")])


def setup_foreign(subject: Subject) -> Any:
    """alice's view, over a store holding bob's session and an unowned one."""
    storage = subject.storage
    storage.owned_by("bob").append(THEIRS, *tool_history(), with_image("bob's picture"))
    storage.append(NOBODYS, *chat(3), with_image("anonymous picture", seed=1))
    storage.update_session(NOBODYS, title="anonymous")
    return storage.owned_by("alice")


def test_a_session_first_written_through_a_view_belongs_to_its_owner(storage: Any) -> None:
    alice = storage.owned_by("alice")
    alice.append("chat", Message.user("Hi"))
    assert storage.session_info("chat").owner == "alice"
    assert alice.session_info("chat").owner == "alice"
    assert alice.load("chat")[0].text_content() == "Hi"
    assert alice.count("chat") == 1
    assert alice.sessions() == ["chat"]
    assert [i.session_id for i in alice.list_sessions().items] == ["chat"]
    storage.append("anon", Message.user("Hello"))
    assert storage.session_info("anon").owner is None
    assert alice.owner == "alice" and storage.owner is None


def test_every_write_through_a_view_creates_its_owners_session(storage: Any) -> None:
    alice = storage.owned_by("alice")
    alice.save("saved", chat(2))
    alice.update_session("titled", title="made by a title")
    assert storage.session_info("saved").owner == "alice"
    assert storage.session_info("titled").owner == "alice"
    assert alice.sessions() == ["saved", "titled"]


@pytest.mark.parametrize("sid", FOREIGN)
def test_reads_through_a_view_see_nothing_of_a_session_not_theirs(
    subject: Subject, sid: str
) -> None:
    alice = setup_foreign(subject)
    before = subject.state()
    assert alice.load(sid) == []
    assert alice.load(sid, FixedWindow(2)) == []
    assert alice.recent(sid, 5) == []
    assert alice.count(sid) == 0
    assert alice.session_info(sid) is None
    assert alice.sessions() == []
    assert alice.sessions(sid) == []
    assert alice.list_sessions().items == []
    assert alice.list_sessions(sid).items == []
    assert alice.session(sid).load() == []
    assert subject.state() == before


@pytest.mark.parametrize("sid", FOREIGN)
def test_deleting_writes_through_a_view_leave_a_session_not_theirs(
    subject: Subject, sid: str
) -> None:
    alice = setup_foreign(subject)
    before = subject.state()
    called: list[int] = []

    def summarize(older: list[Message]) -> Message:
        called.append(len(older))
        return Message.user("summary")

    assert alice.clear(sid) == 0
    assert alice.evict(sid, 0) == 0
    assert alice.evict(sid, 1) == 0
    assert alice.pop(sid) is None
    assert alice.compact(sid, summarize, keep=FixedWindow(1)) == 0
    assert called == []
    from datetime import timedelta

    assert alice.prune(timedelta(0)) == 0
    assert alice.erase_owner("alice") == 0
    assert alice.erase_owner("bob") == 0
    assert subject.state() == before


WRITES: dict[str, Callable[[Any, str], object]] = {
    "append": lambda s, sid: s.append(sid, Message.user("let me in")),
    "append-image": lambda s, sid: s.append(sid, with_image("mine now", seed=5)),
    "append-batch": lambda s, sid: s.append(sid, *chat(3, prefix="x")),
    "save": lambda s, sid: s.save(sid, chat(2, prefix="y")),
    "save-empty": lambda s, sid: s.save(sid, []),
    "update-title": lambda s, sid: s.update_session(sid, title="mine"),
    "update-metadata": lambda s, sid: s.update_session(sid, metadata={"k": 1}),
    "claim": lambda s, sid: s.update_session(sid, owner="alice"),
    "view-append": lambda s, sid: s.session(sid).append(Message.user("via a view")),
}


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("sid", FOREIGN)
def test_a_write_through_a_view_to_a_session_not_theirs_raises_and_writes_nothing(
    subject: Subject, sid: str, write: str
) -> None:
    alice = setup_foreign(subject)
    before = subject.state()
    with pytest.raises(SessionOwnerError, match="nothing was written"):
        WRITES[write](alice, sid)
    assert subject.state() == before


@pytest.mark.parametrize("sid", FOREIGN)
def test_appending_a_stored_message_of_a_session_not_theirs_still_raises(
    subject: Subject, sid: str
) -> None:
    # An idempotent retry must not reveal (by succeeding) what the session holds.
    alice = setup_foreign(subject)
    stored = subject.storage.load(sid)[0]
    before = subject.state()
    with pytest.raises(SessionOwnerError):
        alice.append(sid, stored)
    assert subject.state() == before


def test_a_view_cannot_hand_its_session_to_another_owner_or_to_none(subject: Subject) -> None:
    alice = subject.storage.owned_by("alice")
    alice.append("mine", Message.user("Hi"))
    before = subject.state()
    with pytest.raises(SessionOwnerError):
        alice.update_session("mine", owner="bob")
    with pytest.raises(SessionOwnerError):
        alice.update_session("mine", owner=None)
    assert subject.state() == before
    alice.update_session("mine", owner="alice", title="kept")
    assert alice.session_info("mine").owner == "alice"


def test_the_unscoped_storage_lists_and_transfers_by_owner(storage: Any) -> None:
    storage.owned_by("alice").append("a1", Message.user("1"))
    storage.owned_by("alice").append("a2", Message.user("2"))
    storage.owned_by("bob").append("b1", Message.user("3"))
    storage.append("anon", Message.user("4"))
    assert storage.sessions() == ["a1", "a2", "anon", "b1"]
    assert storage.sessions(owner="alice") == ["a1", "a2"]
    assert storage.sessions("a", owner="alice") == ["a1", "a2"]
    assert storage.sessions(owner="carol") == []
    assert [i.session_id for i in storage.list_sessions(owner="alice").items] == ["a2", "a1"]
    assert [i.owner for i in storage.list_sessions().items] == [None, "bob", "alice", "alice"]

    storage.update_session("anon", owner="bob")  # an anonymous conversation claimed
    storage.update_session("a1", owner="bob")  # a transfer
    bob = storage.owned_by("bob")
    assert bob.sessions() == ["a1", "anon", "b1"]
    assert storage.owned_by("alice").sessions() == ["a2"]
    assert storage.owned_by("alice").load("a1") == []
    assert bob.load("a1")[0].text_content() == "1"
    storage.update_session("a1", owner=None)
    assert storage.session_info("a1").owner is None
    assert bob.session_info("a1") is None


def test_a_view_lists_only_its_owners_sessions_a_page_at_a_time(storage: Any) -> None:
    for n in range(5):
        storage.owned_by("alice").append(f"a{n}", Message.user(str(n)))
        storage.owned_by("bob").append(f"b{n}", Message.user(str(n)))
    alice = storage.owned_by("alice")
    seen: list[str] = []
    cursor = None
    while True:
        page = alice.list_sessions(limit=2, cursor=cursor)
        seen += [i.session_id for i in page.items]
        assert all(i.owner == "alice" for i in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == ["a4", "a3", "a2", "a1", "a0"]
    assert alice.list_sessions(owner="alice").items == alice.list_sessions().items
    assert alice.list_sessions(owner="bob").items == []
    assert alice.sessions(owner="bob") == []
    assert alice.list_sessions("b").items == []


def test_prune_through_a_view_deletes_only_its_owners_sessions(storage: Any) -> None:
    from datetime import timedelta

    storage.owned_by("alice").append("a", Message.user("1"))
    storage.owned_by("bob").append("b", Message.user("2"))
    storage.append("anon", Message.user("3"))
    assert storage.owned_by("alice").prune(timedelta(0)) == 1
    assert storage.sessions() == ["anon", "b"]


def test_erase_owner_deletes_all_of_the_owners_sessions_and_nothing_else(
    subject: Subject,
) -> None:
    storage = subject.storage
    alice = storage.owned_by("alice")
    for n in range(7):
        alice.append(f"a{n}", *tool_history(), with_image(f"alice {n}", seed=n))
    storage.owned_by("bob").append("b", with_image("bob", seed=0), *chat(2))
    storage.append("anon", with_image("anon", seed=1))
    assert storage.erase_owner("alice") == 7
    assert storage.sessions() == ["anon", "b"]
    assert alice.sessions() == []
    assert storage.erase_owner("alice") == 0
    assert len(storage.load("b")) == 3
    assert storage.load("anon")[0].content[1].data == image_bytes(4, 4, seed=1)
    if subject.sql:
        subject.assert_counts(sessions=2, messages=4, blocks=2, blobs=2)


def test_a_view_may_erase_its_own_owner_only(storage: Any) -> None:
    storage.owned_by("alice").append("a", Message.user("1"))
    storage.owned_by("bob").append("b", Message.user("2"))
    assert storage.owned_by("bob").erase_owner("alice") == 0
    assert storage.owned_by("alice").erase_owner("alice") == 1
    assert storage.sessions() == ["b"]


BAD_OWNERS: list[tuple[object, type[Exception]]] = [
    ("", InvalidSessionIdError),
    ("x" * 256, InvalidSessionIdError),
    ("a\x00b", InvalidSessionIdError),
    ("\ud800", InvalidSessionIdError),
    (5, TypeError),
    (None, TypeError),
    (b"alice", TypeError),
]


@pytest.mark.parametrize(("owner", "error"), BAD_OWNERS, ids=lambda v: repr(v)[:12])
def test_a_bad_owner_is_refused_before_anything_is_written(
    subject: Subject, owner: object, error: type[Exception]
) -> None:
    storage = subject.storage
    storage.append("s", Message.user("Hi"))
    before = subject.state()
    with pytest.raises(error):
        storage.owned_by(owner)
    if owner is not None:
        with pytest.raises(error):
            storage.update_session("s", owner=owner)
        with pytest.raises(error):
            storage.list_sessions(owner=owner)
        with pytest.raises(error):
            storage.sessions(owner=owner)
    with pytest.raises(error):
        storage.erase_owner(owner)
    assert subject.state() == before


def test_owners_are_exact_strings(storage: Any) -> None:
    # Case, padding and the longest owner are kept as given; none is a prefix of another.
    longest = "o" * 255
    for owner in ("Alice", "alice", " alice ", longest, "ålice-ß-中"):
        storage.owned_by(owner).append(f"s-{len(owner)}-{owner[:3]}", Message.user(owner))
    for owner in ("Alice", "alice", " alice ", longest, "ålice-ß-中"):
        view = storage.owned_by(owner)
        [sid] = view.sessions()
        assert view.load(sid)[0].text_content() == owner
        assert view.session_info(sid).owner == owner


def test_a_view_of_a_view_keeps_its_owner(storage: Any) -> None:
    alice = storage.owned_by("alice")
    assert alice.owned_by("alice").owner == "alice"
    with pytest.raises(SessionOwnerError):
        alice.owned_by("bob")


def test_short_term_memory_and_session_views_work_over_an_owned_view(storage: Any) -> None:
    alice = storage.owned_by("alice")
    memory = ShortTermMemory(alice, "chat", policy=FixedWindow(1))
    memory.append(Message.user("Hi"), Message.assistant("Hello."))
    assert [m.text_content() for m in memory.messages()] == ["Hello."]
    chat_view = alice.session("chat")
    assert chat_view.count() == 2
    assert storage.session_info("chat").owner == "alice"
    assert ShortTermMemory(storage.owned_by("bob"), "chat").messages() == []
