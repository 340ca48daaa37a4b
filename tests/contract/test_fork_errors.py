"""``fork``'s errors and owned views on every storage; ``branches`` and the lineage.

Every refused fork raises its typed error and leaves everything as it was:
``subject.state()`` holds every session's history and record, and on SQL every row of
every table. Through an owned view only the owner's sessions can be forked, the fork is
the owner's, a new id of another owner (or of none) raises ``SessionOwnerError``, and
``branches`` lists the owner's forks only (docs/branches.md, docs/contract/storage.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import (
    ConflictError,
    ImageBlock,
    InvalidSessionIdError,
    Message,
    MessageNotFoundError,
    SessionNotFoundError,
    SessionOwnerError,
    SqlMemoryError,
    TextBlock,
)
from tests.support.cases import chat, image_bytes
from tests.support.storages import Subject


def setup(subject: Subject) -> Any:
    """``a`` (3 messages, an image), ``b`` (bob's), ``c`` (no owner), ``taken`` (ann's)."""
    storage = subject.storage
    ann = storage.owned_by("ann")
    picture = ImageBlock(image_bytes(4, 4), "image/png")
    ann.append("a", Message.user([TextBlock("look"), picture], id="a1"), *chat(2, "a-"))
    ann.update_session("a", title="ann's")
    ann.append("taken", Message.user("mine"))
    storage.owned_by("bob").append("b", Message.user("bob's", id="b1"))
    storage.append("c", Message.user("nobody's", id="c1"))
    return ann


REFUSED: dict[str, tuple[str, str, str | None, type[Exception], str]] = {
    # case: (source, new id, at, error, what its message names)
    "new-id-taken": ("a", "taken", None, ConflictError, "'taken'"),
    "new-id-taken-before-the-source": ("a", "0-taken", None, ConflictError, "'0-taken'"),
    "into-itself": ("a", "a", None, ConflictError, "'a'"),
    "absent-source": ("nope", "new", None, SessionNotFoundError, "'nope'"),
    "absent-source-into-itself": ("nope", "nope", None, SessionNotFoundError, "'nope'"),
    "unknown-at": ("a", "new", "zz", MessageNotFoundError, "'zz'"),
    "at-of-another-session": ("a", "new", "b1", MessageNotFoundError, "'b1'"),
    "at-no-id-at-all": ("a", "new", "", MessageNotFoundError, "''"),
    "at-with-a-control-character": ("a", "new", "a\x001", MessageNotFoundError, "'a\\x001'"),
    "unknown-at-and-taken-id": ("a", "taken", "zz", MessageNotFoundError, "'zz'"),
    "absent-source-and-taken-id": ("nope", "taken", None, SessionNotFoundError, "'nope'"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_fork_raises_its_error_and_writes_nothing(subject: Subject, case: str) -> None:
    setup(subject)
    storage = subject.storage
    storage.append("0-taken", Message.user("zero"))
    source, new, at, error, named = REFUSED[case]
    before = subject.state()
    with pytest.raises(error) as raised:
        storage.fork(source, new, at=at)
    assert named in str(raised.value) and "nothing was written" in str(raised.value)
    assert subject.state() == before
    if isinstance(raised.value, (SessionNotFoundError, MessageNotFoundError)):
        assert isinstance(raised.value, ValueError)
        assert raised.value.session_id == source
    if isinstance(raised.value, MessageNotFoundError):
        assert raised.value.message_id == at


BAD_ARGUMENTS: dict[str, tuple[Any, Any, Any, type[Exception]]] = {
    "source-not-a-str": (1, "new", None, TypeError),
    "new-not-a-str": ("a", None, None, TypeError),
    "at-not-a-str": ("a", "new", 1, TypeError),
    "empty-new-id": ("a", "", None, InvalidSessionIdError),
    "padded-source": (" a", "new", None, InvalidSessionIdError),
    "new-id-with-a-control-character": ("a", "n\x00ew", None, InvalidSessionIdError),
}


@pytest.mark.parametrize("case", list(BAD_ARGUMENTS))
def test_bad_arguments_are_refused_before_anything_is_read(subject: Subject, case: str) -> None:
    setup(subject)
    before = subject.state()
    source, new, at, error = BAD_ARGUMENTS[case]
    with pytest.raises(error):
        subject.storage.fork(source, new, at=at)
    with pytest.raises(error):
        subject.storage.owned_by("ann").fork(source, new, at=at)
    assert subject.state() == before


OWNED_REFUSED: dict[str, tuple[str, str, type[Exception]]] = {
    "another-owners-source": ("b", "new", SessionNotFoundError),
    "nobodys-source": ("c", "new", SessionNotFoundError),
    "into-another-owners-id": ("a", "b", SessionOwnerError),
    "into-nobodys-id": ("a", "c", SessionOwnerError),
    "into-another-owners-id-before-the-source": ("taken", "b", SessionOwnerError),
    "into-the-owners-own-taken-id": ("a", "taken", ConflictError),
    "another-owners-source-into-itself": ("b", "b", SessionNotFoundError),
}


@pytest.mark.parametrize("case", list(OWNED_REFUSED))
def test_through_a_view_only_the_owners_sessions_fork(subject: Subject, case: str) -> None:
    ann = setup(subject)
    source, new, error = OWNED_REFUSED[case]
    before = subject.state()
    with pytest.raises(error):
        ann.fork(source, new)
    assert subject.state() == before


def test_a_fork_through_a_view_belongs_to_its_owner(subject: Subject) -> None:
    ann = setup(subject)
    storage = subject.storage
    info = ann.fork("a", "a-2", at="a1")
    assert info.owner == "ann" == storage.session_info("a-2").owner
    assert ann.load("a-2") == ann.load("a")[:1]
    assert storage.owned_by("bob").load("a-2") == []
    # The unscoped storage forks anyone's session; the fork keeps the source's owner.
    assert storage.fork("b", "b-2").owner == "bob"
    assert storage.fork("c", "c-2").owner is None


def test_branches_lists_the_forks_oldest_first_and_through_a_view_the_owners_only(
    subject: Subject,
) -> None:
    ann = setup(subject)
    storage = subject.storage
    # Made newest id first: the order is by creation (ties, if the clock gives any, by id).
    made = [ann.fork("a", f"v{n}", at="a1" if n % 2 else None) for n in range(3, 0, -1)]
    oldest_first = sorted(made, key=lambda b: (b.created_at, b.session_id))
    assert ann.branches("a") == storage.branches("a") == oldest_first
    order = [b.session_id for b in oldest_first]
    storage.update_session("v2", owner="bob")
    assert [b.session_id for b in ann.branches("a")] == [i for i in order if i != "v2"]
    assert [b.session_id for b in storage.owned_by("bob").branches("a")] == ["v2"]
    assert [b.session_id for b in storage.branches("a")] == order
    assert storage.branches("v3") == [] and storage.branches("never-was") == []
    # The records branches gives are session_info's.
    assert storage.branches("a")[0] == storage.session_info(order[0])


def test_siblings_at_one_message_are_the_forks_that_share_its_id(storage: Any) -> None:
    storage.append("chat", *chat(4))
    ids = [m.id for m in storage.load("chat")]
    for n in range(2):
        storage.fork("chat", f"regen-{n}", at=ids[2])
    storage.fork("chat", "edit", at=ids[0])
    siblings = [b.session_id for b in storage.branches("chat") if b.forked_at == ids[2]]
    assert siblings == ["regen-0", "regen-1"]


def test_a_fork_error_is_one_of_the_library_errors(storage: Any) -> None:
    with pytest.raises(SqlMemoryError):
        storage.fork("nope", "new")
    with pytest.raises(ValueError, match="'nope' does not exist"):
        storage.fork("nope", "new")
