"""The canonical form of a text alone, written without ``json.dumps``
(``sqlmemory/types/_canonical.py``), is the general form, byte for byte."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from sqlmemory import Message, TextBlock, ThinkingBlock, ToolCall, Usage
from sqlmemory.types._canonical import json_string, plain_canonical, simple_canonical
from sqlmemory.types._message_content import sha_reference
from sqlmemory.types.message import WIRE_VERSION, canonical_json
from tests.support.strategies import ids, messages, replies

texts = st.text(min_size=1, max_size=40) | st.text(
    st.characters(codec="utf-8"), min_size=1, max_size=40
)


@given(
    text=st.text()
    | st.text(st.sampled_from('"\\\n\t\x00\x1f\x7f\u2028 aé😀'))
    | st.text(st.characters(codec="utf-8"))
)
def test_a_string_is_written_as_json_dumps_writes_it(text: str) -> None:
    assert json_string(text) == json.dumps(text, ensure_ascii=False)


def general(message: Message) -> str:
    wire = message._wire(sha_reference)
    return json.dumps(wire, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


@given(
    role=st.sampled_from(["user", "assistant", "system", "developer"]),
    text=texts,
    message_id=ids,
)
def test_a_text_alone_is_the_general_form(role: str, text: str, message_id: str) -> None:
    message = Message(role, text, id=message_id)
    assert plain_canonical(message, WIRE_VERSION) is not None
    assert canonical_json(message) == general(message)


@given(text=texts, call_id=ids, is_error=st.booleans(), message_id=ids)
def test_a_tool_result_alone_is_the_general_form(
    text: str, call_id: str, is_error: bool, message_id: str
) -> None:
    message = Message.tool(call_id, text, is_error=is_error, id=message_id)
    assert plain_canonical(message, WIRE_VERSION) is not None
    assert canonical_json(message) == general(message)


@given(message=replies())
def test_a_reply_of_texts_and_tool_calls_is_the_general_form(message: Message) -> None:
    assert simple_canonical(message, WIRE_VERSION) is not None
    assert canonical_json(message) == general(message)


def test_a_block_or_field_beyond_texts_and_calls_takes_the_general_form() -> None:
    call = ToolCall("c1", "f", {"a": 1})
    others = [
        Message.assistant([TextBlock("a"), ToolCall("c1", "f", {}, extras={"status": "done"})]),
        Message.assistant([TextBlock("a", extras={"citations": []}), call]),
        Message.assistant("a", tool_calls=[call], metadata={"k": 1}),
        Message.assistant("a", tool_calls=[call], extras={"name": "x"}),
        Message.assistant("a", tool_calls=[call], usage=Usage("m", input_tokens=1)),
        Message.assistant([ThinkingBlock("hm"), call]),
    ]
    for message in others:
        assert simple_canonical(message, WIRE_VERSION) is None
        assert canonical_json(message) == general(message)


@given(message=messages())
def test_every_message_has_the_general_form(message: Message) -> None:
    assert canonical_json(message) == general(message)


def test_anything_more_than_a_text_takes_the_general_form() -> None:
    others = [
        Message.user([TextBlock("a"), TextBlock("b")]),
        Message.user([TextBlock("a", extras={"citations": []})]),
        Message.user("a", metadata={"k": 1}),
        Message.user("a", extras={"name": "x"}),
        Message.assistant("a", usage=Usage("m", input_tokens=1, output_tokens=2)),
        Message.assistant("", tool_calls=[ToolCall("c1", "f", {})]),
        Message.assistant([ToolCall("c1", "f", {})]),
    ]
    for message in others:
        assert plain_canonical(message, WIRE_VERSION) is None
        assert canonical_json(message) == general(message)
