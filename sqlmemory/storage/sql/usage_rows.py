"""A message's usage as columns of its row, and back.

Six nullable columns of ``sqlmemory_messages`` hold a :class:`~sqlmemory.types.Usage`:
the five counts (``BIGINT``) and the model; ``usage_input_tokens`` is NULL exactly when
the message has no usage. The reads select them as ONE column, :func:`usage_text`: the
counts and the model joined with commas, or NULL for a message without usage. So a read
costs one more NULL per row, not six, and builds nothing in the common case; only a
message with a usage has its text split. The totals over the columns are in
:mod:`~sqlmemory.storage.sql.usage_queries`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, String, Table, case, cast, func, literal_column

from sqlmemory.types import Usage
from sqlmemory.types.token_usage import TOKEN_FIELDS

__all__ = ["NO_USAGE", "USAGE_COLUMNS", "USAGE_COLUMN_OF", "usage_of", "usage_row", "usage_text"]

USAGE_COLUMN_OF = {name: f"usage_{name}" for name in TOKEN_FIELDS}
"""The column of each count of a :class:`Usage`."""

USAGE_COLUMNS = (*USAGE_COLUMN_OF.values(), "usage_model")
"""The usage columns: the counts, then the model."""

NO_USAGE: dict[str, Any] = dict.fromkeys(USAGE_COLUMNS)
"""The usage columns of a message without usage."""

_new = object.__new__


def usage_text(table: Table) -> ColumnElement[Any]:
    """The usage of a message row as one text, ``"1200,80,1024,0,16,gpt-4o"``: the five
    counts, then the model (empty for none; a model is never empty), or NULL.

    The model comes last and the counts are digits, so splitting at the first five
    commas reads it back whatever it holds.
    """
    comma = literal_column("','", String)  # in the SQL text: no parameter to bind
    first = table.c[USAGE_COLUMN_OF[TOKEN_FIELDS[0]]]
    text: ColumnElement[Any] = cast(first, String)
    for name in TOKEN_FIELDS[1:]:
        text = text + comma + cast(table.c[USAGE_COLUMN_OF[name]], String)
    text = text + comma + func.coalesce(table.c.usage_model, literal_column("''", String))
    # CASE first: a row without usage (most) costs the database one test, not six casts.
    return case((first.is_not(None), text))


def usage_row(usage: Usage | None) -> dict[str, Any]:
    """The usage columns of a message whose ``usage`` is this."""
    if usage is None:
        return NO_USAGE
    row = {column: getattr(usage, name) for name, column in USAGE_COLUMN_OF.items()}
    row["usage_model"] = usage.model
    return row


def usage_of(text: str | bytes | bytearray) -> Usage:
    """The usage of a :func:`usage_text`; it was checked when written, so the checks are
    not run again."""
    if not isinstance(text, str):  # MySQL/MariaDB: the model column is binary, so the text is
        text = bytes(text).decode()
    *counts, model = text.split(",", len(TOKEN_FIELDS))
    usage: Usage = _new(Usage)
    values = dict(zip(TOKEN_FIELDS, map(int, counts), strict=True))
    usage.__dict__.update(model=model or None, **values)
    return usage
