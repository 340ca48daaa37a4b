"""LlamaIndex chat messages to sqlmemory and back: every shape comes back equal.

The corpus holds what LlamaIndex's agents and LLM integrations put in a chat history: text,
images by bytes and by URL, documents, thinking, ``ToolCallBlock`` and OpenAI-style
``additional_kwargs["tool_calls"]``, tool results, roles sqlmemory has no name for, blocks
it has no kind for, an empty reply and token counts. Equal means equal JSON dumps.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from llama_index.core.base.llms.types import (
    AudioBlock,
    CacheControl,
    CachePoint,
    ChatMessage,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)

from sqlmemory import ConversionError, Message, OpaqueBlock, Role, ToolCall, Usage
from sqlmemory import ImageBlock as SqlImage
from sqlmemory.formats import DroppedContentWarning
from sqlmemory.integrations.llama_index import from_llama_index, to_llama_index

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
OPENAI_CALL = {"id": "c2", "type": "function", "function": {"name": "g", "arguments": '{"b": 2}'}}


def corpus(picture: Path) -> list[ChatMessage]:
    """The shapes, an image by local path among them (``picture``, a file that exists)."""
    picture.write_bytes(PNG)
    return [
        ChatMessage(role="system", content="Be terse."),
        ChatMessage(
            role="user",
            blocks=[
                TextBlock(text="What is this?"),
                ImageBlock(image=PNG),
                ImageBlock(url="https://example.com/a.png", detail="low"),
                DocumentBlock(data=b"%PDF-1.4 x", title="t"),
            ],
            additional_kwargs={"session": "s1", "raw": b"\x00\x01"},
        ),
        ChatMessage(
            role="assistant",
            blocks=[
                ThinkingBlock(content="hm", num_tokens=3),
                TextBlock(text="Let me multiply."),
                ToolCallBlock(tool_call_id="c1", tool_name="mul", tool_kwargs={"a": 6, "b": 7}),
            ],
        ),
        ChatMessage(role="tool", content="42", additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(
            role="assistant", content=None, additional_kwargs={"tool_calls": [OPENAI_CALL]}
        ),
        ChatMessage(
            role="tool", content="2", additional_kwargs={"tool_call_id": "c2", "name": "g"}
        ),
        ChatMessage(role="tool", content="a tool result without its call id"),
        ChatMessage(role="assistant", content=""),
        ChatMessage(
            role="assistant",
            content="42",
            additional_kwargs={"prompt_tokens": 10, "completion_tokens": 3, "model": "m1"},
        ),
        ChatMessage(
            role="model",
            blocks=[
                AudioBlock(audio=b"RIFF0000WAVE"),
                CachePoint(cache_control=CacheControl(type="ephemeral")),
            ],
        ),
        ChatMessage(
            role="assistant",
            blocks=[ToolCallBlock(tool_call_id="c3", tool_name="mul", tool_kwargs='{"a": 1')],
        ),
        ChatMessage(role="developer", content="Answer in French."),
        ChatMessage(role="user", blocks=[ImageBlock(path=picture)]),
    ]


def test_every_shape_comes_back_equal(tmp_path: Path) -> None:
    messages = corpus(tmp_path / "local.png")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = to_llama_index(from_llama_index(messages))
    assert [m.model_dump(mode="json") for m in back] == [
        m.model_dump(mode="json") for m in messages
    ]


def test_common_meanings_become_sqlmemory_s_own(tmp_path: Path) -> None:
    stored = from_llama_index(corpus(tmp_path / "local.png"))
    assert [m.role for m in stored[:4]] == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL]
    image = stored[1].content[1]
    assert isinstance(image, SqlImage) and (image.data, image.media_type) == (PNG, "image/png")
    assert stored[2].tool_calls[0] == ToolCall("c1", "mul", {"a": 6, "b": 7})
    assert stored[2].content[0].kind == "thinking"
    assert (stored[3].tool_call_id, stored[3].text_content()) == ("c1", "42")
    assert stored[4].tool_calls[0].arguments == {"b": 2}
    assert stored[5].extras["llama_index"]["additional_kwargs"] == {"name": "g"}
    # No call id: kept as a user message that remembers its role.
    assert (stored[6].role, stored[6].extras["llama_index"]["role"]) == (Role.USER, "tool")
    assert stored[8].usage == Usage("m1", input_tokens=10, output_tokens=3)
    assert all(isinstance(b, OpaqueBlock) for b in stored[9].content)
    assert stored[10].tool_calls[0].arguments_text == '{"a": 1'


def test_messages_from_other_sources_get_llama_index_blocks() -> None:
    call = ToolCall("c9", "mul", {"a": 2})
    messages = [
        Message.assistant("Checking.", tool_calls=[call]),
        Message.tool("c9", "4", is_error=True),
        Message.user([SqlImage(file_id="file-1"), "see"]),
    ]
    with pytest.warns(DroppedContentWarning, match="file id"):
        back = to_llama_index(messages)
    assert back[0].blocks[1] == ToolCallBlock(
        tool_call_id="c9", tool_name="mul", tool_kwargs={"a": 2}
    )
    assert (back[1].role.value, back[1].additional_kwargs) == ("tool", {"tool_call_id": "c9"})
    assert back[2].content == "see"


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"role": "user", "content": "hi"}, ConversionError),
        ("hi", ConversionError),
        (
            [ChatMessage(role="user", content="hi", additional_kwargs={"x": object()})],
            ConversionError,
        ),
        (
            [ChatMessage(role="tool", content="x", additional_kwargs={"tool_call_id": "a\x00b"})],
            ConversionError,
        ),
        ([ChatMessage(role="user", content="hi"), 3], ConversionError),
    ],
    ids=["dict", "str", "not-json", "bad-call-id", "not-a-message"],
)
def test_hostile_input_gets_a_conversion_error(bad: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        from_llama_index(bad)  # type: ignore[arg-type]


def test_extras_llama_index_refuses_give_a_conversion_error() -> None:
    broken = Message.user("hi", extras={"llama_index": {"additional_kwargs": ["not", "a", "dict"]}})
    with pytest.raises(ConversionError, match="message 0"):
        to_llama_index([broken])
    with pytest.raises(ConversionError):
        to_llama_index([ChatMessage(role="user", content="hi")])  # type: ignore[list-item]
