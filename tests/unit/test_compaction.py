"""Where ``compact`` cuts, decided without a storage (docs/compaction.md).

The contract suite (tests/contract/test_compact.py) checks the same rules through every
storage, with a property over malformed histories; these are the cases a built-in
window never produces: a policy of one's own whose window opens with a tool result, or
that is not a subsequence of the history at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlmemory import FixedWindow, Message, ToolCall
from sqlmemory.policy.groups import group_indices
from sqlmemory.storage.compaction import (
    COMPACTION_KEY,
    CompactionPlan,
    check_compaction,
    plan_compaction,
    summary_messages,
)
from tests.support.windows import any_history


class Suffix:
    """A policy of one's own: the newest ``n`` messages, whatever they are."""

    def __init__(self, n: int) -> None:
        self.n = n

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[max(len(messages) - self.n, 0) :]) if self.n else []


def exchange() -> list[Message]:
    call = ToolCall("c1", "lookup", {})
    return [
        Message.user("q", id="q"),
        Message.assistant(tool_calls=[call], id="a"),
        Message.tool("c1", "r", id="t"),
        Message.assistant("done", id="d"),
    ]


def test_a_window_opening_with_a_result_keeps_its_call() -> None:
    assert plan_compaction(exchange(), Suffix(2)) == CompactionPlan(head=0, cut=1)


def test_an_empty_window_replaces_everything_but_the_pending_turn() -> None:
    assert plan_compaction(exchange(), Suffix(0)) == CompactionPlan(head=0, cut=4)
    pending = [*exchange()[:2]]  # the call waits for its result
    assert plan_compaction(pending, Suffix(0)) == CompactionPlan(head=0, cut=1)


class Foreign:
    """A policy whose window holds messages that are not the history's."""

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return [Message.user("invented")]


def test_a_window_of_messages_not_in_the_history_counts_as_empty() -> None:
    assert plan_compaction(exchange(), Foreign()) == plan_compaction(exchange(), Suffix(0))
    assert plan_compaction(exchange(), FixedWindow(1)) == CompactionPlan(head=0, cut=3)


def test_only_earlier_summaries_are_not_summarized_again() -> None:
    summary = Message.user("s", metadata={COMPACTION_KEY: {"count": 3}})
    assert plan_compaction([summary, *exchange()[3:]], FixedWindow(1)).replaced == 0
    assert plan_compaction([summary, *exchange()], FixedWindow(1)).replaced == 4


@settings(max_examples=150, deadline=None)
@given(history=any_history, n=st.integers(0, 35))
def test_the_cut_is_at_a_group_start_and_keeps_the_suffix_policy_window(
    history: list[Message], n: int
) -> None:
    plan = plan_compaction(history, Suffix(n))
    assert 0 <= plan.head <= plan.cut <= len(history)
    replaced = range(plan.head, plan.cut)
    for group in group_indices(history):
        assert all(i in replaced for i in group) or not any(i in replaced for i in group)
    if plan.replaced:
        kept_from = max(len(history) - n, 0) if n else len(history)
        assert plan.cut <= kept_from


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="callable"):
        check_compaction(None, FixedWindow(1))
    with pytest.raises(TypeError, match=r"FixedWindow\(5\)"):
        check_compaction(print, 5)
    with pytest.raises(TypeError, match="Policy"):
        check_compaction(print, True)
    check_compaction(print, Suffix(1))


def test_the_summary_names_what_it_replaced_and_keeps_the_callers_metadata() -> None:
    older = [m.with_recorded_at(None) for m in exchange()[:3]]
    (summary,) = summary_messages(Message.user("s", metadata={"mine": 1}), older, exchange()[3:])
    assert summary.metadata["mine"] == 1
    assert dict(summary.metadata[COMPACTION_KEY]) == {
        "count": 3,
        "first_id": "q",
        "last_id": "t",
        "first_recorded_at": None,
        "last_recorded_at": None,
    }
