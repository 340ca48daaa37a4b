"""The message model of docs/contract/messages.md and its bad input (docs/contract/errors.md)."""

from __future__ import annotations

import contextlib
import math
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from sqlmemory import (
    BlobTooLargeError,
    DocumentBlock,
    DuplicateMessageError,
    ImageBlock,
    InMemoryStorage,
    InvalidMessageError,
    InvalidSessionIdError,
    Message,
    Role,
    SqlMemoryError,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from tests.support.cases import BAD_MESSAGE_BUILDERS, image_bytes

PNG = image_bytes(2, 2, "image/png")
JPEG = image_bytes(2, 2, "image/jpeg")


# --- constructors ---------------------------------------------------------------------------


def test_user_from_text() -> None:
    m = Message.user("hi")
    assert m.role == Role.USER
    assert m.content == (TextBlock("hi"),)
    assert m.tool_calls == ()
    assert m.tool_call_id is None
    assert dict(m.metadata) == {}
    assert m.recorded_at is None
    assert m.text_content() == "hi"


def test_user_from_blocks() -> None:
    blocks = [TextBlock("look"), ImageBlock(data=PNG, media_type="image/png")]
    m = Message.user(blocks)
    assert m.content == tuple(blocks)


def test_assistant_with_tool_calls_only() -> None:
    call = ToolCall(id="c1", name="calc", arguments={"x": 1})
    m = Message.assistant(tool_calls=[call])
    assert m.role == Role.ASSISTANT
    assert m.tool_calls == (call,)
    assert m.text_content() == ""
    assert not m.has_content_type("text")


def test_assistant_with_text_and_tool_calls() -> None:
    call = ToolCall(id="c1", name="calc", arguments={})
    m = Message.assistant("checking", tool_calls=[call])
    assert m.text_content() == "checking"
    assert m.tool_calls == (call,)


def test_assistant_text() -> None:
    m = Message.assistant("hello")
    assert m.role == Role.ASSISTANT
    assert m.text_content() == "hello"
    assert m.tool_calls == ()


def test_tool_result() -> None:
    m = Message.tool("c1", "42")
    assert m.role == Role.TOOL
    assert m.tool_call_id == "c1"
    assert m.text_content() == "42"


def test_system() -> None:
    m = Message.system("be brief")
    assert m.role == Role.SYSTEM
    assert m.text_content() == "be brief"


def test_id_is_a_fresh_uuid_string() -> None:
    a, b = Message.user("x"), Message.user("x")
    assert isinstance(a.id, str)
    assert str(uuid.UUID(a.id)) == a.id.lower()
    assert a.id != b.id


def test_a_new_id_is_a_uuid_7_of_the_time_it_was_made() -> None:
    before = time.time_ns() // 1_000_000
    made = uuid.UUID(Message.user("x").id)
    after = time.time_ns() // 1_000_000
    assert (made.version, made.variant) == (7, uuid.RFC_4122)
    assert before <= made.int >> 80 <= after  # the first 48 bits: Unix milliseconds


def test_ids_made_later_sort_after_earlier_ones() -> None:
    ids = []
    for _ in range(5):
        ids.append(Message.user("x").id)
        time.sleep(0.002)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ids_made_in_one_millisecond_differ() -> None:
    ids = [Message.user("x").id for _ in range(10_000)]
    assert len(set(ids)) == len(ids)


def test_given_id_is_kept() -> None:
    m = Message(role="user", content=[TextBlock("x")], id="my-key-1")
    assert m.id == "my-key-1"


def test_role_values() -> None:
    assert {r.value for r in Role} == {
        "system",
        "developer",
        "user",
        "assistant",
        "tool",
        "document",
    }
    assert Role.USER == "user"
    assert isinstance(Role.USER, str)


@pytest.mark.parametrize("role", ["user", "system", "developer", "assistant", "document"])
def test_role_accepts_its_string_value(role: str) -> None:
    m = Message(role=role, content=[TextBlock("x")])
    assert m.role == Role(role)
    assert isinstance(m.role, Role)


def test_tool_role_accepts_string_value() -> None:
    m = Message(role="tool", content=[TextBlock("x")], tool_call_id="c1")
    assert m.role is Role.TOOL


def test_metadata_is_kept() -> None:
    m = Message(role="user", content=[TextBlock("x")], metadata={"a": 1, "b": [1, 2]})
    assert m.metadata["a"] == 1
    assert list(m.metadata["b"]) == [1, 2]  # a frozen sequence is fine
    assert list(m.metadata) == ["a", "b"]


def test_equal_values_compare_equal() -> None:
    kwargs: dict[str, Any] = {"role": "user", "content": [TextBlock("x")], "id": "same"}
    assert Message(**kwargs) == Message(**kwargs)
    assert Message(**kwargs) != Message(**{**kwargs, "content": [TextBlock("y")]})


# --- text_content / has_content_type ------------------------------------------------------


def test_text_content_joins_non_empty_text_blocks_ignoring_thinking() -> None:
    m = Message.assistant(
        [
            ThinkingBlock("secret reasoning"),
            TextBlock("a"),
            TextBlock(""),
            ImageBlock(data=PNG, media_type="image/png"),
            TextBlock("b"),
        ]
    )
    assert m.text_content() == "a\nb"


def test_text_content_without_text_is_empty() -> None:
    m = Message.user([ImageBlock(data=PNG, media_type="image/png")])
    assert m.text_content() == ""


@pytest.mark.parametrize(
    ("block", "kind"),
    [
        (TextBlock("t"), "text"),
        (ImageBlock(data=PNG, media_type="image/png"), "image"),
        (DocumentBlock(data=b"plain words", media_type="text/plain"), "document"),
        (ThinkingBlock("hmm"), "thinking"),
    ],
)
def test_has_content_type(block: Any, kind: str) -> None:
    m = Message.assistant([block])
    assert m.has_content_type(kind)
    others = {"text", "image", "document", "thinking"} - {kind}
    assert not any(m.has_content_type(other) for other in others)


def test_has_content_type_mixed() -> None:
    m = Message.user([TextBlock("see"), ImageBlock(data=JPEG, media_type="image/jpeg")])
    assert m.has_content_type("text")
    assert m.has_content_type("image")
    assert not m.has_content_type("document")
    assert not m.has_content_type("thinking")


# --- immutability ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attr", "value"),
    [
        ("role", Role.SYSTEM),
        ("content", ()),
        ("id", "other"),
        ("metadata", {}),
        ("tool_calls", ()),
        ("tool_call_id", "c9"),
        ("recorded_at", None),
    ],
)
def test_message_is_frozen(attr: str, value: Any) -> None:
    m = Message.user("hi")
    with pytest.raises((AttributeError, TypeError)):
        setattr(m, attr, value)


@pytest.mark.parametrize(
    ("obj", "attr"),
    [
        (TextBlock("x"), "text"),
        (ThinkingBlock("x"), "thinking"),
        (ImageBlock(data=PNG, media_type="image/png"), "data"),
        (DocumentBlock(data=b"x", media_type="text/plain"), "title"),
        (ToolCall(id="c1", name="n", arguments={}), "name"),
    ],
)
def test_blocks_and_tool_calls_are_frozen(obj: Any, attr: str) -> None:
    with pytest.raises((AttributeError, TypeError)):
        setattr(obj, attr, "changed")


def test_content_and_tool_calls_are_tuples() -> None:
    blocks = [TextBlock("a")]
    calls = [ToolCall(id="c1", name="n", arguments={})]
    m = Message.assistant(blocks, tool_calls=calls)
    assert isinstance(m.content, tuple)
    assert isinstance(m.tool_calls, tuple)
    blocks.append(TextBlock("b"))
    calls.append(ToolCall(id="c2", name="n", arguments={}))
    assert m.content == (TextBlock("a"), ToolCall(id="c1", name="n", arguments={}))
    assert len(m.tool_calls) == 1


def _try_set(mapping: Any, key: str, value: Any) -> None:
    with contextlib.suppress(TypeError):
        mapping[key] = value


def test_metadata_cannot_be_mutated_through_the_message() -> None:
    m = Message(role="user", content=[TextBlock("x")], metadata={"a": 1})
    _try_set(m.metadata, "b", 2)
    _try_set(m.metadata, "a", 99)
    assert dict(m.metadata) == {"a": 1}


def test_metadata_is_copied_from_the_callers_dict() -> None:
    meta: dict[str, Any] = {"a": 1}
    m = Message(role="user", content=[TextBlock("x")], metadata=meta)
    meta["a"] = 2
    meta["b"] = 3
    assert dict(m.metadata) == {"a": 1}


def test_nested_metadata_is_copied_from_the_callers_dict() -> None:
    meta: dict[str, Any] = {"tags": ["a"], "inner": {"k": 1}}
    m = Message(role="user", content=[TextBlock("x")], metadata=meta)
    meta["tags"].append("b")
    meta["inner"]["k"] = 2
    assert m.metadata["tags"] in (["a"], ("a",))
    assert m.metadata["inner"]["k"] == 1


def test_tool_call_arguments_keep_key_order() -> None:
    args = {"zeta": 1, "alpha": 2, "mid": {"y": 1, "b": 2}}
    call = ToolCall(id="c1", name="n", arguments=args)
    assert list(call.arguments) == ["zeta", "alpha", "mid"]
    assert list(call.arguments["mid"]) == ["y", "b"]


def test_tool_call_arguments_are_copied_and_read_only() -> None:
    args: dict[str, Any] = {"x": 1, "nested": {"y": 2}}
    call = ToolCall(id="c1", name="n", arguments=args)
    args["x"] = 100
    args["new"] = True
    args["nested"]["y"] = 200
    assert call.arguments["x"] == 1
    assert "new" not in call.arguments
    assert call.arguments["nested"]["y"] == 2
    _try_set(call.arguments, "x", 5)
    assert call.arguments["x"] == 1


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [InvalidMessageError, InvalidSessionIdError, BlobTooLargeError, DuplicateMessageError],
)
def test_validation_errors_are_value_errors_under_the_root(error: type[Exception]) -> None:
    assert issubclass(error, SqlMemoryError)
    assert issubclass(error, ValueError)


def _unserialisable() -> ToolCall:
    return ToolCall(id="c1", name="n", arguments={"x": object()})


BAD_MESSAGES: dict[str, Callable[[], Message]] = {
    "unknown role": lambda: Message(role="robot", content=[TextBlock("x")]),
    "empty user": lambda: Message.user([]),
    "empty system": lambda: Message.system([]),
    "empty assistant": lambda: Message.assistant([TextBlock("")]),
    "is_error on a user message": lambda: Message(role="user", content="x", is_error=True),
    "empty user by constructor": lambda: Message(role="user", content=()),
    "tool calls on user": lambda: Message(
        role="user",
        content=[TextBlock("x")],
        tool_calls=[ToolCall(id="c1", name="n", arguments={})],
    ),
    "tool calls on tool": lambda: Message(
        role="tool",
        content=[TextBlock("x")],
        tool_call_id="c1",
        tool_calls=[ToolCall(id="c2", name="n", arguments={})],
    ),
    "tool without tool_call_id": lambda: Message(role="tool", content=[TextBlock("x")]),
    "duplicate tool call ids": lambda: Message.assistant(
        tool_calls=[
            ToolCall(id="c1", name="a", arguments={}),
            ToolCall(id="c1", name="b", arguments={}),
        ]
    ),
    "arguments not serialisable": lambda: Message.assistant(tool_calls=[_unserialisable()]),
    "arguments with a set": lambda: Message.assistant(
        tool_calls=[ToolCall(id="c1", name="n", arguments={"s": {1, 2}})]
    ),
    "arguments with bytes": lambda: Message.assistant(
        tool_calls=[ToolCall(id="c1", name="n", arguments={"b": b"raw"})]
    ),
    "arguments NaN": lambda: Message.assistant(
        tool_calls=[ToolCall(id="c1", name="n", arguments={"x": math.nan})]
    ),
    "arguments Infinity": lambda: Message.assistant(
        tool_calls=[ToolCall(id="c1", name="n", arguments={"x": math.inf})]
    ),
    "arguments -Infinity nested": lambda: Message.assistant(
        tool_calls=[ToolCall(id="c1", name="n", arguments={"x": [1, {"y": -math.inf}]})]
    ),
    "metadata not serialisable": lambda: Message(
        role="user", content=[TextBlock("x")], metadata={"o": object()}
    ),
    "lone surrogate in text": lambda: Message.user("\ud800"),
    "lone surrogate inside text": lambda: Message.user("ok \udfff ok"),
    "lone surrogate in thinking": lambda: Message.assistant([ThinkingBlock("a\ud800b")]),
    "lone surrogate in tool result": lambda: Message.tool("c1", "\ud834"),
    "image/bmp": lambda: Message.user([ImageBlock(data=PNG, media_type="image/bmp")]),
    "image/svg+xml": lambda: Message.user(
        [ImageBlock(data=b"<svg xmlns='http://www.w3.org/2000/svg'/>", media_type="image/svg+xml")]
    ),
    "png bytes tagged jpeg": lambda: Message.user([ImageBlock(data=PNG, media_type="image/jpeg")]),
    "jpeg bytes tagged png": lambda: Message.user([ImageBlock(data=JPEG, media_type="image/png")]),
    "text bytes tagged gif": lambda: Message.user(
        [ImageBlock(data=b"hello world", media_type="image/gif")]
    ),
    "empty image bytes": lambda: Message.user([ImageBlock(data=b"", media_type="image/png")]),
    "image with neither bytes nor url": lambda: Message.user([ImageBlock(media_type="image/png")]),
    "document type outside pdf/plain": lambda: Message.user(
        [DocumentBlock(data=b"x", media_type="application/msword")]
    ),
}


@pytest.mark.parametrize("build", list(BAD_MESSAGES.values()), ids=list(BAD_MESSAGES))
def test_bad_message_raises_invalid_message_error(build: Callable[[], Message]) -> None:
    """Rejected when built or at the latest at the storage boundary, and nothing is written."""
    store = InMemoryStorage()
    store.append("s", Message.user("before"))
    with pytest.raises(InvalidMessageError):
        store.append("s", Message.user("same batch"), build())
    assert [m.text_content() for m in store.load("s")] == ["before"]


def test_invalid_message_error_is_catchable_as_value_error() -> None:
    with pytest.raises(ValueError):
        InMemoryStorage().append("s", Message(role="robot", content=[TextBlock("x")]))


@pytest.mark.parametrize(
    "text",
    ["", "\x00", "\U0001f600 emoji", "e\u0301", "x" * 100_000],
    ids=["empty", "nul", "emoji", "combining", "long"],
)
def test_valid_unusual_texts_are_accepted(text: str) -> None:
    block = TextBlock(text)
    m = Message.user([block, TextBlock("x")])
    assert m.content[0].text == text


@pytest.mark.parametrize("media_type", ["image/png", "image/jpeg", "image/gif", "image/webp"])
def test_every_supported_image_type_is_accepted(media_type: str) -> None:
    data = image_bytes(3, 3, media_type)
    m = Message.user([ImageBlock(data=data, media_type=media_type)])
    assert m.content[0].data == data
    assert m.content[0].media_type == media_type


def test_image_by_url_is_accepted() -> None:
    block = ImageBlock(url="https://example.com/a.png", media_type="image/png")
    m = Message.user([block])
    assert m.content[0].url == "https://example.com/a.png"
    assert m.content[0].data is None


@pytest.mark.parametrize(
    ("data", "media_type"),
    [(b"%PDF-1.7\n%%EOF\n", "application/pdf"), (b"plain text", "text/plain")],
)
def test_documents_are_accepted(data: bytes, media_type: str) -> None:
    m = Message.user([DocumentBlock(data=data, media_type=media_type, title="t")])
    assert m.content[0].data == data
    assert m.content[0].title == "t"


@pytest.mark.parametrize("name", sorted(BAD_MESSAGE_BUILDERS))
def test_a_bad_message_cannot_be_built(name: str) -> None:
    # Messages are validated when built, so a bad one never reaches a storage.
    with pytest.raises(InvalidMessageError):
        BAD_MESSAGE_BUILDERS[name]()
