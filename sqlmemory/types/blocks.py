"""Content blocks and tool calls: small frozen values with a ``kind`` discriminator.

Pure Python (Pillow reads image headers, never pixels); no SQLAlchemy. Each block knows
its wire form (``to_dict`` / ``from_dict``), described in ``docs/contract/messages.md``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Union

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import b64_decode, b64_encode, optional_field, required_field
from sqlmemory.types._images import image_magic_matches, image_size
from sqlmemory.types._json import check_str, dump_json, freeze_json, thaw_json

__all__ = [
    "BLOCK_TYPES",
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_MEDIA_TYPES",
    "Block",
    "DocumentBlock",
    "ImageBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolCall",
    "block_from_dict",
    "check_id",
]

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
DOCUMENT_MEDIA_TYPES = frozenset({"application/pdf", "text/plain"})
MAX_ID_LENGTH = 255


def check_id(value: object, what: str) -> str:
    """Return ``value`` if it is a valid message or tool-call id, else raise."""
    text = check_str(value, what, allow_empty=False)
    if len(text) > MAX_ID_LENGTH:
        raise InvalidMessageError(f"{what} is longer than {MAX_ID_LENGTH} characters")
    # Ids are keys: PostgreSQL cannot store NUL in them, and no provider issues ids with
    # control characters, so they are refused like in session ids.
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        raise InvalidMessageError(f"{what} holds a control character")
    return text


def _check_bytes(value: object, what: str) -> bytes:
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if not isinstance(value, bytes):
        raise InvalidMessageError(f"{what} must be bytes, not {type(value).__name__}")
    return value


@dataclass(frozen=True)
class TextBlock:
    """Plain text.

    Examples:
        >>> TextBlock("hello").text
        'hello'
    """

    text: str
    """The text; any ``str`` that encodes to UTF-8, NUL included."""
    kind: ClassVar[Literal["text"]] = "text"

    def __post_init__(self) -> None:
        check_str(self.text, "TextBlock.text")

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block."""
        return {"kind": "text", "text": self.text}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> TextBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        return cls(required_field(data, "text", where, str))


@dataclass(frozen=True)
class ImageBlock:
    """An image, given as bytes or as a URL.

    The pixel size of bytes is read from the image header (never decoded):

    Examples:
        >>> ImageBlock(url="https://example.com/cat.png", media_type="image/png").kind
        'image'
    """

    data: bytes | None = None
    """The encoded image (JPEG, PNG, GIF or WebP); ``None`` for a URL image."""
    media_type: str = ""
    """One of ``image/jpeg``, ``image/png``, ``image/gif``, ``image/webp``."""
    url: str | None = None
    """Where the image lives, when it is not given as bytes."""
    width: int | None = field(default=None, compare=False)
    """Pixel width, read from the header of ``data`` (or given by the caller for a URL)."""
    height: int | None = field(default=None, compare=False)
    """Pixel height, read like ``width``."""
    kind: ClassVar[Literal["image"]] = "image"

    def __post_init__(self) -> None:
        if self.media_type not in IMAGE_MEDIA_TYPES:
            raise InvalidMessageError(
                f"ImageBlock.media_type {self.media_type!r} is not one of "
                f"{sorted(IMAGE_MEDIA_TYPES)}"
            )
        if (self.data is None) == (self.url is None):
            raise InvalidMessageError("ImageBlock takes exactly one of data or url")
        for name in ("width", "height"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value <= 0
            ):
                raise InvalidMessageError(f"ImageBlock.{name} must be a positive int")
        if self.url is not None:
            check_str(self.url, "ImageBlock.url", allow_empty=False)
            return
        data = _check_bytes(self.data, "ImageBlock.data")
        object.__setattr__(self, "data", data)
        if not data:
            raise InvalidMessageError("ImageBlock.data is empty")
        if not image_magic_matches(data, self.media_type):
            raise InvalidMessageError(
                f"ImageBlock.data does not start like {self.media_type} (magic bytes differ)"
            )
        if self.width is None or self.height is None:
            size = image_size(data, self.media_type)
            if size is not None:
                object.__setattr__(self, "width", size[0])
                object.__setattr__(self, "height", size[1])

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block (bytes as base64)."""
        out: dict[str, Any] = {"kind": "image", "media_type": self.media_type}
        if self.data is not None:
            out["data"] = b64_encode(self.data)
        else:
            out["url"] = self.url
        if self.width is not None:
            out["width"] = self.width
        if self.height is not None:
            out["height"] = self.height
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> ImageBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        raw = optional_field(data, "data", where, str)
        return cls(
            b64_decode(raw, f"{where}.data") if raw is not None else None,
            required_field(data, "media_type", where, str),
            optional_field(data, "url", where, str),
            width=optional_field(data, "width", where, int),
            height=optional_field(data, "height", where, int),
        )


@dataclass(frozen=True)
class DocumentBlock:
    """A document given as bytes: a PDF or plain text.

    Examples:
        >>> DocumentBlock(b"minutes", "text/plain", title="Notes").title
        'Notes'
    """

    data: bytes
    """The document's bytes."""
    media_type: str
    """``application/pdf`` or ``text/plain``."""
    title: str | None = None
    """An optional title shown to the model."""
    kind: ClassVar[Literal["document"]] = "document"

    def __post_init__(self) -> None:
        if self.media_type not in DOCUMENT_MEDIA_TYPES:
            raise InvalidMessageError(
                f"DocumentBlock.media_type {self.media_type!r} is not one of "
                f"{sorted(DOCUMENT_MEDIA_TYPES)}"
            )
        data = _check_bytes(self.data, "DocumentBlock.data")
        if not data:
            raise InvalidMessageError("DocumentBlock.data is empty")
        object.__setattr__(self, "data", data)
        if self.title is not None:
            check_str(self.title, "DocumentBlock.title")

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block (bytes as base64)."""
        return {
            "kind": "document",
            "media_type": self.media_type,
            "data": b64_encode(self.data),
            "title": self.title,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> DocumentBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        return cls(
            b64_decode(required_field(data, "data", where, str), f"{where}.data"),
            required_field(data, "media_type", where, str),
            optional_field(data, "title", where, str),
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
    kind: ClassVar[Literal["thinking"]] = "thinking"

    def __post_init__(self) -> None:
        check_str(self.thinking, "ThinkingBlock.thinking")
        if self.signature is not None:
            check_str(self.signature, "ThinkingBlock.signature")

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block."""
        return {"kind": "thinking", "thinking": self.thinking, "signature": self.signature}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> ThinkingBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        return cls(
            required_field(data, "thinking", where, str),
            optional_field(data, "signature", where, str),
        )


Block = Union[TextBlock, ImageBlock, DocumentBlock, ThinkingBlock]  # noqa: UP007 - runtime alias on 3.10
"""Any content block."""
BLOCK_TYPES: tuple[type[Block], ...] = (TextBlock, ImageBlock, DocumentBlock, ThinkingBlock)
_BLOCKS_BY_KIND: dict[str, type[Block]] = {cls.kind: cls for cls in BLOCK_TYPES}


def block_from_dict(data: Any, where: str = "block") -> Block:
    """The block of a wire form, by its ``kind``; errors name the field at fault."""
    if not isinstance(data, Mapping):
        raise InvalidMessageError(f"{where} must be an object")
    kind = required_field(data, "kind", where, str)
    cls = _BLOCKS_BY_KIND.get(kind)
    if cls is None:
        raise InvalidMessageError(f"{where}.kind {kind!r} is not a block kind")
    try:
        return cls.from_dict(data, where)
    except InvalidMessageError as exc:
        if str(exc).startswith(where):
            raise
        raise InvalidMessageError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class ToolCall:
    """A call of a tool by the assistant.

    Examples:
        >>> call = ToolCall("c1", "multiply", {"a": 6, "b": 7})
        >>> call.arguments_json
        '{"a":6,"b":7}'
    """

    id: str
    """The provider's id of the call; a tool message answers it by this id."""
    name: str
    """The tool's name."""
    arguments: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """JSON-serialisable arguments, read-only, in the key order they were given."""

    def __post_init__(self) -> None:
        check_id(self.id, "ToolCall.id")
        check_str(self.name, "ToolCall.name", allow_empty=False)
        if not isinstance(self.arguments, Mapping):
            raise InvalidMessageError("ToolCall.arguments must be a mapping")
        object.__setattr__(self, "arguments", freeze_json(self.arguments, "ToolCall.arguments"))

    @property
    def arguments_json(self) -> str:
        """The arguments as compact JSON text, keys in their original order."""
        return dump_json(self.arguments)

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this call."""
        return {"id": self.id, "name": self.name, "arguments": thaw_json(self.arguments)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "tool_call") -> ToolCall:
        """The call of a wire form; errors name the field, prefixed by ``where``."""
        if not isinstance(data, Mapping):
            raise InvalidMessageError(f"{where} must be an object")
        try:
            return cls(
                required_field(data, "id", where, str),
                required_field(data, "name", where, str),
                optional_field(data, "arguments", where, Mapping) or {},
            )
        except InvalidMessageError as exc:
            raise InvalidMessageError(f"{where}: {exc}") from None
