"""Writing messages as OpenAI Responses input items.

An assistant message's blocks become items in their order: a block read from an item
(a call, a reasoning item, a message item's parts) is merged back into the *shell* kept
in its ``extras["openai_responses"]`` (:mod:`sqlmemory.formats._shells`), so it comes
back exactly; another becomes the plainest item of its kind. A tool message becomes its
output item; other messages become message items. What Responses cannot carry is left
out with a warning (``docs/providers.md``, OpenAI Responses). The SDK's field orders and
the keys of the shells, which reading uses to split an item, are defined here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlmemory.formats._converting import (
    OPENAI_RESPONSES,
    format_extras,
    warn_dropped,
)
from sqlmemory.formats._responses_parts import PART, block_to_part
from sqlmemory.formats._shells import merge
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
from sqlmemory.types._json import EMPTY, FrozenDict, thaw_json

__all__ = [
    "FMT",
    "ITEM",
    "SDK_CALL",
    "SDK_MESSAGE",
    "SDK_OUTPUT",
    "SDK_REASONING",
    "assistant_items",
    "call_item",
    "content_of",
    "foreign_call_ids",
    "input_items",
    "output_fields",
    "own_of",
    "reasoning_item",
    "summary_fields",
    "tool_items",
]

FMT = OPENAI_RESPONSES
ITEM = "item"
"""The key of a block's own extras holding the shell of the message item it starts."""

# The field order of the SDK's models, which ``model_dump`` follows.
SDK_MESSAGE = ("id", "content", "role", "status", "type", "phase")
SDK_CALL = (
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
SDK_OUTPUT = (
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
SDK_REASONING = ("id", "summary", "type", "content", "encrypted_content", "status")


def own_of(extras: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Responses part of ``extras``: a block's or message's shell and notes."""
    own = extras.get(FMT)
    if type(own) is FrozenDict:
        return own
    return EMPTY if own is None else format_extras(extras, FMT)


def foreign_call_ids(blocks: Iterable[Block]) -> set[str]:
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
        isinstance(block, OpaqueBlock)
        and block.provider == FMT
        and PART not in own_of(block.extras)
    )


def _units(
    blocks: Iterable[Block], assistant: bool, shell: Mapping[str, Any]
) -> list[dict[str, Any] | _Unit]:
    """Items of ``blocks``: finished items, and message items whose parts are collected."""
    units: list[dict[str, Any] | _Unit] = []
    open_unit: _Unit | None = None
    for block in blocks:
        if assistant and type(block) is ToolCall:  # the usual case first: _whole_item's
            units.append(call_item(block))
            open_unit = None
            continue
        own = own_of(block.extras)
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
        return call_item(block)
    if assistant and isinstance(block, ThinkingBlock) and FMT in block.extras:
        return reasoning_item(block)
    return None


def _render(units: list[dict[str, Any] | _Unit], role: str, text_type: str) -> list[Any]:
    return [
        unit
        if isinstance(unit, dict)
        else merge(
            unit.shell,
            {"role": role, "content": content_of(unit.blocks, text_type)},
            SDK_MESSAGE,
        )
        for unit in units
    ]


def input_items(message: Message) -> list[dict[str, Any]]:
    """The input items of a user, system, developer or document message."""
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
    units = _units(content, False, own_of(message.extras))
    return _render(units, role, "input_text")


def assistant_items(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """The items of an assistant message's blocks, in their order."""
    if len(blocks) == 1 and type(blocks[0]) is ToolCall:
        return [call_item(blocks[0])]  # the usual case, as _units and _render write it
    return _render(_units(blocks, True, {}), "assistant", "output_text")


def content_of(blocks: Sequence[Block], text_type: str) -> str | list[dict[str, Any]]:
    """A message's ``content`` or a tool output's ``output``: a string or content parts."""
    if (
        len(blocks) == 1
        and isinstance(blocks[0], TextBlock)
        and PART not in own_of(blocks[0].extras)
    ):
        return blocks[0].text
    parts = []
    for block in blocks:
        part = block_to_part(block, text_type)
        if part is None:
            _drop(block)
        else:
            parts.append(part)
    return parts


def tool_items(message: Message) -> list[dict[str, Any]]:
    """The items of a tool message: its output item, or the item it keeps whole."""
    content = message.content
    if len(content) == 1 and _is_item(content[0]):
        payload: dict[str, Any] = thaw_json(content[0].payload)  # type: ignore[union-attr]
        return [payload]
    if message.is_error:
        warn_dropped("the is_error flag of a tool result", FMT, stacklevel=4)
    rendered = output_fields(str(message.tool_call_id), content)
    return [merge(own_of(message.extras), rendered, SDK_OUTPUT)]


def output_fields(call_id: str, blocks: Sequence[Block]) -> dict[str, Any]:
    """The fields of a ``function_call_output`` rendered from a tool message."""
    output = content_of(blocks, "input_text")
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _call_fields(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments_json,
    }


def call_item(call: ToolCall) -> dict[str, Any]:
    """The ``function_call`` item of ``call``, merged into its shell."""
    return merge(own_of(call.extras), _call_fields(call), SDK_CALL)


def _reasoning_fields(block: ThinkingBlock) -> dict[str, Any]:
    return summary_fields(block.thinking)


def summary_fields(thinking: str) -> dict[str, Any]:
    """The fields of a reasoning item rendered from its summary text."""
    texts = thinking.split("\n\n") if thinking else []
    summary = [{"text": text, "type": "summary_text"} for text in texts]
    return {"type": "reasoning", "summary": summary}


def reasoning_item(block: ThinkingBlock) -> dict[str, Any]:
    """The ``reasoning`` item of ``block``, merged into its shell."""
    return merge(own_of(block.extras), _reasoning_fields(block), SDK_REASONING)
