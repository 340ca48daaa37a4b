"""The hash chain over a history's ids and content digests, which ``save`` stores.

A session row keeps the chain of the history the last ``save`` left (``history_digest``,
``history_len``): equal chains mean equal histories (ids, order and content), so a later
``save`` that only adds messages knows the stored history without reading it. Each
message memoises the link it adds after a given predecessor (beside its other memos,
:mod:`~sqlmemory.storage.sql.codec`), so re-hashing a history that grew by k messages
hashes k links.

Examples:
    >>> from sqlmemory import Message
    >>> history = [Message.user("hi", id="m1"), Message.assistant("hello", id="m2")]
    >>> history_digests(history, 0, 2)[1] == history_digest(history, 1)
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sqlmemory.storage.sql.codec import MEMO_KEY, digest_of
from sqlmemory.types import Message

__all__ = ["history_digest", "history_digests"]


def history_digest(messages: Sequence[Message], count: int) -> str:
    """The chain over the ids and content digests of ``messages[:count]``."""
    link = ""
    for message in messages[:count]:
        link = _next_link(link, message)
    return link


def history_digests(messages: Sequence[Message], start: int, stop: int) -> list[str]:
    """:func:`history_digest` of ``messages[:count]`` for each ``count`` from ``start`` to
    ``stop - 1``, in one pass."""
    link = history_digest(messages, start)
    chains = []
    for message in messages[start:stop]:
        chains.append(link)
        link = _next_link(link, message)
    return chains


def _next_link(link: str, message: Message) -> str:
    """The link ``message`` adds to the chain after ``link``, memoised on it."""
    memo: str | tuple[str, str, str] | None = getattr(message, MEMO_KEY, None)
    if type(memo) is tuple and memo[1] == link:
        return memo[2]
    digest = digest_of(message)
    # Ids hold no control characters, so the unit separator cannot be forged.
    data = f"{link}\x1f{message.id}\x1f{digest}".encode()
    following = hashlib.sha256(data).hexdigest()
    object.__setattr__(message, MEMO_KEY, (digest, link, following))
    return following
