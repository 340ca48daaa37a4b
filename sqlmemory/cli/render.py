"""Plain-text tables and one-line message summaries, for a terminal or a pipe.

A table is a list of :class:`Column` objects, each a header and a function from a row to its
cell, so a command grows a column by adding one entry to its list.

Examples:
    >>> columns = [Column("session", str), Column("messages", len, align=">")]
    >>> print("\\n".join(table(columns, ["chat-1", "chat-10"])))
    session  messages
    chat-1          6
    chat-10         7
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timezone
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from sqlmemory.types import Message

__all__ = ["Column", "count", "message_columns", "summary", "table"]

Row = TypeVar("Row")


@dataclass(frozen=True)
class Column(Generic[Row]):
    """One column of a :func:`table`: its header and how to show a row's cell."""

    header: str
    cell: Callable[[Row], Any]
    align: Literal["<", ">"] = "<"


def count(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless one.

    Examples:
        >>> count(1, "message"), count(3, "session")
        ('1 message', '3 sessions')
    """
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def table(columns: Sequence[Column[Row]], rows: Iterable[Row]) -> list[str]:
    """The lines of a table: a header line, then a line per row; columns padded to fit.

    The last column is not padded, so a long summary there never adds trailing blanks.
    """
    cells = [[str(column.cell(row)) for column in columns] for row in rows]
    widths = [
        max([len(column.header), *(len(line[i]) for line in cells)])
        for i, column in enumerate(columns)
    ]

    def line(values: Sequence[str]) -> str:
        padded = [
            f"{value:{column.align}{width}}"
            for value, column, width in zip(values, columns, widths, strict=True)
        ]
        if columns[-1].align == "<":
            padded[-1] = values[-1]
        return "  ".join(padded).rstrip()

    return [line([c.header for c in columns]), *(line(values) for values in cells)]


def summary(message: Message, width: int = 76) -> str:
    """One line: attachments first (so truncation never hides them), text, tool calls.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> summary(Message.assistant("Checking.", tool_calls=[ToolCall("c1", "f", {"a": 1})]))
        'Checking. -> [c1] f({"a":1})'
        >>> summary(Message.tool("c1", "42"))
        '<- [c1] 42'
    """
    from sqlmemory.types import DocumentBlock, ImageBlock

    parts: list[str] = []
    if message.tool_call_id is not None:
        parts.append(f"<- [{message.tool_call_id}]")
    for block in message.content:
        if isinstance(block, ImageBlock):
            size = f"{block.width}x{block.height}" if block.width and block.height else None
            source = f"{len(block.data)} bytes" if block.data else block.url or block.file_id
            detail = size or source
            parts.append(f"[{block.media_type} image, {detail}]")
        elif isinstance(block, DocumentBlock):
            source = f"{len(block.data)} bytes" if block.data else block.url or block.file_id
            parts.append(f"[{block.media_type} document, {source}]")
    if message.text_content():
        parts.append(" ".join(message.text_content().split()))
    parts.extend(f"-> [{c.id}] {c.name}({c.arguments_json})" for c in message.tool_calls)
    text = " ".join(parts)
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass(frozen=True)
class Shown:
    """A message with its 1-based position in the session's history."""

    position: int
    message: Message


def _recorded_at(shown: Shown) -> str:
    when = shown.message.recorded_at
    return "" if when is None else when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _tokens(shown: Shown) -> int:
    from sqlmemory.policy import estimate_tokens

    return estimate_tokens(shown.message)


def message_columns(*, with_time: bool = True) -> list[Column[Shown]]:
    """The columns of a history: position, time (UTC), role, estimated tokens, content."""
    columns: list[Column[Shown]] = [Column("#", lambda s: s.position, align=">")]
    if with_time:
        columns.append(Column("recorded at (UTC)", _recorded_at))
    columns += [
        Column("role", lambda s: s.message.role.value),
        Column("tokens", _tokens, align=">"),
        Column("content", lambda s: summary(s.message)),
    ]
    return columns
