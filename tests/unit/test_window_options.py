"""docs/contract/windows.md, by example: complete groups, ``keep_system``, ``start_on``, and
the checker the property tests rely on (tests/support/windows.py)."""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import FixedWindow, Message, Role, TokenWindow, ToolCall, groups
from sqlmemory.policy import Entry, RecentWindow
from tests.support.windows import window_is_valid, window_problems


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def calling(*call_ids: str, id: str) -> Message:
    return Message.assistant(tool_calls=[ToolCall(c, "f") for c in call_ids], id=id)


def result(call_id: str, id: str) -> Message:
    return Message.tool(call_id, "r", id=id)


# --- complete groups ------------------------------------------------------------------------


INCOMPLETE = [
    Message.user("q1", id="u1"),
    calling("lost", id="crash"),  # never answered: the process died
    Message.user("q2", id="u2"),
    calling("a", "b", id="half"),
    result("a", id="ra"),  # b has no result
    Message.assistant("done", id="done"),
    calling("now", id="pending"),  # the turn being written
]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (FixedWindow(1), ["done"]),
        (FixedWindow(2), ["u2", "done"]),  # n counts complete groups only
        (FixedWindow(3), ["u1", "u2", "done"]),
        (TokenWindow(10**6), ["u1", "u2", "done"]),
        (TokenWindow(1), ["done"]),  # the newest complete group, even over budget
        (RecentWindow(2), ["u2", "done"]),
    ],
)
def test_incomplete_groups_are_in_no_window(policy: Any, expected: list[str]) -> None:
    assert ids(policy.apply(INCOMPLETE)) == expected
    assert window_is_valid(INCOMPLETE, policy.apply(INCOMPLETE))


def test_an_incomplete_group_does_not_stop_a_token_window() -> None:
    # Walking back, the incomplete group is skipped, not a group that "does not fit".
    history = [Message.user("old", id="old"), calling("x", id="x"), Message.user("new", id="new")]
    assert ids(TokenWindow(10**6, tokenizer=lambda m: 1).apply(history)) == ["old", "new"]


def test_a_second_result_for_one_call_is_an_orphan() -> None:
    history = [calling("c1", id="a"), result("c1", id="r1"), result("c1", id="again")]
    assert [ids(g) for g in groups(history)] == [["a", "r1"]]
    assert ids(FixedWindow(5).apply(history)) == ["a", "r1"]


def test_results_before_their_call_and_interleaved_groups() -> None:
    history = [
        result("c1", id="early"),
        calling("c1", id="a1"),  # its result came first: incomplete
        calling("c2", id="a2"),
        calling("c3", id="a3"),
        result("c2", id="r2"),  # a2's group was closed by a3: an orphan
        result("c3", id="r3"),
    ]
    assert ids(FixedWindow(10).apply(history)) == ["a3", "r3"]


# --- keep_system ---------------------------------------------------------------------------------


HEADED = [
    Message.system("be brief", id="s"),
    Message(Role.DEVELOPER, "use tools", id="d"),
    Message.user("q1", id="u1"),
    Message.assistant("a1", id="a1"),
    Message.system("a reminder mid-way", id="mid"),
    Message.user("q2", id="u2"),
    Message.assistant("a2", id="a2"),
]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (FixedWindow(2, keep_system=True), ["s", "d", "u2", "a2"]),
        (FixedWindow(3, keep_system=True), ["s", "d", "mid", "u2", "a2"]),  # mid is a group
        (FixedWindow(0, keep_system=True), ["s", "d"]),
        (FixedWindow(-1, keep_system=True), ["s", "d"]),
        (FixedWindow(10**20, keep_system=True), ids(HEADED)),
        (FixedWindow(2), ["u2", "a2"]),
        # the head (2 x 10) is paid first: 30 leaves room for one group of 10
        (TokenWindow(30, tokenizer=lambda m: 10, keep_system=True), ["s", "d", "a2"]),
        (TokenWindow(40, tokenizer=lambda m: 10, keep_system=True), ["s", "d", "u2", "a2"]),
        # a head over budget still comes with the newest group
        (TokenWindow(5, tokenizer=lambda m: 10, keep_system=True), ["s", "d", "a2"]),
    ],
)
def test_keep_system(policy: Any, expected: list[str]) -> None:
    window = policy.apply(HEADED)
    assert ids(window) == expected
    assert window_is_valid(HEADED, window, keep_system=policy.keep_system)


def test_keep_system_without_instructions_is_the_plain_window() -> None:
    history = HEADED[2:]
    assert FixedWindow(2, keep_system=True).apply(history) == FixedWindow(2).apply(history)


# --- start_on ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (FixedWindow(3, start_on="user"), ["u2", "a2"]),  # [mid] goes
        (FixedWindow(4, start_on="user"), ["u2", "a2"]),  # [a1] [mid] go
        (FixedWindow(5, start_on="user"), ["u1", "a1", "mid", "u2", "a2"]),
        (FixedWindow(1, start_on="user"), []),  # [a2] has no user message before it
        (FixedWindow(1, keep_system=True, start_on="user"), ["s", "d"]),
        (FixedWindow(3, keep_system=True, start_on="user"), ["s", "d", "u2", "a2"]),
        (TokenWindow(30, tokenizer=lambda m: 10, start_on=Role.USER), ["u2", "a2"]),
    ],
)
def test_start_on_user(policy: Any, expected: list[str]) -> None:
    window = policy.apply(HEADED)
    assert ids(window) == expected
    assert window_is_valid(HEADED, window, keep_system=policy.keep_system, start_on="user")


# --- arguments, repr, and the select protocol ---------------------------------------------------


@pytest.mark.parametrize("make", [lambda **o: FixedWindow(3, **o), lambda **o: TokenWindow(9, **o)])
def test_options_are_checked(make: Any) -> None:
    with pytest.raises(TypeError):
        make(keep_system=1)
    with pytest.raises(TypeError):
        make(start_on=1)
    with pytest.raises(ValueError):
        make(start_on="assistant")
    assert make(start_on=Role.USER).start_on == "user"


def test_options_are_keyword_only_and_shown_when_set() -> None:
    with pytest.raises(TypeError):
        FixedWindow(3, True)  # type: ignore[misc]
    assert repr(FixedWindow(3)) == "FixedWindow(n=3)"
    assert repr(FixedWindow(3, keep_system=True)) == "FixedWindow(n=3, keep_system=True)"
    shown = repr(TokenWindow(9, start_on="user"))
    assert shown == "TokenWindow(max_tokens=9, tokenizer=None, start_on='user')"
    assert FixedWindow(3, keep_system=True) != FixedWindow(3)


def test_select_takes_the_head_apart_as_storages_give_it() -> None:
    # What a SQL storage does: the head's entries apart, then a suffix of the rest.
    head = [Entry(Role.SYSTEM, None, (), 50)]
    tail = [Entry(Role.USER, None, (), 30), Entry(Role.ASSISTANT, None, (), 30)]
    policy = TokenWindow(100, keep_system=True)
    assert policy.select(tail, True, head=head) == [1]  # 50 + 30 fits, 50 + 60 does not
    assert policy.select(tail, False, head=head) == [1]  # decided: a group did not fit
    assert TokenWindow(200, keep_system=True).select(tail, False, head=head) is None


# --- the checker ------------------------------------------------------------------------------


CLEAN = [
    Message.system("be brief", id="s"),
    Message.user("q", id="u"),
    calling("c1", "c2", id="a"),
    result("c2", id="r2"),
    result("c1", id="r1"),
    Message.assistant("done", id="done"),
]


def pick(history: list[Message], *wanted: str) -> list[Message]:
    by_id = {m.id: m for m in history}
    return [by_id[w] for w in wanted]


def test_checker_accepts_windows() -> None:
    assert window_problems(CLEAN, CLEAN, keep_system=True, start_on="user") == []
    assert window_problems(CLEAN, pick(CLEAN, "a", "r2", "r1", "done")) == []
    assert window_problems(CLEAN, []) == []


@pytest.mark.parametrize(
    ("window", "options", "problem"),
    [
        (["r1", "done"], {}, "starts with a tool message"),
        (["a", "r2", "done"], {}, "have no result"),
        (["u", "r1"], {}, "answers no open call"),
        (["done", "u"], {}, "not in history order"),
        (["u", "done"], {"keep_system": True}, "leading instructions"),
        (["a", "r2", "r1"], {"start_on": "user"}, "not a user one"),
        (["s", "done"], {"keep_system": True, "start_on": "user"}, "not a user one"),
    ],
)
def test_checker_finds(window: list[str], options: dict[str, Any], problem: str) -> None:
    problems = window_problems(CLEAN, pick(CLEAN, *window), **options)
    assert any(problem in p for p in problems), problems
    assert not window_is_valid(CLEAN, pick(CLEAN, *window), **options)


def test_checker_finds_orphans_that_look_answered_in_the_window() -> None:
    late = [calling("c1", id="a"), Message.user("hm", id="u"), result("c1", id="late")]
    assert any("orphan" in p for p in window_problems(late, pick(late, "a", "late")))
    twice = [calling("c1", id="a"), result("c1", id="r"), result("c1", id="again")]
    assert window_problems(twice, twice) != []
    assert window_problems(twice, [Message.user("never stored")]) != []
    changed = [Message.user("edited", id="u")]
    assert window_problems([Message.user("original", id="u")], changed) != []
