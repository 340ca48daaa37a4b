"""The canonical form of the commonest message, a text alone, written without ``json.dumps``.

``canonical_json`` dumps the wire form of a message (a dict of nine keys, its blocks'
dicts within) to find "the same message" by its hash: about 5 µs a message, half of what
encoding a message for SQL costs. A message of one text block without extras, metadata,
provider extras or usage, which is most of a conversation, has a form that is a fixed
frame around its id, role, text and tool-call fields: those strings are escaped by the
JSON encoder's own function (``ensure_ascii=False``, as ``json.dumps`` escapes them) and
spliced in. ``tests/unit/test_canonical.py`` checks the two agree on any such message.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

from sqlmemory.types.blocks import TextBlock

__all__ = ["plain_canonical", "text_alone"]


def text_alone(message: Any) -> TextBlock | None:
    """The text block of a message that is a text alone: one text block without extras,
    and no metadata, provider extras or usage (else ``None``)."""
    content = message.content
    if len(content) != 1 or message.metadata or message.extras or message.usage is not None:
        return None
    block = content[0]
    return block if type(block) is TextBlock and not block.extras else None


def plain_canonical(message: Any, version: int) -> str | None:
    """``message``'s canonical JSON when it is a text alone (else ``None``)."""
    block = text_alone(message)
    if block is None:
        return None
    call = message.tool_call_id
    return (
        f'{{"v":{version},"id":{encode_basestring(message.id)},"role":"{message.role._value_}",'
        f'"content":[{{"kind":"text","text":{encode_basestring(block.text)}}}],'
        f'"tool_call_id":{"null" if call is None else encode_basestring(call)},'
        f'"is_error":{"true" if message.is_error else "false"},"metadata":{{}},"extras":{{}}}}'
    )
