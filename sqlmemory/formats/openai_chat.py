"""OpenAI Chat Completions: message params and replies to messages, and back.

Pure Python; the ``openai`` package is never imported. What each message key and content
part becomes, and what is left out when converting messages from another format, is in
``docs/providers.md`` (OpenAI Chat Completions).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from sqlmemory.formats._converting import OPENAI_CHAT, DroppedContentWarning, items_of
from sqlmemory.formats._openai_chat_read import Reader
from sqlmemory.formats._openai_chat_write import Writer
from sqlmemory.types import Message

__all__ = ["from_openai_chat", "to_openai_chat"]


def from_openai_chat(messages: Iterable[Any]) -> list[Message]:
    """Messages of Chat Completions message params or replies, one message each.

    Takes the dicts of a request's ``messages`` and the SDK's objects alike (anything with
    ``model_dump()``, such as ``completion.choices[0].message``), so storing a reply is
    one line. A whole ``ChatCompletion`` (or its dict) of one choice gives its message
    with the completion's ``model`` and token counts in ``usage`` (``docs/providers.md``).
    Tool-call arguments are kept as the exact text the model sent; a message's
    ``name``, unknown keys and the key order are kept in ``extras["openai_chat"]``, so
    :func:`to_openai_chat` gives the same params back.

    Examples:
        >>> history = from_openai_chat([
        ...     {"role": "developer", "content": "Answer briefly."},
        ...     {"role": "user", "content": "6 x 7?", "name": "ada"},
        ...     {"role": "assistant", "content": None, "tool_calls": [{
        ...         "id": "call_1", "type": "function",
        ...         "function": {"name": "multiply", "arguments": '{"a": 6, "b": 7}'},
        ...     }]},
        ...     {"role": "tool", "tool_call_id": "call_1", "content": "42"},
        ... ])
        >>> [m.role.value for m in history]
        ['developer', 'user', 'assistant', 'tool']
        >>> history[2].tool_calls[0].arguments_text
        '{"a": 6, "b": 7}'

    Args:
        messages: a list of message params (or SDK message objects).

    Returns:
        One :class:`~sqlmemory.Message` per item, in order.

        >>> reply = {"object": "chat.completion", "model": "gpt-4o", "choices": [
        ...     {"index": 0, "message": {"role": "assistant", "content": "42."}}],
        ...     "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23}}
        >>> from_openai_chat([reply])[0].usage.output_tokens
        3

    Raises:
        ConversionError: an item is malformed, or a completion holds more than one
            choice (``choices``); the message names its index and field.
    """
    reader = Reader()
    return [
        reader.message(item, index) for index, item in enumerate(items_of(messages, "messages"))
    ]


def to_openai_chat(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """Chat Completions message params of messages, to pass as ``messages=``.

    Messages read by :func:`from_openai_chat` come back exactly as they were read. Messages
    from another format become plain params: ``developer`` stays ``developer``, a document
    message is sent as ``user``, tool calls go to ``tool_calls``. What Chat cannot carry
    (thinking, another format's opaque items and the results that answer them, images by
    file id, documents by URL, media outside user messages, a tool result's error flag) is
    left out with a :class:`~sqlmemory.formats.DroppedContentWarning`; a message left
    with nothing is left out too.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> to_openai_chat([
        ...     Message.user("6 x 7?"),
        ...     Message.assistant(tool_calls=[ToolCall("call_1", "multiply", {"a": 6, "b": 7})]),
        ...     Message.tool("call_1", "42"),
        ... ])  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'user', 'content': '6 x 7?'},
         {'role': 'assistant', 'tool_calls': [{'id': 'call_1', 'type': 'function',
           'function': {'name': 'multiply', 'arguments': '{"a":6,"b":7}'}}]},
         {'role': 'tool', 'tool_call_id': 'call_1', 'content': '42'}]

    Args:
        messages: the messages, for example a window of a stored history.

    Returns:
        A new list of plain ``dict`` params.

    Raises:
        TypeError: an item is not a :class:`~sqlmemory.Message`.
    """
    if isinstance(messages, (str, bytes, Message)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be an iterable of Message, not {type(messages).__name__}")
    writer = Writer()
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise TypeError(f"messages[{index}] is a {type(message).__name__}, not a Message")
        param = writer.message(message, index)
        if param is not None:
            out.append(param)
    for what in writer.dropped:
        warnings.warn(f"{what} dropped: {OPENAI_CHAT} cannot carry it", DroppedContentWarning, 2)
    return out
