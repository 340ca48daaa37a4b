"""Atomic groups: an assistant message with tool calls and the results that answer it.

A *group* is an atomic exchange: an assistant message with tool calls plus the tool
messages right after it that answer one of its calls; any other message is a group of
one. A tool message that answers no call of the group before it, or a call that an
earlier message of the group answered already, is an *orphan*: it belongs to no group
and no window ever holds it. A group is *complete* when every call of its assistant
message is answered within it; windows hold complete groups only
(``docs/contract/windows.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from sqlmemory.types import Message, Role

__all__ = [
    "HEAD_ROLES",
    "Entry",
    "Item",
    "evict_start",
    "group_indices",
    "groups",
    "head_length",
    "tail_groups",
]

HEAD_ROLES = frozenset({Role.SYSTEM, Role.DEVELOPER})
"""The roles of the instructions at the head of a history that ``keep_system`` pins."""


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


def _scan(items: Sequence[Item]) -> tuple[list[list[int]], list[bool]]:
    """The groups of ``items`` (indices, oldest first) and whether each is complete."""
    found: list[list[int]] = []
    complete: list[bool] = []
    unanswered: set[str] = set()  # calls of the open group that no result answered yet
    for index, item in enumerate(items):
        if item.role is Role.TOOL:
            if item.tool_call_id in unanswered:
                unanswered.discard(item.tool_call_id)
                found[-1].append(index)
                complete[-1] = not unanswered
            # Otherwise an orphan (or a second answer to one call, which providers refuse).
            # The open group stays open: later results of its calls still follow it
            # through an unbroken run of tool messages.
            continue
        found.append([index])
        unanswered = set(item.call_ids) if item.role is Role.ASSISTANT else set()
        complete.append(not unanswered)
    return found, complete


def group_indices(items: Sequence[Item]) -> list[list[int]]:
    """Indices of the groups of ``items``, oldest first, complete or not; orphans are in none."""
    return _scan(items)[0]


def groups(messages: Sequence[Message]) -> list[list[Message]]:
    """The atomic groups of ``messages``, oldest first; orphan tool messages are left out.

    Incomplete groups (a call without its result) are groups too; windows leave them
    out (``docs/contract/windows.md``).

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
    """The complete groups of a history's suffix that are certainly groups of the history.

    Leading tool messages of a tail may belong to a group that starts before it, so they
    are skipped; from the first other message on, grouping does not depend on the past,
    and neither does completeness (it depends on the messages after a group's start).
    """
    start = 0
    while start < len(tail) and tail[start].role is Role.TOOL:
        start += 1
    found, complete = _scan(tail[start:])
    return [
        [start + i for i in group] for group, whole in zip(found, complete, strict=True) if whole
    ]


def head_length(items: Sequence[Item]) -> int:
    """How many messages open the history with the roles ``system`` or ``developer``."""
    length = 0
    while length < len(items) and items[length].role in HEAD_ROLES:
        length += 1
    return length


def evict_start(roles: Sequence[Role], keep: int) -> int:
    """How many of the oldest messages to delete so at most ``keep`` remain.

    Never leaves a tool message at the head, where it would answer no call.
    """
    start = max(len(roles) - keep, 0)
    while start < len(roles) and roles[start] is Role.TOOL:
        start += 1
    return start
