"""Windows read through every storage: what the SQL tail reads return is the policy applied
to the whole history, on malformed histories too, and it is a valid window.

docs/contract/windows.md (complete groups, ``keep_system``, ``start_on``) and
docs/contract/storage.md (tail policies: the head of the history is read apart).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sqlmemory import FixedWindow, ImageBlock, Message, Role, TokenWindow, ToolCall
from sqlmemory.policy import RecentWindow, anthropic_tokenizer, openai_tokenizer
from tests.support.cases import ids, image_bytes
from tests.support.storages import Subject
from tests.support.windows import (
    ON_STORAGES,
    any_history,
    leading_instructions,
    text_length_tokenizer,
    tiny_encoding,
    window_policies,
    window_problems,
)

SID = "windows"


@ON_STORAGES
@given(data=st.data(), history=any_history)
def test_windowed_reads_equal_the_policy_over_the_whole_history(
    subject: Subject, data: st.DataObject, history: list[Message]
) -> None:
    storage = subject.storage
    storage.save(SID, history)
    stored = storage.load(SID)
    assert ids(stored) == ids(history)
    policies = data.draw(st.lists(window_policies(len(history)), min_size=1, max_size=4))
    for policy in policies:
        window = storage.load(SID, policy)
        assert window == policy.apply(stored), policy
        options = {"keep_system": policy.keep_system, "start_on": policy.start_on}
        assert window_problems(stored, window, **options) == [], policy
    n = data.draw(st.one_of(st.integers(0, len(history) + 2), st.just(10**20)), label="n")
    recent = storage.recent(SID, n)
    assert recent == RecentWindow(n).apply(stored)
    assert window_problems(stored, recent) == []


def instructions(count: int) -> list[Message]:
    return [
        Message(Role.SYSTEM if i % 2 == 0 else Role.DEVELOPER, f"rule {i}", id=f"rule{i}")
        for i in range(count)
    ]


def turns(count: int) -> list[Message]:
    messages: list[Message] = []
    for k in range(count):
        call = ToolCall(f"c{k}", "lookup", {"k": k})
        messages += [
            Message.user(f"question {k}", id=f"u{k}"),
            Message.assistant(tool_calls=[call], id=f"a{k}"),
            Message.tool(f"c{k}", f"result {k}", id=f"t{k}"),
            Message.assistant(f"answer {k}", id=f"r{k}"),
        ]
    return messages


def test_keep_system_pins_the_leading_instructions(storage: Any) -> None:
    # Heads around the page the SQL storages read them in (4), short histories whose
    # newest page reaches back into the head, and long ones whose does not.
    policies = [
        FixedWindow(0, keep_system=True),
        FixedWindow(2, keep_system=True),
        FixedWindow(3, keep_system=True, start_on="user"),
        FixedWindow(10**20, keep_system=True),
        TokenWindow(60, keep_system=True),
        TokenWindow(60, text_length_tokenizer, keep_system=True, start_on="user"),
    ]
    for head in (0, 1, 3, 4, 5, 9):
        for length in (0, 2, 40):
            sid = f"head-{head}-{length}"
            storage.save(sid, [*instructions(head), *turns(length)])
            stored = storage.load(sid)
            for policy in policies:
                window = storage.load(sid, policy)
                assert window == policy.apply(stored), (sid, policy)
                assert ids(window[:head]) == [f"rule{i}" for i in range(head)], (sid, policy)


def test_keep_system_pins_only_the_head(storage: Any) -> None:
    history = [
        Message.system("be brief", id="s0"),
        Message.user("hi", id="hi"),
        Message.system("now be verbose", id="s1"),
        *turns(3),
    ]
    storage.save(SID, history)
    assert ids(storage.load(SID, FixedWindow(1, keep_system=True))) == ["s0", "r2"]
    assert ids(storage.load(SID, FixedWindow(1))) == ["r2"]


def test_a_history_of_instructions_only(storage: Any) -> None:
    storage.save(SID, instructions(6))
    assert ids(storage.load(SID, FixedWindow(2, keep_system=True))) == ids(instructions(6))
    assert ids(storage.load(SID, FixedWindow(2))) == ["rule4", "rule5"]
    assert storage.load(SID, FixedWindow(2, start_on="user")) == []


def test_start_on_user_drops_what_comes_before_the_first_user_message(storage: Any) -> None:
    storage.save(SID, [Message.system("be brief", id="s"), *turns(3)])
    # the newest 3 groups are [r1] [u2] [a2 t2] [r2]: r1 goes
    assert ids(storage.load(SID, FixedWindow(4))) == ["r1", "u2", "a2", "t2", "r2"]
    assert ids(storage.load(SID, FixedWindow(4, start_on="user"))) == ["u2", "a2", "t2", "r2"]
    window = storage.load(SID, FixedWindow(4, keep_system=True, start_on="user"))
    assert ids(window) == ["s", "u2", "a2", "t2", "r2"]


def test_incomplete_groups_are_left_out_wherever_they_are(storage: Any) -> None:
    history = [
        Message.user("q1", id="u1"),
        Message.assistant(tool_calls=[ToolCall("lost", "f")], id="crashed"),
        Message.user("q2", id="u2"),
        Message.assistant(tool_calls=[ToolCall("x", "f"), ToolCall("y", "f")], id="half"),
        Message.tool("x", "only x", id="tx"),
        Message.assistant("a2", id="r2"),
        Message.assistant(tool_calls=[ToolCall("pending", "f")], id="open"),
    ]
    storage.save(SID, history)
    expected = ["u1", "u2", "r2"]
    assert ids(storage.load(SID, FixedWindow(3))) == expected
    assert ids(storage.load(SID, FixedWindow(10))) == expected
    assert ids(storage.load(SID, TokenWindow(10**6))) == expected
    assert ids(storage.recent(SID, 10)) == expected
    assert ids(storage.load(SID)) == ids(history)  # stored as it was


class NewestUserMessages:
    """A user's own tail policy written before ``keep_system`` existed: the newest ``n``
    user messages. ``select`` takes two arguments, as it always did."""

    needs_content = False
    page_hint = 2

    def __init__(self, n: int) -> None:
        self.n = n

    def select(self, tail: Sequence[Any], complete: bool) -> list[int] | None:
        users = [i for i, item in enumerate(tail) if item.role is Role.USER]
        if len(users) < self.n and not complete:
            return None
        return users[len(users) - self.n :] if self.n else []

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        chosen = self.select(messages, True)
        assert chosen is not None
        return [messages[i] for i in chosen]


class PinnedNewest(NewestUserMessages):
    """The same, pinning the head the way the built-in windows do."""

    keep_system = True

    def select(  # type: ignore[override]
        self, tail: Sequence[Any], complete: bool, *, head: Sequence[Any] = ()
    ) -> list[int] | None:
        return super().select(tail, complete)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        pinned = len(leading_instructions(messages))
        return [*messages[:pinned], *super().apply(messages[pinned:])]


def test_tail_policies_of_ones_own_with_and_without_keep_system(storage: Any) -> None:
    history = [*instructions(2), *turns(30)]
    storage.save(SID, history)
    stored = storage.load(SID)
    assert ids(storage.load(SID, NewestUserMessages(3))) == ["u27", "u28", "u29"]
    assert storage.load(SID, NewestUserMessages(40)) == NewestUserMessages(40).apply(stored)
    pinned = storage.load(SID, PinnedNewest(3))
    assert ids(pinned) == ["rule0", "rule1", "u27", "u28", "u29"]
    assert storage.load(SID, PinnedNewest(40)) == PinnedNewest(40).apply(stored)


def test_provider_estimators_price_stored_images_from_their_stored_size(storage: Any) -> None:
    # Read back, an image's size comes from the blob row: the estimate needs no bytes.
    screenshot = ImageBlock(image_bytes(1920, 1080), "image/png")
    history = [*turns(3), Message.user(["what is this?", screenshot], id="shot")]
    storage.save(SID, history)
    stored = storage.load(SID)
    offline = tiny_encoding()
    for count in (openai_tokenizer(encoding=offline), anthropic_tokenizer(encoding=offline)):
        assert count(stored[-1]) == count(history[-1])
        window = storage.load(SID, TokenWindow(5000, count))
        assert ids(window) == ids(history)  # the seed's 86,700 would keep the screenshot alone
    assert ids(storage.load(SID, TokenWindow(5000))) == ["shot"]
