"""OpenAI Chat Completions round trips exactly: requests, replies, SDK objects, storages.

docs/providers.md (OpenAI Chat Completions): ``to_openai_chat(from_openai_chat(items))``
gives ``items`` back, key order included, for every shape of the corpus; each shape is
checked against the ``openai`` SDK's own types before and after, and again after the
messages went through every storage.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageParam,
)
from pydantic import TypeAdapter

from sqlmemory import (
    DocumentBlock,
    DroppedContentWarning,
    ImageBlock,
    Message,
    OpaqueBlock,
    Role,
    TextBlock,
    ToolCall,
    from_openai_chat,
    to_openai_chat,
)
from tests.formats.corpus_openai_chat import (
    JPEG,
    JPEG_URL_WITH_PARAMETER,
    PDF_URL,
    PNG,
    PNG_URL,
    REPLIES,
    REQUESTS,
    WITH_UNKNOWN_KEYS,
    Items,
)
from tests.support.cases import PDF_BYTES
from tests.support.provider_types import assert_valid

PARAMS = list[ChatCompletionMessageParam]
REPLY = TypeAdapter(ChatCompletionMessage)
LENIENT_PARAMS = TypeAdapter(PARAMS)
"""Pydantic ignores keys a TypedDict does not define: what the SDK sends as it is."""


def round_trip(items: Any) -> list[dict[str, Any]]:
    """``to_openai_chat(from_openai_chat(items))``, failing on any dropped content."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedContentWarning)
        return to_openai_chat(from_openai_chat(items))


def assert_same(out: list[dict[str, Any]], items: Any) -> None:
    assert out == items
    assert json.dumps(out) == json.dumps(items)


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_a_request_comes_back_exactly_and_valid(name: str) -> None:
    items = REQUESTS[name]
    assert_valid(items, PARAMS)
    out = round_trip(items)
    assert_same(out, items)
    assert_valid(out, PARAMS)


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_a_reply_comes_back_exactly_as_dict_and_as_sdk_object(name: str) -> None:
    reply = REPLIES[name]
    REPLY.validate_python(reply)
    assert_same(round_trip([reply]), [reply])
    # What a client holds: the SDK's object, as a whole response parses it.
    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-123",
            "object": "chat.completion",
            "created": 1741570283,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": reply, "logprobs": None, "finish_reason": "stop"}],
        }
    )
    message = completion.choices[0].message
    out = round_trip([message])
    assert_same(out, [message.model_dump(mode="json", exclude_unset=True)])
    assert out[0].keys() == reply.keys()
    REPLY.validate_python(out[0])
    # Replayed as the SDK itself replays a reply appended to ``messages``.
    LENIENT_PARAMS.validate_python(out)


def test_storing_a_reply_is_one_line() -> None:
    message = ChatCompletionMessage.model_validate(REPLIES["tool-calls"])
    (stored,) = from_openai_chat([message])
    assert stored.role is Role.ASSISTANT
    assert [(c.id, c.arguments_text) for c in stored.tool_calls] == [
        ("call_DdmO9pD3xa9XTPNJ32zg2hcA", '{"location":"Paris, France"}'),
        ("call_ABC", '{"location":"Bogot\\u00e1"}'),
    ]
    assert stored.tool_calls[1].arguments == {"location": "Bogotá"}


def test_sdk_objects_inside_dicts_are_read_too() -> None:
    call = ChatCompletionMessageFunctionToolCall.model_validate(
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    )
    out = round_trip([{"role": "assistant", "content": None, "tool_calls": [call]}])
    assert out == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "function": {"arguments": "{}", "name": "f"}, "type": "function"}
            ],
        }
    ]


@pytest.mark.parametrize("name", sorted(WITH_UNKNOWN_KEYS))
def test_keys_the_sdk_does_not_define_are_kept_in_extras(name: str) -> None:
    items = WITH_UNKNOWN_KEYS[name]
    LENIENT_PARAMS.validate_python(items)
    messages = from_openai_chat(items)
    assert_same(round_trip(items), items)
    assert messages[0].extras["openai_chat"]["fields"] == {
        "x_trace": {"span": "a1", "sampled": True}
    }
    call = messages[1].tool_calls[0]
    assert call.extras["openai_chat"]["fields"] == {"index": 0}
    assert call.extras["openai_chat"]["function"]["fields"] == {"strict": True}
    assert messages[4].extras["openai_chat"]["fields"] == {"name": "f"}


def _by_name(name: str) -> list[Message]:
    return from_openai_chat(REQUESTS[name])


def test_what_each_part_becomes() -> None:
    user, _, media = _by_name("user-media")
    blocks = user.content
    assert blocks[0] == TextBlock("What is in these images?")
    assert blocks[1] == ImageBlock(url="https://upload.wikimedia.org/a.jpg", detail="high")
    assert blocks[2] == ImageBlock(url="https://example.com/b.png")
    # data: URLs are stored as bytes; one written unusually keeps its text in extras.
    assert blocks[3] == ImageBlock(PNG, "image/png", detail="low")
    assert (blocks[3].width, blocks[3].height) == (8, 6)
    assert isinstance(blocks[5], ImageBlock) and blocks[5].data == JPEG
    assert blocks[5].extras["openai_chat"]["url"] == JPEG_URL_WITH_PARAMETER
    assert isinstance(media.content[0], OpaqueBlock)
    assert media.content[0].provider == "openai_chat"
    assert media.content[0].payload["type"] == "input_audio"
    pdf = media.content[2]
    assert isinstance(pdf, DocumentBlock)
    assert (pdf.data, pdf.media_type, pdf.title) == (
        PDF_BYTES,
        "application/pdf",
        "draconomicon.pdf",
    )
    by_id = media.content[4]
    assert isinstance(by_id, DocumentBlock) and by_id.file_id == "file-6F2ksmvXxt4VdoqmHRw6kL"
    raw = media.content[6]  # base64 with no media type: kept as Chat sent it
    assert isinstance(raw, OpaqueBlock) and raw.payload["file"]["filename"] == "raw.pdf"
    odd = _by_name("images-kept-verbatim")[0].content
    assert [type(b) for b in odd] == [OpaqueBlock, OpaqueBlock, OpaqueBlock]


def test_what_each_message_key_becomes() -> None:
    developer, user, assistant, *_ = _by_name("developer-and-names")
    assert developer.role is Role.DEVELOPER
    assert user.extras["openai_chat"]["fields"] == {"name": "ada"}
    assert assistant.extras["openai_chat"]["fields"] == {"name": "pirate"}
    _, refused, _, parts, both = _by_name("refusals")
    assert refused.text_content() == "I'm sorry, I can't help with that."
    assert [b.extras for b in parts.content] == [{}, {"openai_chat": {"type": "refusal"}}]
    assert both.text_content() == "Partly.\nThe rest I refuse."
    _, audio, *_ = _by_name("audio-reply-replayed")
    assert audio.content == (
        OpaqueBlock(
            "openai_chat", {"id": "audio_abc123"}, extras={"openai_chat": {"field": "audio"}}
        ),
    )
    _, custom, *_ = _by_name("custom-tool-call")
    assert [(c.name, c.arguments_text, c.arguments) for c in custom.tool_calls] == [
        ("code_exec", 'print("hello world")', None),
        ("grammar", '{"json": "too"}', {"json": "too"}),
    ]


def test_a_message_with_nothing_the_model_holds_is_kept_whole_for_chat_only() -> None:
    system, _, user, developer, _ = _by_name("empty-messages")
    assert system.content == (
        OpaqueBlock(
            "openai_chat",
            {"role": "system", "content": ""},
            extras={"openai_chat": {"field": "message"}},
        ),
    )
    assert (user.role, developer.role) == (Role.USER, Role.DEVELOPER)
    assert isinstance(developer.content[0], OpaqueBlock)
    assert developer.content[0].payload == {"role": "developer", "content": [], "name": "rules"}


def test_argument_text_is_kept_byte_for_byte_even_when_not_json() -> None:
    _, assistant, *results = _by_name("argument-text-byte-exact")
    sent = [
        c["function"]["arguments"] for c in REQUESTS["argument-text-byte-exact"][1]["tool_calls"]
    ]
    assert [c.arguments_text for c in assistant.tool_calls] == sent
    assert [c.arguments for c in assistant.tool_calls] == [
        {"b": 1, "a": [1.0, 2000.0]},
        {"q": 'café "quoted"'},
        None,
        None,
        None,
        {"a": 2},
    ]
    assert results[0].content == (TextBlock(""),)
    assert results[3].content == ()


def test_the_deprecated_function_role_answers_the_function_call_before_it() -> None:
    _, assistant, result, _, _, again, empty = _by_name("deprecated-function-role")
    (call,) = assistant.tool_calls
    assert (call.name, call.arguments_text) == ("get_current_weather", '{"location":"Boston"}')
    assert result.role is Role.TOOL and result.tool_call_id == call.id
    assert result.text_content() == '{"temperature": "22"}'
    (second,) = again.tool_calls
    assert second.id != call.id
    assert empty.tool_call_id == second.id and empty.content == ()
    (orphan,) = from_openai_chat([{"role": "function", "name": "f", "content": "x"}])
    assert orphan.tool_call_id not in (call.id, second.id)


def test_every_request_round_trips_through_every_storage(storage: Any) -> None:
    corpus: dict[str, Items] = {
        **REQUESTS,
        **WITH_UNKNOWN_KEYS,
        **{f"reply-{name}": [reply] for name, reply in REPLIES.items()},
    }
    for name, items in corpus.items():
        storage.save(name, from_openai_chat(items))
    for name, items in corpus.items():
        assert_same(round_trip_loaded(storage.load(name)), items)


def round_trip_loaded(messages: list[Message]) -> list[dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedContentWarning)
        return to_openai_chat(messages)


def test_messages_built_by_hand_become_plain_params() -> None:
    out = round_trip_loaded(
        [
            Message.system("Be brief."),
            Message(Role.DOCUMENT, "Reference: the manual."),
            Message.user(["Look at", ImageBlock(PNG, "image/png", detail="low")]),
            Message.assistant(
                ["Checking.", ToolCall("c1", "look", arguments_text='{"at": 1')],
                tool_calls=[ToolCall("c2", "look", {"at": 2})],
            ),
            Message.tool("c1", ""),
            Message.tool("c2", ["part one", "part two"]),
            Message.user(DocumentBlock(PDF_BYTES, "application/pdf")),
            Message.user(DocumentBlock(b"plain words", "text/plain", title="notes")),
            Message.user(DocumentBlock(file_id="file-9", title="spec.pdf")),
        ]
    )
    assert out == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Reference: the manual."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look at"},
                {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "look", "arguments": '{"at": 1'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "look", "arguments": '{"at":2}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": ""},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "file",
                    "file": {
                        "filename": "document.pdf",
                        "file_data": PDF_URL,
                    },
                }
            ],
        },
        {"role": "user", "content": "plain words"},  # a text document: its text
        {
            "role": "user",
            "content": [{"type": "file", "file": {"filename": "spec.pdf", "file_id": "file-9"}}],
        },
    ]
    assert_valid(out, PARAMS)
