"""The reference examples of docs/contract/windows.md, one test each, and the group shapes."""

from __future__ import annotations

import pytest

from sqlmemory import (
    FixedWindow,
    Message,
    NoOp,
    TokenWindow,
    ToolCall,
    groups,
)


def texts(messages: list[Message]) -> list[str]:
    return [m.text_content() for m in messages]


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def group_ids(gs: list[list[Message]]) -> list[list[str]]:
    return [ids(g) for g in gs]


def conversation(*words: str) -> list[Message]:
    """Text-only messages alternating user / assistant."""
    return [Message.user(w) if i % 2 == 0 else Message.assistant(w) for i, w in enumerate(words)]


def call(call_id: str, name: str = "calc") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments={"expression": "6*7"})


def calling(*call_ids: str) -> Message:
    return Message.assistant(tool_calls=[call(c) for c in call_ids])


# --- reference examples, docs/contract/windows.md ------------------------------------


def test_noop_ping_pong_gives_both_messages() -> None:
    history = conversation("ping", "pong")
    window = NoOp().apply(history)
    assert len(window) == 2
    assert window == history
    assert window is not history


def test_fixed_window_2_of_five_gives_four_five() -> None:
    history = conversation("one", "two", "three", "four", "five")
    assert texts(FixedWindow(2).apply(history)) == ["four", "five"]


def test_token_window_8_gives_bye_ok() -> None:
    history = conversation("one", "two", "bye", "ok")
    assert texts(TokenWindow(8).apply(history)) == ["bye", "ok"]


def test_token_window_25_constant_tokenizer_gives_second_third() -> None:
    history = conversation("first", "second", "third")
    window = TokenWindow(25, tokenizer=lambda m: 10).apply(history)
    assert texts(window) == ["second", "third"]


@pytest.fixture
def tool_history() -> list[Message]:
    return [
        Message.user("user"),
        calling("c1"),
        Message.tool("c1", "42"),
        Message.assistant("assistant"),
    ]


def test_fixed_window_2_keeps_call_with_its_result(tool_history: list[Message]) -> None:
    window = FixedWindow(2).apply(tool_history)
    assert ids(window) == ids(tool_history[1:])


def test_fixed_window_1_gives_last_assistant(tool_history: list[Message]) -> None:
    window = FixedWindow(1).apply(tool_history)
    assert ids(window) == [tool_history[3].id]
    assert texts(window) == ["assistant"]


def test_token_window_9_drops_whole_tool_group() -> None:
    history = [calling("c1"), Message.tool("c1", "42"), Message.assistant("answer")]
    window = TokenWindow(9).apply(history)
    assert ids(window) == [history[2].id]
    assert texts(window) == ["answer"]


# --- edges of the policies ---------------------------------------------------------------


def test_token_window_exact_fit_is_included() -> None:
    history = conversation("a", "b", "c")
    assert len(TokenWindow(30, tokenizer=lambda m: 10).apply(history)) == 3
    assert len(TokenWindow(29, tokenizer=lambda m: 10).apply(history)) == 2


def test_token_window_newest_group_always_included_even_over_budget() -> None:
    history = [Message.user("q"), calling("c1"), Message.tool("c1", "x" * 400)]
    window = TokenWindow(1).apply(history)
    assert ids(window) == ids(history[1:])


def test_token_window_stops_at_first_group_that_does_not_fit() -> None:
    # costs oldest..newest: 1, 50, 1 -> walking back, the 50 does not fit: stop there,
    # the cheap oldest message is not picked up past the gap.
    history = conversation("cheap", "expensive", "newest")
    costs = {history[0].id: 1, history[1].id: 50, history[2].id: 1}
    window = TokenWindow(10, tokenizer=lambda m: costs[m.id]).apply(history)
    assert ids(window) == [history[2].id]


def test_token_window_nonpositive_tokenizer_counts_zero() -> None:
    history = conversation("a", "b", "c", "d")
    costs = {history[0].id: 5, history[1].id: -100, history[2].id: 0, history[3].id: 5}
    # -100 must not be subtracted: 5 + 0 + 0 + 5 = 10 > 9 keeps only the newest three
    window = TokenWindow(9, tokenizer=lambda m: costs[m.id]).apply(history)
    assert ids(window) == ids(history[1:])
    assert ids(TokenWindow(10, tokenizer=lambda m: costs[m.id]).apply(history)) == ids(history)


@pytest.mark.parametrize("budget", [0, -1])
def test_token_window_nonpositive_budget_raises(budget: int) -> None:
    with pytest.raises(ValueError):
        TokenWindow(budget)


@pytest.mark.parametrize("n", [0, -3])
def test_fixed_window_nonpositive_gives_empty(n: int) -> None:
    assert FixedWindow(n).apply(conversation("a", "b")) == []


def test_fixed_window_larger_than_history_gives_everything() -> None:
    history = conversation("a", "b", "c")
    assert ids(FixedWindow(10).apply(history)) == ids(history)


@pytest.mark.parametrize("policy", [NoOp(), FixedWindow(3), TokenWindow(100)])
def test_policies_on_empty_history(policy: NoOp | FixedWindow | TokenWindow) -> None:
    assert policy.apply([]) == []


@pytest.mark.parametrize("policy", [NoOp(), FixedWindow(10), TokenWindow(10_000)])
def test_policy_returns_new_list_and_leaves_input_alone(
    policy: NoOp | FixedWindow | TokenWindow,
) -> None:
    history = conversation("a", "b", "c")
    before = list(history)
    window = policy.apply(history)
    window.append(Message.user("extra"))
    assert history == before


# --- group shapes --------------------------------------------------------------------------


def test_groups_single_tool_call() -> None:
    history = [
        Message.user("what is 6*7?"),
        calling("c1"),
        Message.tool("c1", "42"),
        Message.assistant("42"),
    ]
    assert group_ids(groups(history)) == [
        [history[0].id],
        [history[1].id, history[2].id],
        [history[3].id],
    ]


def test_groups_three_parallel_calls() -> None:
    history = [
        Message.user("go"),
        calling("c1", "c2", "c3"),
        Message.tool("c1", "r1"),
        Message.tool("c2", "r2"),
        Message.tool("c3", "r3"),
        Message.assistant("done"),
    ]
    assert group_ids(groups(history)) == [
        [history[0].id],
        ids(history[1:5]),
        [history[5].id],
    ]
    assert ids(FixedWindow(2).apply(history)) == ids(history[1:])
    assert ids(FixedWindow(1).apply(history)) == [history[5].id]


def test_groups_parallel_results_in_any_order() -> None:
    history = [
        calling("c1", "c2", "c3"),
        Message.tool("c3", "r3"),
        Message.tool("c1", "r1"),
        Message.tool("c2", "r2"),
    ]
    assert group_ids(groups(history)) == [ids(history)]
    assert ids(FixedWindow(1).apply(history)) == ids(history)


def test_groups_two_turns_with_tools() -> None:
    history = [
        Message.user("first question"),
        calling("c1"),
        Message.tool("c1", "r1"),
        Message.assistant("first answer"),
        Message.user("second question"),
        calling("c2"),
        Message.tool("c2", "r2"),
        Message.assistant("second answer"),
    ]
    assert group_ids(groups(history)) == [
        [history[0].id],
        [history[1].id, history[2].id],
        [history[3].id],
        [history[4].id],
        [history[5].id, history[6].id],
        [history[7].id],
    ]
    assert ids(FixedWindow(3).apply(history)) == ids(history[4:])
    assert ids(FixedWindow(4).apply(history)) == ids(history[3:])
    assert ids(FixedWindow(5).apply(history)) == ids(history[1:])


def test_groups_assistant_whose_calls_have_no_results_yet() -> None:
    # An incomplete group is a group, but no window holds it, and n does not count it.
    history = [Message.user("go"), calling("c1", "c2")]
    assert group_ids(groups(history)) == [[history[0].id], [history[1].id]]
    assert ids(FixedWindow(1).apply(history)) == [history[0].id]
    assert ids(TokenWindow(1).apply(history)) == [history[0].id]


def test_groups_partially_answered_parallel_calls() -> None:
    history = [Message.user("go"), calling("c1", "c2"), Message.tool("c2", "r2")]
    assert group_ids(groups(history)) == [[history[0].id], ids(history[1:])]


def test_groups_orphan_result_is_in_no_group() -> None:
    history = [Message.user("hi"), Message.tool("nope", "stray"), Message.assistant("hello")]
    assert group_ids(groups(history)) == [[history[0].id], [history[2].id]]


def test_groups_orphan_result_after_another_call() -> None:
    history = [calling("c1"), Message.tool("c1", "r1"), calling("c2"), Message.tool("c1", "dup")]
    assert group_ids(groups(history)) == [ids(history[:2]), [history[2].id]]


def test_groups_late_result_after_interleaved_message_is_orphan() -> None:
    history = [calling("c1"), Message.user("interrupt"), Message.tool("c1", "late")]
    assert group_ids(groups(history)) == [[history[0].id], [history[1].id]]


def test_groups_orphan_amid_results_does_not_split_the_group() -> None:
    # the orphan is in no group, so the group before the c2 result is still c1/c2's
    history = [calling("c1", "c2"), Message.tool("zz", "stray"), Message.tool("c2", "r2")]
    assert group_ids(groups(history)) == [[history[0].id, history[2].id]]
    assert FixedWindow(1).apply(history) == []  # c1 has no result: incomplete
    history.append(Message.tool("c1", "r1"))
    assert group_ids(groups(history)) == [[history[0].id, history[2].id, history[3].id]]
    assert ids(FixedWindow(1).apply(history)) == [history[0].id, history[2].id, history[3].id]


def test_groups_orphan_at_head() -> None:
    history = [Message.tool("c0", "old result"), Message.user("hi")]
    assert group_ids(groups(history)) == [[history[1].id]]


@pytest.mark.parametrize(
    "policy", [FixedWindow(10), FixedWindow(2), TokenWindow(10_000), TokenWindow(1)]
)
def test_windows_drop_orphans(policy: FixedWindow | TokenWindow) -> None:
    history = [Message.user("hi"), Message.tool("nope", "stray"), Message.assistant("hello")]
    window = policy.apply(history)
    assert all(m.role != "tool" for m in window)
    expected = ids([history[0], history[2]])
    assert ids(window) == expected[-len(window) :]
    assert window  # the newest group is always there


@pytest.mark.parametrize("policy", [FixedWindow(1), TokenWindow(1)])
def test_windows_never_start_with_orphan_at_tail(policy: FixedWindow | TokenWindow) -> None:
    history = [Message.user("hi"), Message.tool("nope", "stray")]
    assert ids(policy.apply(history)) == [history[0].id]


def test_noop_keeps_orphans() -> None:
    history = [Message.tool("c0", "old"), Message.user("hi"), Message.tool("nope", "stray")]
    assert ids(NoOp().apply(history)) == ids(history)


def test_groups_of_empty_history() -> None:
    assert groups([]) == []


def test_groups_preserve_every_non_orphan_in_order() -> None:
    history = [
        Message.system("be brief"),
        Message.user("go"),
        calling("c1", "c2"),
        Message.tool("c1", "r1"),
        Message.tool("c2", "r2"),
        Message.tool("c9", "orphan"),
        Message.assistant("ok"),
    ]
    flat = [m.id for g in groups(history) for m in g]
    assert flat == [m.id for m in history if m.id != history[5].id]
