"""Reading OpenAI Responses items into messages.

Every user, system or developer message item is a message; every tool output that names
its call is a ``tool`` message; the run of items between them (the output items of one
response) is ONE assistant message. What an item holds beyond its blocks is split off as
its *shell* (:mod:`sqlmemory.formats._shells`) and kept in ``extras["openai_responses"]``;
each item read is written back (:mod:`sqlmemory.formats._responses_write`) and kept whole,
as an :class:`~sqlmemory.types.OpaqueBlock`, when it would not come back exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import plain, where
from sqlmemory.formats._responses_parts import check_keys, part_to_block
from sqlmemory.formats._responses_write import (
    FMT,
    ITEM,
    SDK_CALL,
    SDK_MESSAGE,
    SDK_OUTPUT,
    SDK_REASONING,
    assistant_items,
    call_item,
    content_of,
    input_items,
    output_fields,
    own_of,
    reasoning_item,
    summary_fields,
    tool_items,
)
from sqlmemory.formats._shells import same, split
from sqlmemory.formats._usage_read import RESPONSES_USAGE, read_usage
from sqlmemory.types import (
    Block,
    Message,
    OpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.types._fields import shown
from sqlmemory.types._json import check_str

__all__ = ["Reader"]

_B = TypeVar("_B", bound=Block)

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


class Reader:
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

    def read_response(self, response: Mapping[str, Any], index: int) -> None:
        """The messages of a whole ``Response``'s output, its usage and model on the last
        (the output is a turn of its own: so a sum counts each response once)."""
        output = response.get("output")
        if not isinstance(output, list):
            raise ConversionError(f"{where(index, 'output')}: a response's output must be a list")

        def fail(field: str, why: str) -> ConversionError:
            return ConversionError(f"{where(index, field)}: {why}")

        usage = read_usage(response, RESPONSES_USAGE, fail)
        self._flush()
        before = len(self.messages)
        for item in output:
            self.read(plain(item, index), index)
        self._flush()
        if usage is not None and len(self.messages) > before:
            self.messages[-1] = dataclasses.replace(self.messages[-1], usage=usage)

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
        rendered = {"role": item["role"], "content": content_of(blocks, "input_text")}
        shell = split(item, rendered, SDK_MESSAGE)
        message = _message(role, blocks, index, extras={FMT: shell} if shell else None)
        if same(input_items(message), [item]):
            return message
    return _message(role, [_opaque(item, index)], index)


def _assistant_message(item: Mapping[str, Any], index: int) -> list[Block]:
    blocks = _content(item, "content", index)
    if _says_something(blocks):
        rendered = {"role": "assistant", "content": content_of(blocks, "output_text")}
        shell = split(item, rendered, SDK_MESSAGE)
        blocks[0] = _with_own(blocks[0], {**own_of(blocks[0].extras), ITEM: shell}, index)
        if same(assistant_items(blocks), [item]):
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
    # What the writer's _call_fields() gives, known before the call is built (built once).
    rendered = {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}
    shell = split(item, rendered, SDK_CALL)
    try:
        call = ToolCall(call_id, name, arguments_text=arguments, extras={FMT: shell})
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index)}: {exc}") from None
    if same(call_item(call), item):
        return call
    return _opaque(item, index, call_id)


def _reasoning(item: Mapping[str, Any], index: int) -> ThinkingBlock | None:
    text = _summary_text(item, index)
    try:
        check_str(text, "ThinkingBlock.thinking")
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index, 'summary')}: {exc}") from None
    # What the writer's _reasoning_fields() gives, known before the block is built (built once).
    shell = split(item, summary_fields(text), SDK_REASONING)
    try:
        block = ThinkingBlock(text, extras={FMT: shell})
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index)}: {exc}") from None
    return block if same(reasoning_item(block), item) else None


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
        rendered = output_fields(answered, blocks)
        shell = split(item, rendered, SDK_OUTPUT)
        extras = {FMT: shell} if shell else None
        message = _message(Role.TOOL, blocks, index, tool_call_id=answered, extras=extras)
        if same(tool_items(message), [item]):
            return message
    return _message(Role.TOOL, [_opaque(item, index)], index, tool_call_id=answered)
