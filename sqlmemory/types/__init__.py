"""The message model: immutable values, validated when they are built.

Pure Python (Pillow is used only to read image headers); no SQLAlchemy. Blocks live in
:mod:`sqlmemory.types.blocks`, messages in :mod:`sqlmemory.types.message`; everything
public is exported here. The contract is ``docs/contract/messages.md``.
"""

from sqlmemory.types.blocks import (
    DOCUMENT_MEDIA_TYPES,
    IMAGE_MEDIA_TYPES,
    Block,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.types.message import WIRE_VERSION, Content, Message, Role, utc_now

__all__ = [
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_MEDIA_TYPES",
    "WIRE_VERSION",
    "Block",
    "Content",
    "DocumentBlock",
    "ImageBlock",
    "Message",
    "Role",
    "TextBlock",
    "ThinkingBlock",
    "ToolCall",
    "utc_now",
]
