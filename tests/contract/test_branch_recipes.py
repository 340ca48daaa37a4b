"""The moves chat users make, as docs/branches.md writes them, on every storage.

Edit message k (fork at the message before it, append the edited one), regenerate a
reply (fork before it, append the new reply), and the "2 / 3" a chat interface shows at
a message: the original and the branches forked at the same point, oldest first. Every
version stays whole and reachable: going back is loading another session.
"""

from __future__ import annotations

from typing import Any

from sqlmemory import Message, SessionInfo


def edit(storage: Any, session_id: str, k: int, edited: Message, new_id: str) -> SessionInfo:
    """The history up to message ``k`` (excluded), then ``edited`` (docs/branches.md)."""
    before = storage.load(session_id)[k - 1]
    info = storage.fork(session_id, new_id, at=before.id)
    storage.append(new_id, edited)
    return info


def regenerate(storage: Any, session_id: str, k: int, reply: Message, new_id: str) -> None:
    """The history up to reply ``k`` (excluded), then the new ``reply``."""
    edit(storage, session_id, k, reply, new_id)


def versions(storage: Any, session_id: str, k: int) -> list[str]:
    """The sessions holding a version of message ``k`` of ``session_id``: itself first,
    then the branches forked just before it, oldest first."""
    before = storage.load(session_id)[k - 1].id
    return [session_id] + [
        b.session_id for b in storage.branches(session_id) if b.forked_at == before
    ]


def conversation() -> list[Message]:
    return [
        Message.system("You are a travel agent.", id="sys"),
        Message.user("Plan 3 days in Rome.", id="u1"),
        Message.assistant("Day 1: Colosseum...", id="a1"),
        Message.user("Make it cheaper.", id="u2"),
        Message.assistant("Day 1: free walking tour...", id="a2"),
    ]


def test_editing_a_message_keeps_the_old_version(storage: Any) -> None:
    storage.append("trip", *conversation())
    edit(storage, "trip", 3, Message.user("Make it 5 days instead.", id="u2-b"), "trip/2")
    edited = storage.load("trip/2")
    assert [m.id for m in edited] == ["sys", "u1", "a1", "u2-b"]
    assert edited[:3] == storage.load("trip")[:3]
    assert [m.id for m in storage.load("trip")] == ["sys", "u1", "a1", "u2", "a2"]
    storage.append("trip/2", Message.assistant("Days 1-5: ...", id="a2-b"))
    assert storage.count("trip/2") == 5 and storage.count("trip") == 5


def test_regenerating_a_reply_and_showing_2_of_3(storage: Any) -> None:
    storage.append("trip", *conversation())
    regenerate(storage, "trip", 4, Message.assistant("Day 1: picnic...", id="a2-b"), "trip/2")
    regenerate(storage, "trip", 4, Message.assistant("Day 1: museums...", id="a2-c"), "trip/3")
    # Another edit elsewhere is not a version of message 4.
    edit(storage, "trip", 1, Message.user("Plan 3 days in Paris.", id="u1-b"), "trip/paris")
    shown = versions(storage, "trip", 4)
    assert shown == ["trip", "trip/2", "trip/3"]
    replies = [storage.load(sid)[4].text_content() for sid in shown]
    assert replies == ["Day 1: free walking tour...", "Day 1: picnic...", "Day 1: museums..."]
    # "2 / 3": the second version, and going back to the first is loading "trip".
    assert (shown.index("trip/2") + 1, len(shown)) == (2, 3)
    assert storage.load(shown[0]) == storage.load("trip")
    assert versions(storage, "trip", 1) == ["trip", "trip/paris"]


def test_a_version_of_a_version_is_a_branch_of_the_branch(storage: Any) -> None:
    storage.append("trip", *conversation())
    regenerate(storage, "trip", 4, Message.assistant("v2", id="a2-b"), "trip/2")
    storage.append("trip/2", Message.user("And a day trip?", id="u3"))
    storage.append("trip/2", Message.assistant("Tivoli.", id="a3"))
    regenerate(storage, "trip/2", 6, Message.assistant("Ostia.", id="a3-b"), "trip/2/2")
    assert versions(storage, "trip/2", 6) == ["trip/2", "trip/2/2"]
    lineage = storage.session_info("trip/2/2")
    assert (lineage.parent_id, lineage.forked_at) == ("trip/2", "u3")
    assert storage.load("trip/2/2")[:6] == storage.load("trip/2")[:6]
