"""Messages: who speaks, the content blocks, tool calls, and the wire form.

Pure Python, no SQLAlchemy. A :class:`Message` is frozen and every container it holds is
immutable, so a message a caller holds can never alter what a storage keeps, nor the
reverse (``docs/contract/messages.md``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from types import MappingProxyType
from typing import Any, Union

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import optional_field, required_field
from sqlmemory.types._json import freeze_json, thaw_json
from sqlmemory.types.blocks import (
    BLOCK_TYPES,
    Block,
    TextBlock,
    ToolCall,
    block_from_dict,
    check_id,
)

__all__ = ["WIRE_VERSION", "Content", "Message", "Role", "utc_now"]

WIRE_VERSION = 1
"""The version of the wire form that :meth:`Message.to_dict` writes."""

Content = Union[str, Block, Iterable[Union[str, Block]]]  # noqa: UP007 - runtime alias on 3.10
"""What message constructors take as content: text, a block, or a sequence of them."""


class Role(str, Enum):
    """Who speaks a message. Wherever a role is taken, its string value is accepted too.

    Examples:
        >>> Message("user", "hi").role is Role.USER
        True
    """

    SYSTEM = "system"
    DEVELOPER = "developer"
    """OpenAI's instruction role; converters for providers without it send ``system``."""
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    DOCUMENT = "document"

    def __str__(self) -> str:
        return self.value


def _to_blocks(value: Content | None, what: str) -> tuple[Block, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (TextBlock(value),)
    if isinstance(value, BLOCK_TYPES):
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

    Examples:
        >>> Message.user("hi", id="m1") == Message(Role.USER, [TextBlock("hi")], id="m1")
        True
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
        check_id(self.id, "Message.id")
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
            check_id(self.tool_call_id, "Message.tool_call_id")
        elif self.tool_call_id is not None:
            raise InvalidMessageError(f"a {role.value} message cannot have a tool_call_id")
        if not has_content and not calls:
            raise InvalidMessageError(f"a {role.value} message needs content or tool calls")

    # -- constructors -------------------------------------------------------------------

    @classmethod
    def user(
        cls,
        text_or_blocks: Content,
        *,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
    ) -> Message:
        """A user message.

        Examples:
            >>> Message.user("What is 6 x 7?").text_content()
            'What is 6 x 7?'
        """
        return cls._build(Role.USER, text_or_blocks, (), None, id, metadata, recorded_at)

    @classmethod
    def system(
        cls,
        text_or_blocks: Content,
        *,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
    ) -> Message:
        """A system message (instructions).

        Examples:
            >>> Message.system("Answer briefly.").role
            <Role.SYSTEM: 'system'>
        """
        return cls._build(Role.SYSTEM, text_or_blocks, (), None, id, metadata, recorded_at)

    @classmethod
    def assistant(
        cls,
        text_or_blocks: Content | None = None,
        *,
        tool_calls: Iterable[ToolCall] = (),
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
    ) -> Message:
        """An assistant message: text, tool calls, or both.

        Examples:
            >>> Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6})]).call_ids
            ('c1',)
        """
        calls = tuple(tool_calls)
        return cls._build(Role.ASSISTANT, text_or_blocks, calls, None, id, metadata, recorded_at)

    @classmethod
    def tool(
        cls,
        tool_call_id: str,
        text_or_blocks: Content,
        *,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
    ) -> Message:
        """The result of the tool call ``tool_call_id``.

        Examples:
            >>> Message.tool("c1", "42").tool_call_id
            'c1'
        """
        return cls._build(Role.TOOL, text_or_blocks, (), tool_call_id, id, metadata, recorded_at)

    @classmethod
    def _build(
        cls,
        role: Role,
        content: Content | None,
        tool_calls: tuple[ToolCall, ...],
        tool_call_id: str | None,
        id: str | None,
        metadata: Mapping[str, Any] | None,
        recorded_at: datetime | None,
    ) -> Message:
        return cls(
            role,
            _to_blocks(content, "content"),
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            metadata=metadata if metadata is not None else {},
            id=id if id is not None else _new_id(),
            recorded_at=recorded_at,
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
        """The versioned JSON-ready form of this message (bytes as base64).

        Plain ``dict``/``list``/``str``/``int`` values that ``json.dumps`` accepts;
        ``recorded_at`` is ISO 8601 in UTC. :meth:`from_dict` reads it back equal.

        Examples:
            >>> data = Message.user("hi", id="m1").to_dict()
            >>> data["role"], data["content"]
            ('user', [{'kind': 'text', 'text': 'hi'}])
        """
        return {
            "v": WIRE_VERSION,
            "id": self.id,
            "role": self.role.value,
            "content": [block.to_dict() for block in self.content],
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "tool_call_id": self.tool_call_id,
            "metadata": thaw_json(self.metadata),
            "recorded_at": self.recorded_at.isoformat() if self.recorded_at else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Rebuild a message from :meth:`to_dict` output.

        Examples:
            >>> Message.from_dict({"role": "user", "content": [{"kind": "text", "text": "hi"}]})
            ... # doctest: +ELLIPSIS
            Message(role=<Role.USER: 'user'>, content=(TextBlock(text='hi'),), ...)

        Raises:
            InvalidMessageError: a field is missing, of the wrong type or invalid; the
                message names it.
        """
        if not isinstance(data, Mapping):
            raise InvalidMessageError("message must be a JSON object")
        version = data.get("v", WIRE_VERSION)
        if version != WIRE_VERSION:
            raise InvalidMessageError(f"message.v {version!r} is not a supported version")
        content = required_field(data, "content", "message", list)
        calls = optional_field(data, "tool_calls", "message", list) or []
        recorded = optional_field(data, "recorded_at", "message", str)
        recorded_at = None
        if recorded is not None:
            try:
                recorded_at = datetime.fromisoformat(recorded)
            except ValueError:
                raise InvalidMessageError(
                    "message.recorded_at is not an ISO 8601 datetime"
                ) from None
        message_id = None
        if data.get("id") is not None:
            message_id = required_field(data, "id", "message", str)
        return cls(
            role=required_field(data, "role", "message", str),
            content=tuple(
                block_from_dict(b, f"message.content[{i}]") for i, b in enumerate(content)
            ),
            tool_calls=tuple(
                ToolCall.from_dict(c, f"message.tool_calls[{i}]") for i, c in enumerate(calls)
            ),
            tool_call_id=optional_field(data, "tool_call_id", "message", str),
            metadata=optional_field(data, "metadata", "message", Mapping) or {},
            recorded_at=recorded_at,
            id=message_id if message_id is not None else _new_id(),
        )


def _replace(message: Message, **changes: Any) -> Message:
    # Built with object.__new__ so the already-validated fields are not checked again.
    clone = object.__new__(Message)
    for name in ("role", "content", "tool_calls", "tool_call_id", "metadata", "id", "recorded_at"):
        object.__setattr__(clone, name, changes.get(name, getattr(message, name)))
    return clone


def utc_now() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(timezone.utc)
