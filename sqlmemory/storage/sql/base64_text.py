"""Text that PostgreSQL cannot hold: a row whose text holds NUL keeps it in base64.

PostgreSQL ``text`` refuses NUL (``"\\x00"``), which any Python ``str`` may hold. There the
writes put the free-text columns of such a row (all of them, NULLs aside) in the base64
of their UTF-8 bytes and set the row's ``text_base64`` flag; the reads decode the columns
of flagged rows. Every other row is written and read as it is: the driver turns its text
into ``str`` with no Python call per value (``docs/contract/persistence.md``). JSON
columns never hold NUL (JSON writes it ``\\u0000``), so they are never encoded. SQLite and
MySQL/MariaDB hold NUL: their rows are never flagged.

Examples:
    >>> row = {"text": "a\\x00b", "name": None, FLAG: False}
    >>> escape([row], ("text", "name"))
    >>> row
    {'text': 'YQBi', 'name': None, 'text_base64': True}
    >>> decoded(row, ("text", "name")) == {"text": "a\\x00b", "name": None, FLAG: True}
    True
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "BLOCK_TEXT",
    "FLAG",
    "MESSAGE_TEXT",
    "SESSION_TEXT",
    "decode",
    "decoded",
    "escape",
]

FLAG = "text_base64"
"""The flag column of every table: the row's free-text columns hold base64."""
MESSAGE_TEXT = ("text",)
"""The free-text columns of ``sqlmemory_messages``."""
BLOCK_TEXT = ("text", "signature", "url", "file_id", "title", "name")
"""The free-text columns of ``sqlmemory_blocks``."""
SESSION_TEXT = ("title",)
"""The free-text columns of ``sqlmemory_sessions``."""
_NUL = "\x00"


def _holds_nul(row: Mapping[str, Any], columns: tuple[str, ...]) -> bool:
    for column in columns:
        value = row.get(column)
        if value is not None and _NUL in value:
            return True
    return False


def escape(rows: Iterable[dict[str, Any]], columns: tuple[str, ...]) -> None:
    """Set the flag of each of ``rows`` (in place): true, its ``columns`` in base64, when
    one of them holds NUL. For PostgreSQL only."""
    for row in rows:
        holds_nul = _holds_nul(row, columns)
        row[FLAG] = holds_nul
        if holds_nul:
            for column in columns:
                value = row.get(column)
                if value is not None:
                    row[column] = base64.b64encode(value.encode("utf-8")).decode("ascii")


def decode(value: str | None) -> str | None:
    """The text a free-text column of a flagged row holds in base64."""
    # PostgreSQL's encode(..., 'base64') (revision 0004) breaks lines; b64decode skips them.
    return None if value is None else base64.b64decode(value).decode("utf-8")


def decoded(row: Mapping[Any, Any], columns: tuple[str, ...]) -> dict[str, Any]:
    """``row`` with its ``columns`` decoded when it is flagged; for reading."""
    values = dict(row)
    if values[FLAG]:
        for column in columns:
            values[column] = decode(values[column])
    return values
