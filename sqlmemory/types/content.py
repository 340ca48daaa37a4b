"""The union of every content block, and reading a block's wire form by its ``kind``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Union

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import required_field, shown
from sqlmemory.types.blocks import (
    DocumentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
)
from sqlmemory.types.calls import OpaqueBlock, ToolCall

__all__ = ["BLOCK_KINDS", "BLOCK_TYPES", "Block", "block_from_dict"]

Block = Union[  # noqa: UP007 - runtime alias on 3.10
    TextBlock,
    ImageBlock,
    DocumentBlock,
    ThinkingBlock,
    RedactedThinkingBlock,
    ToolCall,
    OpaqueBlock,
]
"""Any content block."""
BLOCK_TYPES: tuple[type[Block], ...] = (
    TextBlock,
    ImageBlock,
    DocumentBlock,
    ThinkingBlock,
    RedactedThinkingBlock,
    ToolCall,
    OpaqueBlock,
)
_BLOCKS_BY_KIND: dict[str, type[Block]] = {cls.kind: cls for cls in BLOCK_TYPES}
BLOCK_KINDS: tuple[str, ...] = tuple(_BLOCKS_BY_KIND)
"""The ``kind`` of each block class: ``text``, ``image``, ``document``, ``thinking``,
``redacted_thinking``, ``tool_call``, ``opaque``."""


def block_from_dict(data: Any, where: str = "block") -> Block:
    """The block of a wire form, by its ``kind``; errors name the field at fault."""
    if not isinstance(data, Mapping):
        raise InvalidMessageError(f"{where} must be an object")
    kind = required_field(data, "kind", where, str)
    cls = _BLOCKS_BY_KIND.get(kind)
    if cls is None:
        raise InvalidMessageError(f"{where}.kind {shown(kind)} is not a block kind")
    try:
        return cls.from_dict(data, where)
    except InvalidMessageError as exc:
        if str(exc).startswith(where):
            raise
        raise InvalidMessageError(f"{where}: {exc}") from None
