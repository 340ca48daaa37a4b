"""Atomic groups and the read-time window policies.

Pure Python. A *group* is an atomic exchange: an assistant message with tool calls plus
the tool messages right after it that answer one of its calls; any other message is a
group of one. A tool message that answers no call of the group before it is an *orphan*:
it belongs to no group and no window ever holds it.

Windows are computed from the newest message backwards, so a storage can hand a policy
only the tail of a long history: :meth:`TailPolicy.select` says which messages of a tail
form the window, or that it needs a longer tail to know.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar, runtime_checkable

from sqlmemory.types import DocumentBlock, ImageBlock, Message, Role, TextBlock, ThinkingBlock

__all__ = [
    "Entry",
    "FixedWindow",
    "NoOp",
    "Policy",
    "TailPolicy",
    "TokenWindow",
    "Tokenizer",
    "estimate_tokens",
    "groups",
]

Tokenizer = Callable[[Message], int]
"""Counts the tokens a message costs in a model request."""

UNKNOWN_IMAGE_TOKENS = 2500
TOKENS_PER_MESSAGE = 4


class Entry(NamedTuple):
    """What a storage knows of a stored message without reading its content.

    A named tuple rather than a dataclass: storages build one per row they page through.
    """

    role: Role
    tool_call_id: str | None
    call_ids: tuple[str, ...]
    tokens: int
    """The :func:`estimate_tokens` cost of the message, computed when it was stored."""


class _Item(Protocol):
    @property
    def role(self) -> Role: ...
    @property
    def tool_call_id(self) -> str | None: ...
    @property
    def call_ids(self) -> tuple[str, ...]: ...


ItemT = TypeVar("ItemT", bound=_Item)


def image_tokens(width: int | None, height: int | None) -> int:
    """Tokens of an image of the given size (2500 when the size is unknown)."""
    if not width or not height:
        return UNKNOWN_IMAGE_TOKENS
    return math.ceil(width / 64) * math.ceil(height / 64) * 170


def estimate_tokens(message: Message) -> int:
    """The default heuristic token cost of ``message`` (see SPEC section 2).

    4 per message; text and thinking: UTF-8 bytes // 4; images: 170 per started 64x64
    tile of the size read from the header (2500 when unknown); documents: bytes // 1500;
    tool calls: UTF-8 bytes of name + JSON arguments // 4.
    """
    total = TOKENS_PER_MESSAGE
    for block in message.content:
        if isinstance(block, TextBlock):
            total += len(block.text.encode("utf-8")) // 4
        elif isinstance(block, ImageBlock):
            total += image_tokens(block.width, block.height)
        elif isinstance(block, DocumentBlock):
            total += len(block.data) // 1500
        elif isinstance(block, ThinkingBlock):
            total += len(block.thinking.encode("utf-8")) // 4
    for call in message.tool_calls:
        total += len((call.name + call.arguments_json).encode("utf-8")) // 4
    return total


def group_indices(items: Sequence[_Item]) -> list[list[int]]:
    """Indices of the groups of ``items``, oldest first; orphans are in none."""
    result: list[list[int]] = []
    open_calls: frozenset[str] = frozenset()
    for index, item in enumerate(items):
        if item.role is Role.TOOL:
            if item.tool_call_id in open_calls:
                result[-1].append(index)
            # Otherwise an orphan. The open group stays open: later results of its calls
            # still follow it through an unbroken run of tool messages.
            continue
        result.append([index])
        open_calls = frozenset(item.call_ids) if item.role is Role.ASSISTANT else frozenset()
    return result


def groups(messages: Sequence[Message]) -> list[list[Message]]:
    """The atomic groups of ``messages``, oldest first; orphan tool messages are left out."""
    return [[messages[i] for i in group] for group in group_indices(messages)]


def tail_groups(tail: Sequence[_Item]) -> list[list[int]]:
    """The groups of a history's suffix that are certainly whole groups of the history.

    Leading tool messages of a tail may belong to a group that starts before it, so they
    are skipped; from the first other message on, grouping does not depend on the past.
    """
    start = 0
    while start < len(tail) and tail[start].role is Role.TOOL:
        start += 1
    return [[start + i for i in group] for group in group_indices(tail[start:])]


@runtime_checkable
class Policy(Protocol):
    """Chooses, at read time, which messages of a history are sent to the model."""

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The window of ``messages`` (oldest first), as a new list."""
        ...


@runtime_checkable
class TailPolicy(Policy, Protocol):
    """A policy whose window can be found from the tail of a history.

    Storages use this to read only the newest messages of a long session. A policy that
    does not implement it still works: the storage reads the whole history for it.
    """

    @property
    def needs_content(self) -> bool:
        """Whether :meth:`select` needs whole messages; if not, :class:`Entry` values do."""
        ...

    def select(self, tail: Sequence[_Item], complete: bool) -> list[int] | None:
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
    """Every message, unchanged (orphans included), as a new list."""

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages)


@dataclass(frozen=True)
class FixedWindow:
    """The most recent ``n`` groups; ``n <= 0`` gives an empty window."""

    n: int
    needs_content = False

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int):
            raise TypeError("FixedWindow(n) takes an int")

    @property
    def page_hint(self) -> int:
        """How many of the newest messages a storage reads first (groups may be long)."""
        return max(self.n, 0) + 2

    def select(self, tail: Sequence[_Item], complete: bool) -> list[int] | None:
        if self.n <= 0:
            return []
        found = tail_groups(tail)
        if len(found) < self.n and not complete:
            return None
        return [i for group in found[-self.n :] for i in group]

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return _pick(messages, self)


def _budget_select(
    tail: Sequence[_Item],
    complete: bool,
    budget: int,
    cost: Callable[[_Item], int],
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

    def _cost(self, item: _Item) -> int:
        if self.tokenizer is not None:
            assert isinstance(item, Message)  # noqa: S101 - needs_content guarantees it
            return self.tokenizer(item)
        if isinstance(item, Entry):
            return item.tokens
        assert isinstance(item, Message)  # noqa: S101
        return estimate_tokens(item)

    def select(self, tail: Sequence[_Item], complete: bool) -> list[int] | None:
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

    def select(self, tail: Sequence[_Item], complete: bool) -> list[int] | None:
        if self.n <= 0:
            return []
        return _budget_select(tail, complete, self.n, lambda _: 1, keep_newest=False)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return _pick(messages, self)


def evict_start(roles: Sequence[Role], keep: int) -> int:
    """How many of the oldest messages to delete so at most ``keep`` remain.

    Never leaves a tool message at the head, where it would answer no call.
    """
    start = max(len(roles) - keep, 0)
    while start < len(roles) and roles[start] is Role.TOOL:
        start += 1
    return start


def check_count(value: object, name: str) -> int:
    """Validate a non-negative int argument (``bool`` refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value
