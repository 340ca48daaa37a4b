"""Anthropic Messages: ``from_anthropic`` and ``to_anthropic``.

Pure Python; the ``anthropic`` SDK is never imported. A turn of the Messages API becomes
one :class:`~sqlmemory.types.Message`, except a user turn holding ``tool_result`` blocks,
which becomes one tool message per result (and a user message per run of other blocks)
and comes back as one turn. Block fields with no common meaning (``cache_control``,
``citations``, ``caller``, ...) are kept in the block's ``extras["anthropic"]``; the keys
of that mapping that start with ``_`` are this converter's notes on the form (key order,
string or list content, turn boundaries), so that ``to_anthropic(from_anthropic(x))``
gives ``x`` back exactly. The contract is ``docs/providers.md``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import (
    ANTHROPIC,
    format_extras,
    items_of,
    plain,
    warn_dropped,
    where,
)
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
    ToolCall,
)
from sqlmemory.types._fields import shown
from sqlmemory.types._json import thaw_json

__all__ = ["from_anthropic", "to_anthropic"]

# The notes this converter keeps in extras["anthropic"] (never sent as fields).
_ORDER = "_order"  # a dict's key order, when it differs from the one written by default
_SOURCE = "_source"  # unknown keys of an image's or document's source
_SOURCE_ORDER = "_source_order"
_SOURCE_TYPE = "_source_type"  # a text document sent as base64
_B64 = "_b64"  # base64 text that is not the canonical encoding of its bytes
_LIST = "_list"  # content sent as a list of one text block rather than a string
_JOINS = "_joins"  # joins the previous turn (or not) against the default rule
_IN_MESSAGES = "_in_messages"  # a leading system message sent in `messages`
_TURN = "_turn"  # a turn's own keys besides role and content
_TURN_ORDER = "_turn_order"
_RESPONSE = "_response"  # a response's fields (model, stop_reason, usage): kept, not sent

_SYSTEM_ROLES = (Role.SYSTEM, Role.DEVELOPER)
_OWN_TYPES = frozenset(
    {"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"}
)


class _Fault(Exception):
    """A malformed field, named relative to the item being read."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field}: {why}" if field else why)
        self.field = field
        self.why = why


# -- reading -------------------------------------------------------------------------------


def from_anthropic(messages: Iterable[Any] | Any, system: Any = None) -> list[Message]:
    """Messages from Anthropic Messages params, or from a response (``Message``).

    ``messages`` is the ``messages`` list of a request (dicts or SDK objects), a response
    object (``client.messages.create(...)``), or a list mixing both; ``system`` the
    request's ``system`` (a string or a list of text blocks). A response becomes one
    assistant message whose ``id`` is the response's id; a user turn holding
    ``tool_result`` blocks becomes one tool message per result. An empty ``system`` is no
    system prompt, and a response with no content gives no message.

    Examples:
        >>> history = from_anthropic(
        ...     [
        ...         {"role": "user", "content": "What is 6 x 7?"},
        ...         {"role": "assistant", "content": [
        ...             {"type": "tool_use", "id": "toolu_1", "name": "multiply",
        ...              "input": {"a": 6, "b": 7}}]},
        ...         {"role": "user", "content": [
        ...             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}]},
        ...     ],
        ...     system="Answer briefly.",
        ... )
        >>> [m.role.value for m in history]
        ['system', 'user', 'assistant', 'tool']
        >>> history[2].tool_calls[0].arguments
        FrozenDict({'a': 6, 'b': 7})

    Raises:
        ConversionError: an item is malformed; the message names its index and field
            (``item 2: content[0].tool_use_id: ...``), or ``system``.
    """
    if not isinstance(messages, (Mapping, list, tuple)) and callable(
        getattr(messages, "model_dump", None)
    ):
        messages = [messages]
    items = items_of(messages, "messages")
    out: list[Message] = []
    if system is not None:
        out.extend(_read_system(system))
    state = _TurnState()
    for index, item in enumerate(items):
        try:
            turn = _read_turn(plain(item, index), out)
        except _Fault as fault:
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
            raise _Fault(
                "", f"expected a string or a list of text blocks, not {type(system).__name__}"
            )
        blocks = [
            _read_text_block(_plain_block(b, f"[{j}]"), f"[{j}]") for j, b in enumerate(system)
        ]
        if not blocks:
            return []
        return [_message(Role.SYSTEM, blocks, "", _single_list_note(blocks))]
    except _Fault as fault:
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
        return Message(role, content, extras=_as_extras(extras), **fields)
    except InvalidMessageError as exc:
        raise _Fault(field, str(exc)) from None


def _as_extras(own: Mapping[str, Any] | None) -> dict[str, Any]:
    return {ANTHROPIC: dict(own)} if own else {}


def _single_list_note(blocks: Sequence[Block]) -> dict[str, Any]:
    """``_list`` when a list of blocks would otherwise be written as a string."""
    return {_LIST: True} if _stringable(blocks) else {}


def _read_turn(data: Any, before: list[Message]) -> list[Message]:
    """The messages of one turn (a param, or a response)."""
    if not isinstance(data, Mapping):
        raise _Fault("", f"expected an object, got {type(data).__name__}")
    if data.get("type") == "message":
        return _read_response(data)
    role = data.get("role")
    if role not in ("user", "assistant", "system"):
        raise _Fault("role", f"expected 'user', 'assistant' or 'system', got {shown(role)}")
    if "content" not in data:
        raise _Fault("content", "is missing")
    own = _turn_notes(data)
    content = data["content"]
    if role == "assistant":
        return [_read_assistant(content, own)]
    if role == "system":
        if not any(m.role not in _SYSTEM_ROLES for m in before):
            own[_IN_MESSAGES] = True
        return [_read_system_turn(content, own)]
    return _read_user(content, own)


def _turn_notes(data: Mapping[str, Any]) -> dict[str, Any]:
    own: dict[str, Any] = {}
    rest = {k: v for k, v in data.items() if k not in ("role", "content")}
    if rest:
        own[_TURN] = rest
    if list(data) != ["role", "content", *rest]:
        own[_TURN_ORDER] = list(data)
    return own


def _read_response(data: Mapping[str, Any]) -> list[Message]:
    content = data.get("content")
    if not isinstance(content, list):
        raise _Fault("content", "a response's content must be a list")
    if not content:
        return []
    blocks = [_read_block(b, f"content[{j}]") for j, b in enumerate(content)]
    kept = {k: v for k, v in data.items() if k not in ("id", "type", "role", "content")}
    own: dict[str, Any] = {_RESPONSE: kept} if kept else {}
    own.update(_single_list_note(blocks))
    response_id = data.get("id")
    fields = {"id": response_id} if isinstance(response_id, str) else {}
    return [_message(Role.ASSISTANT, blocks, "id", own, **fields)]


def _read_assistant(content: Any, own: dict[str, Any]) -> Message:
    if isinstance(content, str):
        return _message(Role.ASSISTANT, content, "content", own)
    blocks = [_read_block(b, f"content[{j}]") for j, b in enumerate(_content_list(content))]
    return _message(Role.ASSISTANT, blocks, "content", {**own, **_single_list_note(blocks)})


def _read_system_turn(content: Any, own: dict[str, Any]) -> Message:
    if isinstance(content, str):
        return _message(Role.SYSTEM, content, "content", own)
    blocks = [
        _read_text_block(_plain_block(b, f"content[{j}]"), f"content[{j}]")
        for j, b in enumerate(_content_list(content))
    ]
    return _message(Role.SYSTEM, blocks, "content", {**own, **_single_list_note(blocks)})


def _content_list(content: Any) -> list[Any]:
    if isinstance(content, (str, bytes, Mapping)) or not isinstance(content, Iterable):
        raise _Fault("content", f"expected a string or a list, got {type(content).__name__}")
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
        block = _plain_block(item, f"content[{j}]")
        if block.get("type") != "tool_result":
            if not run:
                run_start = j
            run.append(_read_block(block, f"content[{j}]"))
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
        notes.update(_single_list_note(list(first.content)))
    if notes:
        messages[0] = _with_notes(first, notes)
    return messages


def _with_notes(message: Message, notes: Mapping[str, Any]) -> Message:
    own = {**format_extras(message.extras, ANTHROPIC), **notes}
    extras = {**message.extras, ANTHROPIC: own}
    try:  # the turn's own keys are checked here: a value JSON cannot hold is refused
        return dataclasses.replace(message, extras=extras)
    except InvalidMessageError as exc:
        raise _Fault("", str(exc)) from None


def _plain_block(item: Any, field: str) -> Mapping[str, Any]:
    try:
        block = plain(item, 0)
    except ConversionError:
        raise _Fault(field, f"expected a block, got {type(item).__name__}") from None
    if not isinstance(block, Mapping):
        raise _Fault(field, f"expected a block, got {type(block).__name__}")
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        raise _Fault(f"{field}.type", f"expected a block type, got {shown(kind)}")
    return block


def _read_block(item: Any, field: str) -> Block:
    block = _plain_block(item, field)
    kind = block["type"]
    reader = _READERS.get(kind)
    if kind == "tool_result":
        raise _Fault(f"{field}.type", "a tool_result belongs in a user turn")
    if reader is None:
        return _build(lambda: OpaqueBlock(ANTHROPIC, block), field)
    return reader(block, field)


def _build(make: Callable[[], Block], field: str) -> Block:
    try:
        return make()
    except InvalidMessageError as exc:
        raise _Fault(field, str(exc)) from None


def _str(block: Mapping[str, Any], key: str, field: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise _Fault(f"{field}.{key}", f"expected a string, got {type(value).__name__}")
    return value


def _rest(block: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    """The block's keys outside ``known`` (``None`` values included), in order."""
    return {k: v for k, v in block.items() if k not in known}


def _noted(block: Block, original: Mapping[str, Any]) -> Block:
    """``block`` with notes of the key orders it would not write by itself."""
    written = _write_block(block)
    notes: dict[str, Any] = {}
    if list(written) != list(original):
        notes[_ORDER] = list(original)
    source = original.get("source")
    if isinstance(source, Mapping) and list(written.get("source", ())) != list(source):
        notes[_SOURCE_ORDER] = list(source)
    if not notes:
        return block
    own = {**format_extras(block.extras, ANTHROPIC), **notes}
    return dataclasses.replace(block, extras={**block.extras, ANTHROPIC: own})


def _read_text_block(block: Any, field: str) -> TextBlock:
    if not isinstance(block, Mapping) or block.get("type") != "text":
        raise _Fault(f"{field}.type", "expected a text block")
    text = _str(block, "text", field)
    own = _rest(block, ("type", "text"))
    made = _build(lambda: TextBlock(text, extras=_as_extras(own)), field)
    noted = _noted(made, block)
    assert isinstance(noted, TextBlock)  # noqa: S101 - _noted keeps the block's class
    return noted


def _read_thinking(block: Mapping[str, Any], field: str) -> Block:
    thinking, signature = _str(block, "thinking", field), _str(block, "signature", field)
    own = _rest(block, ("type", "thinking", "signature"))
    made = _build(lambda: ThinkingBlock(thinking, signature, extras=_as_extras(own)), field)
    return _noted(made, block)


def _read_redacted(block: Mapping[str, Any], field: str) -> Block:
    data = _str(block, "data", field)
    own = _rest(block, ("type", "data"))
    return _noted(_build(lambda: RedactedThinkingBlock(data, extras=_as_extras(own)), field), block)


def _read_tool_use(block: Mapping[str, Any], field: str) -> Block:
    call_id, name = _str(block, "id", field), _str(block, "name", field)
    arguments = block.get("input")
    if not isinstance(arguments, Mapping):
        raise _Fault(f"{field}.input", f"expected an object, got {type(arguments).__name__}")
    own = _rest(block, ("type", "id", "name", "input"))
    made = _build(lambda: ToolCall(call_id, name, arguments, extras=_as_extras(own)), field)
    return _noted(made, block)


def _source_of(block: Mapping[str, Any], field: str) -> tuple[Mapping[str, Any], str]:
    source = block.get("source")
    if not isinstance(source, Mapping):
        raise _Fault(f"{field}.source", f"expected an object, got {type(source).__name__}")
    kind = source.get("type")
    if not isinstance(kind, str):
        raise _Fault(f"{field}.source.type", f"expected a source type, got {shown(kind)}")
    return source, kind


_SOURCE_KEYS = {
    "base64": ("type", "media_type", "data"),
    "text": ("type", "media_type", "data"),
    "url": ("type", "url"),
    "file": ("type", "file_id"),
}


def _source_fields(
    source: Mapping[str, Any], kind: str, field: str, own: dict[str, Any]
) -> dict[str, Any]:
    """The block fields of a source (``data``, ``media_type``, ``url``, ``file_id``)."""
    known = _SOURCE_KEYS[kind]
    where_ = f"{field}.source"
    fields: dict[str, Any] = {name: _str(source, name, where_) for name in known[1:]}
    unknown = _rest(source, known)
    if unknown:
        own[_SOURCE] = unknown
    if kind == "text":
        fields["data"] = _utf8(fields["data"], f"{where_}.data")
    elif kind == "base64":
        fields["data"] = _b64_decode(fields["data"], f"{where_}.data", own)
    return fields


def _utf8(text: str, field: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _Fault(field, f"holds a lone surrogate at index {exc.start}") from None


def _b64_decode(text: str, field: str, own: dict[str, Any]) -> bytes:
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise _Fault(field, "is not valid base64") from None
    if base64.b64encode(data).decode("ascii") != text:
        own[_B64] = text
    return data


def _read_image(block: Mapping[str, Any], field: str) -> Block:
    source, kind = _source_of(block, field)
    if kind not in ("base64", "url", "file"):
        return _build(lambda: OpaqueBlock(ANTHROPIC, block), field)
    own = _rest(block, ("type", "source"))
    fields = _source_fields(source, kind, field, own)
    return _noted(_build(lambda: ImageBlock(**fields, extras=_as_extras(own)), field), block)


def _read_document(block: Mapping[str, Any], field: str) -> Block:
    source, kind = _source_of(block, field)
    if kind not in _SOURCE_KEYS:
        return _build(lambda: OpaqueBlock(ANTHROPIC, block), field)
    title = block.get("title")
    own = _rest(
        block, ("type", "source", "title") if isinstance(title, str) else ("type", "source")
    )
    fields = _source_fields(source, kind, field, own)
    if kind == "base64" and fields["media_type"] == "text/plain":
        own[_SOURCE_TYPE] = "base64"
    if isinstance(title, str):
        fields["title"] = title
    return _noted(_build(lambda: DocumentBlock(**fields, extras=_as_extras(own)), field), block)


def _read_tool_result(block: Mapping[str, Any], field: str) -> Message:
    call_id = _str(block, "tool_use_id", field)
    is_error = block.get("is_error", False)
    if not isinstance(is_error, bool):
        raise _Fault(f"{field}.is_error", f"expected a bool, got {type(is_error).__name__}")
    own = _rest(block, ("type", "tool_use_id", "content", "is_error"))
    if "is_error" in block and not is_error:
        own["is_error"] = False
    content: Any = block.get("content", [])
    if isinstance(content, str):
        blocks: list[Block] = [_build(lambda: TextBlock(content), f"{field}.content")]
    else:
        items = _content_list(content) if "content" in block else []
        blocks = [_read_block(b, f"{field}.content[{j}]") for j, b in enumerate(items)]
        if "content" in block and (not blocks or _stringable(blocks)):
            own[_LIST] = True
    message = _message(Role.TOOL, blocks, field, own, tool_call_id=call_id, is_error=is_error)
    written = _tool_result(message)
    if list(written) != list(block):
        message = _with_notes(message, {_ORDER: list(block)})
    return message


_READERS: dict[str, Callable[[Mapping[str, Any], str], Block]] = {
    "text": _read_text_block,
    "image": _read_image,
    "document": _read_document,
    "thinking": _read_thinking,
    "redacted_thinking": _read_redacted,
    "tool_use": _read_tool_use,
}


# -- turns ---------------------------------------------------------------------------------


@dataclasses.dataclass
class _TurnState:
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
            self.turn_role = _turn_role(message)
        self.last_role = message.role


def _turn_role(message: Message) -> str:
    if message.role in _SYSTEM_ROLES:
        return "system"
    return "assistant" if message.role is Role.ASSISTANT else "user"


def _mark_turn(turn: list[Message], state: _TurnState) -> Iterator[Message]:
    """The messages of one read turn, noted where the default rule would group otherwise."""
    for position, message in enumerate(turn):
        joined = position > 0
        if state.joins(message) != joined and _turn_role(message) == "user":
            message = _with_notes(message, {_JOINS: joined})
        state.place(message, joined)
        yield message


# -- writing -------------------------------------------------------------------------------


def to_anthropic(messages: Iterable[Message]) -> dict[str, Any]:
    """The ``system`` and ``messages`` of an Anthropic request, to splat into ``create``.

    Leading system and developer messages become ``system`` (a string for one plain text,
    else a list of text blocks); ``"system"`` is left out when there is none. Tool
    messages that follow one another, and the user text after them, form one user turn,
    its ``tool_result`` blocks first. What Anthropic cannot carry (thinking signed by
    another provider or unsigned, another format's opaque items, non-text system content,
    a tool result that answers no call of the assistant turn right before it, assistant
    messages and tool results before the first user turn, a text of whitespace only) is
    dropped with a :class:`~sqlmemory.formats.DroppedContentWarning`; an empty text is
    left out silently.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> request = to_anthropic([
        ...     Message.system("Answer briefly."),
        ...     Message.user("What is 6 x 7?"),
        ...     Message.assistant(tool_calls=[ToolCall("toolu_1", "multiply", {"a": 6, "b": 7})]),
        ...     Message.tool("toolu_1", "42"),
        ... ])
        >>> request["system"]
        'Answer briefly.'
        >>> request["messages"][1:]  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'toolu_1',
          'name': 'multiply', 'input': {'a': 6, 'b': 7}}]},
         {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_1',
          'content': '42'}]}]

    Raises:
        ConversionError: an item of ``messages`` is not a :class:`~sqlmemory.types.Message`.
    """
    history = items_of(messages, "messages")
    for index, message in enumerate(history):
        if not isinstance(message, Message):
            raise ConversionError(
                f"{where(index)}: expected a Message, got {type(message).__name__}"
            )
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
    return message.role in _SYSTEM_ROLES and not _own(message).get(_IN_MESSAGES)


def _own(message: Message | Block) -> Mapping[str, Any]:
    return format_extras(message.extras, ANTHROPIC)


def _foreign(extras: Mapping[str, Any]) -> bool:
    """Whether another format put something in these extras."""
    return any(key != ANTHROPIC for key in extras)


def _system_value(messages: list[Message]) -> Any:
    """The top-level ``system``: a string for one plain text, else a list of text blocks."""
    if not messages:
        return None
    first = messages[0]
    if len(messages) == 1 and _stringable(list(first.content)) and not _own(first).get(_LIST):
        text = first.content[0]
        assert isinstance(text, TextBlock)  # noqa: S101 - _stringable checked it
        return text.text
    blocks = [b for m in messages for b in _text_only(m)]
    return blocks or None


def _text_only(message: Message) -> list[dict[str, Any]]:
    out = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text or _own(block):
                out.append(_write_block(block))
        else:
            warn_dropped(f"a {block.kind} block of a {message.role.value} message", ANTHROPIC)
    return out


def _stringable(blocks: Sequence[Block]) -> bool:
    """Whether these blocks are one text block with nothing of Anthropic's besides."""
    return (
        len(blocks) == 1
        and isinstance(blocks[0], TextBlock)
        and not format_extras(blocks[0].extras, ANTHROPIC)
    )


def _write_turns(messages: list[Message]) -> list[dict[str, Any]]:
    writer = _TurnWriter()
    for message in messages:
        writer.add(message)
    return writer.turns


class _TurnWriter:
    """Turns built one message at a time; a tool result must answer the turn before."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self.state = _TurnState()
        self.pending: set[str] = set()
        """The ids of the tool calls of the last assistant turn not answered yet."""
        self.user_turn_sent = False
        """The API takes no assistant turn before the first user turn."""

    def add(self, message: Message) -> None:
        if not self.user_turn_sent and message.role in (Role.ASSISTANT, Role.TOOL):
            what = "an assistant message" if message.role is Role.ASSISTANT else "a tool result"
            warn_dropped(f"{what} before the first user turn", ANTHROPIC)
            return
        joins = bool(_own(message).get(_JOINS, self.state.joins(message)))
        joins = joins and self.state.turn_role == "user" and _turn_role(message) == "user"
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
    role = _turn_role(message)
    if message.role is Role.TOOL:
        content: Any = [_tool_result(message)]
    else:
        blocks = _write_content(message)
        if not blocks:
            return None
        stringable = _stringable(list(message.content)) and not _own(message).get(_LIST)
        content = blocks[0]["text"] if stringable and len(blocks) == 1 else blocks
    own = _own(message)
    turn: dict[str, Any] = {"role": role, "content": content, **_noted_fields(own, _TURN)}
    return _reordered(turn, own.get(_TURN_ORDER))


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
        content.insert(results, _tool_result(message))
    else:
        content.extend(_write_content(message))


def _write_content(message: Message) -> list[dict[str, Any]]:
    return [
        _write_block(block)
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
    if message.role in _SYSTEM_ROLES and not isinstance(block, TextBlock):
        warn_dropped(f"a {block.kind} block of a system message", ANTHROPIC)
        return False
    return True


def _tool_result(message: Message) -> dict[str, Any]:
    own = _own(message)
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    blocks = []
    for block in message.content:
        if not isinstance(block, (TextBlock, ImageBlock, DocumentBlock, OpaqueBlock)):
            warn_dropped(f"a {block.kind} block of a tool result", ANTHROPIC)
        elif _sendable(block, message):
            blocks.append(_write_block(block))
    if own.get(_LIST) or (blocks and not _stringable(list(message.content))):
        out["content"] = blocks
    elif blocks:
        out["content"] = blocks[0]["text"]
    if message.is_error:
        out["is_error"] = True
    return _reordered(_with_fields(out, own), own.get(_ORDER))


def _with_fields(out: dict[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """``out`` with the Anthropic fields kept in extras (the notes left out)."""
    for key, value in own.items():
        if not key.startswith("_"):
            out[key] = thaw_json(value)
    return out


def _noted_fields(own: Mapping[str, Any], note: str) -> dict[str, Any]:
    """The provider fields kept under ``note``; none if it is not a mapping (hand-written)."""
    fields = own.get(note)
    return thaw_json(fields) if isinstance(fields, Mapping) else {}


def _reordered(out: dict[str, Any], order: Any) -> dict[str, Any]:
    if not order or not isinstance(order, Sequence):  # no note, or one not written here
        return out
    ordered = {key: out[key] for key in order if isinstance(key, str) and key in out}
    ordered.update(out)
    return ordered


def _write_block(block: Block) -> dict[str, Any]:
    own = _own(block)
    writer = _WRITERS[block.kind]
    if isinstance(block, OpaqueBlock):
        return writer(block, own)
    return _reordered(_with_fields(writer(block, own), own), own.get(_ORDER))


def _write_opaque(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = thaw_json(block.payload)
    return payload


def _write_text(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "text", "text": block.text}


def _write_thinking(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _write_redacted(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": block.data}


def _write_tool_use(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    arguments = block.arguments
    if arguments is None:
        warn_dropped(f"the arguments of tool call {block.id} (not a JSON object)", ANTHROPIC)
        arguments = {}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": thaw_json(arguments)}


def _write_source(block: ImageBlock | DocumentBlock, own: Mapping[str, Any]) -> dict[str, Any]:
    source: dict[str, Any]
    if block.data is not None and block.media_type == "text/plain" and not own.get(_SOURCE_TYPE):
        text = block.data.decode("utf-8")
        source = {"type": "text", "media_type": "text/plain", "data": text}
    elif block.data is not None:
        data = own.get(_B64) or base64.b64encode(block.data).decode("ascii")
        source = {"type": "base64", "media_type": block.media_type, "data": data}
    elif block.url is not None:
        source = {"type": "url", "url": block.url}
    else:
        source = {"type": "file", "file_id": block.file_id}
    source.update(_noted_fields(own, _SOURCE))
    return _reordered(source, own.get(_SOURCE_ORDER))


def _write_image(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "image", "source": _write_source(block, own)}


def _write_document(block: Any, own: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "document", "source": _write_source(block, own)}
    if block.title is not None:
        out["title"] = block.title
    return out


_WRITERS: dict[str, Callable[[Any, Mapping[str, Any]], dict[str, Any]]] = {
    "text": _write_text,
    "image": _write_image,
    "document": _write_document,
    "thinking": _write_thinking,
    "redacted_thinking": _write_redacted,
    "tool_call": _write_tool_use,
    "opaque": _write_opaque,
}
