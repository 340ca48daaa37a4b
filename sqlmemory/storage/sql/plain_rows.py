"""The row of the commonest message, a text alone, built without the general encoder.

:func:`~sqlmemory.storage.sql.codec.encode_message` walks a message's blocks for its
block rows, its token estimate and its visible text, and spreads its usage columns: about
3 µs a message, a third of encoding a batch. A message of one text block without extras,
metadata, provider extras or usage has none of that to walk: its row is its id, role,
tool-call fields and text, the estimate is 4 + the text's UTF-8 bytes // 4, and its
visible text is the text (none for instructions or blank text). ``tests/unit/
test_plain_rows.py`` holds it to the general encoder's row for any such message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlmemory.policy.tokens import TOKENS_PER_MESSAGE
from sqlmemory.storage.search_rules import HIDDEN_ROLES, MAX_SEARCH_TEXT
from sqlmemory.storage.sql.base64_text import FLAG
from sqlmemory.storage.sql.usage_rows import NO_USAGE
from sqlmemory.types import Message
from sqlmemory.types._canonical import text_alone

__all__ = ["plain_row"]


def plain_row(
    message: Message, digest: Callable[[Message], str], max_tokens: int
) -> dict[str, Any] | None:
    """The message row of ``message`` when it is a text alone (else ``None``), its
    ``digest`` from the given function and its estimate at most ``max_tokens``."""
    block = text_alone(message)
    if block is None:
        return None
    text = block.text
    role = message.role.value
    shown = None if role in HIDDEN_ROLES or not text.strip() else text
    return {
        "message_id": message.id,
        "role": role,
        "tool_call_id": message.tool_call_id,
        "text": text,
        "n_blocks": 0,
        "call_ids": None,
        "metadata_json": None,
        "extras_json": None,
        "is_error": message.is_error,
        "digest": digest(message),
        "tokens": min(TOKENS_PER_MESSAGE + len(text.encode("utf-8")) // 4, max_tokens),
        FLAG: False,
        **NO_USAGE,
        "search_text": None if shown is None else shown[:MAX_SEARCH_TEXT].replace("\x00", " "),
    }
