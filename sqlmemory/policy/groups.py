"""Atomic groups: an assistant message with tool calls and the results that answer it.

A *group* is an atomic exchange: an assistant message with tool calls plus the tool
messages right after it that answer one of its calls; any other message is a group of
one. A tool message that answers no call of the group before it is an *orphan*: it
belongs to no group and no window ever holds it (``docs/contract/windows.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from sqlmemory.types import Message, Role

__all__ = ["Entry", "Item", "evict_start", "group_indices", "groups", "tail_groups"]


class Entry(NamedTuple):
    """What a storage knows of a stored message without reading its content.

    A named tuple rather than a dataclass: storages build one per row they page through.
    Policies group entries exactly as they group messages:

    Examples:
        >>> from sqlmemory import Role
        >>> entries = [Entry(Role.ASSISTANT, None, ("c1",), 9), Entry(Role.TOOL, "c1", (), 5)]
        >>> group_indices(entries)
        [[0, 1]]
    """

    role: Role
    tool_call_id: str | None
    call_ids: tuple[str, ...]
    tokens: int
    """The :func:`estimate_tokens` cost of the message, computed when it was stored."""


class Item(Protocol):
    """What grouping reads of a message: a :class:`~sqlmemory.Message` or an :class:`Entry`."""

    @property
    def role(self) -> Role: ...
    @property
    def tool_call_id(self) -> str | None: ...
    @property
    def call_ids(self) -> tuple[str, ...]: ...


def group_indices(items: Sequence[Item]) -> list[list[int]]:
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
    """The atomic groups of ``messages``, oldest first; orphan tool messages are left out.

    Examples:
        >>> from sqlmemory import ToolCall
        >>> history = [
        ...     Message.user("6 x 7?"),
        ...     Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6, "b": 7})]),
        ...     Message.tool("c1", "42"),
        ...     Message.tool("c9", "an orphan"),
        ... ]
        >>> [[m.role.value for m in group] for group in groups(history)]
        [['user'], ['assistant', 'tool']]
    """
    return [[messages[i] for i in group] for group in group_indices(messages)]


def tail_groups(tail: Sequence[Item]) -> list[list[int]]:
    """The groups of a history's suffix that are certainly whole groups of the history.

    Leading tool messages of a tail may belong to a group that starts before it, so they
    are skipped; from the first other message on, grouping does not depend on the past.
    """
    start = 0
    while start < len(tail) and tail[start].role is Role.TOOL:
        start += 1
    return [[start + i for i in group] for group in group_indices(tail[start:])]


def evict_start(roles: Sequence[Role], keep: int) -> int:
    """How many of the oldest messages to delete so at most ``keep`` remain.

    Never leaves a tool message at the head, where it would answer no call.
    """
    start = max(len(roles) - keep, 0)
    while start < len(roles) and roles[start] is Role.TOOL:
        start += 1
    return start
