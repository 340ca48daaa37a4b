"""Property tests: windows over random histories, well-formed and malformed.

The oracle below restates the rules of docs/contract/windows.md independently of the library:
groups are read left to right; an assistant message with tool calls opens a group that
the tool messages right after it join when they answer one of its calls not answered
yet; any other tool message is an orphan, part of no group, and never in a window. Since
an orphan is in no group, "the group before" a result that follows an orphan is still the
open group. A group is complete when each of its calls has its result in it; windows
hold complete groups only, behind the pinned instructions of ``keep_system``.
Every window also passes the independent checker of ``tests/support/windows.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from sqlmemory import (
    FixedWindow,
    InMemoryStorage,
    Message,
    NoOp,
    Role,
    TokenWindow,
    estimate_tokens,
    groups,
)
from tests.support.windows import (
    PURE,
    any_history,
    leading_instructions,
    malformed_histories,
    well_formed_histories,
    window_policies,
    window_problems,
)

SETTINGS = PURE


# --- the oracle -------------------------------------------------------------------------------


@dataclass
class Unit:
    """A group, or an orphan tool message (``orphan=True``, always alone)."""

    messages: list[Message]
    orphan: bool

    @property
    def complete(self) -> bool:
        answered = {m.tool_call_id for m in self.messages[1:]}
        return not self.orphan and all(c.id in answered for c in self.messages[0].tool_calls)


def is_tool(m: Message) -> bool:
    return m.role == Role.TOOL


def oracle_units(history: list[Message]) -> list[Unit]:
    units: list[Unit] = []
    group: Unit | None = None  # the group a tool message may still join
    open_calls: set[str] = set()  # the calls of that group with no result yet
    for m in history:
        if is_tool(m):
            if group is not None and m.tool_call_id in open_calls:
                group.messages.append(m)
                open_calls.remove(m.tool_call_id)
            else:
                # An orphan is in no group, so the group before the next tool message is
                # still the open one: the orphan does not close it.
                units.append(Unit([m], orphan=True))
        else:
            group = Unit([m], orphan=False)
            units.append(group)
            open_calls = {c.id for c in m.tool_calls} if m.role == Role.ASSISTANT else set()
    return units


def oracle_groups(history: list[Message]) -> list[list[Message]]:
    return [u.messages for u in oracle_units(history) if not u.orphan]


def oracle_complete_groups(history: list[Message]) -> list[list[Message]]:
    return [u.messages for u in oracle_units(history) if u.complete]


def newest_groups_while(
    gs: list[list[Message]], fits: Callable[[list[list[Message]], list[Message]], bool]
) -> list[list[Message]]:
    """The longest run of newest groups for which ``fits(taken, group)`` holds each step."""
    taken: list[list[Message]] = []
    for g in reversed(gs):
        if not fits(taken, g):
            break
        taken.insert(0, g)
    return taken


def flat(gs: list[list[Message]]) -> list[Message]:
    return [m for g in gs for m in g]


def oracle_window(
    history: list[Message],
    choose: Callable[[list[Message], list[list[Message]]], list[list[Message]]],
    *,
    keep_system: bool = False,
    start_on: str | None = None,
) -> list[Message]:
    """The pinned head, then what ``choose(head, complete groups of the rest)`` keeps,
    from its first user message on when ``start_on`` says so."""
    head = leading_instructions(history) if keep_system else []
    chosen = choose(head, oracle_complete_groups(history[len(head) :]))
    if start_on == "user":
        firsts = [g[0].role for g in chosen]
        chosen = chosen[firsts.index(Role.USER) :] if Role.USER in firsts else []
    return [*head, *flat(chosen)]


def oracle_fixed(history: list[Message], n: int, **options: object) -> list[Message]:
    def choose(head: list[Message], gs: list[list[Message]]) -> list[list[Message]]:
        return gs[max(0, len(gs) - n) :] if n > 0 else []

    return oracle_window(history, choose, **options)  # type: ignore[arg-type]


def oracle_token(
    history: list[Message], budget: int, cost: Callable[[Message], int], **options: object
) -> list[Message]:
    def group_cost(g: list[Message]) -> int:
        return sum(max(0, cost(m)) for m in g)

    def choose(head: list[Message], gs: list[list[Message]]) -> list[list[Message]]:
        left = budget - group_cost(head)

        def fits(taken: list[list[Message]], g: list[Message]) -> bool:
            return not taken or sum(group_cost(t) for t in taken) + group_cost(g) <= left

        return newest_groups_while(gs, fits)

    return oracle_window(history, choose, **options)  # type: ignore[arg-type]


def oracle_recent(history: list[Message], n: int) -> list[Message]:
    def fits(taken: list[list[Message]], g: list[Message]) -> bool:
        return sum(len(t) for t in taken) + len(g) <= n

    return flat(newest_groups_while(oracle_complete_groups(history), fits))


def oracle_policy(history: list[Message], policy: FixedWindow | TokenWindow) -> list[Message]:
    options = {"keep_system": policy.keep_system, "start_on": policy.start_on}
    if isinstance(policy, FixedWindow):
        return oracle_fixed(history, policy.n, **options)
    cost = policy.tokenizer or estimate_tokens
    return oracle_token(history, policy.max_tokens, cost, **options)


def oracle_evict(history: list[Message], keep: int) -> list[Message]:
    """What remains: the longest suffix of at most ``keep`` that starts with no tool message."""
    for start in range(max(0, len(history) - keep), len(history)):
        if not is_tool(history[start]):
            return history[start:]
    return []


def non_orphans(history: list[Message]) -> list[Message]:
    return [m for u in oracle_units(history) if not u.orphan for m in u.messages]


def in_complete_groups(history: list[Message]) -> list[Message]:
    return flat(oracle_complete_groups(history))


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


# --- the invariant, checked on any window -------------------------------------------------


def assert_window_invariant(
    history: list[Message], window: list[Message], **options: object
) -> None:
    """Valid for the checker, and a contiguous run of the newest complete-group messages
    (after the pinned head), cut on a group boundary."""
    assert window_problems(history, window, **options) == []  # type: ignore[arg-type]
    head = leading_instructions(history) if options.get("keep_system") else []
    rest, body = history[len(head) :], window[len(head) :]
    if not body:
        return
    clean = in_complete_groups(rest)
    assert ids(body) == ids(clean[len(clean) - len(body) :])
    boundaries = {0, *itertools.accumulate(len(g) for g in oracle_complete_groups(rest))}
    assert len(clean) - len(body) in boundaries


# --- the generators do what they say ------------------------------------------------------


@SETTINGS
@given(well_formed_histories())
def test_oracle_finds_no_orphans_or_incomplete_groups_in_well_formed_histories(
    history: list[Message],
) -> None:
    assert all(u.complete for u in oracle_units(history))


@SETTINGS
@given(malformed_histories())
def test_checker_accepts_the_complete_groups_and_refuses_the_raw_history(
    history: list[Message],
) -> None:
    assert window_problems(history, in_complete_groups(history)) == []
    raw_problems = window_problems(history, history)
    if any(u.orphan or not u.complete for u in oracle_units(history)):
        assert raw_problems, "a history with an orphan or an incomplete group is no window"


# --- groups -----------------------------------------------------------------------------------


@SETTINGS
@given(any_history)
def test_groups_match_the_oracle(history: list[Message]) -> None:
    assert [ids(g) for g in groups(history)] == [ids(g) for g in oracle_groups(history)]


@SETTINGS
@given(any_history)
def test_noop_keeps_everything(history: list[Message]) -> None:
    window = NoOp().apply(history)
    assert ids(window) == ids(history)


# --- FixedWindow --------------------------------------------------------------------------------


def small_or_any(history: list[Message], low: int = 0) -> st.SearchStrategy[int]:
    """A size around the history's length, so that windows cut it often."""
    return st.one_of(st.integers(low, len(history) + 2), st.integers(low, 60))


@SETTINGS
@given(st.data(), any_history)
def test_fixed_window(data: st.DataObject, history: list[Message]) -> None:
    n = data.draw(small_or_any(history, -2), label="n")
    window = FixedWindow(n).apply(history)
    assert_window_invariant(history, window)
    gs = oracle_complete_groups(history)
    assert len(oracle_groups(window)) == max(0, min(n, len(gs)))  # n counts complete groups
    assert ids(window) == ids(oracle_fixed(history, n))


# --- TokenWindow --------------------------------------------------------------------------------


def costs_for(history: list[Message]) -> st.SearchStrategy[dict[str, int]]:
    return st.lists(st.integers(-5, 30), min_size=len(history), max_size=len(history)).map(
        lambda cs: dict(zip(ids(history), cs, strict=True))
    )


@SETTINGS
@given(st.data(), any_history)
def test_token_window_random_tokenizer(data: st.DataObject, history: list[Message]) -> None:
    cost = data.draw(costs_for(history), label="cost")
    budget = data.draw(st.integers(1, max(1, sum(max(0, c) for c in cost.values()) + 5)))
    window = TokenWindow(budget, tokenizer=lambda m: cost[m.id]).apply(history)
    assert_window_invariant(history, window)
    if oracle_complete_groups(history):
        assert window, "the newest complete group is always included"
    spent = sum(max(0, cost[m.id]) for m in window)
    assert spent <= budget or len(oracle_groups(window)) == 1
    assert ids(window) == ids(oracle_token(history, budget, lambda m: cost[m.id]))


@SETTINGS
@given(st.data(), any_history)
def test_token_window_default_heuristic(data: st.DataObject, history: list[Message]) -> None:
    budget = data.draw(st.integers(1, sum(estimate_tokens(m) for m in history) + 5))
    window = TokenWindow(budget).apply(history)
    assert_window_invariant(history, window)
    spent = sum(estimate_tokens(m) for m in window)
    assert spent <= budget or len(oracle_groups(window)) == 1
    assert ids(window) == ids(oracle_token(history, budget, estimate_tokens))


# --- keep_system and start_on, on both windows --------------------------------------------------


@SETTINGS
@given(st.data(), any_history)
def test_windows_with_options(data: st.DataObject, history: list[Message]) -> None:
    policy = data.draw(window_policies(len(history)), label="policy")
    options = {"keep_system": policy.keep_system, "start_on": policy.start_on}
    window = policy.apply(history)
    assert_window_invariant(history, window, **options)
    assert ids(window) == ids(oracle_policy(history, policy))
    head = leading_instructions(history) if policy.keep_system else []
    body_groups = oracle_groups(window[len(head) :])
    if isinstance(policy, FixedWindow):
        assert len(body_groups) <= max(policy.n, 0)
        if policy.start_on is None:
            available = oracle_complete_groups(history[len(head) :])
            assert len(body_groups) == max(0, min(policy.n, len(available)))


@SETTINGS
@given(st.data(), any_history)
def test_pinned_instructions_are_paid_first(data: st.DataObject, history: list[Message]) -> None:
    budget = data.draw(st.integers(1, sum(estimate_tokens(m) for m in history) + 5))
    window = TokenWindow(budget, keep_system=True).apply(history)
    head = leading_instructions(history)
    body = window[len(head) :]
    spent = sum(estimate_tokens(m) for m in window)
    # over budget only with the newest group, which is always there
    assert spent <= budget or len(oracle_groups(body)) <= 1


# --- InMemoryStorage.recent / evict ---------------------------------------------------------


@SETTINGS
@given(st.data(), any_history)
def test_recent(data: st.DataObject, history: list[Message]) -> None:
    n = data.draw(small_or_any(history), label="n")
    store = InMemoryStorage()
    store.append("s", *history)
    window = store.recent("s", n)
    assert len(window) <= n
    assert_window_invariant(store.load("s"), window)
    assert ids(window) == ids(oracle_recent(history, n))
    assert ids(store.load("s")) == ids(history)  # reading changes nothing


@SETTINGS
@given(st.data(), any_history)
def test_evict(data: st.DataObject, history: list[Message]) -> None:
    keep = data.draw(small_or_any(history), label="keep")
    store = InMemoryStorage()
    store.append("s", *history)
    deleted = store.evict("s", keep)
    remaining = store.load("s")
    assert len(remaining) <= keep
    assert deleted == len(history) - len(remaining)
    assert store.count("s") == len(remaining)
    # only the oldest are deleted: what remains is a suffix of the stored history
    assert ids(remaining) == ids(history[len(history) - len(remaining) :])
    if remaining:
        assert not is_tool(remaining[0])
    # what remains, minus its orphans, is a run of the newest groups of the original
    kept = ids(non_orphans(remaining))
    assert kept == ids(non_orphans(history))[len(non_orphans(history)) - len(kept) :]
    assert_window_invariant(remaining, store.load("s", policy=FixedWindow(keep + 1)))


@SETTINGS
@given(st.data(), any_history)
def test_evict_deletes_no_more_than_needed(data: st.DataObject, history: list[Message]) -> None:
    keep = data.draw(small_or_any(history), label="keep")
    store = InMemoryStorage()
    store.append("s", *history)
    store.evict("s", keep)
    assert ids(store.load("s")) == ids(oracle_evict(history, keep))


@SETTINGS
@given(st.data(), any_history)
def test_evict_twice_is_evict_once_with_the_smaller_keep(
    data: st.DataObject, history: list[Message]
) -> None:
    a = data.draw(small_or_any(history), label="a")
    b = data.draw(small_or_any(history), label="b")
    one, two = InMemoryStorage(), InMemoryStorage()
    one.append("s", *history)
    two.append("s", *history)
    deleted = one.evict("s", a) + one.evict("s", b)
    assert deleted == two.evict("s", min(a, b))
    assert ids(one.load("s")) == ids(two.load("s"))
