"""A message's content as its constructor takes it: text, blocks and tool calls made into
one tuple of blocks; the ids of the calls that tuple makes; and how the canonical form
names the bytes of its images and documents.

Pure Python, no SQLAlchemy; used by :class:`~sqlmemory.types.message.Message`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types.blocks import DocumentBlock, ImageBlock, TextBlock, data_sha256
from sqlmemory.types.calls import OpaqueBlock, ToolCall
from sqlmemory.types.content import BLOCK_TYPES, Block

__all__ = ["call_ids", "sha_reference", "to_blocks", "with_calls"]

_EXACT_BLOCKS = frozenset(BLOCK_TYPES)


def to_blocks(value: object, what: str) -> tuple[Block, ...]:
    """``value`` (``None``, a ``str``, a block, or a sequence of them) as blocks.

    Examples:
        >>> to_blocks(["hi", TextBlock("there")], "Message.content")
        ... # doctest: +ELLIPSIS
        (TextBlock(text='hi', ...), TextBlock(text='there', ...))

    Raises:
        InvalidMessageError: ``value`` is none of those; the message starts with ``what``.
    """
    if value is None:
        return ()
    kind = type(value)
    sequence: Any = value
    if kind is list or kind is tuple:
        if all(type(item) in _EXACT_BLOCKS for item in sequence):  # the converters' case
            return tuple(sequence)
    elif isinstance(value, str):
        return (TextBlock(value),)
    elif isinstance(value, BLOCK_TYPES):
        return (value,)
    elif isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise InvalidMessageError(f"{what} must be a str, a block or a sequence of them")
    blocks: list[Block] = []
    for item in sequence:
        if isinstance(item, str):
            blocks.append(TextBlock(item))
        elif isinstance(item, BLOCK_TYPES):
            blocks.append(item)
        else:
            raise InvalidMessageError(f"{what} holds a {type(item).__name__}, which is no block")
    return tuple(blocks)


def with_calls(content: tuple[Block, ...], tool_calls: object) -> tuple[Block, ...]:
    """``content`` followed by the ``tool_calls`` it does not hold already."""
    if tool_calls == () and type(tool_calls) is tuple:
        return content
    if isinstance(tool_calls, (str, bytes, Mapping)) or not isinstance(tool_calls, Iterable):
        raise InvalidMessageError("Message.tool_calls must be a sequence of ToolCall")
    calls = tuple(tool_calls)
    if not calls:
        return content
    if not all(isinstance(call, ToolCall) for call in calls):
        raise InvalidMessageError("Message.tool_calls must hold ToolCall values only")
    # A call already in the content is not added twice: dataclasses.replace() and copies
    # hand a message's own tool_calls back with its content.
    return content + tuple(call for call in calls if call not in content)


def call_ids(content: tuple[Block, ...]) -> tuple[str, ...]:
    """The ids of the calls ``content`` makes: its tool calls' ids, and the ``call_id`` of
    its opaque items, in order."""
    ids: list[str] = []
    for block in content:
        kind = type(block)
        if kind is ToolCall:
            ids.append(block.id)  # type: ignore[union-attr]
        elif kind is OpaqueBlock and block.call_id is not None:  # type: ignore[union-attr]
            ids.append(block.call_id)  # type: ignore[union-attr]
    return tuple(ids)


def sha_reference(block: ImageBlock | DocumentBlock) -> str:
    """How the canonical form shows a block's bytes: ``"sha256:<hex>"`` of them."""
    return "sha256:" + data_sha256(block)
