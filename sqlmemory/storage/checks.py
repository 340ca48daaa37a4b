"""The argument checks every storage runs at its boundary, before any I/O.

Every storage, in memory or SQL, calls these, so all of them refuse the same input with
the same error (``docs/contract/errors.md``).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable

from sqlmemory.errors import (
    BlobTooLargeError,
    DuplicateMessageError,
    InvalidMessageError,
    InvalidSessionIdError,
)
from sqlmemory.types import DocumentBlock, ImageBlock, Message, canonical_json

__all__ = [
    "DEFAULT_MAX_BLOB_BYTES",
    "MAX_SESSION_ID_LENGTH",
    "check_count",
    "check_messages",
    "check_policy",
    "check_prefix",
    "check_session_id",
    "content_digest",
    "same_content",
]

DEFAULT_MAX_BLOB_BYTES = 20 * 1024 * 1024
"""The largest image or document a storage accepts unless told otherwise (20 MiB)."""
MAX_SESSION_ID_LENGTH = 255


def check_session_id(session_id: object) -> str:
    """Return ``session_id`` if it is a valid id, else raise.

    Raises:
        TypeError: it is not a ``str``.
        InvalidSessionIdError: it is empty, over 255 characters, has leading or trailing
            whitespace, holds control characters or a lone surrogate.
    """
    if not isinstance(session_id, str):
        raise TypeError(f"session id must be a str, not {type(session_id).__name__}")
    if not session_id:
        raise InvalidSessionIdError("session id must not be empty")
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        raise InvalidSessionIdError(f"session id is longer than {MAX_SESSION_ID_LENGTH} characters")
    if session_id != session_id.strip():
        raise InvalidSessionIdError("session id has leading or trailing whitespace")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in session_id):
        raise InvalidSessionIdError("session id holds a control character or a lone surrogate")
    return session_id


def content_digest(message: Message) -> str:
    """The SHA-256 (hex) of :func:`~sqlmemory.types.canonical_json`: what SQL stores.

    The one definition of "the same content" every storage uses, in memory and in SQL,
    for a batch and for a retried append alike: equal canonical forms, key order
    included (so ``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}`` differ, and so do ``True``
    and ``1``), ``recorded_at`` aside.
    """
    return hashlib.sha256(canonical_json(message).encode("utf-8")).hexdigest()


def same_content(a: Message, b: Message) -> bool:
    """Whether two messages are the same message (``recorded_at`` aside): equal
    canonical forms, exactly what :func:`content_digest` hashes."""
    if a is b:
        return True
    if a.id != b.id:
        return False
    return canonical_json(a) == canonical_json(b)


def check_messages(messages: Iterable[object], max_blob_bytes: int) -> list[Message]:
    """Validate a batch at the storage boundary and drop exact repeats of an id.

    Raises:
        InvalidMessageError: an item is not a :class:`Message`.
        BlobTooLargeError: image or document bytes exceed ``max_blob_bytes``.
        DuplicateMessageError: one id appears twice with different content.
    """
    batch: list[Message] = []
    seen: dict[str, Message] = {}
    for message in messages:
        if not isinstance(message, Message):
            raise InvalidMessageError(f"expected a Message, got {type(message).__name__}")
        for block in message.content:
            data = block.data if isinstance(block, (ImageBlock, DocumentBlock)) else None
            if data is not None and len(data) > max_blob_bytes:
                raise BlobTooLargeError(
                    f"{block.kind} of {len(data)} bytes exceeds the limit of {max_blob_bytes} bytes"
                )
        earlier = seen.get(message.id)
        if earlier is not None:
            if not same_content(earlier, message):
                raise DuplicateMessageError(
                    f"message id {message.id!r} appears twice with different content"
                )
            continue
        seen[message.id] = message
        batch.append(message)
    return batch


def check_count(value: object, name: str) -> int:
    """Validate a non-negative int argument (``bool`` refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def check_policy(policy: object) -> None:
    """Refuse a ``policy`` argument that is neither ``None`` nor a window policy.

    Raises:
        TypeError: ``policy`` has no ``apply`` method (checked before any I/O).

    Examples:
        >>> check_policy("x")
        Traceback (most recent call last):
        ...
        TypeError: policy must be a Policy (FixedWindow, TokenWindow, NoOp...) or None, not str
    """
    if policy is not None and not callable(getattr(policy, "apply", None)):
        raise TypeError(
            "policy must be a Policy (FixedWindow, TokenWindow, NoOp...) or None, "
            f"not {type(policy).__name__}"
        )


def check_prefix(prefix: object) -> str | None:
    """Validate the ``prefix`` argument of ``sessions`` (a ``str`` or ``None``)."""
    if prefix is not None and not isinstance(prefix, str):
        raise TypeError("prefix must be a str")
    return prefix
