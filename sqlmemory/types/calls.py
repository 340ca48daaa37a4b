"""Tool calls and opaque provider items: blocks of an assistant message's content.

Pure Python; no SQLAlchemy. A :class:`ToolCall` sits among text and thinking blocks at
the place the model emitted it; an :class:`OpaqueBlock` keeps a provider item with no
common meaning verbatim (``docs/contract/messages.md``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import check_keys, optional_field, required_field, shown
from sqlmemory.types._json import (
    EMPTY,
    FrozenDict,
    check_str,
    dump_json,
    freeze_json,
    freeze_mapping,
    thaw_json,
)
from sqlmemory.types.blocks import BytesAs, block_extras, check_id

__all__ = ["OpaqueBlock", "ToolCall", "parse_arguments"]


def _empty() -> FrozenDict:
    return EMPTY


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# json.loads(text, parse_constant=...) would build a decoder per call (a text starting
# with a byte order mark is refused by both).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def parse_arguments(text: str) -> FrozenDict | None:
    """The arguments ``text`` holds when it is a JSON object (within bounds), else ``None``."""
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    try:
        frozen: FrozenDict = freeze_json(value, "ToolCall.arguments")
    except (InvalidMessageError, RecursionError):
        return None
    return frozen


@dataclass(frozen=True)
class ToolCall:
    """A call of a tool by the assistant: a content block of an assistant message.

    Providers send arguments as text, which may not even be valid JSON. ``arguments_text``
    keeps that text byte for byte (what converters replay); given alone, ``arguments`` is
    parsed from it when it is a JSON object, else ``None``. Given ``arguments`` alone,
    ``arguments_text`` stays ``None``.

    Examples:
        >>> call = ToolCall("c1", "multiply", {"a": 6, "b": 7})
        >>> call.arguments_json
        '{"a":6,"b":7}'
        >>> ToolCall("c2", "multiply", arguments_text='{"a": 6}').arguments
        FrozenDict({'a': 6})
        >>> ToolCall("c3", "multiply", arguments_text='{"a": 6').arguments is None
        True
    """

    id: str
    """The provider's id of the call; a tool message answers it by this id."""
    name: str
    """The tool's name."""
    arguments: Mapping[str, Any] | None = None
    """JSON arguments, read-only, in the key order they were given; ``None`` when only an
    ``arguments_text`` that is no JSON object was given; ``{}`` when neither was given."""
    _: KW_ONLY
    arguments_text: str | None = None
    """The arguments as the provider sent them, byte for byte, valid JSON or not."""
    extras: Mapping[str, Any] = field(default_factory=_empty)
    """Provider fields with no common meaning (an item's ``id``/``status``, ...)."""
    kind: ClassVar[Literal["tool_call"]] = "tool_call"

    def __post_init__(self) -> None:
        check_id(self.id, "ToolCall.id")
        check_str(self.name, "ToolCall.name", allow_empty=False)
        text = self.arguments_text
        if text is not None:
            check_str(text, "ToolCall.arguments_text")
        arguments: FrozenDict | None
        if self.arguments is not None:
            arguments = freeze_mapping(self.arguments, "ToolCall.arguments")
        elif text is not None:
            arguments = parse_arguments(text)
        else:
            arguments = EMPTY
        object.__setattr__(self, "arguments", arguments)
        object.__setattr__(self, "extras", block_extras(self.extras, "ToolCall.extras"))

    @property
    def arguments_json(self) -> str:
        """The arguments as a provider is sent them: ``arguments_text`` when given, else
        ``arguments`` as compact JSON, keys in their original order."""
        if self.arguments_text is not None:
            return self.arguments_text
        return dump_json(self.arguments)

    def _fields(self, bytes_as: BytesAs) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "tool_call", "id": self.id, "name": self.name}
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.arguments_text is not None:
            out["arguments_text"] = self.arguments_text
        if self.extras:
            out["extras"] = self.extras
        return out

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this call."""
        thawed: dict[str, Any] = thaw_json(self._fields(str))
        return thawed

    @classmethod
    def from_dict(cls, data: Any, where: str = "tool_call") -> ToolCall:
        """The call of a wire form; errors name the field, prefixed by ``where``.

        Reads the ``kind: "tool_call"`` block of the current wire form, and the tool call
        objects of version 1 (``id``, ``name``, ``arguments``).
        """
        if not isinstance(data, Mapping):
            raise InvalidMessageError(f"{where} must be an object")
        check_keys(data, _KEYS, where)
        kind = data.get("kind", "tool_call")
        if kind != "tool_call":
            raise InvalidMessageError(f"{where}.kind {shown(kind)} is not 'tool_call'")
        try:
            return cls(
                required_field(data, "id", where, str),
                required_field(data, "name", where, str),
                optional_field(data, "arguments", where, Mapping),
                arguments_text=optional_field(data, "arguments_text", where, str),
                extras=optional_field(data, "extras", where, Mapping) or EMPTY,
            )
        except InvalidMessageError as exc:
            if str(exc).startswith(where):
                raise
            raise InvalidMessageError(f"{where}: {exc}") from None


_KEYS = frozenset({"kind", "id", "name", "arguments", "arguments_text", "extras"})


@dataclass(frozen=True)
class OpaqueBlock:
    """A provider item with no common meaning, kept verbatim and replayed only to its provider.

    Hosted tool calls and their results (web search, file search, code interpreter, computer
    use, MCP), compaction items, and anything a converter does not know. Converting for
    another provider drops it. An item that a later message answers by id (a computer call
    and its output, an MCP approval request and its response) names that id in ``call_id``,
    so windows keep the two together like a tool call and its result.

    Examples:
        >>> item = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
        >>> block = OpaqueBlock("openai", item)
        >>> block.payload == item, list(block.payload)
        (True, ['type', 'id', 'status'])
    """

    provider: str
    """Who defined the item, for example ``"openai"`` or ``"anthropic"``."""
    payload: Mapping[str, Any]
    """The provider's JSON object, verbatim (key order included), read-only."""
    _: KW_ONLY
    call_id: str | None = None
    """The id by which a later tool message answers this item, if any."""
    extras: Mapping[str, Any] = field(default_factory=_empty)
    """Provider fields with no common meaning, besides the payload."""
    kind: ClassVar[Literal["opaque"]] = "opaque"

    def __post_init__(self) -> None:
        check_str(self.provider, "OpaqueBlock.provider", allow_empty=False)
        if len(self.provider) > MAX_PROVIDER_LENGTH:
            raise InvalidMessageError(
                f"OpaqueBlock.provider is longer than {MAX_PROVIDER_LENGTH} characters"
            )
        object.__setattr__(self, "payload", freeze_mapping(self.payload, "OpaqueBlock.payload"))
        if self.call_id is not None:
            check_id(self.call_id, "OpaqueBlock.call_id")
        object.__setattr__(self, "extras", block_extras(self.extras, "OpaqueBlock.extras"))

    def _fields(self, bytes_as: BytesAs) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "opaque", "provider": self.provider, "payload": self.payload}
        if self.call_id is not None:
            out["call_id"] = self.call_id
        if self.extras:
            out["extras"] = self.extras
        return out

    def to_dict(self) -> dict[str, Any]:
        """The wire form of this block."""
        thawed: dict[str, Any] = thaw_json(self._fields(str))
        return thawed

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "block") -> OpaqueBlock:
        """The block of a wire form; errors name the field, prefixed by ``where``."""
        check_keys(data, _OPAQUE_KEYS, where)
        return cls(
            required_field(data, "provider", where, str),
            required_field(data, "payload", where, Mapping),
            call_id=optional_field(data, "call_id", where, str),
            extras=optional_field(data, "extras", where, Mapping) or EMPTY,
        )


MAX_PROVIDER_LENGTH = 64
_OPAQUE_KEYS = frozenset({"kind", "provider", "payload", "call_id", "extras"})
