"""The versioned JSON form of messages, for HTTP APIs and queues, and its JSON Schema.

:meth:`Message.to_dict <sqlmemory.types.Message.to_dict>` gives plain
``dict``/``list``/``str``/``int`` values that ``json.dumps`` accepts; bytes are base64 and
``recorded_at`` is ISO 8601 in UTC. Reading it back gives an equal message, key order of
every JSON value included. Malformed input raises
:class:`~sqlmemory.errors.InvalidMessageError` naming the field at fault; in a list, the
item's index too. :data:`MESSAGE_JSON_SCHEMA` describes what :func:`message_from_dict`
reads (every :func:`message_to_dict` output among it), for OpenAPI documents and
validators.

Examples:
    >>> from sqlmemory import Message
    >>> documents = messages_to_dicts([Message.user("hi")])
    >>> [m.text_content() for m in messages_from_dicts(documents)]
    ['hi']
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._wire_schema import build_message_schema
from sqlmemory.types.message import WIRE_VERSION, Message

__all__ = [
    "MESSAGE_JSON_SCHEMA",
    "WIRE_VERSION",
    "message_from_dict",
    "message_json_schema",
    "message_to_dict",
    "messages_from_dicts",
    "messages_to_dicts",
]


def message_to_dict(message: Message) -> dict[str, Any]:
    """The JSON-ready form of ``message``: :meth:`Message.to_dict`.

    Raises:
        TypeError: ``message`` is not a :class:`~sqlmemory.Message`.
    """
    if not isinstance(message, Message):
        raise TypeError(f"message is a {type(message).__name__}, not a Message")
    return message.to_dict()


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """A message from its JSON form: :meth:`Message.from_dict`."""
    return Message.from_dict(data)


def messages_to_dicts(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The JSON-ready form of each message.

    Raises:
        TypeError: ``messages`` is not an iterable of :class:`~sqlmemory.Message`.
    """
    if isinstance(messages, (str, bytes, Message)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be an iterable of Message, not {type(messages).__name__}")
    result = []
    for i, message in enumerate(messages):
        if not isinstance(message, Message):
            raise TypeError(f"messages[{i}] is a {type(message).__name__}, not a Message")
        result.append(message.to_dict())
    return result


def messages_from_dicts(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """The messages of a JSON array; errors name the item's index and the field.

    Raises:
        InvalidMessageError: ``items`` is not an array, or an item is malformed.
    """
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise InvalidMessageError(f"messages must be a JSON array, not {type(items).__name__}")
    result = []
    for i, item in enumerate(items):
        try:
            result.append(Message.from_dict(item))
        except InvalidMessageError as exc:
            raise InvalidMessageError(f"[{i}] {exc}") from None
    return result


MESSAGE_JSON_SCHEMA: dict[str, Any] = build_message_schema()
"""The JSON Schema (draft 2020-12) of one message in the wire form (plain ``dict`` and
``list`` values, as validators expect; do not change it: :func:`message_json_schema`
gives a copy to change).

Self-contained (no ``$ref``), so it can be placed anywhere in an OpenAPI document. It
accepts versions 1 and 2 and the fields :func:`message_from_dict` reads; checks that need
the bytes (an image's magic, base64 that decodes) are left to :func:`message_from_dict`.
"""


def message_json_schema() -> dict[str, Any]:
    """A fresh copy of :data:`MESSAGE_JSON_SCHEMA`, for a caller who adapts it.

    Examples:
        >>> schema = message_json_schema()
        >>> schema["required"], schema["properties"]["role"]["enum"][:2]
        (['role', 'content'], ['system', 'developer'])
    """
    return copy.deepcopy(MESSAGE_JSON_SCHEMA)
