"""The lossless model of docs/contract/messages.md: tool calls as blocks, argument text,
references, extras, redacted thinking, opaque items, ``is_error``, frozen JSON values."""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from sqlmemory import (
    DocumentBlock,
    FrozenDict,
    FrozenList,
    ImageBlock,
    InvalidMessageError,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    estimate_tokens,
    groups,
)
from sqlmemory.storage.checks import content_digest, same_content
from sqlmemory.types import canonical_json
from tests.support.cases import image_bytes
from tests.support.lossless import every_new_field

PNG = image_bytes(70, 30)

# --- frozen JSON ----------------------------------------------------------------------------


def test_frozen_values_equal_the_plain_json_they_came_from() -> None:
    plain = {"b": [1, {"y": [2, 3], "x": None}], "a": {"k": []}}
    frozen = Message.user("x", metadata=plain).metadata
    assert isinstance(frozen, FrozenDict)
    assert frozen == plain and plain == frozen
    assert isinstance(frozen["b"], FrozenList) and isinstance(frozen["b"][1], FrozenDict)
    assert frozen["b"] == [1, {"y": [2, 3], "x": None}]
    assert frozen["b"] == [1, {"y": [2, 3], "x": None}]
    assert frozen["b"] != [1]
    assert list(frozen) == ["b", "a"]
    assert json.dumps(frozen) == json.dumps(plain)  # written as is, key order kept


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.__setitem__("c", 1),
        lambda d: d.__delitem__("b"),
        lambda d: d.update({"c": 1}),
        lambda d: d.setdefault("c", 1),
        lambda d: d.pop("b"),
        lambda d: d.popitem(),
        lambda d: d.clear(),
        lambda d: d.__ior__({"c": 1}),
    ],
    ids=["setitem", "delitem", "update", "setdefault", "pop", "popitem", "clear", "ior"],
)
def test_frozen_dicts_cannot_change(mutate: Any) -> None:
    frozen = Message.user("x", metadata={"b": [1], "a": 2}).metadata
    with pytest.raises(TypeError, match="immutable"):
        mutate(frozen)
    assert frozen == {"b": [1], "a": 2}
    with pytest.raises((TypeError, AttributeError)):
        frozen["b"].append(2)  # type: ignore[union-attr]


def test_messages_and_their_json_values_deepcopy_and_pickle() -> None:
    for message in every_new_field():
        for clone in (copy.deepcopy(message), copy.copy(message)):
            assert clone == message
            assert canonical_json(clone) == canonical_json(message)
        back = pickle.loads(pickle.dumps(message))  # noqa: S301 - our own bytes
        assert back == message
        assert canonical_json(back) == canonical_json(message)
        assert type(back.metadata) is FrozenDict and type(back.extras) is FrozenDict


def test_a_public_frozen_dict_is_checked_and_frozen_deeply() -> None:
    value = FrozenDict({"a": [1, {"b": 2}]})
    assert isinstance(value["a"], FrozenList) and isinstance(value["a"][1], FrozenDict)
    with pytest.raises(InvalidMessageError):
        FrozenDict({"a": {1, 2}})
    with pytest.raises(InvalidMessageError):
        FrozenDict({"a": float("nan")})
    assert Message.user("x", metadata=value).metadata is value  # checked once, shared


# --- tool calls --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ('{"b": 1, "a": [2]}', {"b": 1, "a": [2]}),
        ('{"a": 1, "a": 2}', {"a": 2}),
        ("{}", {}),
        (' {"x": null} ', {"x": None}),
        ('{"a": 1', None),
        ("[1, 2]", None),
        ('"text"', None),
        ("", None),
        ("not json", None),
        ('{"x": NaN}', None),
        ('{"x": Infinity}', None),
        ('{"x": "\\ud800"}', None),  # a lone surrogate, escaped
        ("[" * 100_000 + "]" * 100_000, None),  # too deep for the parser
        ('{"n": ' + "9" * 5000 + "}", None),  # too many digits for int()
    ],
    ids=lambda v: repr(v)[:20],
)
def test_arguments_are_parsed_from_text_when_it_is_a_json_object(text: str, arguments: Any) -> None:
    call = ToolCall("c1", "f", arguments_text=text)
    assert call.arguments_text == text
    assert call.arguments == arguments
    assert call.arguments_json == text  # what a provider is sent: the text, byte for byte


def test_argument_key_order_comes_from_the_text() -> None:
    call = ToolCall("c1", "f", arguments_text='{"z": {"b": 1, "a": 2}, "y": 0}')
    assert list(call.arguments or {}) == ["z", "y"]
    assert list(call.arguments["z"]) == ["b", "a"]  # type: ignore[index]


def test_arguments_given_alone_keep_no_text_and_give_compact_json() -> None:
    call = ToolCall("c1", "f", {"b": 1, "a": "é"})
    assert call.arguments_text is None
    assert call.arguments_json == '{"b":1,"a":"é"}'
    assert ToolCall("c2", "g").arguments == {} and ToolCall("c2", "g").arguments_json == "{}"
    both = ToolCall("c3", "h", {"a": 1}, arguments_text='{"a":  1}')
    assert both.arguments == {"a": 1} and both.arguments_json == '{"a":  1}'


def test_tool_calls_are_content_blocks_in_the_order_given() -> None:
    c1, c2 = ToolCall("c1", "f"), ToolCall("c2", "g")
    opaque = OpaqueBlock("openai", {"type": "computer_call"}, call_id="c3")
    message = Message.assistant(["before", c1, "between", c2, opaque, "after"])
    assert [b.kind for b in message.content] == [
        "text",
        "tool_call",
        "text",
        "tool_call",
        "opaque",
        "text",
    ]
    assert message.tool_calls == (c1, c2)
    assert message.call_ids == ("c1", "c2", "c3")
    assert message.has_content_type("tool_call") and message.has_content_type(OpaqueBlock)
    # tool_calls= still works, after the content; and a copy does not add them twice.
    appended = Message.assistant("text", tool_calls=[c1, c2])
    assert appended.content == (TextBlock("text"), c1, c2)
    assert Message(Role.ASSISTANT, [c1], tool_calls=[c2]).tool_calls == (c1, c2)
    assert dataclasses.replace(appended, id="other").content == appended.content
    assert copy.deepcopy(appended).tool_calls == (c1, c2)


def test_groups_keep_an_opaque_call_with_the_tool_message_answering_it() -> None:
    history = [
        Message.user("go", id="u"),
        Message.assistant(OpaqueBlock("openai", {"type": "computer_call"}, call_id="k"), id="a"),
        Message.tool("k", OpaqueBlock("openai", {"type": "computer_call_output"}), id="t"),
    ]
    assert [[m.id for m in g] for g in groups(history)] == [["u"], ["a", "t"]]


# --- tool results ------------------------------------------------------------------------------


def test_a_tool_result_may_be_empty_and_an_error() -> None:
    assert Message.tool("c1").content == (TextBlock(""),)
    assert Message.tool("c1", []).content == ()
    failed = Message.tool("c1", "no such city", is_error=True)
    assert failed.is_error is True
    assert Message.tool("c1", "ok").is_error is False
    assert Message.user("x").is_error is False
    assert Message.from_dict(failed.to_dict()) == failed


# --- images and documents ----------------------------------------------------------------------


def test_a_data_url_becomes_bytes_when_the_block_is_built() -> None:
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    block = ImageBlock(url=url, detail="high")
    assert (block.data, block.media_type, block.url) == (PNG, "image/png", None)
    assert (block.width, block.height) == (70, 30)  # read from the header
    assert block == ImageBlock(PNG, "image/png", detail="high")
    text = DocumentBlock(url="data:text/plain;charset=utf-8,caf%C3%A9%20%E2%9C%93")
    assert (text.data, text.media_type) == ("café ✓".encode(), "text/plain")
    pdf = DocumentBlock(url="DATA:application/pdf;base64,JVBERi0xLjQ=", title="a.pdf")
    assert (pdf.data, pdf.media_type, pdf.title) == (b"%PDF-1.4", "application/pdf", "a.pdf")


def test_references_need_no_media_type() -> None:
    for block in (
        ImageBlock(url="https://example.com/a.png"),
        ImageBlock(url="HTTP://example.com/a", media_type="image/gif", width=5, height=6),
        ImageBlock(file_id="file-abc", detail="original"),
        DocumentBlock(url="https://example.com/a.pdf"),
        DocumentBlock(file_id="file-xyz", media_type="application/pdf", title="x"),
    ):
        assert block.data is None
        assert Message.from_dict(Message.user(block).to_dict()).content == (block,)
    assert ImageBlock(bytearray(PNG), "image/png").data == PNG


# --- extras, and the canonical form ------------------------------------------------------------


def test_every_block_and_the_message_carry_extras() -> None:
    extras = {"cache_control": {"type": "ephemeral"}}
    blocks = [
        TextBlock("x", extras=extras),
        ImageBlock(PNG, "image/png", extras=extras),
        DocumentBlock(b"x", "text/plain", extras=extras),
        ThinkingBlock("t", extras=extras),
        RedactedThinkingBlock("r", extras=extras),
        ToolCall("c1", "f", extras=extras),
        OpaqueBlock("anthropic", {"type": "x"}, extras=extras),
    ]
    message = Message.assistant(blocks, extras={"name": "bot"})
    assert all(b.extras == extras for b in message.content)
    assert message.extras == {"name": "bot"}
    assert Message.from_dict(json.loads(json.dumps(message.to_dict()))) == message
    assert TextBlock("x") != TextBlock("x", extras=extras)


def test_the_canonical_form_names_bytes_by_their_hash_and_leaves_out_the_time() -> None:
    message = Message.user(ImageBlock(PNG, "image/png"), id="m")
    canonical = json.loads(canonical_json(message))
    assert canonical["content"][0]["data"].startswith("sha256:")
    assert "recorded_at" not in canonical
    assert canonical_json(message.with_recorded_at(message.recorded_at)) == canonical_json(message)
    wire = message.to_dict()
    del wire["recorded_at"]
    wire["content"][0]["data"] = canonical["content"][0]["data"]
    assert json.loads(canonical_json(message)) == wire  # the wire form, bytes aside


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"x": 1, "y": 2}, {"y": 2, "x": 1}),
        ({"x": True}, {"x": 1}),
        ({"x": 1}, {"x": 1.0}),
        ({"x": [1, 2]}, {"x": [2, 1]}),
    ],
)
def test_same_content_and_the_digest_agree_on_what_differs(a: Any, b: Any) -> None:
    first, second = Message.user("x", id="k", extras=a), Message.user("x", id="k", extras=b)
    assert not same_content(first, second)
    assert content_digest(first) != content_digest(second)
    again = Message.user("x", id="k", extras=a)
    assert same_content(first, again) and content_digest(first) == content_digest(again)


def test_new_blocks_have_a_token_cost() -> None:
    base = estimate_tokens(Message.assistant("x"))
    assert estimate_tokens(Message.assistant(["x", RedactedThinkingBlock("a" * 400)])) == base + 100
    payload = {"type": "web_search_call", "q": "a" * 380}
    opaque = OpaqueBlock("openai", payload)
    assert (
        estimate_tokens(Message.assistant(["x", opaque]))
        == base + len(json.dumps(payload, separators=(",", ":"))) // 4
    )
    text_call = ToolCall("c1", "abcd", arguments_text="x" * 36)
    assert estimate_tokens(Message.assistant(["x", text_call])) == base + 10
    assert estimate_tokens(Message.user(DocumentBlock(url="https://example.com/a.pdf"))) == 4
