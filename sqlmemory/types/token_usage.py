"""What a model reply cost: which model answered and the tokens it read and wrote.

Pure Python, no SQLAlchemy. :class:`Usage` is frozen, like the rest of the message model;
a :class:`~sqlmemory.types.message.Message` carries one in ``usage`` (``None``: the
message says nothing of its cost), and the storages total them (``docs/usage.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import check_keys, optional_field, shown
from sqlmemory.types.blocks import check_id

__all__ = ["MAX_TOKENS", "TOKEN_FIELDS", "Usage", "check_usage"]

MAX_TOKENS = 2**63 - 1
"""The largest count a :class:`Usage` holds: the largest signed 64-bit integer, which every
backend's ``BIGINT`` stores."""

TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
"""The counts of a :class:`Usage`, in the order of its fields, its wire form and its columns."""

_WIRE_KEYS = frozenset(("model", *TOKEN_FIELDS))


def _count(value: object, name: str) -> int:
    # bool is an int subclass, and True tokens mean nothing: refused like any non-int.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMessageError(f"Usage.{name} must be an int, not {type(value).__name__}")
    if not 0 <= value <= MAX_TOKENS:
        raise InvalidMessageError(f"Usage.{name} must lie within 0 to 2**63-1, not {shown(value)}")
    return int(value)


@dataclass(frozen=True)
class Usage:
    """The model that produced a reply and the tokens it counted.

    The counts are as the provider reports them: ``input_tokens`` includes the tokens
    read from the cache (``cache_read_tokens``) where the provider counts them in, and
    ``output_tokens`` includes ``reasoning_tokens`` (OpenAI); the mapping of each provider
    is in ``docs/providers.md``. Two usages are equal when every field is.

    Examples:
        >>> usage = Usage("gpt-4o", input_tokens=1200, output_tokens=80, cache_read_tokens=1024)
        >>> usage.input_tokens + usage.output_tokens
        1280
        >>> (usage + Usage("gpt-4o", input_tokens=10)).input_tokens
        1210
        >>> Usage(input_tokens=-1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        sqlmemory.errors.InvalidMessageError: Usage.input_tokens must lie within 0 to ...

    Args:
        model: the model's name as the provider gave it; ``None`` when unknown.
        input_tokens: the tokens the model read (the prompt).
        output_tokens: the tokens the model wrote.
        cache_read_tokens: input tokens read from the provider's prompt cache.
        cache_write_tokens: input tokens written to the prompt cache (Anthropic).
        reasoning_tokens: output tokens spent reasoning.

    Raises:
        InvalidMessageError: a count that is not an ``int`` (a ``bool`` is not one) or lies
            outside 0 to 2**63-1; a model that is empty, longer than 255 characters or
            holds a control character.
    """

    model: str | None = None
    """The model that answered, as the provider named it."""
    input_tokens: int = 0
    """Tokens the model read."""
    output_tokens: int = 0
    """Tokens the model wrote."""
    cache_read_tokens: int = 0
    """Input tokens read from the prompt cache."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache."""
    reasoning_tokens: int = 0
    """Output tokens spent reasoning."""

    def __post_init__(self) -> None:
        if self.model is not None:
            check_id(self.model, "Usage.model")
        for name in TOKEN_FIELDS:
            object.__setattr__(self, name, _count(getattr(self, name), name))

    def __add__(self, other: Usage) -> Usage:
        """The counts added up; the model kept when both name the same one, else ``None``."""
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.model if self.model == other.model else None,
            *(getattr(self, name) + getattr(other, name) for name in TOKEN_FIELDS),
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire form: a JSON object of the model and the five counts.

        Examples:
            >>> Usage("m", output_tokens=3).to_dict()["output_tokens"]
            3
        """
        return {"model": self.model, **{name: getattr(self, name) for name in TOKEN_FIELDS}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "usage") -> Usage:
        """A usage from its wire form; a count left out is 0.

        Examples:
            >>> Usage.from_dict({"model": "m", "input_tokens": 5})  # doctest: +ELLIPSIS
            Usage(model='m', input_tokens=5, output_tokens=0, ...)

        Raises:
            InvalidMessageError: not an object, an unknown key, or a bad value.
        """
        if not isinstance(data, Mapping):
            raise InvalidMessageError(f"{where} must be a JSON object")
        check_keys(data, _WIRE_KEYS, where)
        counts = {name: data.get(name, 0) for name in TOKEN_FIELDS}
        return cls(optional_field(data, "model", where, str), **counts)


def check_usage(value: object) -> Usage | None:
    """``value`` if it is a :class:`Usage` or ``None``, else raise ``InvalidMessageError``."""
    if value is None or isinstance(value, Usage):
        return value
    raise InvalidMessageError(f"Message.usage must be a Usage or None, not {type(value).__name__}")
