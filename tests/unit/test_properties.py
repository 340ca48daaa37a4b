"""Property tests: windows over random histories, well-formed and malformed.

The oracle below restates the rules of docs/contract/windows.md independently of the library:
groups are read left to right; an assistant message with tool calls opens a group that
the tool messages right after it join when they answer one of its calls; any other tool
message is an orphan, part of no group, and never in a window. Since an orphan is in no
group, "the group before" a result that follows an orphan is still the open group.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import (
    FixedWindow,
    InMemoryStorage,
    Message,
    NoOp,
    Role,
    TokenWindow,
    ToolCall,
    estimate_tokens,
    groups,
)

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# --- the oracle -------------------------------------------------------------------------------


@dataclass
class Unit:
    """A group, or an orphan tool message (``orphan=True``, always alone)."""

    messages: list[Message]
    orphan: bool


def is_tool(m: Message) -> bool:
    return m.role == Role.TOOL


def oracle_units(history: list[Message]) -> list[Unit]:
    units: list[Unit] = []
    group: Unit | None = None  # the group a tool message may still join
    open_calls: set[str] = set()  # the calls of that group
    for m in history:
        if is_tool(m):
            if group is not None and m.tool_call_id in open_calls:
                group.messages.append(m)
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


def newest_groups_while(
    gs: list[list[Message]], fits: Callable[[list[list[Message]], list[Message]], bool]
) -> list[Message]:
    """The longest run of newest groups for which ``fits(taken, group)`` holds each step."""
    taken: list[list[Message]] = []
    for g in reversed(gs):
        if not fits(taken, g):
            break
        taken.insert(0, g)
    return [m for g in taken for m in g]


def oracle_fixed(history: list[Message], n: int) -> list[Message]:
    gs = oracle_groups(history)
    return [m for g in gs[max(0, len(gs) - n) :] for m in g] if n > 0 else []


def oracle_token(history: list[Message], budget: int, cost: dict[str, int]) -> list[Message]:
    def group_cost(g: list[Message]) -> int:
        return sum(max(0, cost[m.id]) for m in g)

    def fits(taken: list[list[Message]], g: list[Message]) -> bool:
        spent = sum(group_cost(t) for t in taken)
        return not taken or spent + group_cost(g) <= budget

    return newest_groups_while(oracle_groups(history), fits)


def oracle_recent(history: list[Message], n: int) -> list[Message]:
    def fits(taken: list[list[Message]], g: list[Message]) -> bool:
        return sum(len(t) for t in taken) + len(g) <= n

    return newest_groups_while(oracle_groups(history), fits)


def oracle_evict(history: list[Message], keep: int) -> list[Message]:
    """What remains: the longest suffix of at most ``keep`` that starts with no tool message."""
    for start in range(max(0, len(history) - keep), len(history)):
        if not is_tool(history[start]):
            return history[start:]
    return []


def non_orphans(history: list[Message]) -> list[Message]:
    return [m for u in oracle_units(history) if not u.orphan for m in u.messages]


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


# --- the invariant, checked on any window -------------------------------------------------


def assert_window_invariant(history: list[Message], window: list[Message]) -> None:
    """A contiguous suffix of the history minus orphans, cut on a group boundary."""
    if not window:
        return
    clean = non_orphans(history)
    assert len(window) <= len(clean)
    assert ids(window) == ids(clean[len(clean) - len(window) :])
    assert not is_tool(window[0])
    boundaries = set(itertools.accumulate(len(g) for g in oracle_groups(history)))
    assert len(clean) - len(window) in boundaries | {0}
    in_window: set[str] = set()
    for m in window:
        if is_tool(m):
            assert m.tool_call_id in in_window, "tool result without its call in the window"
        in_window |= {c.id for c in m.tool_calls}


# --- random histories ---------------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn, max_steps: int = 30) -> list[Message]:
    """Histories with well-formed exchanges, parallel calls, unanswered calls, late answers
    after interleaved messages, and orphans anywhere, also amid a group's results.

    Each call is answered at most once.
    """
    counter = itertools.count()
    history: list[Message] = []
    pending: list[str] = []  # calls not answered yet, oldest first
    steps = draw(
        st.lists(
            st.sampled_from(
                ["user", "assistant", "system", "calls", "answer", "answer", "answer", "orphan"]
            ),
            max_size=max_steps,
        )
    )
    for step in steps:
        text = "w" * draw(st.integers(0, 60))
        if step == "answer" and pending:
            # mostly the newest calls, sometimes a late answer to an older one
            cid = draw(st.sampled_from(pending[::-1]))
            pending.remove(cid)
            history.append(Message.tool(cid, text or "r"))
        elif step in ("answer", "orphan"):
            history.append(Message.tool(f"ghost{next(counter)}", text or "r"))
        elif step == "calls":
            calls = [
                ToolCall(id=f"c{next(counter)}", name="f" * draw(st.integers(1, 8)), arguments={})
                for _ in range(draw(st.integers(1, 3)))
            ]
            history.append(Message.assistant(text or None, tool_calls=calls))
            pending.extend(c.id for c in calls)
        else:
            build = {"user": Message.user, "assistant": Message.assistant}.get(step, Message.system)
            history.append(build(text or "t"))
    return history


@st.composite
def well_formed_histories(draw: st.DrawFn) -> list[Message]:
    """Turns of user, optional tool exchanges with every call answered, assistant reply.

    The last turn may stop right after its tool results (the agent is still working).
    """
    counter = itertools.count()
    history: list[Message] = []
    turns = draw(st.integers(0, 8))
    for turn in range(turns):
        history.append(Message.user("u" * draw(st.integers(1, 40))))
        for _ in range(draw(st.integers(0, 2))):
            calls = [
                ToolCall(id=f"c{next(counter)}", name="lookup", arguments={"i": i})
                for i in range(draw(st.integers(1, 3)))
            ]
            history.append(Message.assistant(tool_calls=calls))
            order = draw(st.permutations(calls))
            history.extend(Message.tool(c.id, "r" * draw(st.integers(1, 40))) for c in order)
        if turn < turns - 1 or draw(st.booleans()):
            history.append(Message.assistant("a" * draw(st.integers(1, 40))))
    return history


def costs_for(history: list[Message]) -> st.SearchStrategy[dict[str, int]]:
    return st.lists(st.integers(-5, 30), min_size=len(history), max_size=len(history)).map(
        lambda cs: dict(zip(ids(history), cs, strict=True))
    )


any_history = st.one_of(histories(), well_formed_histories())


# --- the generator does what it says ----------------------------------------------------


@SETTINGS
@given(well_formed_histories())
def test_oracle_finds_no_orphans_in_well_formed_histories(history: list[Message]) -> None:
    assert all(not u.orphan for u in oracle_units(history))


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
    gs = oracle_groups(history)
    assert len(oracle_groups(window)) == max(0, min(n, len(gs)))
    assert ids(window) == ids(oracle_fixed(history, n))


# --- TokenWindow --------------------------------------------------------------------------------


@SETTINGS
@given(st.data(), any_history)
def test_token_window_random_tokenizer(data: st.DataObject, history: list[Message]) -> None:
    cost = data.draw(costs_for(history), label="cost")
    budget = data.draw(st.integers(1, max(1, sum(max(0, c) for c in cost.values()) + 5)))
    window = TokenWindow(budget, tokenizer=lambda m: cost[m.id]).apply(history)
    assert_window_invariant(history, window)
    gs = oracle_groups(history)
    if gs:
        assert window, "the newest group is always included"
    window_groups = oracle_groups(window)
    spent = sum(max(0, cost[m.id]) for m in window)
    assert spent <= budget or len(window_groups) == 1
    assert ids(window) == ids(oracle_token(history, budget, cost))


@SETTINGS
@given(st.data(), any_history)
def test_token_window_default_heuristic(data: st.DataObject, history: list[Message]) -> None:
    budget = data.draw(st.integers(1, sum(estimate_tokens(m) for m in history) + 5))
    window = TokenWindow(budget).apply(history)
    assert_window_invariant(history, window)
    spent = sum(estimate_tokens(m) for m in window)
    assert spent <= budget or len(oracle_groups(window)) == 1
    cost = {m.id: estimate_tokens(m) for m in history}
    assert ids(window) == ids(oracle_token(history, budget, cost))


# --- InMemoryStorage.recent / evict ---------------------------------------------------------


@SETTINGS
@given(st.data(), any_history)
def test_recent(data: st.DataObject, history: list[Message]) -> None:
    n = data.draw(small_or_any(history), label="n")
    store = InMemoryStorage()
    store.append("s", *history)
    window = store.recent("s", n)
    assert len(window) <= n
    assert_window_invariant(history, window)
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
    # what remains, minus its orphans, is a window of the original history
    assert_window_invariant(history, non_orphans(remaining))
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


@SETTINGS
@given(any_history)
def test_windows_on_storage_match_policies(history: list[Message]) -> None:
    store = InMemoryStorage()
    store.append("s", *history)
    for policy in (NoOp(), FixedWindow(3), TokenWindow(40)):
        assert ids(store.load("s", policy=policy)) == ids(policy.apply(history))
