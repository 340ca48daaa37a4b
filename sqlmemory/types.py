"""The message model: immutable values, validated when they are built.

Pure Python (Pillow is used only to read image headers); this module never imports
SQLAlchemy. Every value here is frozen, and every container it holds is immutable, so a
message a caller holds can never alter what a storage keeps, nor the reverse.
"""

from __future__ import annotations

import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Union

from sqlmemory._images import image_magic_matches, image_size
from sqlmemory._values import check_str, dump_json, freeze_json
from sqlmemory.errors import InvalidMessageError

__all__ = [
    "DOCUMENT_MEDIA_TYPES",
    "IMAGE_MEDIA_TYPES",
    "Block",
    "DocumentBlock",
    "ImageBlock",
    "Message",
    "Role",
    "TextBlock",
    "ThinkingBlock",
    "ToolCall",
]

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
DOCUMENT_MEDIA_TYPES = frozenset({"application/pdf", "text/plain"})
MAX_ID_LENGTH = 255


class Role(str, Enum):
    """Who speaks a message. Wherever a role is taken, its string value is accepted too."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    DOCUMENT = "document"

    def __str__(self) -> str:
        return self.value


def _check_id(value: object, what: str) -> str:
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
    """Plain text."""

    text: str
    """The text; any ``str`` that encodes to UTF-8, NUL included."""
    kind: ClassVar[Literal["text"]] = "text"

    def __post_init__(self) -> None:
        check_str(self.text, "TextBlock.text")


@dataclass(frozen=True)
class ImageBlock:
    """An image, given as bytes or as a URL."""

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


@dataclass(frozen=True)
class DocumentBlock:
    """A document given as bytes: a PDF or plain text."""

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


@dataclass(frozen=True)
class ThinkingBlock:
    """A model's reasoning, replayed to providers that ask for it back."""

    thinking: str
    """The reasoning text."""
    signature: str | None = None
    """The provider's signature over the reasoning, when it gives one."""
    kind: ClassVar[Literal["thinking"]] = "thinking"

    def __post_init__(self) -> None:
        check_str(self.thinking, "ThinkingBlock.thinking")
        if self.signature is not None:
            check_str(self.signature, "ThinkingBlock.signature")


Block = Union[TextBlock, ImageBlock, DocumentBlock, ThinkingBlock]  # noqa: UP007 - runtime alias on 3.10
BLOCK_TYPES: tuple[type, ...] = (TextBlock, ImageBlock, DocumentBlock, ThinkingBlock)


@dataclass(frozen=True)
class ToolCall:
    """A call of a tool by the assistant."""

    id: str
    """The provider's id of the call; a tool message answers it by this id."""
    name: str
    """The tool's name."""
    arguments: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """JSON-serialisable arguments, read-only, in the key order they were given."""

    def __post_init__(self) -> None:
        _check_id(self.id, "ToolCall.id")
        check_str(self.name, "ToolCall.name", allow_empty=False)
        if not isinstance(self.arguments, Mapping):
            raise InvalidMessageError("ToolCall.arguments must be a mapping")
        object.__setattr__(self, "arguments", freeze_json(self.arguments, "ToolCall.arguments"))

    @property
    def arguments_json(self) -> str:
        """The arguments as compact JSON text, keys in their original order."""
        return dump_json(self.arguments)


def _to_blocks(value: str | Block | Iterable[str | Block] | None, what: str) -> tuple[Block, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (TextBlock(value),)
    if isinstance(value, (TextBlock, ImageBlock, DocumentBlock, ThinkingBlock)):
        return (value,)
    if isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise InvalidMessageError(f"{what} must be a str, a block or a sequence of them")
    blocks: list[Block] = []
    for item in value:
        if isinstance(item, str):
            blocks.append(TextBlock(item))
        elif isinstance(item, BLOCK_TYPES):
            blocks.append(item)
        else:
            raise InvalidMessageError(f"{what} holds a {type(item).__name__}, which is no block")
    return tuple(blocks)


def _new_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class Message:
    """One message of a conversation.

    Build messages with :meth:`user`, :meth:`assistant`, :meth:`system` and :meth:`tool`,
    or directly. Invalid values raise :class:`~sqlmemory.errors.InvalidMessageError`.
    """

    role: Role
    """Who speaks; a :class:`Role` or its string value."""
    content: Sequence[Block] = ()
    """The content blocks, as a tuple; a ``str`` becomes one :class:`TextBlock`."""
    tool_calls: Sequence[ToolCall] = ()
    """Tool calls made by an assistant message, as a tuple."""
    tool_call_id: str | None = None
    """For a tool message: the id of the call it answers."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """JSON-serialisable data for the application; never sent to a provider."""
    id: str = field(default_factory=_new_id)
    """Unique within a session: the idempotency key of appends. A UUID when not given."""
    recorded_at: datetime | None = None
    """When the message was stored (timezone-aware UTC); stores fill it in."""

    def __post_init__(self) -> None:
        try:
            role = Role(self.role)
        except ValueError:
            raise InvalidMessageError(f"Message.role: unknown role {self.role!r}") from None
        object.__setattr__(self, "role", role)
        content = _to_blocks(self.content, "Message.content")
        object.__setattr__(self, "content", content)
        if isinstance(self.tool_calls, (str, bytes, Mapping)) or not isinstance(
            self.tool_calls, Iterable
        ):
            raise InvalidMessageError("Message.tool_calls must be a sequence of ToolCall")
        calls = tuple(self.tool_calls)
        if not all(isinstance(call, ToolCall) for call in calls):
            raise InvalidMessageError("Message.tool_calls must hold ToolCall values only")
        object.__setattr__(self, "tool_calls", calls)
        if not isinstance(self.metadata, Mapping):
            raise InvalidMessageError("Message.metadata must be a mapping")
        object.__setattr__(self, "metadata", freeze_json(self.metadata, "Message.metadata"))
        _check_id(self.id, "Message.id")
        if self.recorded_at is not None:
            if not isinstance(self.recorded_at, datetime):
                raise InvalidMessageError("Message.recorded_at must be a datetime")
            if self.recorded_at.tzinfo is None or self.recorded_at.utcoffset() is None:
                raise InvalidMessageError("Message.recorded_at must be timezone-aware")
            object.__setattr__(self, "recorded_at", self.recorded_at.astimezone(timezone.utc))
        self._check_shape(role, content, calls)

    def _check_shape(
        self, role: Role, content: tuple[Block, ...], calls: tuple[ToolCall, ...]
    ) -> None:
        has_content = any(not isinstance(b, TextBlock) or b.text for b in content)
        if calls and role is not Role.ASSISTANT:
            raise InvalidMessageError(f"a {role.value} message cannot carry tool calls")
        ids = [call.id for call in calls]
        if len(set(ids)) != len(ids):
            raise InvalidMessageError("tool call ids must be unique within a message")
        if role is Role.TOOL:
            if self.tool_call_id is None:
                raise InvalidMessageError("a tool message needs the tool_call_id it answers")
            _check_id(self.tool_call_id, "Message.tool_call_id")
        elif self.tool_call_id is not None:
            raise InvalidMessageError(f"a {role.value} message cannot have a tool_call_id")
        if not has_content and not calls:
            raise InvalidMessageError(f"a {role.value} message needs content or tool calls")

    # -- constructors -------------------------------------------------------------------

    @classmethod
    def user(cls, text_or_blocks: str | Block | Iterable[str | Block], **kwargs: Any) -> Message:
        """A user message; ``kwargs`` are ``id``, ``metadata`` and ``recorded_at``."""
        return cls(Role.USER, _to_blocks(text_or_blocks, "content"), **kwargs)

    @classmethod
    def system(
        cls, text_or_blocks: str | Block | Iterable[str | Block], **kwargs: Any
    ) -> Message:
        """A system message (instructions)."""
        return cls(Role.SYSTEM, _to_blocks(text_or_blocks, "content"), **kwargs)

    @classmethod
    def assistant(
        cls,
        text_or_blocks: str | Block | Iterable[str | Block] | None = None,
        *,
        tool_calls: Iterable[ToolCall] = (),
        **kwargs: Any,
    ) -> Message:
        """An assistant message: text, tool calls, or both."""
        return cls(
            Role.ASSISTANT,
            _to_blocks(text_or_blocks, "content"),
            tool_calls=tuple(tool_calls),
            **kwargs,
        )

    @classmethod
    def tool(
        cls, tool_call_id: str, text_or_blocks: str | Block | Iterable[str | Block], **kwargs: Any
    ) -> Message:
        """The result of the tool call ``tool_call_id``."""
        return cls(
            Role.TOOL, _to_blocks(text_or_blocks, "content"), tool_call_id=tool_call_id, **kwargs
        )

    # -- reading ------------------------------------------------------------------------

    @property
    def call_ids(self) -> tuple[str, ...]:
        """The ids of this message's tool calls, in order."""
        return tuple(call.id for call in self.tool_calls)

    def text_content(self) -> str:
        """The non-empty text blocks joined with newlines (thinking is left out)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock) and b.text)

    def has_content_type(self, kind: str | type) -> bool:
        """Whether a block of ``kind`` (``"text"``, ``"image"``, ... or a block class) is here."""
        if isinstance(kind, type):
            return any(isinstance(b, kind) for b in self.content)
        return any(b.kind == kind for b in self.content)

    def with_recorded_at(self, when: datetime) -> Message:
        """A copy of this message with ``recorded_at`` set."""
        return _replace(self, recorded_at=when)

    # -- wire format --------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The versioned JSON-ready form of this message (bytes as base64)."""
        from sqlmemory.wire import message_to_dict

        return message_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Rebuild a message from :meth:`to_dict` output; bad fields raise InvalidMessageError."""
        from sqlmemory.wire import message_from_dict

        return message_from_dict(data)


def _replace(message: Message, **changes: Any) -> Message:
    # Built with object.__new__ so the already-validated fields are not checked again.
    clone = object.__new__(Message)
    for name in ("role", "content", "tool_calls", "tool_call_id", "metadata", "id", "recorded_at"):
        object.__setattr__(clone, name, changes.get(name, getattr(message, name)))
    return clone


def utc_now() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(timezone.utc)
