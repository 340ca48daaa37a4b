"""The row of the commonest message, a text alone, built without the general encoder.

:func:`~sqlmemory.storage.sql.codec.encode_message` walks a message's blocks for its
block rows, its token estimate and its visible text, and spreads its usage columns: about
3 µs a message, a third of encoding a batch. A message of one text block without extras,
metadata, provider extras or usage has none of that to walk: its row is its id, role,
tool-call fields and text, the estimate is 4 + the text's UTF-8 bytes // 4, and its
visible text is the text (none for instructions or blank text).

Such a message is encoded as its :data:`PLAIN_COLUMNS` alone, a tuple
(:func:`plain_values`): SQLite inserts a batch of them from the tuples
(:mod:`~sqlmemory.storage.sql.plain_inserts`), and :func:`plain_row` makes the row dict
the other writes take. ``tests/unit/test_plain_rows.py`` holds that row to the general
encoder's for any such message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlmemory.policy.tokens import TOKENS_PER_MESSAGE, utf8_size
from sqlmemory.storage.search_rules import HIDDEN_ROLES, MAX_SEARCH_TEXT
from sqlmemory.storage.sql.base64_text import FLAG
from sqlmemory.storage.sql.usage_rows import NO_USAGE
from sqlmemory.types import Message
from sqlmemory.types._canonical import text_alone

__all__ = ["PLAIN_COLUMNS", "PLAIN_DIGEST", "plain_row", "plain_values"]

PLAIN_COLUMNS = (
    "message_id",
    "role",
    "tool_call_id",
    "text",
    "is_error",
    "digest",
    "tokens",
    "search_text",
)
"""The columns of a text alone's row that vary from message to message, in the order of
:func:`plain_values`; the rest are the same for every text alone (:func:`plain_row`)."""
PLAIN_DIGEST = PLAIN_COLUMNS.index("digest")
"""The position of the digest in :func:`plain_values`."""


def plain_values(
    message: Message, digest: Callable[[Message], str], max_tokens: int
) -> tuple[Any, ...] | None:
    """The :data:`PLAIN_COLUMNS` of ``message`` when it is a text alone (else ``None``),
    its ``digest`` from the given function and its estimate at most ``max_tokens``."""
    block = text_alone(message)
    if block is None:
        return None
    text = block.text
    role = message.role._value_  # Enum.value is a property: four times slower
    # not text.strip(), without the copy: both mean "empty or all whitespace"
    shown = None if role in HIDDEN_ROLES or not text or text.isspace() else text
    return (
        message.id,
        role,
        message.tool_call_id,
        text,
        message.is_error,
        digest(message),
        min(TOKENS_PER_MESSAGE + utf8_size(text) // 4, max_tokens),
        None if shown is None else shown[:MAX_SEARCH_TEXT].replace("\x00", " "),
    )


def plain_row(values: tuple[Any, ...]) -> dict[str, Any]:
    """The message row of a text alone, from its :func:`plain_values`."""
    message_id, role, tool_call_id, text, is_error, digest, tokens, search_text = values
    return {
        "message_id": message_id,
        "role": role,
        "tool_call_id": tool_call_id,
        "text": text,
        "n_blocks": 0,
        "call_ids": None,
        "metadata_json": None,
        "extras_json": None,
        "is_error": is_error,
        "digest": digest,
        "tokens": tokens,
        FLAG: False,
        **NO_USAGE,
        "search_text": search_text,
    }
