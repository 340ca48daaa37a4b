"""The versioned JSON form of messages: exact round trips, and errors that name the field.

A message travels as ``json.dumps(message.to_dict())`` and comes back through
``Message.from_dict(json.loads(text))``; it must come back equal, with what equality does
not look at (image sizes, the key order of tool arguments and metadata, the UTC zone of
``recorded_at``) kept as well.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import (
    DocumentBlock,
    ImageBlock,
    InvalidMessageError,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.wire import WIRE_VERSION, messages_from_dicts, messages_to_dicts
from tests.support.cases import image_bytes
from tests.support.strategies import images, messages

UTC = timezone.utc
WHEN = datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
PNG = image_bytes(65, 64, "image/png")
NESTED_ARGS = {
    "zeta": 1,
    "alpha": {"y": [{"b": 1, "a": 2}, [3, {"d": None, "c": True}]], "x": "é\x00🙂"},
    "mid": [1.5, -0.25, 2**63 - 1, False, ""],
    "": {},
}


def every_kind_of_message() -> list[Message]:
    """One of each role and block kind, with every optional field both set and unset."""
    return [
        Message.system("You are terse.", id="sys", metadata={"b": 1, "a": [1, {"z": 0, "y": 1}]}),
        Message.user(
            ["look:", *images(), TextBlock(""), TextBlock("\x00 nul and 🙂 emoji")],
            id="u1",
            recorded_at=WHEN,
        ),
        Message.assistant(
            [ThinkingBlock("let me think", signature="sig=="), ThinkingBlock("unsigned")],
            tool_calls=[
                ToolCall("c1", "search", NESTED_ARGS),
                ToolCall("c2", "noargs"),
            ],
            id="a1",
            recorded_at=WHEN + timedelta(microseconds=1),
        ),
        Message.tool("c1", "found it", id="t1"),
        Message.tool(
            "c2",
            [
                DocumentBlock(b"%PDF-1.4 fake", "application/pdf", title="Report"),
                DocumentBlock("plain text \u2603".encode(), "text/plain"),
            ],
            id="t2",
        ),
        Message(Role.DOCUMENT, [DocumentBlock(b"\x00\xff" * 40, "text/plain", title="")], id="d"),
        # Fixed ids: they name the parametrised tests, identical on every xdist worker.
        Message.assistant("done", id="a2"),
    ]


def through_json(data: Any) -> Any:
    return json.loads(json.dumps(data))


def assert_identical(back: Message, original: Message) -> None:
    """Equal, and equal in what ``==`` leaves out."""
    assert back == original
    assert back.role is original.role
    assert back.recorded_at == original.recorded_at
    if original.recorded_at is not None:
        assert back.recorded_at is not None
        assert back.recorded_at.utcoffset() == timedelta(0)
        assert back.recorded_at.microsecond == original.recorded_at.microsecond
    for b, o in zip(back.content, original.content, strict=True):
        assert type(b) is type(o)
        if isinstance(b, ImageBlock) and isinstance(o, ImageBlock):
            assert (b.width, b.height) == (o.width, o.height)
    for bc, oc in zip(back.tool_calls, original.tool_calls, strict=True):
        assert bc.arguments_json == oc.arguments_json  # key order, nested too
    assert json.dumps(dict(back.metadata), default=dict) == json.dumps(
        dict(original.metadata), default=dict
    )


def plain_json_values(value: Any) -> bool:
    """Only what ``json.loads`` produces: dict, list, str, int, float, bool, None."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json_values(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain_json_values(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


# --- round trips ------------------------------------------------------------------------------


@pytest.mark.parametrize("message", every_kind_of_message(), ids=lambda m: m.id[:8])
def test_to_dict_and_back_is_exact(message: Message) -> None:
    data = message.to_dict()

    assert data["v"] == WIRE_VERSION == 2
    assert plain_json_values(data)
    assert_identical(Message.from_dict(data), message)


@pytest.mark.parametrize("message", every_kind_of_message(), ids=lambda m: m.id[:8])
def test_round_trip_through_json_text_is_exact(message: Message) -> None:
    text = json.dumps(message.to_dict())

    assert_identical(Message.from_dict(json.loads(text)), message)
    assert_identical(
        Message.from_dict(json.loads(json.dumps(message.to_dict(), ensure_ascii=False))), message
    )


def test_tool_argument_key_order_survives_json_text() -> None:
    message = every_kind_of_message()[2]

    back = Message.from_dict(through_json(message.to_dict()))

    args = back.tool_calls[0].arguments
    assert list(args) == ["zeta", "alpha", "mid", ""]
    assert list(args["alpha"]) == ["y", "x"]
    assert list(args["alpha"]["y"][0]) == ["b", "a"]
    assert list(args["alpha"]["y"][1][1]) == ["d", "c"]
    assert back.tool_calls[0].arguments_json == json.dumps(
        NESTED_ARGS, ensure_ascii=False, separators=(",", ":")
    )
    assert back.tool_calls[1].arguments == {}


def test_bytes_travel_as_base64() -> None:
    pdf = b"%PDF-1.4 \x00\xff\xfe"
    message = Message.user([ImageBlock(PNG, "image/png"), DocumentBlock(pdf, "application/pdf")])

    image, document = message.to_dict()["content"]

    assert image["data"] == base64.b64encode(PNG).decode("ascii")
    assert (image["width"], image["height"]) == (65, 64)
    assert document["data"] == base64.b64encode(pdf).decode("ascii")


@pytest.mark.parametrize(("width", "height"), [(640, None), (None, 480)])
def test_a_half_known_image_size_survives(width: int | None, height: int | None) -> None:
    block = ImageBlock(
        url="https://example.com/a.png", media_type="image/png", width=width, height=height
    )

    back = Message.from_dict(through_json(Message.user([block]).to_dict()))

    image = back.content[0]
    assert isinstance(image, ImageBlock)
    assert (image.width, image.height) == (width, height)


def test_recorded_at_is_iso_8601_utc_with_microseconds() -> None:
    here = timezone(timedelta(hours=5, minutes=30))
    message = Message.user("hi", recorded_at=datetime(2024, 3, 1, 5, 30, 0, 7, tzinfo=here))

    data = message.to_dict()
    back = Message.from_dict(through_json(data))

    assert data["recorded_at"] == "2024-03-01T00:00:00.000007+00:00"
    assert back.recorded_at == datetime(2024, 3, 1, 0, 0, 0, 7, tzinfo=UTC)
    assert back.recorded_at is not None and back.recorded_at.tzinfo == UTC
    assert Message.user("no time").to_dict()["recorded_at"] is None
    assert Message.from_dict(Message.user("no time").to_dict()).recorded_at is None


def test_recorded_at_in_another_zone_is_read_as_utc() -> None:
    data = Message.user("hi").to_dict()
    data["recorded_at"] = "2024-03-01T01:00:00.5-02:00"

    back = Message.from_dict(data)

    assert back.recorded_at == datetime(2024, 3, 1, 3, 0, 0, 500000, tzinfo=UTC)
    assert back.recorded_at is not None and back.recorded_at.utcoffset() == timedelta(0)


def test_the_dict_is_a_copy_both_ways() -> None:
    message = every_kind_of_message()[2]
    data = message.to_dict()
    data["content"][2]["arguments"]["zeta"] = 99
    data["metadata"]["injected"] = True
    assert message.tool_calls[0].arguments["zeta"] == 1
    assert message.to_dict() != data

    incoming = message.to_dict()
    back = Message.from_dict(incoming)
    incoming["content"][2]["arguments"]["alpha"]["x"] = "changed"
    incoming["content"].clear()
    assert_identical(back, message)


def test_a_minimal_client_payload_is_accepted() -> None:
    """What a web client posts: no version, id, tool calls, metadata or time."""
    back = Message.from_dict({"role": "user", "content": [{"kind": "text", "text": "hi"}]})

    assert back.role is Role.USER
    assert back.text_content() == "hi"
    assert back.id  # generated
    assert back.recorded_at is None
    assert back.tool_calls == () and dict(back.metadata) == {}


def test_lists_round_trip() -> None:
    history = every_kind_of_message()

    data = messages_to_dicts(history)
    back = messages_from_dicts(through_json(data))

    assert data == [m.to_dict() for m in history]
    assert len(back) == len(history)
    for b, m in zip(back, history, strict=True):
        assert_identical(b, m)
    assert messages_to_dicts([]) == []
    assert messages_from_dicts([]) == []
    assert messages_to_dicts(iter(history[:2])) == data[:2]
    assert messages_from_dicts(iter(data[:2])) == history[:2]


# --- malformed input --------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def valid() -> dict[str, Any]:
    """A message whose dict has every field, so that each can be spoilt on its own."""
    return through_json(
        Message.assistant(
            [
                TextBlock("t", extras={"x": 1}),
                ImageBlock(PNG, "image/png"),
                DocumentBlock(b"doc", "text/plain", title="x"),
                ThinkingBlock("th", signature="s"),
                ToolCall("c1", "f", {"a": 1}, arguments_text='{"a": 1}'),
                OpaqueBlock("openai", {"type": "web_search_call"}),
                RedactedThinkingBlock("secret"),
                ImageBlock(file_id="file-1", detail="low"),
            ],
            id="m1",
            metadata={"k": "v"},
            recorded_at=WHEN,
            extras={"name": "bot"},
        ).to_dict()
    )


def setter(*path: str | int, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def deleter(*path: str | int) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


MALFORMED: list[tuple[str, Mutation, tuple[str, ...]]] = [
    ("missing role", deleter("role"), ("role",)),
    ("role not a string", setter("role", value=1), ("role",)),
    ("unknown role", setter("role", value="robot"), ("role",)),
    ("missing content", deleter("content"), ("content",)),
    ("content a string", setter("content", value="hello"), ("content",)),
    ("content an object", setter("content", value={"kind": "text"}), ("content",)),
    ("block not an object", setter("content", 0, value="text"), ("content[0]",)),
    ("block without kind", deleter("content", 0, "kind"), ("content[0]", "kind")),
    ("unknown block kind", setter("content", 0, "kind", value="video"), ("content[0]", "kind")),
    ("text not a string", setter("content", 0, "text", value=5), ("content[0]", "text")),
    ("missing text", deleter("content", 0, "text"), ("content[0]", "text")),
    ("bad base64", setter("content", 1, "data", value="not base64!"), ("content[1]", "data")),
    ("base64 not ascii", setter("content", 1, "data", value="é"), ("content[1]", "data")),
    ("base64 cut short", setter("content", 1, "data", value="iVBORw0KG"), ("content[1]", "data")),
    ("data not a string", setter("content", 1, "data", value=[1, 2]), ("content[1]", "data")),
    (
        "image bytes not the type",
        setter("content", 1, "media_type", value="image/gif"),
        ("content[1]",),
    ),
    (
        "image media type unknown",
        setter("content", 1, "media_type", value="image/bmp"),
        ("content[1]", "media_type"),
    ),
    ("image width not an int", setter("content", 1, "width", value="64"), ("content[1]", "width")),
    ("image width negative", setter("content", 1, "width", value=-1), ("content[1]", "width")),
    ("document bad base64", setter("content", 2, "data", value="@@"), ("content[2]", "data")),
    (
        "document title not a string",
        setter("content", 2, "title", value=3),
        ("content[2]", "title"),
    ),
    (
        "document media type",
        setter("content", 2, "media_type", value="text/html"),
        ("content[2]", "media_type"),
    ),
    (
        "signature not a string",
        setter("content", 3, "signature", value=1),
        ("content[3]", "signature"),
    ),
    ("tool_calls an object", setter("tool_calls", value={"id": "c1"}), ("tool_calls",)),
    ("v1 tool call not an object", setter("tool_calls", value=["c1"]), ("tool_calls[0]",)),
    (
        "v1 tool call without name",
        setter("tool_calls", value=[{"id": "c9"}]),
        ("tool_calls[0]", "name"),
    ),
    ("tool call without name", deleter("content", 4, "name"), ("content[4]", "name")),
    ("tool call id not a string", setter("content", 4, "id", value=7), ("content[4]", "id")),
    (
        "arguments a list",
        setter("content", 4, "arguments", value=[1]),
        ("content[4]", "arguments"),
    ),
    (
        "arguments_text not a string",
        setter("content", 4, "arguments_text", value={}),
        ("content[4]", "arguments_text"),
    ),
    ("extras a list", setter("content", 0, "extras", value=[]), ("content[0]", "extras")),
    ("message extras a list", setter("extras", value=[1]), ("extras",)),
    ("is_error a string", setter("is_error", value="yes"), ("is_error",)),
    ("is_error on a non-tool", setter("is_error", value=True), ("error",)),
    ("unknown message field", setter("tool_result", value=1), ("tool_result",)),
    ("unknown block field", setter("content", 0, "cache_control", value={}), ("cache_control",)),
    ("opaque payload a list", setter("content", 5, "payload", value=[]), ("content[5]", "payload")),
    ("opaque without provider", deleter("content", 5, "provider"), ("content[5]", "provider")),
    ("redacted data a number", setter("content", 6, "data", value=1), ("content[6]", "data")),
    ("file id a number", setter("content", 7, "file_id", value=1), ("content[7]", "file_id")),
    ("detail unknown", setter("content", 7, "detail", value="max"), ("content[7]", "detail")),
    ("tool_call_id not a string", setter("tool_call_id", value=1), ("tool_call_id",)),
    ("metadata a list", setter("metadata", value=[]), ("metadata",)),
    ("id not a string", setter("id", value=12), ("id",)),
    ("recorded_at not a date", setter("recorded_at", value="yesterday"), ("recorded_at",)),
    ("recorded_at a number", setter("recorded_at", value=1700000000), ("recorded_at",)),
    (
        "recorded_at without zone",
        setter("recorded_at", value="2024-01-01T00:00:00"),
        ("recorded_at",),
    ),
    ("unsupported version", setter("v", value=3), ("version",)),
    ("version zero", setter("v", value=0), ("version",)),
    ("version true", setter("v", value=True), ("version",)),
    ("version a string", setter("v", value="1"), ("version",)),
]


@pytest.mark.parametrize(
    ("mutate", "fields"),
    [pytest.param(m, f, id=name) for name, m, f in MALFORMED],
)
def test_malformed_input_names_the_field(mutate: Mutation, fields: tuple[str, ...]) -> None:
    data = valid()
    Message.from_dict(copy.deepcopy(data))  # the unspoilt form is fine
    mutate(data)

    with pytest.raises(InvalidMessageError) as caught:
        Message.from_dict(data)

    assert isinstance(caught.value, ValueError)
    for field in fields:
        assert field in str(caught.value), f"{field!r} not named in {caught.value}"


@pytest.mark.parametrize("data", [None, "message", ["role", "user"], 3], ids=repr)
def test_a_message_must_be_an_object(data: Any) -> None:
    with pytest.raises(InvalidMessageError, match="object"):
        Message.from_dict(data)


def test_list_errors_name_the_index_and_the_field() -> None:
    good = valid()
    bad = valid()
    del bad["role"]

    with pytest.raises(InvalidMessageError) as caught:
        messages_from_dicts([good, good, bad])

    assert "[2]" in str(caught.value)
    assert "role" in str(caught.value)


@pytest.mark.parametrize("items", [{"role": "user"}, "[]", b"[]"], ids=repr)
def test_a_list_must_be_an_array(items: Any) -> None:
    with pytest.raises(InvalidMessageError, match="array"):
        messages_from_dicts(items)


# --- property -------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(), max_size=3))
def test_any_message_round_trips_through_json_text(history: list[Message]) -> None:
    text = json.dumps(messages_to_dicts(history))

    back = messages_from_dicts(json.loads(text))

    assert len(back) == len(history)
    for b, m in zip(back, history, strict=True):
        assert_identical(b, m)
