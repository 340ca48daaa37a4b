"""Content blocks: small frozen values with a ``kind`` discriminator.

Pure Python (Pillow reads image headers, never pixels); no SQLAlchemy. Each block knows
its wire form (``to_dict`` / ``from_dict``), described in ``docs/contract/messages.md``.
Tool calls and opaque provider items are blocks too: :mod:`sqlmemory.types.calls`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import (
    b64_decode,
    b64_encode,
    check_keys,
    optional_field,
    required_field,
    shown,
)
from sqlmemory.types._images import image_magic_matches, image_size
from sqlmemory.types._json import EMPTY, FrozenDict, check_str, freeze_mapping, thaw_json
from sqlmemory.types._sources import check_source

__all__ = [
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_DETAILS",
    "IMAGE_MEDIA_TYPES",
    "DocumentBlock",
    "ImageBlock",
    "RedactedThinkingBlock",
    "TextBlock",
    "ThinkingBlock",
    "block_extras",
    "check_id",
    "data_sha256",
]

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
DOCUMENT_MEDIA_TYPES = frozenset({"application/pdf", "text/plain"})
IMAGE_DETAILS = frozenset({"low", "high", "auto", "original"})
MAX_ID_LENGTH = 255
MAX_IMAGE_SIDE = 65_535
"""The largest image width or height accepted (JPEG's and GIF's own limit)."""

BytesAs = Callable[[Any], str]
"""How a block's bytes appear in a dict: base64 on the wire, a hash in the canonical form."""


# Unicode's category Cc (control) is exactly C0, DEL and C1, and is closed to new characters.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def check_id(value: object, what: str) -> str:
    """Return ``value`` if it is a valid message or tool-call id, else raise."""
    text = check_str(value, what, allow_empty=False)
    if len(text) > MAX_ID_LENGTH:
        raise InvalidMessageError(f"{what} is longer than {MAX_ID_LENGTH} characters")
    # Ids are keys: PostgreSQL cannot store NUL in them, and no provider issues ids with
    # control characters, so they are refused like in session ids.
    if _CONTROL.search(text) is not None:
        raise InvalidMessageError(f"{what} holds a control character")
    return text


def data_sha256(block: ImageBlock | DocumentBlock) -> str:
    """The SHA-256 (hex) of a block's bytes, computed once per block."""
    cached: str | None = getattr(block, "_sha256", None)  # no __dict__ built
    if cached is None:
        assert block.data is not None  # noqa: S101 - callers ask only blocks holding bytes
        cached = hashlib.sha256(block.data).hexdigest()
        # Not a field: equality, repr and replace() never see it.
        object.__setattr__(block, "_sha256", cached)
    return cached


def b64_of(block: ImageBlock | DocumentBlock) -> str:
    """The bytes of ``block`` as base64: how the wire form carries them."""
    assert block.data is not None  # noqa: S101 - called for blocks holding bytes only
    return b64_encode(block.data)


def _empty() -> FrozenDict:
    return EMPTY


def block_extras(value: object, what: str) -> FrozenDict:
    """A block's ``extras`` frozen; ``None`` means none."""
    return EMPTY if value is None or value is EMPTY else freeze_mapping(value, what)


def _with_extras(out: dict[str, Any], extras: Mapping[str, Any]) -> dict[str, Any]:
    if extras:
        out["extras"] = extras
    return out


def _read_extras(data: Mapping[str, Any], where: str) -> Any:
    return optional_field(data, "extras", where, Mapping) or EMPTY


@dataclass(frozen=True)
class TextBlock:
    """Plain text.

    Examples:
        >>> TextBlock("hello").text
        'hello'
        >>> TextBlock("see [1]", extras={"citations": [{"cited_text": "x"}]}).extras["citations"]
        FrozenList([FrozenDict({'cited_text': 'x'})])
    """

    text: str
    """The text; any ``str`` that encodes to UTF-8, NUL included."""
    _: KW_ONLY
    extras: Mapping[str, Any] = field(default_factory=_empty)
    """Provider fields with no common meaning (``cache_control``, ``citations``, ...)."""
    kind: ClassVar[Literal["text"]] = "text"

    def __post_init__(self) -> None:
        check_str(self.text, "TextBlock.text")
        object.__setattr__(self, "extras", block_extras(self.extras, "TextBlock.extras"))

    def _fields(self, bytes_as: BytesAs) -> dict[str, Any]:
        return _with_extras({"kind": "text", "text": self.text}, self.extras)

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block."""
        return _thaw(self._fields(b64_of))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> TextBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        check_keys(data, _TEXT_KEYS, where)
        return cls(required_field(data, "text", where, str), extras=_read_extras(data, where))


@dataclass(frozen=True)
class ImageBlock:
    """An image: bytes, an http(s) URL, or a provider's file id (exactly one of them).

    Bytes need a ``media_type`` and must start like it; a ``data:`` URL is decoded into
    bytes when the block is built. The pixel size of bytes is read from the image header
    (never decoded).

    Examples:
        >>> ImageBlock(url="https://example.com/cat.png", detail="low").kind
        'image'
        >>> ImageBlock(url="data:image/gif;base64,R0lGODlhAQABAAAAACw=").media_type
        'image/gif'
        >>> ImageBlock(file_id="file-abc123").file_id
        'file-abc123'
    """

    data: bytes | None = None
    """The encoded image (JPEG, PNG, GIF or WebP); ``None`` for a reference."""
    media_type: str | None = None
    """One of ``image/jpeg``, ``image/png``, ``image/gif``, ``image/webp``; optional for a
    reference."""
    url: str | None = None
    """An http(s) URL where the image lives (a ``data:`` URL becomes ``data``)."""
    file_id: str | None = None
    """A provider's id of an uploaded file."""
    detail: str | None = None
    """``low``, ``high``, ``auto`` or ``original``: how closely a model should look."""
    _: KW_ONLY
    width: int | None = field(default=None, compare=False)
    """Pixel width, read from the header of ``data`` (or given by the caller for a
    reference)."""
    height: int | None = field(default=None, compare=False)
    """Pixel height, read like ``width``."""
    extras: Mapping[str, Any] = field(default_factory=_empty)
    """Provider fields with no common meaning (``cache_control``, ...)."""
    kind: ClassVar[Literal["image"]] = "image"

    def __post_init__(self) -> None:
        check_source(self, "ImageBlock", IMAGE_MEDIA_TYPES)
        if self.detail is not None and self.detail not in IMAGE_DETAILS:
            raise InvalidMessageError(
                f"ImageBlock.detail {shown(self.detail)} is not one of {sorted(IMAGE_DETAILS)}"
            )
        for name in ("width", "height"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not 1 <= value <= MAX_IMAGE_SIDE
            ):
                raise InvalidMessageError(
                    f"ImageBlock.{name} must be an int from 1 to {MAX_IMAGE_SIDE:,}"
                )
        object.__setattr__(self, "extras", block_extras(self.extras, "ImageBlock.extras"))
        if self.data is None:
            return
        media_type = str(self.media_type)
        if not image_magic_matches(self.data, media_type):
            raise InvalidMessageError(
                f"ImageBlock.data does not start like {media_type} (magic bytes differ)"
            )
        if self.width is None or self.height is None:
            size = image_size(self.data, media_type)
            if size is not None and max(size) > MAX_IMAGE_SIDE:
                raise InvalidMessageError(
                    f"ImageBlock.data claims {size[0]}x{size[1]} pixels; "
                    f"a side may be at most {MAX_IMAGE_SIDE:,}"
                )
            if size is not None:
                object.__setattr__(self, "width", size[0])
                object.__setattr__(self, "height", size[1])

    def _fields(self, bytes_as: BytesAs) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "image"}
        if self.media_type is not None:
            out["media_type"] = self.media_type
        if self.data is not None:
            out["data"] = bytes_as(self)
        elif self.url is not None:
            out["url"] = self.url
        else:
            out["file_id"] = self.file_id
        if self.detail is not None:
            out["detail"] = self.detail
        if self.width is not None:
            out["width"] = self.width
        if self.height is not None:
            out["height"] = self.height
        return _with_extras(out, self.extras)

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block (bytes as base64)."""
        return _thaw(self._fields(b64_of))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> ImageBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        check_keys(data, _IMAGE_KEYS, where)
        raw = optional_field(data, "data", where, str)
        return cls(
            b64_decode(raw, f"{where}.data") if raw is not None else None,
            optional_field(data, "media_type", where, str),
            optional_field(data, "url", where, str),
            optional_field(data, "file_id", where, str),
            optional_field(data, "detail", where, str),
            width=optional_field(data, "width", where, int),
            height=optional_field(data, "height", where, int),
            extras=_read_extras(data, where),
        )


@dataclass(frozen=True)
class DocumentBlock:
    """A document: bytes, an http(s) URL, or a provider's file id (exactly one of them).

    Bytes need a ``media_type``: ``application/pdf`` or ``text/plain``.

    Examples:
        >>> DocumentBlock(b"minutes", "text/plain", title="Notes").title
        'Notes'
        >>> DocumentBlock(url="https://example.com/report.pdf").url
        'https://example.com/report.pdf'
    """

    data: bytes | None = None
    """The document's bytes; ``None`` for a reference."""
    media_type: str | None = None
    """``application/pdf`` or ``text/plain``; optional for a reference."""
    url: str | None = None
    """An http(s) URL where the document lives (a ``data:`` URL becomes ``data``)."""
    file_id: str | None = None
    """A provider's id of an uploaded file."""
    title: str | None = None
    """An optional title (or file name) shown to the model."""
    _: KW_ONLY
    extras: Mapping[str, Any] = field(default_factory=_empty)
    """Provider fields with no common meaning (``context``, ``citations``, ...)."""
    kind: ClassVar[Literal["document"]] = "document"

    def __post_init__(self) -> None:
        check_source(self, "DocumentBlock", DOCUMENT_MEDIA_TYPES)
        if self.title is not None:
            check_str(self.title, "DocumentBlock.title")
        object.__setattr__(self, "extras", block_extras(self.extras, "DocumentBlock.extras"))

    def _fields(self, bytes_as: BytesAs) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "document"}
        if self.media_type is not None:
            out["media_type"] = self.media_type
        if self.data is not None:
            out["data"] = bytes_as(self)
        elif self.url is not None:
            out["url"] = self.url
        else:
            out["file_id"] = self.file_id
        if self.title is not None:
            out["title"] = self.title
        return _with_extras(out, self.extras)

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block (bytes as base64)."""
        return _thaw(self._fields(b64_of))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> DocumentBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        check_keys(data, _DOCUMENT_KEYS, where)
        raw = optional_field(data, "data", where, str)
        return cls(
            b64_decode(raw, f"{where}.data") if raw is not None else None,
            optional_field(data, "media_type", where, str),
            optional_field(data, "url", where, str),
            optional_field(data, "file_id", where, str),
            optional_field(data, "title", where, str),
            extras=_read_extras(data, where),
        )


@dataclass(frozen=True)
class ThinkingBlock:
    """A model's reasoning, replayed to providers that ask for it back.

    Examples:
        >>> ThinkingBlock("First, add.", signature="sig").signature
        'sig'
    """

    thinking: str
    """The reasoning text."""
    signature: str | None = None
    """The provider's signature over the reasoning, when it gives one."""
    _: KW_ONLY
    extras: Mapping[str, Any] = field(default_factory=_empty)
    """Provider fields with no common meaning (a Responses reasoning item's ``id``,
    ``summary``, ``encrypted_content``, ...)."""
    kind: ClassVar[Literal["thinking"]] = "thinking"

    def __post_init__(self) -> None:
        check_str(self.thinking, "ThinkingBlock.thinking")
        if self.signature is not None:
            check_str(self.signature, "ThinkingBlock.signature")
        object.__setattr__(self, "extras", block_extras(self.extras, "ThinkingBlock.extras"))

    def _fields(self, bytes_as: BytesAs) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "thinking", "thinking": self.thinking}
        if self.signature is not None:
            out["signature"] = self.signature
        return _with_extras(out, self.extras)

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block."""
        return _thaw(self._fields(b64_of))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> ThinkingBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        check_keys(data, _THINKING_KEYS, where)
        return cls(
            required_field(data, "thinking", where, str),
            optional_field(data, "signature", where, str),
            extras=_read_extras(data, where),
        )


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """Reasoning the provider encrypted (Anthropic's ``redacted_thinking``), replayed as is.

    Examples:
        >>> RedactedThinkingBlock("EmwKAhgBEgy3va3pzix/LafPsn4a").kind
        'redacted_thinking'
    """

    data: str
    """The provider's opaque, encrypted text."""
    _: KW_ONLY
    extras: Mapping[str, Any] = field(default_factory=_empty)
    """Provider fields with no common meaning."""
    kind: ClassVar[Literal["redacted_thinking"]] = "redacted_thinking"

    def __post_init__(self) -> None:
        check_str(self.data, "RedactedThinkingBlock.data")
        object.__setattr__(
            self, "extras", block_extras(self.extras, "RedactedThinkingBlock.extras")
        )

    def _fields(self, bytes_as: BytesAs) -> dict[str, Any]:
        return _with_extras({"kind": "redacted_thinking", "data": self.data}, self.extras)

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block."""
        return _thaw(self._fields(b64_of))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> RedactedThinkingBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        check_keys(data, _REDACTED_KEYS, where)
        return cls(required_field(data, "data", where, str), extras=_read_extras(data, where))


def _thaw(fields: dict[str, Any]) -> dict[str, Any]:
    thawed: dict[str, Any] = thaw_json(fields)
    return thawed


_TEXT_KEYS = frozenset({"kind", "text", "extras"})
_IMAGE_KEYS = frozenset(
    {"kind", "media_type", "data", "url", "file_id", "detail", "width", "height", "extras"}
)
_DOCUMENT_KEYS = frozenset({"kind", "media_type", "data", "url", "file_id", "title", "extras"})
_THINKING_KEYS = frozenset({"kind", "thinking", "signature", "extras"})
_REDACTED_KEYS = frozenset({"kind", "data", "extras"})
