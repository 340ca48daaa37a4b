"""Reading Anthropic Messages turns (params and responses) into messages.

A turn becomes one message, except a user turn holding ``tool_result`` blocks, which
becomes one tool message per result and a user message per run of other blocks; a
response (``Message``) becomes one assistant message. The turn's own keys, and where the
default grouping rule would draw its boundaries otherwise, are noted in the first
message's ``extras["anthropic"]`` (:mod:`sqlmemory.formats._anthropic_notes`); the blocks
are read by :mod:`sqlmemory.formats._anthropic_blocks` (``docs/providers.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._anthropic_blocks import (
    Fault,
    build,
    plain_block,
    read_block,
    read_text_block,
    rest_of,
    str_field,
)
from sqlmemory.formats._anthropic_notes import (
    IN_MESSAGES,
    JOINS,
    LIST,
    ORDER,
    RESPONSE,
    SYSTEM_ROLES,
    TURN,
    TURN_ORDER,
    TurnState,
    as_extras,
    single_list_note,
    stringable,
    turn_role,
)
from sqlmemory.formats._anthropic_write import tool_result
from sqlmemory.formats._converting import ANTHROPIC, format_extras, plain, where
from sqlmemory.formats._usage_read import ANTHROPIC_USAGE, read_usage
from sqlmemory.types import Block, Message, Role, TextBlock
from sqlmemory.types._fields import shown

__all__ = ["read_messages"]


def read_messages(items: list[Any], system: Any) -> list[Message]:
    """The messages of ``system`` (if not ``None``) and of the turns ``items``, in order.

    Raises:
        ConversionError: an item is malformed; the message names its index and field, or
            ``system``.
    """
    out: list[Message] = []
    if system is not None:
        out.extend(_read_system(system))
    state = TurnState()
    for index, item in enumerate(items):
        try:
            turn = _read_turn(plain(item, index), out)
        except Fault as fault:
            raise ConversionError(where(index, str(fault))) from None
        except RecursionError:
            raise ConversionError(where(index, "content: nested too deeply")) from None
        out.extend(_mark_turn(turn, state))
    return out


def _read_system(system: Any) -> list[Message]:
    try:
        if isinstance(system, str):
            return [_message(Role.SYSTEM, system, "")] if system else []
        if isinstance(system, (bytes, Mapping)) or not isinstance(system, Iterable):
            raise Fault(
                "", f"expected a string or a list of text blocks, not {type(system).__name__}"
            )
        blocks = [read_text_block(plain_block(b, f"[{j}]"), f"[{j}]") for j, b in enumerate(system)]
        if not blocks:
            return []
        return [_message(Role.SYSTEM, blocks, "", single_list_note(blocks))]
    except Fault as fault:
        raise ConversionError(f"system{fault.field}: {fault.why}") from None
    except RecursionError:
        raise ConversionError("system: nested too deeply") from None


def _message(
    role: Role,
    content: Any,
    field: str,
    extras: Mapping[str, Any] | None = None,
    **fields: Any,
) -> Message:
    """A message built from read blocks; a model error names ``field``."""
    try:
        return Message(role, content, extras=as_extras(extras), **fields)
    except InvalidMessageError as exc:
        raise Fault(field, str(exc)) from None


def _read_turn(data: Any, before: list[Message]) -> list[Message]:
    """The messages of one turn (a param, or a response)."""
    if not isinstance(data, Mapping):
        raise Fault("", f"expected an object, got {type(data).__name__}")
    if data.get("type") == "message":
        return _read_response(data)
    role = data.get("role")
    if role not in ("user", "assistant", "system"):
        raise Fault("role", f"expected 'user', 'assistant' or 'system', got {shown(role)}")
    if "content" not in data:
        raise Fault("content", "is missing")
    own = _turn_notes(data)
    content = data["content"]
    if role == "assistant":
        return [_read_assistant(content, own)]
    if role == "system":
        if not any(m.role not in SYSTEM_ROLES for m in before):
            own[IN_MESSAGES] = True
        return [_read_system_turn(content, own)]
    return _read_user(content, own)


def _turn_notes(data: Mapping[str, Any]) -> dict[str, Any]:
    own: dict[str, Any] = {}
    rest = {k: v for k, v in data.items() if k not in ("role", "content")}
    if rest:
        own[TURN] = rest
    if list(data) != ["role", "content", *rest]:
        own[TURN_ORDER] = list(data)
    return own


def _read_response(data: Mapping[str, Any]) -> list[Message]:
    content = data.get("content")
    if not isinstance(content, list):
        raise Fault("content", "a response's content must be a list")
    if not content:
        return []
    blocks = [read_block(b, f"content[{j}]") for j, b in enumerate(content)]
    kept = {k: v for k, v in data.items() if k not in ("id", "type", "role", "content")}
    own: dict[str, Any] = {RESPONSE: kept} if kept else {}
    own.update(single_list_note(blocks))
    response_id = data.get("id")
    fields: dict[str, Any] = {"id": response_id} if isinstance(response_id, str) else {}
    # The model and usage stay in the notes too, so the response comes back whole.
    fields["usage"] = read_usage(data, ANTHROPIC_USAGE, Fault)
    return [_message(Role.ASSISTANT, blocks, "id", own, **fields)]


def _read_assistant(content: Any, own: dict[str, Any]) -> Message:
    if isinstance(content, str):
        return _message(Role.ASSISTANT, content, "content", own)
    blocks = [read_block(b, f"content[{j}]") for j, b in enumerate(_content_list(content))]
    return _message(Role.ASSISTANT, blocks, "content", {**own, **single_list_note(blocks)})


def _read_system_turn(content: Any, own: dict[str, Any]) -> Message:
    if isinstance(content, str):
        return _message(Role.SYSTEM, content, "content", own)
    blocks = [
        read_text_block(plain_block(b, f"content[{j}]"), f"content[{j}]")
        for j, b in enumerate(_content_list(content))
    ]
    return _message(Role.SYSTEM, blocks, "content", {**own, **single_list_note(blocks)})


def _content_list(content: Any) -> list[Any]:
    if isinstance(content, (str, bytes, Mapping)) or not isinstance(content, Iterable):
        raise Fault("content", f"expected a string or a list, got {type(content).__name__}")
    return list(content)


def _read_user(content: Any, own: dict[str, Any]) -> list[Message]:
    """One user turn: a tool message per ``tool_result``, a user message per other run."""
    if isinstance(content, str):
        return [_message(Role.USER, content, "content", own)]
    messages: list[Message] = []
    run: list[Block] = []
    run_start = 0
    items = _content_list(content)
    for j, item in enumerate(items):
        block = plain_block(item, f"content[{j}]")
        if block.get("type") != "tool_result":
            if not run:
                run_start = j
            run.append(read_block(block, f"content[{j}]"))
            continue
        if run:
            messages.append(_message(Role.USER, run, f"content[{run_start}]"))
            run = []
        messages.append(_read_tool_result(block, f"content[{j}]"))
    if run or not items:
        messages.append(_message(Role.USER, run, f"content[{run_start}]"))
    return _with_turn_notes(messages, own, len(items) == 1 and len(run) == 1)


def _with_turn_notes(messages: list[Message], own: dict[str, Any], single: bool) -> list[Message]:
    """The turn's notes go on its first message; a lone text block in a list is noted."""
    first = messages[0]
    notes = dict(own)
    if single and first.role is Role.USER:
        notes.update(single_list_note(list(first.content)))
    if notes:
        messages[0] = _with_notes(first, notes)
    return messages


def _with_notes(message: Message, notes: Mapping[str, Any]) -> Message:
    own = {**format_extras(message.extras, ANTHROPIC), **notes}
    extras = {**message.extras, ANTHROPIC: own}
    try:  # the turn's own keys are checked here: a value JSON cannot hold is refused
        return dataclasses.replace(message, extras=extras)
    except InvalidMessageError as exc:
        raise Fault("", str(exc)) from None


def _read_tool_result(block: Mapping[str, Any], field: str) -> Message:
    call_id = str_field(block, "tool_use_id", field)
    is_error = block.get("is_error", False)
    if not isinstance(is_error, bool):
        raise Fault(f"{field}.is_error", f"expected a bool, got {type(is_error).__name__}")
    own = rest_of(block, ("type", "tool_use_id", "content", "is_error"))
    if "is_error" in block and not is_error:
        own["is_error"] = False
    content: Any = block.get("content", [])
    if isinstance(content, str):
        blocks: list[Block] = [build(lambda: TextBlock(content), f"{field}.content")]
    else:
        items = _content_list(content) if "content" in block else []
        blocks = [read_block(b, f"{field}.content[{j}]") for j, b in enumerate(items)]
        if "content" in block and (not blocks or stringable(blocks)):
            own[LIST] = True
    message = _message(Role.TOOL, blocks, field, own, tool_call_id=call_id, is_error=is_error)
    written = tool_result(message)
    if list(written) != list(block):
        message = _with_notes(message, {ORDER: list(block)})
    return message


def _mark_turn(turn: list[Message], state: TurnState) -> Iterator[Message]:
    """The messages of one read turn, noted where the default rule would group otherwise."""
    for position, message in enumerate(turn):
        joined = position > 0
        if state.joins(message) != joined and turn_role(message) == "user":
            message = _with_notes(message, {JOINS: joined})
        state.place(message, joined)
        yield message
