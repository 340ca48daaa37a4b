"""Validation and freezing of the plain values messages hold: text and JSON.

Pure Python: no SQLAlchemy. Frozen JSON uses read-only mappings and tuples, in the key
order it was given, so a message a caller holds can never be changed through it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from sqlmemory.errors import InvalidMessageError

__all__ = ["check_str", "dump_json", "freeze_json", "thaw_json"]


def check_str(value: object, what: str, *, allow_empty: bool = True) -> str:
    """Return ``value`` if it is a ``str`` that encodes to UTF-8, else raise."""
    if not isinstance(value, str):
        raise InvalidMessageError(f"{what} must be a str, not {type(value).__name__}")
    if not allow_empty and not value:
        raise InvalidMessageError(f"{what} must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidMessageError(f"{what} holds a lone surrogate at index {exc.start}") from None
    return value


def freeze_json(value: Any, what: str) -> Any:
    """Deep-copy a JSON-serialisable value into immutable containers, keeping key order.

    Mappings become read-only mappings and sequences become tuples. NaN, Infinity,
    non-string keys and values JSON cannot represent raise :class:`InvalidMessageError`.
    """
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMessageError(f"{what} holds {value!r}, which JSON cannot represent")
        return value
    if isinstance(value, str):
        return check_str(value, what)
    if isinstance(value, Mapping):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidMessageError(f"{what} has a non-string key {key!r}")
            check_str(key, f"{what} key")
            frozen[key] = freeze_json(item, f"{what}[{key!r}]")
        return MappingProxyType(frozen)
    if isinstance(value, (list, tuple)):
        return tuple(freeze_json(item, f"{what}[{i}]") for i, item in enumerate(value))
    raise InvalidMessageError(f"{what} holds a {type(value).__name__}, which is not JSON")


def thaw_json(value: Any) -> Any:
    """The mutable (``dict``/``list``) copy of a value made by :func:`freeze_json`."""
    if isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw_json(item) for item in value]
    return value


def dump_json(value: Any) -> str:
    """Compact JSON text of a frozen value, keys in their original order."""
    return json.dumps(thaw_json(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
