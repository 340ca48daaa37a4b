"""The message model: immutable values, validated when they are built.

Pure Python (Pillow is used only to read image headers); no SQLAlchemy. Blocks live in
:mod:`sqlmemory.types.blocks` (text, images, documents, thinking) and
:mod:`sqlmemory.types.calls` (tool calls, opaque provider items), messages in
:mod:`sqlmemory.types.message`; everything public is exported here. The contract is
``docs/contract/messages.md``.
"""

from sqlmemory.types._json import FrozenDict, FrozenList
from sqlmemory.types.blocks import (
    DOCUMENT_MEDIA_TYPES,
    IMAGE_DETAILS,
    IMAGE_MEDIA_TYPES,
    DocumentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
)
from sqlmemory.types.calls import OpaqueBlock, ToolCall
from sqlmemory.types.content import BLOCK_KINDS, Block
from sqlmemory.types.message import (
    WIRE_VERSION,
    Content,
    Message,
    Role,
    canonical_json,
    utc_now,
)
from sqlmemory.types.token_usage import Usage

__all__ = [
    "BLOCK_KINDS",
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_DETAILS",
    "IMAGE_MEDIA_TYPES",
    "WIRE_VERSION",
    "Block",
    "Content",
    "DocumentBlock",
    "FrozenDict",
    "FrozenList",
    "ImageBlock",
    "Message",
    "OpaqueBlock",
    "RedactedThinkingBlock",
    "Role",
    "TextBlock",
    "ThinkingBlock",
    "ToolCall",
    "Usage",
    "canonical_json",
    "utc_now",
]
