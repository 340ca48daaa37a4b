"""The read-time window policies: NoOp, FixedWindow, TokenWindow (and ``recent``'s).

Windows are computed from the newest message backwards, so a storage can hand a policy
only the tail of a long history: :meth:`TailPolicy.select` says which messages of a tail
form the window, or that it needs a longer tail to know (``docs/contract/windows.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from sqlmemory.policy.groups import Entry, Item, tail_groups
from sqlmemory.policy.tokens import Tokenizer, estimate_tokens
from sqlmemory.types import Message

__all__ = ["FixedWindow", "NoOp", "Policy", "RecentWindow", "TailPolicy", "TokenWindow"]


@runtime_checkable
class Policy(Protocol):
    """Chooses, at read time, which messages of a history are sent to the model.

    Anything with an ``apply`` method is a policy:

    Examples:
        >>> class LastOne:
        ...     def apply(self, messages):
        ...         return list(messages[-1:])
        >>> isinstance(LastOne(), Policy)
        True
    """

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The window of ``messages`` (oldest first), as a new list."""
        ...


@runtime_checkable
class TailPolicy(Policy, Protocol):
    """A policy whose window can be found from the tail of a history.

    Storages use this to read only the newest messages of a long session. A policy that
    does not implement it still works: the storage reads the whole history for it.

    Examples:
        >>> isinstance(FixedWindow(2), TailPolicy)
        True
    """

    @property
    def needs_content(self) -> bool:
        """Whether :meth:`select` needs whole messages; if not, :class:`Entry` values do."""
        ...

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        """Indices into ``tail`` of the window, or ``None`` when a longer tail is needed.

        ``tail`` is a suffix of the history, oldest first; ``complete`` says whether it
        is the whole history.
        """
        ...


def _pick(messages: Sequence[Message], policy: TailPolicy) -> list[Message]:
    indices = policy.select(messages, True)
    assert indices is not None  # noqa: S101 - a complete history always decides
    return [messages[i] for i in indices]


@dataclass(frozen=True)
class NoOp:
    """Every message, unchanged (orphans included), as a new list.

    Examples:
        >>> len(NoOp().apply([Message.user("ping"), Message.assistant("pong")]))
        2
    """

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages)


@dataclass(frozen=True)
class FixedWindow:
    """The most recent ``n`` groups; ``n <= 0`` gives an empty window.

    Examples:
        >>> history = [Message.user(text) for text in ("one", "two", "three", "four", "five")]
        >>> window = FixedWindow(2).apply(history)
        >>> [m.text_content() for m in window]
        ['four', 'five']
    """

    n: int
    needs_content = False

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int):
            raise TypeError("FixedWindow(n) takes an int")

    @property
    def page_hint(self) -> int:
        """How many of the newest messages a storage reads first (groups may be long)."""
        return max(self.n, 0) + 2

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        if self.n <= 0:
            return []
        found = tail_groups(tail)
        if len(found) < self.n and not complete:
            return None
        return [i for group in found[-self.n :] for i in group]

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return _pick(messages, self)


def _budget_select(
    tail: Sequence[Item],
    complete: bool,
    budget: int,
    cost: Callable[[Item], int],
    *,
    keep_newest: bool,
) -> list[int] | None:
    """Newest groups whose summed cost fits ``budget``, stopping at the first that doesn't."""
    found = tail_groups(tail)
    total = 0
    chosen = 0
    for group in reversed(found):
        group_cost = sum(max(cost(tail[i]), 0) for i in group)
        if total + group_cost > budget and not (keep_newest and chosen == 0):
            break
        total += group_cost
        chosen += 1
    else:
        if not complete:
            return None
    return [i for group in found[len(found) - chosen :] for i in group]


@dataclass(frozen=True)
class TokenWindow:
    """The most recent groups whose summed token cost fits ``max_tokens``.

    Walks groups from newest to oldest and stops at the first that does not fit (an
    exact fit is included). The newest group is always included, even alone over
    budget. ``tokenizer`` defaults to :func:`estimate_tokens`; results ``<= 0`` count
    as zero.

    Examples:
        >>> history = [Message.user(text) for text in ("first", "second", "third")]
        >>> window = TokenWindow(25, tokenizer=lambda m: 10).apply(history)
        >>> [m.text_content() for m in window]
        ['second', 'third']
    """

    max_tokens: int
    tokenizer: Tokenizer | None = None
    page_hint = 32

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise TypeError("TokenWindow(max_tokens) takes an int")
        if self.max_tokens <= 0:
            raise ValueError("TokenWindow(max_tokens) must be positive")

    @property
    def needs_content(self) -> bool:
        return self.tokenizer is not None

    def _cost(self, item: Item) -> int:
        if self.tokenizer is not None:
            assert isinstance(item, Message)  # noqa: S101 - needs_content guarantees it
            return self.tokenizer(item)
        if isinstance(item, Entry):
            return item.tokens
        assert isinstance(item, Message)  # noqa: S101
        return estimate_tokens(item)

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        return _budget_select(tail, complete, self.max_tokens, self._cost, keep_newest=True)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return _pick(messages, self)


@dataclass(frozen=True)
class RecentWindow:
    """At most the newest ``n`` messages made of whole groups (what ``recent(n)`` returns)."""

    n: int
    needs_content = False

    @property
    def page_hint(self) -> int:
        return max(self.n, 0) + 1

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        if self.n <= 0:
            return []
        return _budget_select(tail, complete, self.n, lambda _: 1, keep_newest=False)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return _pick(messages, self)
