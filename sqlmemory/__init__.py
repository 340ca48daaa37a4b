"""sqlmemory: short-term conversation memory for LLM agents, persisted in SQL.

Everything public is importable from here: the message model (:mod:`sqlmemory.types`),
the window policies (:mod:`sqlmemory.policy`), the storages (:mod:`sqlmemory.storage`),
the short-term memories and the errors (:mod:`sqlmemory.errors`). The guide and the
contract are in ``docs/``.

Examples:
    >>> from sqlmemory import FixedWindow, InMemoryStorage, Message
    >>> storage = InMemoryStorage()
    >>> storage.append("chat-1", Message.user("ping"), Message.assistant("pong"))
    >>> window = storage.load("chat-1", FixedWindow(1))
    >>> [m.text_content() for m in window]
    ['pong']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sqlmemory.errors import (
    BlobTooLargeError,
    ConflictError,
    ConversionError,
    DuplicateMessageError,
    InvalidMessageError,
    InvalidSessionIdError,
    MessageNotFoundError,
    SchemaError,
    SessionNotFoundError,
    SessionOwnerError,
    SqlMemoryError,
    StorageError,
)
from sqlmemory.formats import (
    DroppedContentWarning,
    from_anthropic,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
)
from sqlmemory.policy import (
    Entry,
    FixedWindow,
    NoOp,
    Policy,
    TailPolicy,
    Tokenizer,
    TokenWindow,
    estimate_tokens,
    groups,
)
from sqlmemory.types import (
    Block,
    DocumentBlock,
    FrozenDict,
    FrozenList,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    from sqlmemory.short_term import ShortTermMemory
    from sqlmemory.short_term_async import AsyncShortTermMemory
    from sqlmemory.storage import (
        AsyncSessionView,
        AsyncSqlStorage,
        AsyncStorage,
        InMemoryStorage,
        SearchHit,
        SearchPage,
        SessionInfo,
        SessionPage,
        SessionView,
        SqlStorage,
        Storage,
        UsageReport,
    )

# The storages are imported on first use: the message model and the policies are pure
# Python, and `import sqlmemory.policy` must not pull in SQLAlchemy.
_LAZY = {
    "AsyncSessionView": "sqlmemory.storage",
    "AsyncShortTermMemory": "sqlmemory.short_term_async",
    "AsyncSqlStorage": "sqlmemory.storage",
    "AsyncStorage": "sqlmemory.storage",
    "InMemoryStorage": "sqlmemory.storage",
    "SearchHit": "sqlmemory.storage",
    "SearchPage": "sqlmemory.storage",
    "SessionInfo": "sqlmemory.storage",
    "SessionPage": "sqlmemory.storage",
    "SessionView": "sqlmemory.storage",
    "ShortTermMemory": "sqlmemory.short_term",
    "SqlStorage": "sqlmemory.storage",
    "Storage": "sqlmemory.storage",
    "UsageReport": "sqlmemory.storage",
}

__version__ = "0.1.0"

__all__ = [
    "AsyncSessionView",
    "AsyncShortTermMemory",
    "AsyncSqlStorage",
    "AsyncStorage",
    "BlobTooLargeError",
    "Block",
    "ConflictError",
    "ConversionError",
    "DocumentBlock",
    "DroppedContentWarning",
    "DuplicateMessageError",
    "Entry",
    "FixedWindow",
    "FrozenDict",
    "FrozenList",
    "ImageBlock",
    "InMemoryStorage",
    "InvalidMessageError",
    "InvalidSessionIdError",
    "Message",
    "MessageNotFoundError",
    "NoOp",
    "OpaqueBlock",
    "Policy",
    "RedactedThinkingBlock",
    "Role",
    "SchemaError",
    "SearchHit",
    "SearchPage",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionOwnerError",
    "SessionPage",
    "SessionView",
    "ShortTermMemory",
    "SqlMemoryError",
    "SqlStorage",
    "Storage",
    "StorageError",
    "TailPolicy",
    "TextBlock",
    "ThinkingBlock",
    "TokenWindow",
    "Tokenizer",
    "ToolCall",
    "Usage",
    "UsageReport",
    "__version__",
    "estimate_tokens",
    "from_anthropic",
    "from_openai_chat",
    "from_openai_responses",
    "groups",
    "to_anthropic",
    "to_openai_chat",
    "to_openai_responses",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        # SQLAlchemy's asyncio needs greenlet, which only the driver extras install; its
        # own message asks for "sqlalchemy[asyncio]", which is not how sqlmemory gets it.
        missing = exc.__cause__ if isinstance(exc.__cause__, ImportError) else exc
        if missing.name != "greenlet":
            raise
        raise ModuleNotFoundError(
            f"{name} needs greenlet, which is not installed: pip install 'sqlmemory[async]' "
            "(the postgres and mysql extras bring it too)",
            name="greenlet",
        ) from exc
    globals()[name] = value
    return value
