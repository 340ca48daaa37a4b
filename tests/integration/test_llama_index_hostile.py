"""The LlamaIndex adapter under hostile input: only sqlmemory's errors, and no half writes.

The values of ``test_hostile_integrations`` (nesting 10,000 deep, ints of 5,000 digits,
NaN, lone surrogates, NUL characters, objects no converter knows), put where a buggy
caller or a changed LlamaIndex puts them: in ``additional_kwargs``, in blocks built
without validation, in hand-written ``extras["llama_index"]``. Every call converts, or
raises a :class:`~sqlmemory.errors.SqlMemoryError` (never LlamaIndex's ``ValidationError``,
a ``KeyError`` or a ``RecursionError``), and a refused write leaves the history as it was.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage, TextBlock

from sqlmemory import Message, SqlStorage
from sqlmemory.integrations.llama_index import (
    SqlMemoryChatStore,
    from_llama_index,
    to_llama_index,
)
from tests.integration.test_hostile_integrations import (
    DB_SETTINGS,
    PURE_SETTINGS,
    SESSION,
    _check,
    _special,
    _Thing,
    hand_made_messages,
    hostile,
)

ROLES = ["user", "assistant", "tool", "system", "model", "function"]


@st.composite
def spoiled_messages(draw: st.DrawFn) -> ChatMessage:
    """A chat message with hostile ``additional_kwargs``, or hostile blocks built without
    LlamaIndex's validation (as a changed LlamaIndex or a subclass may hand over)."""
    role = draw(st.sampled_from(ROLES))
    kwargs = draw(
        st.dictionaries(
            st.sampled_from(["tool_call_id", "tool_calls", "usage", "x"]), hostile, max_size=3
        )
    )
    if draw(st.booleans()):
        try:
            return ChatMessage(role=role, content="hi", additional_kwargs=kwargs)
        except ValueError:  # LlamaIndex refuses it itself
            return ChatMessage(role=role, content="hi")
    blocks = draw(
        st.lists(
            st.one_of(
                hostile,
                st.builds(
                    dict,
                    block_type=st.sampled_from(["text", "image", "tool_call", "thinking"]),
                    text=hostile,
                    image=hostile,
                    tool_call_id=hostile,
                    tool_name=hostile,
                    content=hostile,
                ),
            ),
            max_size=2,
        )
    )
    return ChatMessage.model_construct(
        role=role, additional_kwargs=kwargs, blocks=[TextBlock(text="a"), *blocks]
    )


@PURE_SETTINGS
@given(messages=st.lists(spoiled_messages(), max_size=3))
def test_from_llama_index_converts_or_raises_a_conversion_error(messages: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            converted = from_llama_index(messages)
        except Exception as exc:
            _check(exc)
            return
        assert len(to_llama_index(converted)) == len(converted)


@PURE_SETTINGS
@given(
    messages=st.lists(
        hand_made_messages(
            "llama_index", ["role", "additional_kwargs", "source", "empty", "text", "detail"]
        ),
        max_size=3,
    )
)
def test_to_llama_index_of_hand_made_extras_converts_or_raises_a_conversion_error(
    messages: list[Message],
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            to_llama_index(messages)
        except Exception as exc:
            _check(exc)


@DB_SETTINGS
@given(message=spoiled_messages())
def test_a_store_stores_whole_or_leaves_the_history(message: Any, engine: sa.Engine) -> None:
    storage = SqlStorage(engine)
    storage.clear(SESSION)
    store = SqlMemoryChatStore(storage)
    store.add_message(SESSION, ChatMessage(role="user", content="kept"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            store.add_message(SESSION, message)
        except Exception as exc:
            _check(exc)
            assert [m.content for m in store.get_messages(SESSION)] == ["kept"]
            return
    assert len(store.get_messages(SESSION)) == 2


@pytest.mark.parametrize("value", [None, 1, "hi", b"hi", {"a": 1}, _Thing()])
@pytest.mark.parametrize("convert", [to_llama_index, from_llama_index])
def test_what_is_no_list_of_messages_is_refused(value: Any, convert: Any) -> None:
    from sqlmemory import ConversionError

    with pytest.raises(ConversionError, match="must be a list of messages"):
        convert(value)


@pytest.mark.parametrize("value", ["huge int", "deep dict", "NUL", "nan"])
def test_additional_kwargs_json_cannot_show_are_refused(value: str) -> None:
    from sqlmemory import ConversionError

    message = ChatMessage(role="user", content="hi", additional_kwargs={"x": _special(value)})
    try:
        converted = from_llama_index([message])
    except ConversionError as exc:
        assert "message 0" in str(exc)
        return
    assert to_llama_index(converted)[0].content == "hi"
