"""Anthropic Messages: ``from_anthropic`` and ``to_anthropic``.

Pure Python; the ``anthropic`` SDK is never imported. A turn of the Messages API becomes
one :class:`~sqlmemory.types.Message`, except a user turn holding ``tool_result`` blocks,
which becomes one tool message per result (and a user message per run of other blocks)
and comes back as one turn. Block fields with no common meaning (``cache_control``,
``citations``, ``caller``, ...) are kept in the block's ``extras["anthropic"]``; the keys
of that mapping that start with ``_`` are this converter's notes on the form (key order,
string or list content, turn boundaries), so that ``to_anthropic(from_anthropic(x))``
gives ``x`` back exactly. The contract is ``docs/providers.md``.

"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlmemory.errors import ConversionError
from sqlmemory.formats._anthropic_read import read_messages
from sqlmemory.formats._anthropic_write import write_request
from sqlmemory.formats._converting import items_of, where
from sqlmemory.types import Message

__all__ = ["from_anthropic", "to_anthropic"]


def from_anthropic(messages: Iterable[Any] | Any, system: Any = None) -> list[Message]:
    """Messages from Anthropic Messages params, or from a response (``Message``).

    ``messages`` is the ``messages`` list of a request (dicts or SDK objects), a response
    object (``client.messages.create(...)``), or a list mixing both; ``system`` the
    request's ``system`` (a string or a list of text blocks). A response becomes one
    assistant message whose ``id`` is the response's id; a user turn holding
    ``tool_result`` blocks becomes one tool message per result. An empty ``system`` is no
    system prompt, and a response with no content gives no message.

    Examples:
        >>> history = from_anthropic(
        ...     [
        ...         {"role": "user", "content": "What is 6 x 7?"},
        ...         {"role": "assistant", "content": [
        ...             {"type": "tool_use", "id": "toolu_1", "name": "multiply",
        ...              "input": {"a": 6, "b": 7}}]},
        ...         {"role": "user", "content": [
        ...             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}]},
        ...     ],
        ...     system="Answer briefly.",
        ... )
        >>> [m.role.value for m in history]
        ['system', 'user', 'assistant', 'tool']
        >>> history[2].tool_calls[0].arguments
        FrozenDict({'a': 6, 'b': 7})

    Raises:
        ConversionError: an item is malformed; the message names its index and field
            (``item 2: content[0].tool_use_id: ...``), or ``system``.
    """
    if not isinstance(messages, (Mapping, list, tuple)) and callable(
        getattr(messages, "model_dump", None)
    ):
        messages = [messages]
    return read_messages(items_of(messages, "messages"), system)


def to_anthropic(messages: Iterable[Message]) -> dict[str, Any]:
    """The ``system`` and ``messages`` of an Anthropic request, to splat into ``create``.

    Leading system and developer messages become ``system`` (a string for one plain text,
    else a list of text blocks); ``"system"`` is left out when there is none. Tool
    messages that follow one another, and the user text after them, form one user turn,
    its ``tool_result`` blocks first. What Anthropic cannot carry (thinking signed by
    another provider or unsigned, another format's opaque items, non-text system content,
    a tool result that answers no call of the assistant turn right before it, assistant
    messages and tool results before the first user turn, a text of whitespace only) is
    dropped with a :class:`~sqlmemory.formats.DroppedContentWarning`; an empty text is
    left out silently.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> request = to_anthropic([
        ...     Message.system("Answer briefly."),
        ...     Message.user("What is 6 x 7?"),
        ...     Message.assistant(tool_calls=[ToolCall("toolu_1", "multiply", {"a": 6, "b": 7})]),
        ...     Message.tool("toolu_1", "42"),
        ... ])
        >>> request["system"]
        'Answer briefly.'
        >>> request["messages"][1:]  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'toolu_1',
          'name': 'multiply', 'input': {'a': 6, 'b': 7}}]},
         {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_1',
          'content': '42'}]}]

    Raises:
        ConversionError: an item of ``messages`` is not a :class:`~sqlmemory.types.Message`.
    """
    history = items_of(messages, "messages")
    for index, message in enumerate(history):
        if not isinstance(message, Message):
            raise ConversionError(
                f"{where(index)}: expected a Message, got {type(message).__name__}"
            )
    return write_request(history)
