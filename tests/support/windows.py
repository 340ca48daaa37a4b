"""Windows under test: malformed histories, random window policies, and the checker.

docs/contract/windows.md: a window (``FixedWindow``, ``TokenWindow``, ``recent``) is a
request a provider accepts. :func:`window_problems` says, independently of the library,
what is wrong with a window of a history; :func:`window_is_valid` is its yes/no. The
provider-format checks extend them: a valid window must also convert into a valid
request of each provider.

The Hypothesis settings of the window properties are profiles registered here:
``windows`` (pure, no database) and ``windows-storage`` (every storage, so few examples
each: CI time). ``SQLMEMORY_THOROUGH_PROPERTIES=1`` runs ten times as many.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from sqlmemory import FixedWindow, Message, Role, TokenWindow, ToolCall

_SCALE = 10 if os.environ.get("SQLMEMORY_THOROUGH_PROPERTIES") == "1" else 1
settings.register_profile(
    "windows",
    max_examples=150 * _SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "windows-storage",
    max_examples=30 * _SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
PURE = settings.get_profile("windows")
"""Settings of the window properties that need no database."""
ON_STORAGES = settings.get_profile("windows-storage")
"""Settings of the window properties that run on every storage."""

INSTRUCTIONS = (Role.SYSTEM, Role.DEVELOPER)


# --- the checker ------------------------------------------------------------------------------


def leading_instructions(history: Sequence[Message]) -> list[Message]:
    """The system/developer messages that open ``history`` (what ``keep_system`` pins)."""
    head: list[Message] = []
    for message in history:
        if message.role not in INSTRUCTIONS:
            break
        head.append(message)
    return head


def _belongs_to_call(history: Sequence[Message], index: int) -> int | None:
    """Where the call a tool message answers is, if the message is no orphan of ``history``.

    The message must follow that assistant message through tool messages only, and be
    the first answer to its call.
    """
    call_id = history[index].tool_call_id
    answered: set[str | None] = set()
    for back in range(index - 1, -1, -1):
        earlier = history[back]
        if earlier.role != Role.TOOL:
            return back if call_id in earlier.call_ids and call_id not in answered else None
        answered.add(earlier.tool_call_id)
    return None


def _subsequence_problems(history: Sequence[Message], window: Sequence[Message]) -> list[str]:
    position = {m.id: i for i, m in enumerate(history)}
    places = [position.get(m.id) for m in window]
    if None in places:
        return ["the window holds a message that is not in the history"]
    if places != sorted(set(places)):  # type: ignore[type-var]
        return ["the window is not in history order, or repeats a message"]
    if any(history[p] != m for p, m in zip(places, window, strict=True)):  # type: ignore[index]
        return ["a message of the window differs from the stored one"]
    return []


def _group_problems(history: Sequence[Message], window: Sequence[Message]) -> list[str]:
    problems: list[str] = []
    position = {m.id: i for i, m in enumerate(history)}
    if window and window[0].role == Role.TOOL:
        problems.append("the window starts with a tool message")
    unanswered: set[str] = set()  # calls of the window's open group
    for m in window:
        if m.role != Role.TOOL:
            if unanswered:
                problems.append(f"calls {sorted(unanswered)} have no result in the window")
            unanswered = set(m.call_ids)
            continue
        if m.tool_call_id not in unanswered:
            problems.append(f"tool result {m.tool_call_id!r} answers no open call of the window")
        unanswered.discard(m.tool_call_id or "")
        call = _belongs_to_call(history, position[m.id])
        if call is None:
            problems.append(f"tool result {m.tool_call_id!r} is an orphan of the history")
    if unanswered:
        problems.append(f"calls {sorted(unanswered)} have no result in the window")
    return problems


def window_problems(
    history: Sequence[Message],
    window: Sequence[Message],
    *,
    keep_system: bool = False,
    start_on: str | None = None,
) -> list[str]:
    """What is wrong with ``window`` as a window of ``history`` (``[]``: nothing).

    A window is the history's messages, in order and unchanged; it never starts with a
    tool message; every tool message in it answers, for the first time, a call of the
    assistant message it follows through tool messages only, in the window and in the
    history alike; every call in it is answered in it. With ``keep_system`` it opens
    with exactly the history's leading system/developer messages; with
    ``start_on="user"`` what follows them (if anything) opens with a user message.
    """
    problems = _subsequence_problems(history, window)
    if problems:
        return problems
    problems = _group_problems(history, window)
    pinned = 0
    if keep_system:
        head = leading_instructions(history)
        pinned = len(head)
        if [m.id for m in window[:pinned]] != [m.id for m in head]:
            problems.append("the window does not open with the history's leading instructions")
    rest = window[pinned:]
    if start_on == "user" and rest and rest[0].role != Role.USER:
        problems.append(f"the window starts at a {rest[0].role.value} message, not a user one")
    return problems


def window_is_valid(
    history: Sequence[Message],
    window: Sequence[Message],
    *,
    keep_system: bool = False,
    start_on: str | None = None,
) -> bool:
    """Whether ``window`` is a valid window of ``history`` (:func:`window_problems`)."""
    return not window_problems(history, window, keep_system=keep_system, start_on=start_on)


# --- malformed histories --------------------------------------------------------------------

STEPS = (
    "user",
    "assistant",
    "system",
    "developer",
    "calls",
    "calls",
    "answer",
    "answer",
    "answer",
    "duplicate",
    "orphan",
    "early",
)


@dataclass
class _Calls:
    """What a history generator knows of the calls it made."""

    pending: list[str]  # called, not answered yet, oldest first
    answered: list[str]
    early: list[str]  # answered before they are called


@st.composite
def malformed_histories(draw: st.DrawFn, max_steps: int = 30) -> list[Message]:
    """Histories with everything a window must survive.

    Well-formed exchanges and parallel calls; calls never answered (anywhere, also at
    the end), answered late after other messages, answered twice, or answered before
    they are made; tool messages answering nothing; groups interleaved (a second call
    before the first is answered); system and developer messages at the head and
    anywhere else; texts of random length, so token windows cut them anywhere.
    """
    counter = itertools.count()
    calls = _Calls([], [], [])
    head = draw(st.lists(st.sampled_from(INSTRUCTIONS), max_size=3))
    history = [Message(role, f"rule {next(counter)}") for role in head]
    for step in draw(st.lists(st.sampled_from(STEPS), max_size=max_steps)):
        text = "w" * draw(st.integers(0, 60))
        history.append(_step(draw, step, text, calls, counter))
    return history


def _step(
    draw: st.DrawFn, step: str, text: str, calls: _Calls, counter: itertools.count[int]
) -> Message:
    if step == "answer" and calls.pending:
        call_id = draw(st.sampled_from(calls.pending[::-1]))  # mostly the newest
        calls.pending.remove(call_id)
        calls.answered.append(call_id)
        return Message.tool(call_id, text or "r")
    if step == "duplicate" and calls.answered:
        return Message.tool(draw(st.sampled_from(calls.answered)), text or "again")
    if step == "early":
        call_id = f"e{next(counter)}"
        calls.early.append(call_id)
        return Message.tool(call_id, text or "too soon")
    if step in ("answer", "duplicate", "orphan"):
        return Message.tool(f"ghost{next(counter)}", text or "r")
    if step == "calls":
        ids = [f"c{next(counter)}" for _ in range(draw(st.integers(1, 3)))]
        if calls.early and draw(st.booleans()):
            ids[0] = calls.early.pop(0)
        calls.pending.extend(ids)
        made = [ToolCall(i, "f" * draw(st.integers(1, 8)), {"n": len(text)}) for i in ids]
        return Message.assistant(text or None, tool_calls=made)
    return Message(Role(step), text or "t")


@st.composite
def well_formed_histories(draw: st.DrawFn) -> list[Message]:
    """An optional system prompt, then turns of user, tool exchanges, assistant reply."""
    counter = itertools.count()
    history: list[Message] = []
    if draw(st.booleans()):
        history.append(Message.system("s" * draw(st.integers(1, 40))))
    turns = draw(st.integers(0, 8))
    for turn in range(turns):
        history.append(Message.user("u" * draw(st.integers(1, 40))))
        for _ in range(draw(st.integers(0, 2))):
            made = [
                ToolCall(f"c{next(counter)}", "lookup", {"i": i})
                for i in range(draw(st.integers(1, 3)))
            ]
            history.append(Message.assistant(tool_calls=made))
            order = draw(st.permutations(made))
            history.extend(Message.tool(c.id, "r" * draw(st.integers(1, 40))) for c in order)
        if turn < turns - 1 or draw(st.booleans()):
            history.append(Message.assistant("a" * draw(st.integers(1, 40))))
    return history


any_history = st.one_of(malformed_histories(), well_formed_histories())


# --- random windows ---------------------------------------------------------------------------


def tiny_encoding() -> Any:
    """A ``tiktoken.Encoding`` built offline (tiktoken downloads the real ones): bytes are
    tokens, and "he", "ll", "hell" merge, so "hello" is 2 tokens and "abc" 3."""
    import tiktoken

    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"he": 256, b"ll": 257, b"hell": 258})
    return tiktoken.Encoding(
        name="tiny",
        pat_str=r"\S+|\s+",
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 300},
    )


def text_length_tokenizer(message: Message) -> int:
    """A tokenizer of whole messages that depends on content only (so every storage agrees)."""
    return len(message.text_content()) // 3 - 2


def window_policies(history_length: int = 30) -> st.SearchStrategy[FixedWindow | TokenWindow]:
    """FixedWindow and TokenWindow with random sizes, keep_system and start_on."""
    options = {"keep_system": st.booleans(), "start_on": st.sampled_from([None, "user"])}
    sizes = st.one_of(st.integers(-2, history_length + 2), st.just(10**20))
    fixed = st.builds(FixedWindow, sizes, **options)
    budgets = st.one_of(st.integers(1, 40 * history_length + 40), st.just(10**20))
    tokenizers = st.sampled_from([None, text_length_tokenizer])
    token = st.builds(TokenWindow, budgets, tokenizers, **options)
    return st.one_of(fixed, token)
