"""Messages: who speaks, the content blocks (tool calls among them), and the wire form.

Pure Python, no SQLAlchemy. A :class:`Message` is frozen and every container it holds is
immutable, so a message a caller holds can never alter what a storage keeps, nor the
reverse (``docs/contract/messages.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Union

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._canonical import plain_canonical, simple_canonical
from sqlmemory.types._fields import shown
from sqlmemory.types._json import EMPTY, dump_json, freeze_mapping, thaw_json
from sqlmemory.types._message_checks import MAX_YEAR as MAX_YEAR
from sqlmemory.types._message_checks import MIN_YEAR as MIN_YEAR
from sqlmemory.types._message_checks import check_shape, check_time, copy_unchecked, new_id, utc_now
from sqlmemory.types._message_content import call_ids, sha_reference, to_blocks, with_calls
from sqlmemory.types.blocks import TextBlock, b64_of, check_id
from sqlmemory.types.calls import ToolCall
from sqlmemory.types.content import Block
from sqlmemory.types.token_usage import Usage, check_usage

__all__ = ["WIRE_VERSION", "Content", "Message", "Role", "canonical_json", "utc_now"]

WIRE_VERSION = 2
"""The version of the wire form that :meth:`Message.to_dict` writes (version 1 is read too)."""

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


# Role(value) goes through Enum.__call__; a dict lookup is several times cheaper.
_ROLES = {role.value: role for role in Role}


@dataclass(frozen=True, init=False)
class Message:
    """One message of a conversation.

    Build messages with :meth:`user`, :meth:`assistant`, :meth:`system`,
    :meth:`developer` and :meth:`tool`, or directly. ``tool_calls`` given to the
    constructor are appended to ``content``: tool calls are content blocks, in the order
    the model emitted them. Invalid values raise
    :class:`~sqlmemory.errors.InvalidMessageError`.

    Examples:
        >>> Message.user("hi", id="m1") == Message(Role.USER, [TextBlock("hi")], id="m1")
        True
        >>> call = ToolCall("c1", "search", {"q": "x"})
        >>> Message.assistant("Looking.", tool_calls=[call]).content
        ... # doctest: +ELLIPSIS
        (TextBlock(text='Looking.', ...), ToolCall(id='c1', name='search', ...))

    Args:
        role: who speaks; a :class:`Role` or its string value.
        content: a ``str``, a block, or a sequence of them.
        tool_calls: tool calls appended to ``content`` (assistant messages only).
        tool_call_id: for a tool message, the id of the call it answers.
        metadata: JSON data for the application, never sent to a provider.
        id: the message's id; a new UUID when ``None`` (version 7: time-ordered).
        recorded_at: when it was stored; storages fill it in.
        is_error: for a tool message, whether the result reports a failure.
        extras: provider fields with no common meaning (a chat message's ``name``, ...).
        usage: the model and the tokens of the reply this message is (or is part of).
    """

    # What is derived from the fields (tool_calls, call_ids) or worked out about them
    # (a storage's memo of its digest: storage/sql/codec.py) has slots of its own, never
    # fields (equality, repr and replace() never see them), and the fields stay in the
    # instance's dict, which CPython keeps inline until asked for: a message holds no
    # object but its values for the cycle collector to count (docs/performance.md).
    __slots__ = ("__dict__", "_call_ids", "_sqlmemory_memo", "_tool_calls")

    role: Role
    """Who speaks."""
    content: tuple[Block, ...]
    """The content blocks, tool calls among them, in order."""
    tool_call_id: str | None
    """For a tool message: the id of the call it answers."""
    metadata: Mapping[str, Any]
    """JSON-serialisable data for the application (a :class:`FrozenDict`); never sent to
    a provider."""
    id: str
    """Unique within a session: the idempotency key of appends. A UUID when not given."""
    recorded_at: datetime | None
    """When the message was stored (timezone-aware UTC); stores fill it in."""
    is_error: bool
    """For a tool message: the result reports a failure. Always ``False`` on other roles."""
    extras: Mapping[str, Any]
    """Provider fields with no common meaning (a :class:`FrozenDict`); converters re-emit
    them."""
    usage: Usage | None
    """What producing this message cost: the model and its token counts; ``None`` when
    unknown. Part of the content; converters read it from replies, never send it."""

    def __init__(
        self,
        role: Role | str,
        content: Content | None = (),
        tool_calls: Iterable[ToolCall] = (),
        tool_call_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
        recorded_at: datetime | None = None,
        *,
        is_error: bool = False,
        extras: Mapping[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> None:
        # A Role first: on Python 3.10 an enum member hashes by its name, not its value.
        found = (
            role if isinstance(role, Role) else _ROLES.get(role) if isinstance(role, str) else None
        )
        if found is None:
            raise InvalidMessageError(f"Message.role: unknown role {shown(role)}")
        blocks = with_calls(to_blocks(content, "Message.content"), tool_calls)
        setattr_ = object.__setattr__
        setattr_(self, "role", found)
        setattr_(self, "content", blocks)
        setattr_(self, "tool_call_id", tool_call_id)
        setattr_(
            self,
            "metadata",
            EMPTY if metadata is None else freeze_mapping(metadata, "Message.metadata"),
        )
        setattr_(self, "id", new_id() if id is None else check_id(id, "Message.id"))
        setattr_(self, "recorded_at", None if recorded_at is None else check_time(recorded_at))
        setattr_(self, "is_error", is_error)
        extras = EMPTY if extras is None else freeze_mapping(extras, "Message.extras")
        setattr_(self, "extras", extras)
        setattr_(self, "usage", check_usage(usage))
        setattr_(self, "_sqlmemory_memo", None)  # read by every write: set, it reads fast
        check_shape(found, blocks, tool_call_id, is_error)

    # -- constructors -------------------------------------------------------------------

    @classmethod
    def user(
        cls,
        text_or_blocks: Content,
        *,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
        extras: Mapping[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> Message:
        """A user message.

        Examples:
            >>> Message.user("What is 6 x 7?").text_content()
            'What is 6 x 7?'
        """
        return cls(
            Role.USER,
            text_or_blocks,
            (),
            None,
            metadata,
            id,
            recorded_at,
            extras=extras,
            usage=usage,
        )

    @classmethod
    def system(
        cls,
        text_or_blocks: Content,
        *,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
        extras: Mapping[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> Message:
        """A system message (instructions).

        Examples:
            >>> Message.system("Answer briefly.").role
            <Role.SYSTEM: 'system'>
        """
        return cls(
            Role.SYSTEM,
            text_or_blocks,
            (),
            None,
            metadata,
            id,
            recorded_at,
            extras=extras,
            usage=usage,
        )

    @classmethod
    def developer(
        cls,
        text_or_blocks: Content,
        *,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
        extras: Mapping[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> Message:
        """A developer message (OpenAI's instructions role).

        Examples:
            >>> Message.developer("Answer in French.").role
            <Role.DEVELOPER: 'developer'>
        """
        return cls(
            Role.DEVELOPER,
            text_or_blocks,
            (),
            None,
            metadata,
            id,
            recorded_at,
            extras=extras,
            usage=usage,
        )

    @classmethod
    def assistant(
        cls,
        text_or_blocks: Content | None = None,
        *,
        tool_calls: Iterable[ToolCall] = (),
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
        extras: Mapping[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> Message:
        """An assistant message: text, thinking, tool calls in any order; ``tool_calls``
        are appended after ``text_or_blocks``.

        Examples:
            >>> Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6})]).call_ids
            ('c1',)
        """
        return cls(
            Role.ASSISTANT,
            text_or_blocks,
            tool_calls,
            None,
            metadata,
            id,
            recorded_at,
            extras=extras,
            usage=usage,
        )

    @classmethod
    def tool(
        cls,
        tool_call_id: str,
        text_or_blocks: Content = "",
        *,
        is_error: bool = False,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recorded_at: datetime | None = None,
        extras: Mapping[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> Message:
        """The result of the tool call ``tool_call_id``; it may be empty.

        Examples:
            >>> Message.tool("c1", "42").tool_call_id
            'c1'
            >>> Message.tool("c2", "no such city", is_error=True).is_error
            True
        """
        return cls(
            Role.TOOL,
            text_or_blocks,
            (),
            tool_call_id,
            metadata,
            id,
            recorded_at,
            is_error=is_error,
            extras=extras,
            usage=usage,
        )

    def __getstate__(self) -> dict[str, Any]:
        """The fields, for ``copy`` and ``pickle`` (the copy works out the rest again)."""
        return self.__dict__

    # -- reading ------------------------------------------------------------------------

    # Both are derived from ``content`` once and kept in slots beside the fields. Not
    # cached_property, whose lock costs more than the scan on Python 3.10 and 3.11.

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool-call blocks of ``content``, in order."""
        found: tuple[ToolCall, ...] | None = getattr(self, "_tool_calls", None)
        if found is None:
            found = tuple(b for b in self.content if type(b) is ToolCall)
            object.__setattr__(self, "_tool_calls", found)
        return found

    @property
    def call_ids(self) -> tuple[str, ...]:
        """The ids of the calls this message makes, in order: its tool calls' ids, and the
        ``call_id`` of opaque items that a tool message answers."""
        found: tuple[str, ...] | None = getattr(self, "_call_ids", None)
        if found is None:
            found = call_ids(self.content)
            object.__setattr__(self, "_call_ids", found)
        return found

    def text_content(self) -> str:
        """The non-empty text blocks joined with newlines (thinking is left out)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock) and b.text)

    def has_content_type(self, kind: str | type) -> bool:
        """Whether a block of ``kind`` is here: a kind (``"text"``, ``"tool_call"``, ...) or a
        block class."""
        if isinstance(kind, type):
            return any(isinstance(b, kind) for b in self.content)
        return any(b.kind == kind for b in self.content)

    def with_recorded_at(self, when: datetime | None) -> Message:
        """A copy of this message with ``recorded_at`` set."""
        return copy_unchecked(Message, self, recorded_at=check_time(when))

    # -- wire format --------------------------------------------------------------------

    def _wire(self, bytes_as: Any) -> dict[str, Any]:
        """The wire form without ``recorded_at``, JSON values left frozen."""
        return {
            "v": WIRE_VERSION,
            "id": self.id,
            "role": self.role.value,
            "content": [block._fields(bytes_as) for block in self.content],
            "tool_call_id": self.tool_call_id,
            "is_error": self.is_error,
            "metadata": self.metadata,
            "extras": self.extras,
            # Only when known: the forms (and stored digests) of messages without usage
            # stay what they were before usage existed.
            **({} if self.usage is None else {"usage": self.usage.to_dict()}),
        }

    def to_dict(self) -> dict[str, Any]:
        """The versioned JSON-ready form of this message (bytes as base64).

        Plain ``dict``/``list``/``str``/``int`` values that ``json.dumps`` accepts;
        ``recorded_at`` is ISO 8601 in UTC. :meth:`from_dict` reads it back equal.

        Examples:
            >>> data = Message.user("hi", id="m1").to_dict()
            >>> data["v"], data["role"], data["content"]
            (2, 'user', [{'kind': 'text', 'text': 'hi'}])
        """
        out: dict[str, Any] = thaw_json(self._wire(b64_of))
        out["recorded_at"] = self.recorded_at.isoformat() if self.recorded_at else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Rebuild a message from :meth:`to_dict` output (version 2, or version 1).

        Examples:
            >>> Message.from_dict({"role": "user", "content": [{"kind": "text", "text": "hi"}]})
            ... # doctest: +ELLIPSIS
            Message(role=<Role.USER: 'user'>, content=(TextBlock(text='hi', ...),), ...)

        Raises:
            InvalidMessageError: a field is missing, unknown, of the wrong type or invalid;
                the message names it.
        """
        from sqlmemory.types._message_wire import message_from_dict

        return message_from_dict(cls, data)


def canonical_json(message: Message) -> str:
    """The canonical form of a message's content: what "the same message" means.

    The wire form without ``recorded_at``, key order kept, compact, with image and
    document bytes given by their SHA-256 (``"sha256:<hex>"``) instead of base64, so equal
    forms mean equal wire forms and big blobs cost one hash. Storages compare messages by
    this form, the SQL storages by its SHA-256 (``docs/contract/persistence.md``).

    Examples:
        >>> canonical_json(Message.user("hi", id="m1"))
        '{"v":2,"id":"m1","role":"user","content":[{"kind":"text","text":"hi"}],"tool_call_id":null,"is_error":false,"metadata":{},"extras":{}}'
    """
    plain = plain_canonical(message, WIRE_VERSION)  # a text alone: _canonical.py
    if plain is not None:
        return plain
    simple = simple_canonical(message, WIRE_VERSION)  # texts and tool calls: _canonical.py
    if simple is not None:
        return simple
    return dump_json(message._wire(sha_reference))
