"""What every storage's ``compact`` decides without I/O: where to cut, and the summary.

Pure Python. A storage reads the history, asks :func:`plan_compaction` which messages are
older than the window ``keep`` selects, calls the caller's summarizer on them outside any
transaction, turns what it returned into the stored summary with
:func:`summary_messages`, and replaces the older messages with it only if the session did
not change meanwhile. The rules are ``docs/compaction.md``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple

from sqlmemory.errors import DuplicateMessageError
from sqlmemory.policy import FixedWindow, Policy
from sqlmemory.policy.groups import HEAD_ROLES, group_indices
from sqlmemory.types import Message, Role

__all__ = [
    "COMPACTION_KEY",
    "DEFAULT_KEEP",
    "AsyncSummarizer",
    "CompactionPlan",
    "Summarizer",
    "Summary",
    "call_summarizer",
    "check_compaction",
    "plan_compaction",
    "summary_messages",
]

COMPACTION_KEY = "sqlmemory.compaction"
"""The key of a summary message's ``metadata`` naming the messages it replaced."""
DEFAULT_KEEP = FixedWindow(20)
"""The window ``compact`` keeps unless told otherwise."""

Summary = Message | Sequence[Message]
"""What a summarizer returns: one message, or a list of them."""
Summarizer = Callable[[list[Message]], Summary]
"""The caller's function that summarizes the older messages (it calls a model)."""
AsyncSummarizer = Callable[[list[Message]], Summary | Awaitable[Summary]]
"""An async storage's summarizer: a coroutine function, or a plain one."""


class CompactionPlan(NamedTuple):
    """Where ``compact`` cuts a history: ``history[head:cut]`` is replaced."""

    head: int
    """The pinned head (leading instructions the window keeps) stays before the summary."""
    cut: int
    """The first message kept after the summary; everything from it on stays as stored."""

    @property
    def replaced(self) -> int:
        """How many messages the summary replaces (0: nothing to compact)."""
        return max(self.cut - self.head, 0)


def check_compaction(summarize: object, keep: object) -> None:
    """Refuse a summarizer that is not callable and a ``keep`` that is not a policy.

    Raises:
        TypeError: either is wrong; a count given as ``keep`` is pointed to ``FixedWindow``.
    """
    if not callable(summarize):
        raise TypeError(f"summarize must be a callable, not {type(summarize).__name__}")
    if isinstance(keep, type) or not callable(getattr(keep, "apply", None)):
        hint = f" (for the newest {keep} groups: FixedWindow({keep}))" if _is_int(keep) else ""
        raise TypeError(f"keep must be a Policy, not {keep!r}{hint}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def plan_compaction(history: Sequence[Message], keep: Policy) -> CompactionPlan:
    """Where to cut ``history`` so that the window ``keep`` selects survives whole.

    Everything from the window's first message on is kept as stored, the messages a
    window skips (incomplete groups, orphans) included; so is the group the newest
    message belongs to when it is still incomplete (the turn being written). With
    ``keep_system=True``, the leading ``system``/``developer`` messages the window pins
    stay at the head, and the summary follows them. The cut is always at the start of a
    group, never between a call and its results.
    When only summaries of earlier compactions are older than the window, there is
    nothing to compact (``replaced == 0``).

    Examples:
        >>> history = [Message.system("Be brief."), *(Message.user(str(i)) for i in range(5))]
        >>> plan_compaction(history, FixedWindow(2, keep_system=True))
        CompactionPlan(head=1, cut=4)
        >>> plan_compaction(history, FixedWindow(2))
        CompactionPlan(head=0, cut=4)
        >>> plan_compaction(history, FixedWindow(9)).replaced
        0
    """
    window = keep.apply(list(history))
    chosen = {m.id for m in window}
    head = 0
    if getattr(keep, "keep_system", False) is True:
        while head < len(history) and history[head].role in HEAD_ROLES:
            head += 1
    cut = next((i for i in range(head, len(history)) if history[i].id in chosen), len(history))
    found = group_indices(history)
    if found:
        newest = found[-1]
        answered = {history[i].tool_call_id for i in newest[1:]}
        if set(history[newest[0]].call_ids) - answered:
            cut = min(cut, newest[0])  # the newest group still waits for a result
    while head < cut < len(history) and history[cut].role is Role.TOOL:
        cut -= 1  # a result stays with its call
    if all(COMPACTION_KEY in m.metadata for m in history[head:cut]):
        return CompactionPlan(head, head)  # only earlier summaries: nothing to gain
    return CompactionPlan(head, max(cut, head))


def call_summarizer(summarize: Callable[[list[Message]], Any], older: list[Message]) -> Any:
    """``summarize(older)`` for a sync storage, which cannot await a coroutine.

    Raises:
        TypeError: ``summarize`` returned an awaitable (it is a coroutine function: use
            the async storage).
    """
    result = summarize(older)
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if callable(close):
            close()  # never awaited: no "coroutine was never awaited" warning
        raise TypeError(
            "summarize returned an awaitable: a sync storage needs a plain function "
            "(AsyncSqlStorage.compact takes a coroutine function)"
        )
    return result


def summary_messages(
    result: object, older: Sequence[Message], kept: Sequence[Message]
) -> list[Message]:
    """The messages to store in place of ``older``: what the summarizer returned, each
    with :data:`COMPACTION_KEY` in its metadata and, unless it has one, the
    ``recorded_at`` of the newest message it replaces (so the order stays time order).

    Raises:
        TypeError: ``result`` is neither a :class:`Message` nor a list of them.
        ValueError: ``result`` holds no message, or more messages than it replaces.
        DuplicateMessageError: a summary message reuses the id of a message kept.
    """
    if isinstance(result, Message):
        summaries = [result]
    elif isinstance(result, (list, tuple)) and all(isinstance(m, Message) for m in result):
        summaries = list(result)
    else:
        raise TypeError(
            f"summarize must return a Message or a list of them, not {type(result).__name__}"
        )
    if not summaries:
        raise ValueError("summarize returned no message")
    if len(summaries) > len(older):
        raise ValueError(
            f"summarize returned {len(summaries)} messages to replace {len(older)}: "
            "a summary may not be longer than what it replaces"
        )
    kept_ids = {m.id for m in kept}
    clash = next((m.id for m in summaries if m.id in kept_ids), None)
    if clash is not None:
        raise DuplicateMessageError(f"summary message id {clash!r} is the id of a kept message")
    first, last = older[0], older[-1]
    replaced: dict[str, Any] = {
        "count": len(older),
        "first_id": first.id,
        "last_id": last.id,
        "first_recorded_at": first.recorded_at.isoformat() if first.recorded_at else None,
        "last_recorded_at": last.recorded_at.isoformat() if last.recorded_at else None,
    }
    return [
        Message(
            m.role,
            m.content,
            tool_call_id=m.tool_call_id,
            metadata={**m.metadata, COMPACTION_KEY: replaced},
            id=m.id,
            recorded_at=m.recorded_at or last.recorded_at,
            is_error=m.is_error,
            extras=m.extras,
            usage=m.usage,
        )
        for m in summaries
    ]
