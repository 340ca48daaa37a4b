"""Messages already built from their rows, by stored digest and ``recorded_at``.

Building a :class:`~sqlmemory.Message` from its row (its JSON parsed, its blocks read and
decoded) costs more than reading the row: a window of 20 messages spent a fifth of its
time there, and a chat product reads the same messages again on every turn (a window
that moved by a turn, or the whole history an agent framework asks for). So the reads
keep what they built, and build again only what they have not seen.

A row's ``digest`` is the SHA-256 of the message's canonical form, which is every field
but ``recorded_at`` (:func:`~sqlmemory.types.canonical_json`), blocks, tool calls,
metadata and usage included, blob bytes by their hash; stored rows are never updated in
place. So two rows with the same digest and ``recorded_at`` are the same message, in any
session of any database, and the message built from either is the other's. Messages are
immutable, so one can be handed to several callers.

The cache is bounded by an estimate of the memory it holds, about
:data:`DEFAULT_MAX_BYTES`, and keeps the most recently used: two generations, the new
one filled until it holds half the bound, when it becomes the old one and the old one
goes; a message found in the old one moves to the new. A message holding image or
document bytes is not kept (its bytes could be large). Lookups and inserts are single
``dict`` operations, safe from any thread or task.

Examples:
    >>> from sqlmemory import Message
    >>> cache: MessageCache[Message] = MessageCache(max_bytes=4096)
    >>> cache.put(("digest", "2026-12-04 21:00:00.000000"), Message.user("hi"), 1200)
    >>> cache.get(("digest", "2026-12-04 21:00:00.000000")).text_content()
    'hi'
    >>> cache.get(("digest", "2026-12-04 21:00:00.000001")) is None
    True
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_MAX_BYTES", "MESSAGE_OVERHEAD", "MessageCache"]

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
"""The estimated memory the reads' cache holds at most: about 25,000 short messages,
12,000 in a generation (a history of 10,000 read whole on every turn stays in it)."""
MESSAGE_OVERHEAD = 1300
"""The estimated bytes of a built message beside its text: its objects, their
dictionaries and the cache's key (``tracemalloc`` measured 1.2 KB for a short user
message and 1.5 KB for a tool call, read from SQLite, in CPython 3.11)."""


V = TypeVar("V")


class MessageCache(Generic[V]):
    """Built messages (or what else is built from a message row: a window policy's
    entries) by a key of their stored row, bounded by estimated bytes."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        """The bound; ``0`` keeps nothing (every read builds its messages)."""
        self._new: dict[Hashable, tuple[V, int]] = {}
        self._old: dict[Hashable, tuple[V, int]] = {}
        self._new_bytes = 0

    def get(self, key: Hashable) -> V | None:
        """The message kept under ``key``, or ``None``."""
        found = self._new.get(key)
        if found is not None:
            return found[0]
        found = self._old.pop(key, None)
        if found is None:
            return None
        self._keep(key, found)
        return found[0]

    def put(self, key: Hashable, value: V, size: int) -> None:
        """Keep ``value`` under ``key``; ``size``: its estimated bytes."""
        if self.max_bytes > 0:
            self._old.pop(key, None)
            self._keep(key, (value, size))

    def clear(self) -> None:
        """Forget every message."""
        self._new, self._old, self._new_bytes = {}, {}, 0

    def __len__(self) -> int:
        return len(self._new) + len(self._old)

    def _keep(self, key: Hashable, entry: tuple[V, int]) -> None:
        previous = self._new.pop(key, None)
        if previous is not None:
            self._new_bytes -= previous[1]
        if self._new_bytes + entry[1] > self.max_bytes // 2:
            # The new generation is full: it becomes the old one, and the old one goes.
            self._old, self._new, self._new_bytes = self._new, {}, 0
        self._new[key] = entry
        self._new_bytes += entry[1]
