"""Hostile wire documents and constructor arguments raise the library's errors, nothing else.

``docs/contract/errors.md``: a wire-form dict with a missing, mistyped, invalid or
unknown field raises ``InvalidMessageError`` naming the field; a malformed message, block
or call ``InvalidMessageError``; an argument of the wrong type may raise ``TypeError``. No
``AttributeError``, ``KeyError``, ``RecursionError``, ``UnicodeError`` or a bare
``ValueError`` from ``repr`` escapes, and no error message grows with the input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqlmemory import (
    DocumentBlock,
    ImageBlock,
    InvalidMessageError,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    SqlMemoryError,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.wire import (
    message_from_dict,
    message_to_dict,
    messages_from_dicts,
    messages_to_dicts,
)
from tests.formats.hostile import (
    DEPTH,
    HOSTILE,
    HOSTILE_SETTINGS,
    Box,
    Lie,
    Spoiled,
    boxed,
    nested_list,
    spoiled,
)
from tests.support.cases import image_bytes
from tests.unit.test_wire import every_kind_of_message

DOCUMENTS = [message.to_dict() for message in every_kind_of_message()]
PNG = image_bytes(2, 2)


def _short(exc: BaseException) -> None:
    assert len(str(exc)) < 10_000, str(exc)[:200]


@HOSTILE_SETTINGS
@given(spoiled(DOCUMENTS, HOSTILE))
def test_a_hostile_wire_document_is_read_or_refused_naming_the_field(case: Spoiled) -> None:
    try:
        message = message_from_dict(case.document)
    except InvalidMessageError as exc:
        _short(exc)
    except Lie:
        pass
    else:
        assert message_from_dict(message.to_dict()) == message


@HOSTILE_SETTINGS
@given(spoiled([DOCUMENTS], HOSTILE))
def test_a_hostile_wire_list_is_read_or_refused_naming_the_item(case: Spoiled) -> None:
    try:
        messages_from_dicts(case.document)
    except InvalidMessageError as exc:
        _short(exc)
    except Lie:
        pass


READERS = [TextBlock, ImageBlock, DocumentBlock, ThinkingBlock, RedactedThinkingBlock, OpaqueBlock]


@pytest.mark.parametrize("cls", READERS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("data", [None, [], "text", 7, b"{}"], ids=repr)
def test_a_block_from_something_other_than_an_object_is_refused(cls: Any, data: Any) -> None:
    """Before: AttributeError ('NoneType' object has no attribute 'keys')."""
    with pytest.raises(InvalidMessageError, match=r"^block must be an object, not "):
        cls.from_dict(data)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"v": nested_list(DEPTH), "role": "user"}, r"message\.v \[\[\[\[\.\.\.\]\]\]\] is not"),
        ({"v": 10**5000, "role": "user"}, r"message\.v <an integer of 16610 bits> is not"),
        ({"role": "user", "content": [{"kind": "x" * 10**6}]}, r"\.kind 'xxx+\.\.\.x+' is not a"),
        ({"role": "user", "content": [], "zz" * 10**6: 1}, "unknown field"),
    ],
)
def test_a_field_too_deep_or_too_big_is_named_in_short(data: Any, error: str) -> None:
    """Before: RecursionError, ValueError from repr(), a megabyte of message."""
    with pytest.raises(InvalidMessageError, match=error) as caught:
        message_from_dict(data)
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize(
    "value", [None, {"role": "user"}, "hi", [Message.user("hi", id="m")]], ids=repr
)
def test_only_a_message_has_a_wire_form(value: Any) -> None:
    """Before: AttributeError ('NoneType' object has no attribute 'to_dict')."""
    with pytest.raises(TypeError, match="not a Message"):
        message_to_dict(value)
    with pytest.raises(TypeError, match="not a Message"):
        messages_to_dicts([Message.user("hi"), value])


@pytest.mark.parametrize("value", [None, 7, "hi", Message.user("hi", id="m")], ids=repr)
def test_messages_to_dicts_takes_an_iterable_of_messages(value: Any) -> None:
    with pytest.raises(TypeError, match="messages must be an iterable of Message"):
        messages_to_dicts(value)


# --- constructors -----------------------------------------------------------------------------

CONSTRUCTORS: dict[str, tuple[Callable[..., Any], list[str]]] = {
    "Message": (
        lambda **kw: Message(**{"role": "user", "content": "hi", **kw}),
        ["role", "content", "tool_call_id", "metadata", "id", "recorded_at", "is_error", "extras"],
    ),
    "Message.assistant": (
        lambda **kw: Message(**{"role": "assistant", "content": "hi", **kw}),
        ["content", "tool_calls"],
    ),
    "Message.tool": (
        lambda **kw: Message(**{"role": "tool", "content": "hi", "tool_call_id": "c", **kw}),
        ["content", "tool_call_id", "is_error"],
    ),
    "TextBlock": (lambda **kw: TextBlock(**{"text": "a", **kw}), ["text", "extras"]),
    "ImageBlock": (
        lambda **kw: ImageBlock(**{"data": PNG, "media_type": "image/png", **kw}),
        ["data", "media_type", "url", "file_id", "detail", "width", "height", "extras"],
    ),
    "DocumentBlock": (
        lambda **kw: DocumentBlock(**{"data": b"abc", "media_type": "text/plain", **kw}),
        ["data", "media_type", "url", "file_id", "title", "extras"],
    ),
    "ThinkingBlock": (
        lambda **kw: ThinkingBlock(**{"thinking": "a", **kw}),
        ["thinking", "signature", "extras"],
    ),
    "RedactedThinkingBlock": (
        lambda **kw: RedactedThinkingBlock(**{"data": "a", **kw}),
        ["data", "extras"],
    ),
    "ToolCall": (
        lambda **kw: ToolCall(**{"id": "c", "name": "n", **kw}),
        ["id", "name", "arguments", "arguments_text", "extras"],
    ),
    "OpaqueBlock": (
        lambda **kw: OpaqueBlock(**{"provider": "p", "payload": {"type": "x"}, **kw}),
        ["provider", "payload", "call_id", "extras"],
    ),
}
ARGUMENTS = [
    (name, param) for name, (_, params) in CONSTRUCTORS.items() for param in params
]  # fmt: skip


@HOSTILE_SETTINGS
@given(
    st.sampled_from(ARGUMENTS),
    boxed(HOSTILE),
    st.sampled_from([lambda v: v, lambda v: [v], lambda v: {"openai_chat": v}]),
)
def test_a_hostile_constructor_argument_raises_a_typed_error(
    argument: tuple[str, str], value: Box, wrap: Callable[[Any], Any]
) -> None:
    name, param = argument
    make, _ = CONSTRUCTORS[name]
    try:
        made = make(**{param: wrap(value.value)})
    except (SqlMemoryError, TypeError) as exc:
        _short(exc)
    except Lie:
        pass
    else:
        made.to_dict()
