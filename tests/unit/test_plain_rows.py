"""The row of a text alone and the rows of a reply of texts and tool calls, built without
the general encoder (``sqlmemory/storage/sql/plain_rows.py``,
``sqlmemory/storage/sql/simple_rows.py``), are the general encoder's rows."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqlmemory import Message, TextBlock, Usage
from sqlmemory.storage.search_rules import MAX_SEARCH_TEXT
from sqlmemory.storage.sql import codec
from sqlmemory.storage.sql.codec import MAX_STORED_TOKENS, digest_of, encode_message
from sqlmemory.storage.sql.plain_rows import PLAIN_COLUMNS, plain_row, plain_values
from sqlmemory.storage.sql.simple_rows import simple_rows
from tests.support.strategies import ids, messages, replies

texts = st.text(min_size=1, max_size=60) | st.sampled_from([" ", "\x00", "a\x00b", "é" * 9])


def general(message: Message) -> codec.EncodedMessage:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codec, "plain_values", lambda *args: None)
        patch.setattr(codec, "simple_rows", lambda *args: None)
        return encode_message(message)


def same_rows(message: Message) -> None:
    fast, slow = encode_message(message), general(message)
    assert (fast.row, list(fast.blocks), list(fast.blobs)) == (slow.row, slow.blocks, slow.blobs)
    assert list(fast.row) == list(slow.row)  # the same columns, in the same order
    assert fast.digest == slow.digest == slow.row["digest"]
    if fast.plain is not None:  # a text alone: its plain values are its row's
        assert fast.plain == tuple(slow.row[name] for name in PLAIN_COLUMNS)
        assert plain_row(fast.plain) == slow.row


@given(
    role=st.sampled_from(["user", "assistant", "system", "developer"]),
    text=texts,
    message_id=ids,
)
def test_a_text_alone_is_the_general_row(role: str, text: str, message_id: str) -> None:
    message = Message(role, text, id=message_id)
    assert plain_values(message, digest_of, MAX_STORED_TOKENS) is not None
    same_rows(message)


@given(text=texts, call_id=ids, is_error=st.booleans())
def test_a_tool_result_alone_is_the_general_row(text: str, call_id: str, is_error: bool) -> None:
    message = Message.tool(call_id, text, is_error=is_error)
    assert plain_values(message, digest_of, MAX_STORED_TOKENS) is not None
    same_rows(message)


@given(message=replies())
def test_a_reply_of_texts_and_tool_calls_is_the_general_row(message: Message) -> None:
    if plain_values(message, digest_of, MAX_STORED_TOKENS) is None:
        assert simple_rows(message, digest_of, MAX_STORED_TOKENS) is not None
    same_rows(message)


@given(message=messages())
def test_every_message_is_encoded_as_the_general_encoder_does(message: Message) -> None:
    same_rows(message)


@pytest.mark.parametrize(
    "message",
    [
        Message.user("x" * (MAX_SEARCH_TEXT + 10)),
        Message.user([TextBlock("a", extras={"citations": []})]),
        Message.user([TextBlock("a"), TextBlock("b")]),
        Message.user("a", metadata={"k": 1}),
        Message.assistant("a", usage=Usage("m", input_tokens=1, output_tokens=2)),
    ],
    ids=["long", "extras", "two-blocks", "metadata", "usage"],
)
def test_the_edges(message: Any) -> None:
    same_rows(message)
