"""Reading the usage of a provider's reply into a :class:`~sqlmemory.types.Usage`.

Each format names where its counts are (:data:`CHAT_USAGE`, :data:`RESPONSES_USAGE`,
:data:`ANTHROPIC_USAGE`); a count absent or ``null`` is 0, as the SDKs leave details
out when there are none. The table of ``docs/providers.md`` shows the three. Pure Python.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types import Usage
from sqlmemory.types._fields import shown
from sqlmemory.types.token_usage import MAX_TOKENS

__all__ = ["ANTHROPIC_USAGE", "CHAT_USAGE", "RESPONSES_USAGE", "Fail", "read_usage"]

Paths = Mapping[str, tuple[str, ...]]
Fail = Callable[[str, str], Exception]
"""Builds the error of a malformed field: ``fail(field, why)``, the field named from the
reply (``usage.prompt_tokens``)."""

CHAT_USAGE: Paths = {
    "input_tokens": ("prompt_tokens",),
    "output_tokens": ("completion_tokens",),
    "cache_read_tokens": ("prompt_tokens_details", "cached_tokens"),
    "cache_write_tokens": ("prompt_tokens_details", "cache_write_tokens"),
    "reasoning_tokens": ("completion_tokens_details", "reasoning_tokens"),
}
"""Where a Chat ``ChatCompletion.usage`` keeps each count."""
RESPONSES_USAGE: Paths = {
    "input_tokens": ("input_tokens",),
    "output_tokens": ("output_tokens",),
    "cache_read_tokens": ("input_tokens_details", "cached_tokens"),
    "cache_write_tokens": ("input_tokens_details", "cache_write_tokens"),
    "reasoning_tokens": ("output_tokens_details", "reasoning_tokens"),
}
"""Where a Responses ``Response.usage`` keeps each count."""
ANTHROPIC_USAGE: Paths = {
    "input_tokens": ("input_tokens",),
    "output_tokens": ("output_tokens",),
    "cache_read_tokens": ("cache_read_input_tokens",),
    "cache_write_tokens": ("cache_creation_input_tokens",),
}
"""Where an Anthropic ``Message.usage`` keeps each count (no reasoning count)."""


def _count(usage: Mapping[str, Any], path: tuple[str, ...], fail: Fail) -> int:
    value: Any = usage
    for depth, key in enumerate(path):
        if value is None:
            return 0
        if not isinstance(value, Mapping):
            field = ".".join(("usage", *path[:depth]))
            raise fail(field, f"expected an object, got {type(value).__name__}")
        value = value.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        field = ".".join(("usage", *path))
        raise fail(field, f"expected a count of tokens (0 to 2**63-1), got {shown(value)}")
    return int(value)


def read_usage(reply: Mapping[str, Any], paths: Paths, fail: Fail) -> Usage | None:
    """The :class:`Usage` of ``reply`` (a completion, a response, a message): its
    ``model`` and the counts of its ``usage`` at ``paths``; ``None`` without ``usage``.

    Raises:
        what ``fail`` builds: ``usage`` or ``model`` is malformed.
    """
    usage = reply.get("usage")
    if usage is None:
        return None
    if not isinstance(usage, Mapping):
        raise fail("usage", f"expected an object, got {type(usage).__name__}")
    counts = {name: _count(usage, path, fail) for name, path in paths.items()}
    model = reply.get("model")
    try:
        return Usage(model, **counts)
    except InvalidMessageError as exc:  # the model: not a str, empty, control characters
        raise fail("model", str(exc)) from None
