"""The Anthropic converter's notes on the form, and the defaults they depart from.

Besides the provider's fields, ``extras["anthropic"]`` holds this converter's notes, under
keys that start with ``_`` (provider fields never do, and notes are never sent): a key
order other than the one written by default, content sent as a list where a string would
do, a turn boundary the default grouping rule (:class:`TurnState`) would not draw, ...
Reading notes only where the default would not give the provider's object back; writing
follows the notes, so ``to_anthropic(from_anthropic(x))`` gives ``x`` back exactly
(``docs/providers.md``, Anthropic Messages). Here are the note keys, the defaults both
directions share (the grouping rule, when content is written as a string) and the
helpers that put kept fields back, in their noted order.

Pure Python; no SDK.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from sqlmemory.formats._converting import ANTHROPIC, format_extras
from sqlmemory.types import Block, Message, Role, TextBlock
from sqlmemory.types._json import thaw_json

__all__ = [
    "B64",
    "IN_MESSAGES",
    "JOINS",
    "LIST",
    "ORDER",
    "RESPONSE",
    "SOURCE",
    "SOURCE_ORDER",
    "SOURCE_TYPE",
    "SYSTEM_ROLES",
    "TURN",
    "TURN_ORDER",
    "TurnState",
    "as_extras",
    "noted_fields",
    "own_of",
    "reordered",
    "single_list_note",
    "stringable",
    "turn_role",
    "with_fields",
]

# The notes this converter keeps in extras["anthropic"] (never sent as fields).
ORDER = "_order"  # a dict's key order, when it differs from the one written by default
SOURCE = "_source"  # unknown keys of an image's or document's source
SOURCE_ORDER = "_source_order"
SOURCE_TYPE = "_source_type"  # a text document sent as base64
B64 = "_b64"  # base64 text that is not the canonical encoding of its bytes
LIST = "_list"  # content sent as a list of one text block rather than a string
JOINS = "_joins"  # joins the previous turn (or not) against the default rule
IN_MESSAGES = "_in_messages"  # a leading system message sent in `messages`
TURN = "_turn"  # a turn's own keys besides role and content
TURN_ORDER = "_turn_order"
RESPONSE = "_response"  # a response's fields (model, stop_reason, usage): kept, not sent

SYSTEM_ROLES = (Role.SYSTEM, Role.DEVELOPER)


def own_of(message: Message | Block) -> Mapping[str, Any]:
    """The Anthropic part of a message's or block's ``extras``: fields and notes."""
    return format_extras(message.extras, ANTHROPIC)


def as_extras(own: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``extras`` of a block or message read with ``own`` fields and notes."""
    return {ANTHROPIC: dict(own)} if own else {}


def stringable(blocks: Sequence[Block]) -> bool:
    """Whether these blocks are one text block with nothing of Anthropic's besides."""
    return (
        len(blocks) == 1
        and isinstance(blocks[0], TextBlock)
        and not format_extras(blocks[0].extras, ANTHROPIC)
    )


def single_list_note(blocks: Sequence[Block]) -> dict[str, Any]:
    """``_list`` when a list of blocks would otherwise be written as a string."""
    return {LIST: True} if stringable(blocks) else {}


@dataclasses.dataclass
class TurnState:
    """What the default grouping rule looks at: the previous turn and its last message."""

    turn_role: str | None = None
    last_role: Role | None = None

    def joins(self, message: Message) -> bool:
        """Whether ``message`` joins the previous turn when nothing says otherwise.

        A tool result joins a user turn; a user message joins a user turn that ends with a
        tool result (the text after the results).
        """
        if self.turn_role != "user":
            return False
        if message.role is Role.TOOL:
            return True
        return message.role is Role.USER and self.last_role is Role.TOOL

    def place(self, message: Message, joined: bool) -> None:
        if not joined:
            self.turn_role = turn_role(message)
        self.last_role = message.role


def turn_role(message: Message) -> str:
    """The role of the Anthropic turn ``message`` belongs to."""
    if message.role in SYSTEM_ROLES:
        return "system"
    return "assistant" if message.role is Role.ASSISTANT else "user"


def with_fields(out: dict[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """``out`` with the Anthropic fields kept in extras (the notes left out)."""
    for key, value in own.items():
        if not key.startswith("_"):
            out[key] = thaw_json(value)
    return out


def noted_fields(own: Mapping[str, Any], note: str) -> dict[str, Any]:
    """The provider fields kept under ``note``; none if it is not a mapping (hand-written)."""
    fields = own.get(note)
    return thaw_json(fields) if isinstance(fields, Mapping) else {}


def reordered(out: dict[str, Any], order: Any) -> dict[str, Any]:
    """``out`` in the noted key ``order``: the keys it names first, then the others."""
    if not order or not isinstance(order, Sequence):  # no note, or one not written here
        return out
    ordered = {key: out[key] for key in order if isinstance(key, str) and key in out}
    ordered.update(out)
    return ordered
