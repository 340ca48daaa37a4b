"""Reading fields of a wire document (``to_dict`` output) with errors that name the field."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from sqlmemory.errors import InvalidMessageError

__all__ = ["b64_decode", "b64_encode", "check_keys", "optional_field", "required_field"]


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
    """Refuse the keys of ``data`` outside ``allowed``: a field nothing reads would be lost."""
    unknown = data.keys() - allowed
    if unknown:
        names = ", ".join(repr(k) for k in sorted(unknown, key=str))
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
