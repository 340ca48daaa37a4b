"""Reading fields of a wire document (``to_dict`` output) with errors that name the field."""

from __future__ import annotations

import base64
import binascii
import reprlib
from collections.abc import Mapping
from typing import Any

from sqlmemory.errors import InvalidMessageError

__all__ = [
    "b64_decode",
    "b64_encode",
    "check_keys",
    "optional_field",
    "required_field",
    "shown",
]


class _Shown(reprlib.Repr):
    """``repr`` cut short: a few levels, a few items, short strings, no 5,000-digit integer."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxstring = self.maxother = 80

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 256:  # repr() refuses integers over 4,300 digits
            return f"<an integer of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_SHOWN = _Shown()


def shown(value: object) -> str:
    """``value`` as an error message shows it: its ``repr``, kept short whatever the input.

    Deep nesting, a huge integer or a megabyte of text cannot make the message raise or
    grow: each is cut with ``...``.

    Examples:
        >>> shown("tool")
        "'tool'"
        >>> shown([[[[["deep"]]]]])
        '[[[[...]]]]'
        >>> shown(10**5000)
        '<an integer of 16610 bits>'
    """
    return _SHOWN.repr(value)


def required_field(
    data: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...]
) -> Any:
    """``data[key]``, which must be present and of type ``kind``."""
    if key not in data:
        raise InvalidMessageError(f"{where}.{key} is missing")
    value = data[key]
    if not isinstance(value, kind):
        raise InvalidMessageError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


def check_keys(data: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    """Refuse the keys of ``data`` outside ``allowed``: a field nothing reads would be lost.

    ``data`` that is no mapping is refused too: the first check every ``from_dict`` runs.
    """
    if not isinstance(data, Mapping):
        raise InvalidMessageError(f"{where} must be an object, not {type(data).__name__}")
    unknown = data.keys() - allowed
    if unknown:
        names = ", ".join(sorted(shown(k) for k in unknown))
        raise InvalidMessageError(f"{where} has unknown field(s) {names}")


def optional_field(data: Mapping[str, Any], key: str, where: str, kind: type) -> Any:
    """``data.get(key)``, which must be ``None`` or of type ``kind``."""
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        raise InvalidMessageError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


def b64_encode(data: bytes) -> str:
    """Bytes as base64 text."""
    return base64.b64encode(data).decode("ascii")


def b64_decode(value: str, where: str) -> bytes:
    """The bytes of base64 text; bad base64 raises naming ``where``."""
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidMessageError(f"{where} is not valid base64") from None
