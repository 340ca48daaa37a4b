"""sqlmemory: short-term conversation memory for LLM agents, persisted in SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlmemory.errors import (
    BlobTooLargeError,
    DuplicateMessageError,
    InvalidMessageError,
    InvalidSessionIdError,
    SchemaError,
    SqlMemoryError,
    StorageError,
)
from sqlmemory.memory import AsyncShortTermMemory, ShortTermMemory
from sqlmemory.policy import (
    FixedWindow,
    NoOp,
    Policy,
    Tokenizer,
    TokenWindow,
    estimate_tokens,
    groups,
)
from sqlmemory.storage import (
    AsyncSessionView,
    AsyncStorage,
    InMemoryStorage,
    SessionView,
    SqlStorage,
    Storage,
)
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)

if TYPE_CHECKING:
    from sqlmemory.storage.aio import AsyncSqlStorage

__version__ = "0.1.0"

__all__ = [
    "AsyncSessionView",
    "AsyncShortTermMemory",
    "AsyncSqlStorage",
    "AsyncStorage",
    "BlobTooLargeError",
    "Block",
    "DocumentBlock",
    "DuplicateMessageError",
    "FixedWindow",
    "ImageBlock",
    "InMemoryStorage",
    "InvalidMessageError",
    "InvalidSessionIdError",
    "Message",
    "NoOp",
    "Policy",
    "Role",
    "SchemaError",
    "SessionView",
    "ShortTermMemory",
    "SqlMemoryError",
    "SqlStorage",
    "Storage",
    "StorageError",
    "TextBlock",
    "ThinkingBlock",
    "TokenWindow",
    "Tokenizer",
    "ToolCall",
    "__version__",
    "estimate_tokens",
    "groups",
]


def __getattr__(name: str) -> Any:
    # AsyncSqlStorage is loaded on first use, by sqlmemory.storage (it needs greenlet).
    if name == "AsyncSqlStorage":
        from sqlmemory import storage

        return storage.AsyncSqlStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
