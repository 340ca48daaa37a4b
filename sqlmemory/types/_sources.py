"""Where an image or a document comes from: bytes, an http(s) URL, or a provider file id.

Shared by :class:`~sqlmemory.types.ImageBlock` and :class:`~sqlmemory.types.DocumentBlock`.
A ``data:`` URL is decoded here, when the block is built, so a block holds bytes or a
reference, never both, and equal content is one value however it arrived.
"""

from __future__ import annotations

import unicodedata
import urllib.parse
from typing import Any

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import b64_decode, shown
from sqlmemory.types._json import check_str

__all__ = ["MAX_FILE_ID_LENGTH", "check_source", "parse_data_url"]

MAX_FILE_ID_LENGTH = 255


def parse_data_url(url: str, what: str) -> tuple[bytes, str]:
    """The bytes and the media type of a ``data:`` URL (base64 or percent-encoded)."""
    head, comma, payload = url[5:].partition(",")
    if not comma:
        raise InvalidMessageError(f"{what} is a data: URL without a comma before its data")
    params = [p.strip() for p in head.split(";")]
    media_type = params[0].lower() or "text/plain"
    if len(params) > 1 and params[-1].lower() == "base64":
        return b64_decode(payload, what), media_type
    return urllib.parse.unquote_to_bytes(payload), media_type


def _check_file_id(value: object, what: str) -> None:
    text = check_str(value, what, allow_empty=False)
    if len(text) > MAX_FILE_ID_LENGTH:
        raise InvalidMessageError(f"{what} is longer than {MAX_FILE_ID_LENGTH} characters")
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        raise InvalidMessageError(f"{what} holds a control character")


def _check_url(block: Any, name: str) -> None:
    """Decode a ``data:`` URL into the block's bytes; refuse a URL that is not http(s)."""
    url = check_str(block.url, f"{name}.url", allow_empty=False)
    scheme = url[:8].lower()
    if scheme.startswith("data:"):
        data, media_type = parse_data_url(url, f"{name}.url")
        if block.media_type is not None and block.media_type != media_type:
            raise InvalidMessageError(
                f"{name}.media_type {shown(block.media_type)} differs from the data: URL's "
                f"{shown(media_type)}"
            )
        object.__setattr__(block, "data", data)
        object.__setattr__(block, "media_type", media_type)
        object.__setattr__(block, "url", None)
    elif not scheme.startswith(("http://", "https://")):
        raise InvalidMessageError(f"{name}.url must be an http(s) or a data: URL")


def check_source(block: Any, name: str, media_types: frozenset[str]) -> None:
    """Check (and normalise) the source fields of an image or document block.

    Exactly one of ``data``, ``url`` and ``file_id``; a ``data:`` URL becomes bytes. Bytes
    must be non-empty and need a media type of ``media_types``; a reference may name one.
    """
    sources = [s for s in (block.data, block.url, block.file_id) if s is not None]
    if len(sources) != 1:
        raise InvalidMessageError(f"{name} takes exactly one of data, url or file_id")
    if block.url is not None:
        _check_url(block, name)
    elif block.file_id is not None:
        _check_file_id(block.file_id, f"{name}.file_id")
    media_type = block.media_type
    if media_type is not None and media_type not in media_types:
        raise InvalidMessageError(
            f"{name}.media_type {shown(media_type)} is not one of {sorted(media_types)}"
        )
    data = block.data
    if data is None:
        return
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
        object.__setattr__(block, "data", data)
    elif not isinstance(data, bytes):
        raise InvalidMessageError(f"{name}.data must be bytes, not {type(data).__name__}")
    if not data:
        raise InvalidMessageError(f"{name}.data is empty")
    if media_type is None:
        raise InvalidMessageError(f"{name}.media_type is needed for bytes")
