"""A message's usage as columns of its row, and back.

Six nullable columns of ``sqlmemory_messages`` hold a :class:`~sqlmemory.types.Usage`:
the five counts (``BIGINT``) and the model. ``usage_input_tokens`` is NULL exactly when
the message has no usage, so a read tests one value per row and builds nothing in the
common case. The totals over these columns are in
:mod:`~sqlmemory.storage.sql.usage_queries`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmemory.types import Usage
from sqlmemory.types.token_usage import TOKEN_FIELDS

__all__ = ["NO_USAGE", "USAGE_COLUMN_OF", "USAGE_FIELDS", "usage_of", "usage_row"]

USAGE_COLUMN_OF = {name: f"usage_{name}" for name in TOKEN_FIELDS}
"""The column of each count of a :class:`Usage`."""

USAGE_FIELDS = (*USAGE_COLUMN_OF.values(), "usage_model")
"""The usage columns, in the order the message reads select them (after the others):
the counts first, the first of them NULL when the message has no usage."""

NO_USAGE: dict[str, Any] = dict.fromkeys(USAGE_FIELDS)
"""The usage columns of a message without usage."""

_new = object.__new__
_TOKENS = len(TOKEN_FIELDS)


def usage_row(usage: Usage | None) -> dict[str, Any]:
    """The usage columns of a message whose ``usage`` is this."""
    if usage is None:
        return NO_USAGE
    row = {column: getattr(usage, name) for name, column in USAGE_COLUMN_OF.items()}
    row["usage_model"] = usage.model
    return row


def usage_of(row: Sequence[Any], at: int) -> Usage:
    """The usage held by ``row`` from position ``at`` on (:data:`USAGE_FIELDS`); the
    values were checked when written, so the checks are not run again."""
    usage: Usage = _new(Usage)
    # int(): a driver may hand a BIGINT back as another integer type.
    values = {name: int(row[at + i]) for i, name in enumerate(TOKEN_FIELDS)}
    usage.__dict__.update(model=row[at + _TOKENS], **values)
    return usage
