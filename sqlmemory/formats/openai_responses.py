"""OpenAI Responses API items to messages and back (``docs/providers.md``, OpenAI Responses).

Reading groups the items the way windows need them: every user, system or developer
message item is a message; every tool output that names its call (``function_call_output``,
``computer_call_output``, ``mcp_approval_response``, ...) is a ``tool`` message; and the
run of items between them (the output items of one response: reasoning, text, function
calls, hosted tool calls) is ONE assistant message, so no window separates a reasoning
item from the call it led to. What an item holds beyond the blocks is its *shell*, kept
in the blocks' and messages' ``extras["openai_responses"]``; writing merges the blocks
back into their shells, so ``to_openai_responses(from_openai_responses(items)) == items``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlmemory._gc import gc_paused
from sqlmemory.formats._converting import OPENAI_RESPONSES, items_of, plain, warn_dropped
from sqlmemory.formats._responses_read import Reader
from sqlmemory.formats._responses_write import (
    assistant_items,
    foreign_call_ids,
    input_items,
    tool_items,
)
from sqlmemory.types import Message, Role

__all__ = ["from_openai_responses", "to_openai_responses"]


def from_openai_responses(items: Iterable[Any]) -> list[Message]:
    """Messages from OpenAI Responses input or output items.

    ``items`` is a request's ``input`` list, a ``response.output`` list, or a whole history;
    each item a dict or an SDK object (dumped with ``model_dump(mode="json",
    exclude_unset=True, by_alias=True)``: the fields the API sent, under their API names).
    User, system and developer message items become messages of that role; each tool
    output naming its call becomes a ``tool`` message; the items between them become one
    assistant message: reasoning as :class:`~sqlmemory.ThinkingBlock`, text and refusals
    as :class:`~sqlmemory.TextBlock`, function calls as :class:`~sqlmemory.ToolCall`
    (arguments text byte for byte), hosted tool items as :class:`~sqlmemory.OpaqueBlock`
    with provider ``"openai_responses"``, in their order.

    A whole ``Response`` (the SDK's object or its dict), alone or in the list, gives the
    messages of its ``output``, which end there (a response is a turn), the last of them
    with the response's ``model`` and token counts in ``usage`` (``docs/providers.md``).

    Examples:
        >>> messages = from_openai_responses([
        ...     {"role": "user", "content": "6 x 7?"},
        ...     {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        ...     {"type": "function_call", "call_id": "c1", "name": "mul", "arguments": '{"a":6}'},
        ...     {"type": "function_call_output", "call_id": "c1", "output": "42"},
        ... ])
        >>> [(m.role.value, [b.kind for b in m.content]) for m in messages]
        [('user', ['text']), ('assistant', ['thinking', 'tool_call']), ('tool', ['text'])]
        >>> to_openai_responses(messages)[2]
        {'type': 'function_call', 'call_id': 'c1', 'name': 'mul', 'arguments': '{"a":6}'}

    Raises:
        ConversionError: an item is malformed (no object, no ``type``, a field of the wrong
            type, a value JSON cannot hold); the message names its index and field.
    """
    if callable(getattr(items, "model_dump", None)) or _is_response(items):
        # A whole Response (a pydantic model iterates over its fields: never as items).
        items = [items]
    reader = Reader()
    for index, item in enumerate(items_of(items, "from_openai_responses: items")):
        data = plain(item, index)
        if _is_response(data):
            reader.read_response(data, index)
        else:
            reader.read(data, index)
    return reader.finish()


def _is_response(data: object) -> bool:
    """Whether ``data`` is a whole ``Response`` (its dict), not an item."""
    return isinstance(data, Mapping) and data.get("object") == "response" and "type" not in data


def to_openai_responses(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The OpenAI Responses ``input`` items of ``messages``.

    Items read by :func:`from_openai_responses` come back exactly (key order, ids,
    arguments text, reasoning, hosted items). Other messages are written in the forms the
    API takes: ``{"role": ..., "content": ...}`` messages (``document`` as ``user``),
    ``function_call`` and ``function_call_output`` items. What the Responses API cannot
    carry (thinking without a Responses reasoning item, redacted thinking, other
    providers' opaque items, a tool result's ``is_error`` flag) is dropped with a
    :class:`~sqlmemory.formats.DroppedContentWarning`.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> to_openai_responses([
        ...     Message.developer("Be brief."),
        ...     Message.assistant(tool_calls=[ToolCall("c1", "mul", {"a": 6, "b": 7})]),
        ...     Message.tool("c1", "42"),
        ... ])  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'developer', 'content': 'Be brief.'},
         {'type': 'function_call', 'call_id': 'c1', 'name': 'mul', 'arguments': '{"a":6,"b":7}'},
         {'type': 'function_call_output', 'call_id': 'c1', 'output': '42'}]

    Raises:
        TypeError: ``messages`` is not a list of :class:`~sqlmemory.Message`.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be a list of Message, not {type(messages).__name__}")
    out: list[dict[str, Any]] = []
    dropped_calls: set[str] = set()
    with gc_paused():  # a whole history's items are many containers, none garbage
        for index, message in enumerate(messages):
            if not isinstance(message, Message):
                raise TypeError(f"messages[{index}] is a {type(message).__name__}, not a Message")
            if message.role is Role.ASSISTANT:
                dropped_calls.update(foreign_call_ids(message.content))
                out += assistant_items(message.content)
            elif message.tool_call_id in dropped_calls:
                # Its call, another provider's item, is dropped: an output without it is
                # refused.
                what = (
                    f"the result of {message.tool_call_id!r} (its call is another provider's item)"
                )
                warn_dropped(what, OPENAI_RESPONSES, stacklevel=3)
            elif message.role is Role.TOOL:
                out += tool_items(message)
            else:
                out += input_items(message)
    return out
