"""The canonical form of the commonest messages, written without ``json.dumps`` of the whole.

``canonical_json`` dumps the wire form of a message (a dict of nine keys, its blocks'
dicts within) to find "the same message" by its hash: about 5 µs a message, half of what
encoding a message for SQL costs. A message of one text block without extras, metadata,
provider extras or usage, which is most of a conversation, has a form that is a fixed
frame around its id, role, text and tool-call fields: those strings are escaped by the
JSON encoder's own function (``ensure_ascii=False``, as ``json.dumps`` escapes them;
a text with nothing to escape is only quoted: :func:`json_string`) and spliced in.
``tests/unit/test_canonical.py`` checks the two agree on any such message.

An agent's reply that calls tools (texts and tool calls, none with extras, and no
metadata, provider extras or usage) is written the same way: the frame of each block
around its escaped strings, a call's arguments by :func:`~sqlmemory.types._json.dump_json`,
which is how the whole form writes them (:func:`simple_canonical`, about 2 µs where the
whole form took 5).
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

from sqlmemory.types._json import dump_json
from sqlmemory.types.blocks import TextBlock
from sqlmemory.types.calls import ToolCall

__all__ = [
    "json_string",
    "plain_canonical",
    "simple_canonical",
    "text_alone",
    "texts_and_calls",
]


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
    return _frame(message, version, _text_form(block.text))


def _frame(message: Any, version: int, content: str) -> str:
    """The canonical JSON of ``message`` without metadata, provider extras or usage,
    around the forms of its blocks (``content``, comma separated)."""
    call = message.tool_call_id
    return (
        f'{{"v":{version},"id":{encode_basestring(message.id)},"role":"{message.role._value_}",'
        f'"content":[{content}],'
        f'"tool_call_id":{"null" if call is None else encode_basestring(call)},'
        f'"is_error":{"true" if message.is_error else "false"},"metadata":{{}},"extras":{{}}}}'
    )


def _text_form(text: str) -> str:
    """A text block's wire form without extras."""
    return f'{{"kind":"text","text":{json_string(text)}}}'


def json_string(text: str) -> str:
    """``text`` as ``json.dumps(text, ensure_ascii=False)`` writes it.

    The encoder escapes ``"``, ``\\`` and the characters below U+0020 and nothing else;
    a text without them (two ``in`` tests and ``str.isprintable``, which is false for
    every control character) is its quoted self: half the time of the encoder's own
    escaping for a text of a few hundred characters.
    """
    if '"' in text or "\\" in text or not text.isprintable():
        return encode_basestring(text)
    return f'"{text}"'


def _call_form(call: ToolCall) -> str:
    """A tool call's wire form without extras, as the whole form writes it."""
    name = encode_basestring(call.name)
    form = f'{{"kind":"tool_call","id":{encode_basestring(call.id)},"name":{name}'
    if call.arguments is not None:
        form += ',"arguments":' + dump_json(call.arguments)
    if call.arguments_text is not None:
        form += ',"arguments_text":' + encode_basestring(call.arguments_text)
    return form + "}"


def texts_and_calls(message: Any) -> tuple[TextBlock | ToolCall, ...] | None:
    """The blocks of a message made of texts and tool calls without extras, with no
    metadata, provider extras or usage (else ``None``)."""
    if message.metadata or message.extras or message.usage is not None:
        return None
    content = message.content
    for block in content:
        if block.extras or (type(block) is not TextBlock and type(block) is not ToolCall):
            return None
    return content  # type: ignore[no-any-return]


def simple_canonical(message: Any, version: int) -> str | None:
    """``message``'s canonical JSON when it is made of :func:`texts_and_calls` (else
    ``None``)."""
    content = texts_and_calls(message)
    if content is None:
        return None
    forms = [
        _text_form(block.text) if type(block) is TextBlock else _call_form(block)  # type: ignore[arg-type]
        for block in content
    ]
    return _frame(message, version, ",".join(forms))
