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

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

from sqlmemory._gc import gc_paused
from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import (
    OPENAI_RESPONSES,
    format_extras,
    items_of,
    plain,
    warn_dropped,
    where,
)
from sqlmemory.formats._responses_parts import PART, block_to_part, check_keys, part_to_block
from sqlmemory.formats._shells import merge, same, split
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.types._fields import shown
from sqlmemory.types._json import EMPTY, FrozenDict, check_str, thaw_json

__all__ = ["from_openai_responses", "to_openai_responses"]

FMT = OPENAI_RESPONSES
_B = TypeVar("_B", bound=Block)
ITEM = "item"
"""The key of a block's own extras holding the shell of the message item it starts."""

_INPUT_ROLES = {"user": Role.USER, "system": Role.SYSTEM, "developer": Role.DEVELOPER}

# Items a later input item answers, and the field holding the id it is answered by.
_CALL_IDS = {
    "computer_call": "call_id",
    "local_shell_call": "call_id",
    "shell_call": "call_id",
    "apply_patch_call": "call_id",
    "custom_tool_call": "call_id",
    "tool_search_call": "call_id",
    "mcp_approval_request": "id",
}
# The answers: tool messages, and the field naming the call they answer.
_RESULT_IDS = {
    "function_call_output": "call_id",
    "computer_call_output": "call_id",
    "local_shell_call_output": "id",
    "shell_call_output": "call_id",
    "apply_patch_call_output": "call_id",
    "custom_tool_call_output": "call_id",
    "tool_search_output": "call_id",
    "mcp_approval_response": "approval_request_id",
}
# Tool search runs on OpenAI's side unless ``execution`` says the client runs it.
_CLIENT_EXECUTED = frozenset({"tool_search_call", "tool_search_output"})

# The field order of the SDK's models, which ``model_dump`` follows.
_SDK_MESSAGE = ("id", "content", "role", "status", "type", "phase")
_SDK_CALL = (
    "arguments",
    "call_id",
    "name",
    "type",
    "id",
    "async",
    "caller",
    "namespace",
    "status",
)
_SDK_OUTPUT = (
    "id",
    "output",
    "status",
    "type",
    "call_id",
    "caller",
    "created_by",
    "name",
    "namespace",
)
_SDK_REASONING = ("id", "summary", "type", "content", "encrypted_content", "status")


def _own(extras: Mapping[str, Any]) -> Mapping[str, Any]:
    own = extras.get(FMT)
    if type(own) is FrozenDict:
        return own
    return EMPTY if own is None else format_extras(extras, FMT)


# -- reading ------------------------------------------------------------------------------


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
    if callable(getattr(items, "model_dump", None)):
        # A pydantic model iterates over its fields: refuse it before it looks like items.
        raise ConversionError(
            "from_openai_responses: items must be a list of items (for a Response, pass "
            f"response.output), not {type(items).__name__}"
        )
    reader = _Reader()
    for index, item in enumerate(items_of(items, "from_openai_responses: items")):
        reader.read(plain(item, index), index)
    return reader.finish()


class _Reader:
    """Collects messages; the blocks of the open assistant message wait in ``group``."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.group: list[Block] = []
        self.start = 0

    def read(self, item: Any, index: int) -> None:
        if type(item) is not dict and not isinstance(item, Mapping):
            raise ConversionError(f"{where(index)}: expected an object")
        check_keys(item, index, "")
        kind = _kind(item, index)
        if kind == "message":
            role = item.get("role")
            if role == "assistant":
                self._add(_assistant_message(item, index), index)
                return
            if not isinstance(role, str) or role not in _INPUT_ROLES:
                raise ConversionError(
                    f"{where(index, 'role')}: {shown(role)} is not a message role"
                )
            self._flush()
            self.messages.append(_input_message(item, _INPUT_ROLES[role], index))
            return
        answered = _id_field(item, kind, _RESULT_IDS)
        if answered is not None:
            self._flush()
            self.messages.append(_result(item, kind, answered, index))
            return
        self._add([_output_block(item, kind, index)], index)

    def _add(self, blocks: list[Block], index: int) -> None:
        if not self.group:
            self.start = index
        self.group.extend(blocks)

    def _flush(self) -> None:
        if self.group:
            self.messages.append(_message(Role.ASSISTANT, self.group, self.start))
            self.group = []

    def finish(self) -> list[Message]:
        self._flush()
        return self.messages


def _kind(item: Mapping[str, Any], index: int) -> str:
    kind = item.get("type")
    if kind is None:
        if "role" in item:
            return "message"
        if "id" in item:
            return "item_reference"
        raise ConversionError(f"{where(index, 'type')}: missing")
    if not isinstance(kind, str):
        raise ConversionError(f"{where(index, 'type')}: expected a string")
    return kind


def _id_field(item: Mapping[str, Any], kind: str, fields: Mapping[str, str]) -> str | None:
    """The id by which ``item`` answers (or is answered), from ``fields``; ``None`` if none."""
    field = fields.get(kind)
    if field is None or (kind in _CLIENT_EXECUTED and item.get("execution") != "client"):
        return None
    value = item.get(field)
    return value if isinstance(value, str) else None


def _message(role: Role, content: Sequence[Block], index: int, **fields: Any) -> Message:
    try:
        return Message(role, content, **fields)
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index)}: {exc}") from None


def _opaque(item: Mapping[str, Any], index: int, call_id: str | None = None) -> OpaqueBlock:
    try:
        return OpaqueBlock(FMT, item, call_id=call_id)
    except InvalidMessageError as exc:
        field = "call_id" if call_id is not None and "call_id" in str(exc) else ""
        raise ConversionError(f"{where(index, field)}: {exc}") from None


def _with_own(block: _B, own: Mapping[str, Any], index: int) -> _B:
    extras = {**block.extras, FMT: own}
    try:
        if type(block) is TextBlock:  # dataclasses.replace() without its introspection
            return cast(_B, TextBlock(cast(TextBlock, block).text, extras=extras))
        return dataclasses.replace(block, extras=extras)
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index)}: {exc}") from None


def _string(item: Mapping[str, Any], key: str, index: int) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ConversionError(f"{where(index, key)}: expected a string")
    return value


def _content(item: Mapping[str, Any], key: str, index: int) -> list[Block]:
    """The blocks of a message's ``content`` or a tool output's ``output``."""
    value = item.get(key)
    if isinstance(value, str):
        try:
            return [TextBlock(value)]
        except InvalidMessageError as exc:
            raise ConversionError(f"{where(index, key)}: {exc}") from None
    if isinstance(value, Sequence):
        return [part_to_block(part, index, f"{key}[{i}]") for i, part in enumerate(value)]
    raise ConversionError(f"{where(index, key)}: expected a string or a list")


def _says_something(blocks: Sequence[Block]) -> bool:
    """Whether a message of ``blocks`` may exist: messages with no content or only empty
    text are refused by the model, so such an item is kept whole, as an opaque item."""
    return any(not isinstance(block, TextBlock) or block.text for block in blocks)


def _input_message(item: Mapping[str, Any], role: Role, index: int) -> Message:
    blocks = _content(item, "content", index)
    if _says_something(blocks):
        rendered = {"role": item["role"], "content": _content_of(blocks, "input_text")}
        shell = split(item, rendered, _SDK_MESSAGE)
        message = _message(role, blocks, index, extras={FMT: shell} if shell else None)
        if same(_input_items(message), [item]):
            return message
    return _message(role, [_opaque(item, index)], index)


def _assistant_message(item: Mapping[str, Any], index: int) -> list[Block]:
    blocks = _content(item, "content", index)
    if _says_something(blocks):
        rendered = {"role": "assistant", "content": _content_of(blocks, "output_text")}
        shell = split(item, rendered, _SDK_MESSAGE)
        blocks[0] = _with_own(blocks[0], {**_own(blocks[0].extras), ITEM: shell}, index)
        if same(_assistant_items(blocks), [item]):
            return blocks
    return [_opaque(item, index)]


def _output_block(item: Mapping[str, Any], kind: str, index: int) -> Block:
    if kind == "function_call":
        return _function_call(item, index)
    if kind == "reasoning":
        reasoning = _reasoning(item, index)
        if reasoning is not None:
            return reasoning
    return _opaque(item, index, _id_field(item, kind, _CALL_IDS))


def _function_call(item: Mapping[str, Any], index: int) -> Block:
    name, arguments = _string(item, "name", index), _string(item, "arguments", index)
    call_id = _string(item, "call_id", index)
    # What _call_fields() gives for the call, known before the call is built (built once).
    rendered = {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}
    shell = split(item, rendered, _SDK_CALL)
    try:
        call = ToolCall(call_id, name, arguments_text=arguments, extras={FMT: shell})
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index)}: {exc}") from None
    if same(_call_item(call), item):
        return call
    return _opaque(item, index, call_id)


def _reasoning(item: Mapping[str, Any], index: int) -> ThinkingBlock | None:
    text = _summary_text(item, index)
    try:
        check_str(text, "ThinkingBlock.thinking")
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index, 'summary')}: {exc}") from None
    # What _reasoning_fields() gives for the block, known before it is built (built once).
    shell = split(item, _summary_fields(text), _SDK_REASONING)
    try:
        block = ThinkingBlock(text, extras={FMT: shell})
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index)}: {exc}") from None
    return block if same(_reasoning_item(block), item) else None


def _summary_text(item: Mapping[str, Any], index: int) -> str:
    summary = item.get("summary")
    if not isinstance(summary, Sequence) or isinstance(summary, str):
        raise ConversionError(f"{where(index, 'summary')}: expected a list")
    texts = []
    for i, part in enumerate(summary):
        text = part.get("text") if isinstance(part, Mapping) else None
        if not isinstance(text, str):
            raise ConversionError(f"{where(index, f'summary[{i}].text')}: expected a string")
        texts.append(text)
    return "\n\n".join(texts)


def _result(item: Mapping[str, Any], kind: str, answered: str, index: int) -> Message:
    if kind == "function_call_output":
        blocks = _content(item, "output", index)
        rendered = _output_fields(answered, blocks)
        shell = split(item, rendered, _SDK_OUTPUT)
        extras = {FMT: shell} if shell else None
        message = _message(Role.TOOL, blocks, index, tool_call_id=answered, extras=extras)
        if same(_tool_items(message), [item]):
            return message
    return _message(Role.TOOL, [_opaque(item, index)], index, tool_call_id=answered)


# -- writing ------------------------------------------------------------------------------


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
                dropped_calls.update(_foreign_call_ids(message.content))
                out += _assistant_items(message.content)
            elif message.tool_call_id in dropped_calls:
                # Its call, another provider's item, is dropped: an output without it is
                # refused.
                what = (
                    f"the result of {message.tool_call_id!r} (its call is another provider's item)"
                )
                warn_dropped(what, FMT, stacklevel=3)
            elif message.role is Role.TOOL:
                out += _tool_items(message)
            else:
                out += _input_items(message)
    return out


def _foreign_call_ids(blocks: Iterable[Block]) -> set[str]:
    """The ids of calls that are other providers' opaque items (dropped here)."""
    return {
        block.call_id
        for block in blocks
        if isinstance(block, OpaqueBlock) and block.provider != FMT and block.call_id is not None
    }


def _drop(block: Block) -> None:
    if isinstance(block, OpaqueBlock):
        what = f"an opaque item of {block.provider}"
    elif isinstance(block, ThinkingBlock):
        what = "a thinking block that is no Responses reasoning item"
    else:
        what = f"a {block.kind} block"
    warn_dropped(what, FMT, stacklevel=5)


@dataclasses.dataclass
class _Unit:
    """A message item being written: its shell and its content blocks."""

    shell: Mapping[str, Any]
    blocks: list[Block]


def _is_item(block: Block) -> bool:
    """Whether ``block`` is a whole Responses item kept verbatim."""
    return (
        isinstance(block, OpaqueBlock) and block.provider == FMT and PART not in _own(block.extras)
    )


def _units(
    blocks: Iterable[Block], assistant: bool, shell: Mapping[str, Any]
) -> list[dict[str, Any] | _Unit]:
    """Items of ``blocks``: finished items, and message items whose parts are collected."""
    units: list[dict[str, Any] | _Unit] = []
    open_unit: _Unit | None = None
    for block in blocks:
        if assistant and type(block) is ToolCall:  # the usual case first: _whole_item's
            units.append(_call_item(block))
            open_unit = None
            continue
        own = _own(block.extras)
        item = _whole_item(block, assistant)
        if item is not None:
            units.append(item)
            open_unit = None
            continue
        if not isinstance(block, (TextBlock, ImageBlock, DocumentBlock, OpaqueBlock)) or (
            isinstance(block, OpaqueBlock) and block.provider != FMT
        ):
            _drop(block)
            continue
        lone_text = assistant and isinstance(block, TextBlock) and PART not in own
        if open_unit is None or ITEM in own or lone_text:
            item_shell = own.get(ITEM)
            open_unit = _Unit(item_shell if isinstance(item_shell, Mapping) else shell, [])
            shell = {}
            units.append(open_unit)
        open_unit.blocks.append(block)
        if lone_text:
            open_unit = None
    return units


def _whole_item(block: Block, assistant: bool) -> dict[str, Any] | None:
    if _is_item(block):
        payload: dict[str, Any] = thaw_json(block.payload)  # type: ignore[union-attr]
        return payload
    if assistant and isinstance(block, ToolCall):
        return _call_item(block)
    if assistant and isinstance(block, ThinkingBlock) and FMT in block.extras:
        return _reasoning_item(block)
    return None


def _render(units: list[dict[str, Any] | _Unit], role: str, text_type: str) -> list[Any]:
    return [
        unit
        if isinstance(unit, dict)
        else merge(
            unit.shell,
            {"role": role, "content": _content_of(unit.blocks, text_type)},
            _SDK_MESSAGE,
        )
        for unit in units
    ]


def _input_items(message: Message) -> list[dict[str, Any]]:
    role = Role.USER.value if message.role is Role.DOCUMENT else message.role.value
    content = message.content
    if (
        len(content) == 1
        and type(content[0]) is TextBlock
        and FMT not in content[0].extras
        and FMT not in message.extras
    ):
        # The usual case, what _units and _render make of it without their steps.
        return [{"role": role, "content": content[0].text}]
    units = _units(content, False, _own(message.extras))
    return _render(units, role, "input_text")


def _assistant_items(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    if len(blocks) == 1 and type(blocks[0]) is ToolCall:
        return [_call_item(blocks[0])]  # the usual case, as _units and _render write it
    return _render(_units(blocks, True, {}), "assistant", "output_text")


def _content_of(blocks: Sequence[Block], text_type: str) -> str | list[dict[str, Any]]:
    """A message's ``content`` or a tool output's ``output``: a string or content parts."""
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock) and PART not in _own(blocks[0].extras):
        return blocks[0].text
    parts = []
    for block in blocks:
        part = block_to_part(block, text_type)
        if part is None:
            _drop(block)
        else:
            parts.append(part)
    return parts


def _tool_items(message: Message) -> list[dict[str, Any]]:
    content = message.content
    if len(content) == 1 and _is_item(content[0]):
        payload: dict[str, Any] = thaw_json(content[0].payload)  # type: ignore[union-attr]
        return [payload]
    if message.is_error:
        warn_dropped("the is_error flag of a tool result", FMT, stacklevel=4)
    rendered = _output_fields(str(message.tool_call_id), content)
    return [merge(_own(message.extras), rendered, _SDK_OUTPUT)]


def _output_fields(call_id: str, blocks: Sequence[Block]) -> dict[str, Any]:
    output = _content_of(blocks, "input_text")
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _call_fields(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments_json,
    }


def _call_item(call: ToolCall) -> dict[str, Any]:
    return merge(_own(call.extras), _call_fields(call), _SDK_CALL)


def _reasoning_fields(block: ThinkingBlock) -> dict[str, Any]:
    return _summary_fields(block.thinking)


def _summary_fields(thinking: str) -> dict[str, Any]:
    texts = thinking.split("\n\n") if thinking else []
    summary = [{"text": text, "type": "summary_text"} for text in texts]
    return {"type": "reasoning", "summary": summary}


def _reasoning_item(block: ThinkingBlock) -> dict[str, Any]:
    return merge(_own(block.extras), _reasoning_fields(block), _SDK_REASONING)
