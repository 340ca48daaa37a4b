"""Writing messages as the ``system`` and ``messages`` of an Anthropic request.

The leading system and developer messages become ``system``; the other messages are
grouped into turns by the default rule (:class:`~sqlmemory.formats._anthropic_notes.TurnState`)
unless a note says otherwise, a tool result only where it answers the assistant turn right
before it. Blocks are written by :mod:`sqlmemory.formats._anthropic_blocks`; what
Anthropic cannot carry is left out with a warning (``docs/providers.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmemory.formats._anthropic_blocks import write_block
from sqlmemory.formats._anthropic_notes import (
    IN_MESSAGES,
    JOINS,
    LIST,
    ORDER,
    SYSTEM_ROLES,
    TURN,
    TURN_ORDER,
    TurnState,
    noted_fields,
    own_of,
    reordered,
    stringable,
    turn_role,
    with_fields,
)
from sqlmemory.formats._converting import ANTHROPIC, warn_dropped
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
)

__all__ = ["tool_result", "write_request"]


def write_request(history: list[Message]) -> dict[str, Any]:
    """The ``system`` (left out when there is none) and ``messages`` of ``history``."""
    lead = 0
    while lead < len(history) and _is_leading_system(history[lead]):
        lead += 1
    out: dict[str, Any] = {}
    system = _system_value(history[:lead])
    if system is not None:
        out["system"] = system
    out["messages"] = _write_turns(history[lead:])
    return out


def _is_leading_system(message: Message) -> bool:
    return message.role in SYSTEM_ROLES and not own_of(message).get(IN_MESSAGES)


def _foreign(extras: Mapping[str, Any]) -> bool:
    """Whether another format put something in these extras."""
    return any(key != ANTHROPIC for key in extras)


def _system_value(messages: list[Message]) -> Any:
    """The top-level ``system``: a string for one plain text, else a list of text blocks."""
    if not messages:
        return None
    first = messages[0]
    if len(messages) == 1 and stringable(list(first.content)) and not own_of(first).get(LIST):
        text = first.content[0]
        assert isinstance(text, TextBlock)  # noqa: S101 - stringable checked it
        return text.text
    blocks = [b for m in messages for b in _text_only(m)]
    return blocks or None


def _text_only(message: Message) -> list[dict[str, Any]]:
    out = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text or own_of(block):
                out.append(write_block(block))
        else:
            warn_dropped(f"a {block.kind} block of a {message.role.value} message", ANTHROPIC)
    return out


def _write_turns(messages: list[Message]) -> list[dict[str, Any]]:
    writer = _TurnWriter()
    for message in messages:
        writer.add(message)
    return writer.turns


class _TurnWriter:
    """Turns built one message at a time; a tool result must answer the turn before."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self.state = TurnState()
        self.pending: set[str] = set()
        """The ids of the tool calls of the last assistant turn not answered yet."""
        self.user_turn_sent = False
        """The API takes no assistant turn before the first user turn."""

    def add(self, message: Message) -> None:
        if not self.user_turn_sent and message.role in (Role.ASSISTANT, Role.TOOL):
            what = "an assistant message" if message.role is Role.ASSISTANT else "a tool result"
            warn_dropped(f"{what} before the first user turn", ANTHROPIC)
            return
        joins = bool(own_of(message).get(JOINS, self.state.joins(message)))
        joins = joins and self.state.turn_role == "user" and turn_role(message) == "user"
        if message.role is Role.TOOL:
            if not self._answers(message, joins):
                warn_dropped(
                    f"the result of {message.tool_call_id}, which answers no tool_use of the "
                    "assistant turn before it",
                    ANTHROPIC,
                )
                return
            self.pending.discard(str(message.tool_call_id))
        if joins:
            _append_to(self.turns[-1], message)
        else:
            turn = _new_turn(message)
            if turn is None:
                return
            self._opened(turn)
        self.state.place(message, joins)

    def _answers(self, message: Message, joins: bool) -> bool:
        after_assistant = bool(self.turns) and self.turns[-1]["role"] == "assistant"
        return message.tool_call_id in self.pending and (joins or after_assistant)

    def _opened(self, turn: dict[str, Any]) -> None:
        after_assistant = bool(self.turns) and self.turns[-1]["role"] == "assistant"
        if turn["role"] == "assistant":
            content = turn["content"]
            blocks = content if isinstance(content, list) else []
            self.pending = {b["id"] for b in blocks if b.get("type") == "tool_use"}
        elif turn["role"] != "user" or not after_assistant:
            self.pending = set()
        self.user_turn_sent = self.user_turn_sent or turn["role"] == "user"
        self.turns.append(turn)


def _new_turn(message: Message) -> dict[str, Any] | None:
    role = turn_role(message)
    if message.role is Role.TOOL:
        content: Any = [tool_result(message)]
    else:
        blocks = _write_content(message)
        if not blocks:
            return None
        one_string = stringable(list(message.content)) and not own_of(message).get(LIST)
        content = blocks[0]["text"] if one_string and len(blocks) == 1 else blocks
    own = own_of(message)
    turn: dict[str, Any] = {"role": role, "content": content, **noted_fields(own, TURN)}
    return reordered(turn, own.get(TURN_ORDER))


def _append_to(turn: dict[str, Any], message: Message) -> None:
    content = turn["content"]
    if isinstance(content, str):
        content = turn["content"] = [{"type": "text", "text": content}]
    if message.role is Role.TOOL:
        # The API wants a turn's tool_result blocks before anything else in it.
        results = next(
            (i for i, block in enumerate(content) if block.get("type") != "tool_result"),
            len(content),
        )
        content.insert(results, tool_result(message))
    else:
        content.extend(_write_content(message))


def _write_content(message: Message) -> list[dict[str, Any]]:
    return [
        write_block(block)
        for block in message.content
        if not _blank(block, message) and _sendable(block, message)
    ]


def _blank(block: Block, message: Message) -> bool:
    """Whether ``block`` is a text the API refuses in a turn: empty or only whitespace.

    An empty text says nothing and goes silently; whitespace is reported.
    """
    if not isinstance(block, TextBlock) or block.text.strip():
        return False
    if block.text:
        warn_dropped(f"a {message.role.value} text of whitespace only", ANTHROPIC)
    return True


def _sendable(block: Block, message: Message) -> bool:
    """Whether Anthropic can carry ``block`` (a warning says why not)."""
    if isinstance(block, OpaqueBlock):
        if block.provider == ANTHROPIC:
            return True
        warn_dropped(f"an opaque item of {block.provider}", ANTHROPIC)
        return False
    if isinstance(block, ThinkingBlock) and (block.signature is None or _foreign(block.extras)):
        warn_dropped("thinking that Anthropic did not sign", ANTHROPIC)
        return False
    if isinstance(block, RedactedThinkingBlock) and _foreign(block.extras):
        warn_dropped("redacted thinking of another provider", ANTHROPIC)
        return False
    if isinstance(block, DocumentBlock) and block.media_type == "text/plain" and block.data:
        try:
            block.data.decode("utf-8")
        except UnicodeDecodeError:
            warn_dropped("a text document that is not UTF-8", ANTHROPIC)
            return False
    if message.role in SYSTEM_ROLES and not isinstance(block, TextBlock):
        warn_dropped(f"a {block.kind} block of a system message", ANTHROPIC)
        return False
    return True


def tool_result(message: Message) -> dict[str, Any]:
    """The ``tool_result`` block of tool message ``message``."""
    own = own_of(message)
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    blocks = []
    for block in message.content:
        if not isinstance(block, (TextBlock, ImageBlock, DocumentBlock, OpaqueBlock)):
            warn_dropped(f"a {block.kind} block of a tool result", ANTHROPIC)
        elif _sendable(block, message):
            blocks.append(write_block(block))
    if own.get(LIST) or (blocks and not stringable(list(message.content))):
        out["content"] = blocks
    elif blocks:
        out["content"] = blocks[0]["text"]
    if message.is_error:
        out["is_error"] = True
    return reordered(with_fields(out, own), own.get(ORDER))
