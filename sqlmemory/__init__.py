"""sqlmemory: short-term conversation memory for LLM agents, persisted in SQL."""

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
    AsyncSqlStorage,
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
