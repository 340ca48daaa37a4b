"""``load``, ``recent`` and ``count`` on every storage, and reads of an unknown session.

docs/contract/storage.md (the storage API) and docs/contract/windows.md: ``load`` with a
policy is the policy applied to the history, ``recent(n)`` is made of whole groups and
never splits one, and reading an unknown session gives ``[]`` / ``0`` and writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from sqlmemory import (
    FixedWindow,
    ImageBlock,
    Message,
    NoOp,
    Policy,
    Role,
    TokenWindow,
    ToolCall,
)
from tests.support.cases import (
    RECENT_CASES,
    RECENT_ORPHAN_CASES,
    chat,
    ids,
    image_bytes,
    orphan_history,
    timeless,
    tool_history,
)
from tests.support.storages import Subject

SID = "api"


def test_reads_of_an_unknown_session_are_empty_and_write_nothing(subject: Subject) -> None:
    storage = subject.storage
    assert storage.load("nobody") == []
    assert storage.load("nobody", FixedWindow(3)) == []
    assert storage.load("nobody", TokenWindow(100)) == []
    assert storage.load("nobody", NoOp()) == []
    assert storage.recent("nobody", 5) == []
    assert storage.count("nobody") == 0
    assert storage.evict("nobody", 0) == 0
    assert storage.evict("nobody", 3) == 0
    assert storage.clear("nobody") == 0
    assert storage.sessions() == []
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)


def test_count(storage: Any) -> None:
    assert storage.count("s") == 0
    storage.append("s", *chat(3))
    storage.append("s", *chat(2))
    assert storage.count("s") == 5


# --- load with a policy ---------------------------------------------------------------------


def test_load_with_policy(storage: Any) -> None:
    history = chat(5)
    storage.append("s", *history)
    assert ids(storage.load("s", policy=FixedWindow(2))) == ids(history[-2:])
    assert ids(storage.load("s", policy=TokenWindow(10, tokenizer=lambda m: 5))) == ids(
        history[-2:]
    )
    assert ids(storage.load("s", policy=NoOp())) == ids(history)
    assert storage.count("s") == 5  # the policy applies at read time only


def test_load_with_policy_drops_orphans_but_storage_keeps_them(storage: Any) -> None:
    history = [Message.tool("gone", "stray"), Message.user("hi")]
    storage.append("s", *history)
    assert ids(storage.load("s", policy=FixedWindow(5))) == [history[1].id]
    assert ids(storage.load("s")) == ids(history)


class EverySecond:
    """A policy that is not a window policy: the storage must read the whole history."""

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[::2])


def long_history(groups: int = 40) -> list[Message]:
    """Tool exchanges, images, and orphans, long enough to need several tail pages."""
    messages: list[Message] = []
    for k in range(groups):
        messages.append(Message.user(f"question {k} " + "x" * (k * 7 % 50), id=f"u{k}"))
        if k % 5 == 0:
            messages.append(Message.tool(f"stray{k}", "orphan", id=f"orphan{k}"))
        calls = [ToolCall(f"c{k}a", "f", {"k": k}), ToolCall(f"c{k}b", "g", {})]
        messages.append(Message.assistant(tool_calls=calls, id=f"a{k}"))
        messages.append(Message.tool(f"c{k}a", f"result {k}a", id=f"ta{k}"))
        messages.append(Message.tool(f"c{k}b", f"result {k}b", id=f"tb{k}"))
        if k % 7 == 3:
            png = ImageBlock(image_bytes(64 * (k % 4 + 1), 64, seed=k), "image/png")
            messages.append(Message.user([f"image {k}", png], id=f"img{k}"))
        messages.append(Message.assistant(f"answer {k}", id=f"r{k}"))
    return messages


POLICIES: list[Policy] = [
    NoOp(),
    EverySecond(),
    FixedWindow(-1),
    FixedWindow(0),
    FixedWindow(1),
    FixedWindow(2),
    FixedWindow(3),
    FixedWindow(30),
    FixedWindow(79),
    FixedWindow(80),
    FixedWindow(10_000),
    TokenWindow(1),
    TokenWindow(9),
    TokenWindow(60),
    TokenWindow(400),
    TokenWindow(1500),
    TokenWindow(5000),
    TokenWindow(10**9),
    TokenWindow(25, tokenizer=lambda m: 10),
    TokenWindow(300, tokenizer=lambda m: len(m.text_content()) - 5),
]


def test_load_with_a_policy_is_the_policy_applied_to_the_history(storage: Any) -> None:
    history = long_history()
    for start in range(0, len(history), 50):
        storage.append(SID, *history[start : start + 50])
    loaded = storage.load(SID)
    assert timeless(loaded) == timeless(history)
    for policy in POLICIES:
        window = storage.load(SID, policy)
        assert window == policy.apply(loaded), policy
        assert timeless(window) == timeless(policy.apply(history)), policy
        if window and not isinstance(policy, (NoOp, EverySecond)):
            assert window[0].role is not Role.TOOL, policy


def test_load_with_a_policy_on_the_reference_examples(storage: Any) -> None:
    # The reference examples of docs/contract/windows.md, read through a storage.
    cases: list[tuple[Policy, list[str], list[str]]] = [
        (FixedWindow(2), ["one", "two", "three", "four", "five"], ["four", "five"]),
        (TokenWindow(8), ["one", "two", "bye", "ok"], ["bye", "ok"]),
        (
            TokenWindow(25, tokenizer=lambda m: 10),
            ["first", "second", "third"],
            ["second", "third"],
        ),
    ]
    for index, (policy, texts, expected) in enumerate(cases):
        sid = f"example-{index}"
        storage.append(sid, *(Message.user(t) for t in texts))
        assert [m.text_content() for m in storage.load(sid, policy)] == expected


# --- recent ---------------------------------------------------------------------------------


def test_recent_newest_last(storage: Any) -> None:
    history = chat(6)
    storage.append("s", *history)
    assert ids(storage.recent("s", 3)) == ids(history[-3:])
    assert ids(storage.recent("s", 100)) == ids(history)
    assert storage.recent("s", 0) == []


def test_recent_returns_whole_groups_newest_last(storage: Any) -> None:
    storage.append(SID, *tool_history())
    for n, expected in RECENT_CASES:
        assert ids(storage.recent(SID, n)) == expected, n
    storage.append("orphans", *orphan_history())
    for n, expected in RECENT_ORPHAN_CASES:
        assert ids(storage.recent("orphans", n)) == expected, n
    # A newest group larger than n gives nothing rather than a tool message alone.
    storage.save("open", tool_history()[:8])
    assert storage.recent("open", 1) == []
    assert ids(storage.recent("open", 2)) == ["a3", "t3"]


def test_recent_never_splits_a_tool_group(storage: Any) -> None:
    history = [
        Message.user("q"),
        Message.assistant(tool_calls=[ToolCall(id="c1", name="f", arguments={})]),
        Message.tool("c1", "r"),
        Message.assistant("a"),
    ]
    storage.append("s", *history)
    assert ids(storage.recent("s", 1)) == [history[3].id]
    assert ids(storage.recent("s", 2)) == [history[3].id]  # the group of two does not fit
    assert ids(storage.recent("s", 3)) == ids(history[1:])


def test_recent_leaves_out_a_newest_group_that_does_not_fit(storage: Any) -> None:
    history = [
        Message.user("q"),
        Message.assistant(tool_calls=[ToolCall(id="c1", name="f", arguments={})]),
        Message.tool("c1", "r"),
    ]
    storage.append("s", *history)
    assert storage.recent("s", 1) == []
    assert ids(storage.recent("s", 2)) == ids(history[1:])


def test_recent_drops_orphans(storage: Any) -> None:
    history = [Message.user("q"), Message.tool("zz", "stray"), Message.assistant("a")]
    storage.append("s", *history)
    assert ids(storage.recent("s", 3)) == [history[0].id, history[2].id]
    assert ids(storage.recent("s", 2)) == [history[0].id, history[2].id]


# --- any size of n, sys.maxsize and beyond (docs/contract/storage.md) --------------------------

HUGE = {"2**31": 2**31, "2**63-1": 2**63 - 1, "2**63": 2**63, "10**30": 10**30}


@pytest.mark.parametrize("size", sorted(HUGE))
def test_recent_with_a_huge_n_returns_the_whole_history(subject: Subject, size: str) -> None:
    storage = subject.storage
    storage.append(SID, *tool_history())
    assert ids(storage.recent(SID, HUGE[size])) == ids(tool_history())


@pytest.mark.parametrize("size", sorted(HUGE))
def test_evict_with_a_huge_keep_deletes_nothing(subject: Subject, size: str) -> None:
    storage = subject.storage
    storage.append(SID, *tool_history())
    assert storage.evict(SID, HUGE[size]) == 0
    assert storage.count(SID) == 9
