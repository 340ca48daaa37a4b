"""The read-time window policies: NoOp, FixedWindow, TokenWindow (and ``recent``'s).

Windows are computed from the newest message backwards, so a storage can hand a policy
only the tail of a long history: :meth:`TailPolicy.select` says which messages of a tail
form the window, or that it needs a longer tail to know. A window holds complete groups
only, and ``keep_system`` pins the instructions at the head of the history, which the
storage reads apart (``docs/contract/windows.md``, ``docs/contract/storage.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Protocol, runtime_checkable

from sqlmemory.policy.groups import Entry, Item, head_length, tail_groups
from sqlmemory.policy.tokens import Tokenizer, estimate_tokens
from sqlmemory.types import Message, Role

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

    Optional members a storage looks for: ``page_hint`` (how many of the newest rows to
    read first) and ``keep_system``: when true, the storage reads the *head* of the
    history (its leading ``system``/``developer`` messages) apart, passes it to
    :meth:`select` as ``head=`` (items like ``tail``'s), gives ``tail`` from after the
    head only, and puts the head before the chosen messages.

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
        is the whole history (after the head, for a policy with ``keep_system``).
        """
        ...


@dataclass(frozen=True)
class NoOp:
    """Every message, unchanged (orphans and incomplete groups included), as a new list.

    Examples:
        >>> len(NoOp().apply([Message.user("ping"), Message.assistant("pong")]))
        2
    """

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages)


def _check_int(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} takes an int")


def _from_first_user(tail: Sequence[Item], found: list[list[int]]) -> list[list[int]]:
    """The groups from the first that is a user message on (none if there is none)."""
    for position, group in enumerate(found):
        if tail[group[0]].role is Role.USER:
            return found[position:]
    return []


@dataclass(frozen=True, repr=False)
class _Window:
    """What FixedWindow and TokenWindow share: the head they pin and where they start."""

    keep_system: bool = field(default=False, kw_only=True)
    """Pin the leading ``system``/``developer`` messages of the history at the head."""
    start_on: str | None = field(default=None, kw_only=True)
    """``"user"``: the window (after the pinned head) starts at a user message."""

    def _check_options(self) -> None:
        if not isinstance(self.keep_system, bool):
            raise TypeError(f"{type(self).__name__}(keep_system=...) takes a bool")
        if self.start_on is not None and not isinstance(self.start_on, str):
            raise TypeError(f"{type(self).__name__}(start_on=...) takes None or 'user'")
        if self.start_on is not None and self.start_on != Role.USER.value:
            raise ValueError(f"{type(self).__name__}(start_on=...) takes None or 'user'")

    def __repr__(self) -> str:
        # The constructor's order (the options are keyword-only, after the others),
        # options shown only when set, so that FixedWindow(20) still prints as such.
        ordered = sorted(fields(self), key=lambda f: bool(f.kw_only))
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in ordered
            if f.repr and not (f.kw_only and getattr(self, f.name) == f.default)
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def select(
        self, tail: Sequence[Item], complete: bool, *, head: Sequence[Item] = ()
    ) -> list[int] | None:
        """Indices into ``tail`` of the window, or ``None`` when a longer tail is needed.

        ``head`` is the pinned head when ``keep_system`` is true (it is not in ``tail``).
        """
        found = self._pick_groups(tail, complete, head)
        if found is None:
            return None
        if self.start_on is not None:
            found = _from_first_user(tail, found)
        return [i for group in found for i in group]

    def _pick_groups(
        self, tail: Sequence[Item], complete: bool, head: Sequence[Item]
    ) -> list[list[int]] | None:
        raise NotImplementedError  # pragma: no cover

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        pinned = head_length(messages) if self.keep_system else 0
        rest = messages[pinned:]
        indices = self.select(rest, True, head=messages[:pinned])
        assert indices is not None  # noqa: S101 - a complete history always decides
        return [*messages[:pinned], *(rest[i] for i in indices)]


@dataclass(frozen=True, repr=False)
class FixedWindow(_Window):
    """The most recent ``n`` complete groups; ``n <= 0`` gives no group.

    ``keep_system=True`` pins the leading system/developer messages of the history at
    the head of the window (``n`` counts the other groups); ``start_on="user"`` drops
    the groups before the first user message of the window.

    Examples:
        >>> history = [Message.user(text) for text in ("one", "two", "three", "four", "five")]
        >>> [m.text_content() for m in FixedWindow(2).apply(history)]
        ['four', 'five']
        >>> history = [Message.system("Be brief."), *history]
        >>> [m.text_content() for m in FixedWindow(1, keep_system=True).apply(history)]
        ['Be brief.', 'five']
    """

    n: int
    needs_content = False

    def __post_init__(self) -> None:
        _check_int(self.n, "FixedWindow(n)")
        self._check_options()

    @property
    def page_hint(self) -> int:
        """How many of the newest messages a storage reads first: two per group, since
        a tool-using agent's groups are a call and its results (one statement settles
        the window more often, a second costs more than the extra rows)."""
        return 2 * max(self.n, 0) + 2

    def _pick_groups(
        self, tail: Sequence[Item], complete: bool, head: Sequence[Item]
    ) -> list[list[int]] | None:
        if self.n <= 0:
            return []
        found = tail_groups(tail)
        if len(found) < self.n and not complete:
            return None
        return found[-self.n :]


def _one(item: Item) -> int:
    """The cost of a message in ``recent(n)``'s budget: one (a group costs its length)."""
    return 1


def _budget_groups(
    tail: Sequence[Item],
    complete: bool,
    budget: int,
    cost: Callable[[Item], int],
    *,
    keep_newest: bool,
) -> list[list[int]] | None:
    """Newest complete groups whose summed cost fits ``budget``, up to the first that doesn't."""
    found = tail_groups(tail)
    total = 0
    chosen = 0
    for group in reversed(found):
        group_cost = len(group) if cost is _one else sum(max(cost(tail[i]), 0) for i in group)
        if total + group_cost > budget and not (keep_newest and chosen == 0):
            break
        total += group_cost
        chosen += 1
    else:
        if not complete:
            return None
    return found[len(found) - chosen :]


@dataclass(frozen=True, repr=False)
class TokenWindow(_Window):
    """The most recent complete groups whose summed token cost fits ``max_tokens``.

    Walks groups from newest to oldest and stops at the first that does not fit (an
    exact fit is included). The newest group is always included, even alone over
    budget. ``tokenizer`` defaults to :func:`estimate_tokens`; results ``<= 0`` count
    as zero. With ``keep_system=True`` the pinned head is paid for first.

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
        _check_int(self.max_tokens, "TokenWindow(max_tokens)")
        if self.max_tokens <= 0:
            raise ValueError("TokenWindow(max_tokens) must be positive")
        self._check_options()

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

    def _pick_groups(
        self, tail: Sequence[Item], complete: bool, head: Sequence[Item]
    ) -> list[list[int]] | None:
        budget = self.max_tokens - sum(max(self._cost(item), 0) for item in head)
        return _budget_groups(tail, complete, budget, self._cost, keep_newest=True)


@dataclass(frozen=True)
class RecentWindow:
    """At most the newest ``n`` messages made of whole complete groups (``recent(n)``).

    Examples:
        >>> history = [Message.user("a"), Message.assistant("b"), Message.user("c")]
        >>> [m.text_content() for m in RecentWindow(2).apply(history)]
        ['b', 'c']
    """

    n: int
    needs_content = False

    @property
    def page_hint(self) -> int:
        return max(self.n, 0) + 1

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        if self.n <= 0:
            return []
        found = _budget_groups(tail, complete, self.n, _one, keep_newest=False)
        return None if found is None else [i for group in found for i in group]

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        indices = self.select(messages, True)
        assert indices is not None  # noqa: S101 - a complete history always decides
        return [messages[i] for i in indices]
