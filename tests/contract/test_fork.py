"""``fork`` on every storage: the copy, and the independence of both sides afterwards.

A fork holds the source's messages up to and including ``at``, equal in every field
(ids, ``recorded_at``, blocks, extras, image and document bytes and sizes), with the
source's title, metadata and owner. Afterwards any write to one side leaves the other as
it was, image bytes included (on SQL each side keeps blob rows of its own), and deleting
the source leaves the fork whole (docs/branches.md, docs/contract/storage.md).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import DocumentBlock, ImageBlock, Message, TextBlock
from tests.support.cases import (
    chat,
    every_block_kind,
    fidelity_messages,
    image_bytes,
    image_sizes,
    tool_history,
)
from tests.support.storages import Subject
from tests.support.strategies import messages
from tests.support.tables import orphan_blobs


def with_image(text: str, seed: int, id: str | None = None) -> Message:
    picture = ImageBlock(image_bytes(5, 3, seed=seed), "image/png")
    return Message.user([TextBlock(text), picture], id=id)


def history() -> list[Message]:
    """Every block kind, every hard text, tool groups and images shared between messages."""
    return [
        *every_block_kind(),
        *fidelity_messages(),
        *tool_history(),
        with_image("shared picture", 0, id="pic-1"),
        with_image("the same picture again", 0, id="pic-2"),
        with_image("another picture", 1, id="pic-3"),
        Message.assistant("the end", id="last"),
    ]


def test_a_fork_holds_the_history_up_to_at_equal_in_every_field(storage: Any) -> None:
    stored = history()
    storage.append("src", *stored)
    storage.update_session("src", title="Trip\x00 plans ✓", metadata={"z": 1, "a": [2]})
    source = storage.load("src")
    cut = [m.id for m in source].index("pic-2")

    info = storage.fork("src", "copy", at="pic-2")

    copied = storage.load("copy")
    assert copied == source[: cut + 1]
    assert image_sizes(copied) == image_sizes(source[: cut + 1])
    assert info == storage.session_info("copy")
    assert (info.session_id, info.parent_id, info.forked_at) == ("copy", "src", "pic-2")
    assert (info.title, dict(info.metadata)) == ("Trip\x00 plans ✓", {"z": 1, "a": [2]})
    assert info.message_count == cut + 1 == storage.count("copy")
    assert info.owner is None
    assert info.created_at == info.updated_at >= storage.session_info("src").updated_at
    assert storage.load("src") == source


def test_a_fork_without_at_copies_the_whole_history(storage: Any) -> None:
    storage.append("src", *history())
    info = storage.fork("src", "whole")
    assert storage.load("whole") == storage.load("src")
    assert image_sizes(storage.load("whole")) == image_sizes(storage.load("src"))
    assert (info.parent_id, info.forked_at, info.message_count) == ("src", None, len(history()))


def test_a_fork_of_a_session_without_messages_copies_its_record(storage: Any) -> None:
    storage.update_session("empty", title="nothing yet", metadata={"k": 1})
    info = storage.fork("empty", "empty-2")
    assert (info.message_count, info.title, dict(info.metadata)) == (0, "nothing yet", {"k": 1})
    assert storage.load("empty-2") == []
    storage.append("empty-2", Message.user("first"))
    assert storage.count("empty-2") == 1 and storage.count("empty") == 0


def test_writes_to_a_fork_continue_after_its_copied_history(storage: Any) -> None:
    storage.append("src", *chat(6))
    at = storage.load("src")[2].id
    storage.fork("src", "fork", at=at)
    before = storage.load("src")
    storage.append("fork", Message.user("edited"), Message.assistant("new answer"))
    forked = storage.load("fork")
    assert [m.text_content() for m in forked] == ["m0", "m1", "m2", "edited", "new answer"]
    assert forked[:3] == before[:3]
    times = [m.recorded_at for m in forked]
    assert times == sorted(times)
    assert storage.load("src") == before
    assert storage.session_info("fork").message_count == 5
    # save, pop and evict work on the fork's own rows
    storage.save("fork", [*forked, Message.user("saved")])
    assert storage.pop("fork").text_content() == "saved"
    assert storage.evict("fork", 2) == 3
    assert [m.text_content() for m in storage.load("fork")] == ["edited", "new answer"]
    assert storage.load("src") == before


def test_save_over_a_whole_fork_writes_from_the_first_difference(storage: Any) -> None:
    stored = chat(4)
    storage.save("src", stored)
    storage.fork("src", "fork")
    storage.save("fork", [*stored, Message.user("more")])
    assert [m.text_content() for m in storage.load("fork")] == ["m0", "m1", "m2", "m3", "more"]
    assert storage.load("fork")[:4] == storage.load("src")
    storage.save("fork", stored[:2])
    assert storage.load("fork") == storage.load("src")[:2]
    assert storage.count("src") == 4


def test_a_fork_of_a_fork_and_a_view_of_a_session(storage: Any) -> None:
    storage.append("a", *chat(5))
    ids = [m.id for m in storage.load("a")]
    storage.session("a").fork("b", at=ids[3])
    info = storage.session("b").fork("c", at=ids[1])
    assert (info.parent_id, info.forked_at) == ("b", ids[1])
    assert storage.load("c") == storage.load("a")[:2]
    assert [b.session_id for b in storage.session("a").branches()] == ["b"]
    assert [b.session_id for b in storage.branches("b")] == ["c"]


def pop(storage: Any, sid: str) -> None:
    storage.pop(sid)


WRITES: dict[str, Callable[[Any, str], object]] = {
    "clear": lambda storage, sid: storage.clear(sid),
    "evict": lambda storage, sid: storage.evict(sid, 1),
    "evict-all": lambda storage, sid: storage.evict(sid, 0),
    "pop": pop,
    "save-other": lambda storage, sid: storage.save(sid, [with_image("replaced", 7)]),
    "save-empty": lambda storage, sid: storage.save(sid, []),
    "append": lambda storage, sid: storage.append(sid, with_image("more", 0)),
    "title": lambda storage, sid: storage.update_session(sid, title="changed", metadata={}),
    "prune": lambda storage, sid: storage.owned_by("ann").prune(timedelta(0)),
    "erase-owner": lambda storage, sid: storage.erase_owner("ann"),
}


@pytest.mark.parametrize("written", ["source", "fork"])
@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_to_one_side_leaves_the_other_as_it_was(
    subject: Subject, write: str, written: str
) -> None:
    storage = subject.storage
    ann = storage.owned_by("ann")
    pictures = [
        with_image("first picture", 0, id="p1"),
        Message.assistant("nice", id="a1"),
        with_image("the first again, and a document", 0, id="p2"),
        Message.user([DocumentBlock(b"%PDF-1.4 doc", "application/pdf")], id="d1"),
        with_image("a second picture", 1, id="p3"),
    ]
    ann.append("source", *pictures)
    ann.update_session("source", title="ann's chat")
    ann.fork("source", "fork", at="p2" if written == "fork" else None)
    other = "fork" if written == "source" else "source"
    if write in ("prune", "erase-owner"):
        # Both sides are ann's and both are old: only the one written is in the way.
        storage.update_session(other, owner="bea")
    kept = (storage.load(other), storage.session_info(other))

    WRITES[write](storage, written)

    assert (storage.load(other), storage.session_info(other)) == kept
    assert image_sizes(storage.load(other)) == image_sizes(kept[0])
    if subject.sql:
        with subject.engine.connect() as conn:
            assert orphan_blobs(conn) == []


def test_deleting_the_source_leaves_the_fork_whole_with_its_lineage(storage: Any) -> None:
    storage.append("src", *history())
    storage.fork("src", "fork", at="pic-3")
    forked = storage.load("fork")
    assert storage.clear("src") == len(history())
    assert storage.load("fork") == forked
    assert image_sizes(storage.load("fork")) == image_sizes(forked)
    info = storage.session_info("fork")
    assert (info.parent_id, info.forked_at) == ("src", "pic-3")
    assert [b.session_id for b in storage.branches("src")] == ["fork"]
    # The parent's id is free again, and a new session under it is no parent of the fork's.
    storage.append("src", Message.user("a new session"))
    assert storage.session_info("src").parent_id is None


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    drawn = draw(st.lists(messages(), min_size=1, max_size=6))
    return [Message.from_dict({**m.to_dict(), "id": f"h{i}"}) for i, m in enumerate(drawn)]


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(stored=histories(), split=st.integers(0, 5))
def test_a_fork_at_every_position_equals_the_prefix(
    storage: Any, stored: list[Message], split: int
) -> None:
    for sid in storage.sessions():
        storage.clear(sid)
    # Two appends: the stamps of the later ones never go before the earlier ones.
    split = min(split, len(stored))
    storage.append("src", *stored[:split])
    storage.append("src", *stored[split:])
    source = storage.load("src")
    for position, message in enumerate(source):
        storage.fork("src", f"at-{position}", at=message.id)
        assert storage.load(f"at-{position}") == source[: position + 1]
        assert image_sizes(storage.load(f"at-{position}")) == image_sizes(source[: position + 1])
        assert storage.count(f"at-{position}") == position + 1
    storage.fork("src", "whole")
    assert storage.load("whole") == source
    # Oldest first (ties of created_at by id, which sorts these in the order they came).
    forks = [f"at-{p}" for p in range(len(source))]
    assert [b.session_id for b in storage.branches("src")] == [*forks, "whole"]
    assert storage.load("src") == source
