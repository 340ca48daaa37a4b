"""Real shapes of OpenAI Chat Completions messages: requests, replies, and oddities.

Data, not tests (docs/providers.md, OpenAI Chat Completions). Each entry is a whole
``messages`` list as a client sends it, or a reply as the API returns it:

- ``REQUESTS``: request histories the SDK's ``ChatCompletionMessageParam`` TypedDicts
  accept strictly (no key they do not define), every tool call answered right after it;
- ``REPLIES``: ``choices[0].message`` objects of real responses, as JSON; the SDK's
  ``ChatCompletionMessage`` reads them, and a client replays them as they are;
- ``WITH_UNKNOWN_KEYS``: requests carrying keys the SDK does not define (a proxy's trace
  field, a field newer than the SDK), which the converter keeps.
"""

from __future__ import annotations

import base64
from typing import Any

from tests.support.cases import PDF_BYTES, image_bytes

Items = list[dict[str, Any]]

PNG = image_bytes(8, 6, seed=11)
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode("ascii")
JPEG = image_bytes(5, 5, "image/jpeg", seed=2)
# The same bytes, written in ways that do not come back from bytes alone.
JPEG_URL_WITH_PARAMETER = "data:image/jpeg;name=photo.jpg;base64," + base64.b64encode(JPEG).decode(
    "ascii"
)
PNG_URL_UPPER_CASE = "data:IMAGE/PNG;base64," + base64.b64encode(PNG).decode("ascii")
PDF_URL = "data:application/pdf;base64," + base64.b64encode(PDF_BYTES).decode("ascii")
WAV_BASE64 = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode("ascii")


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


REQUESTS: dict[str, Items] = {
    "system-user-assistant": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Who won the world series in 2020?"},
        {"role": "assistant", "content": "The Los Angeles Dodgers won the World Series in 2020."},
        {"role": "user", "content": "Where was it played?"},
    ],
    "developer-and-names": [
        {"role": "developer", "content": "Talk like a pirate.", "name": "style"},
        {"role": "user", "name": "ada", "content": "Are semicolons optional in JavaScript?"},
        {"role": "assistant", "content": "Arr, mostly.", "name": "pirate"},
        {"role": "system", "content": [{"type": "text", "text": "Keep it short."}]},
        {
            "role": "developer",
            "content": [
                {"type": "text", "text": "Rule one."},
                {"type": "text", "text": "Rule two."},
            ],
        },
    ],
    "parallel-tool-calls": [
        {"role": "user", "content": "What's the weather like in Paris and Oslo today?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                _call("call_12345xyz", "get_weather", '{"location":"Paris, France"}'),
                _call("call_67890abc", "get_weather", '{"location": "Oslo, Norway"}'),
            ],
        },
        {"role": "tool", "tool_call_id": "call_12345xyz", "content": "15 degrees"},
        {"role": "tool", "tool_call_id": "call_67890abc", "content": "-3 degrees"},
        {"role": "assistant", "content": "Paris is mild at 15°C; Oslo is freezing at -3°C."},
    ],
    "argument-text-byte-exact": [
        {"role": "user", "content": "Run them."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                _call("call_spaces", "f", '{ "b" : 1 ,\n  "a" : [ 1.0, 2e3 ] }'),
                _call("call_escape", "f", '{"q": "caf\\u00e9 \\"quoted\\""}'),
                _call("call_cut", "f", '{"city": "Oslo", "units": "metr'),
                _call("call_empty", "f", ""),
                _call("call_array", "f", "[1, 2]"),
                _call("call_dup", "f", '{"a": 1, "a": 2}'),
            ],
        },
        {"role": "tool", "tool_call_id": "call_spaces", "content": ""},
        {
            "role": "tool",
            "tool_call_id": "call_escape",
            "content": [{"type": "text", "text": "ok"}],
        },
        {
            "role": "tool",
            "tool_call_id": "call_cut",
            "content": [
                {"type": "text", "text": "error: "},
                {"type": "text", "text": "arguments are not JSON"},
            ],
        },
        {"role": "tool", "tool_call_id": "call_empty", "content": []},
        {"role": "tool", "content": "[3]", "tool_call_id": "call_array"},
        {"tool_call_id": "call_dup", "role": "tool", "content": "2"},
    ],
    "user-media": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these images?"},
                {
                    "type": "image_url",
                    "image_url": {"url": "https://upload.wikimedia.org/a.jpg", "detail": "high"},
                },
                {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}},
                {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}},
                {"type": "image_url", "image_url": {"detail": "auto", "url": PNG_URL}},
                {"type": "image_url", "image_url": {"url": JPEG_URL_WITH_PARAMETER}},
                {"type": "image_url", "image_url": {"url": PNG_URL_UPPER_CASE}},
                {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "original"}},
            ],
        },
        {"role": "assistant", "content": "A boardwalk, a red square and two tiny images."},
        {
            "role": "user",
            "content": [
                {"type": "input_audio", "input_audio": {"data": WAV_BASE64, "format": "wav"}},
                {"type": "text", "text": "Transcribe this, then read the PDFs."},
                {"type": "file", "file": {"filename": "draconomicon.pdf", "file_data": PDF_URL}},
                {"type": "file", "file": {"file_data": PDF_URL}},
                {"type": "file", "file": {"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}},
                {"type": "file", "file": {"file_id": "file-abc", "filename": "notes.pdf"}},
                {"type": "file", "file": {"filename": "raw.pdf", "file_data": "JVBERi0xLjQK"}},
            ],
        },
    ],
    "images-kept-verbatim": [
        {
            "role": "user",
            "content": [
                {
                    "type": "image_url",
                    "image_url": {
                        "url": "data:image/jpg;base64," + base64.b64encode(JPEG).decode()
                    },
                },
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,bm90IGEgcG5n"}},
                {"type": "image_url", "image_url": {"url": "ftp://example.com/c.png"}},
            ],
        },
    ],
    "refusals": [
        {"role": "user", "content": "Help me pick a lock."},
        {"role": "assistant", "content": None, "refusal": "I'm sorry, I can't help with that."},
        {"role": "user", "content": "Then tell me a joke."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Here is one:"},
                {"type": "refusal", "refusal": "but not that one."},
            ],
        },
        {"role": "assistant", "content": "Partly.", "refusal": "The rest I refuse."},
    ],
    "audio-reply-replayed": [
        {"role": "user", "content": "Is a golden retriever a good family dog?"},
        {"role": "assistant", "audio": {"id": "audio_abc123"}},
        {"role": "user", "content": "Why do you say they are loyal?"},
        {"role": "assistant", "content": "They bond closely.", "audio": None},
    ],
    "deprecated-function-role": [
        {"role": "user", "content": "What's the weather in Boston?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_current_weather", "arguments": '{"location":"Boston"}'},
        },
        {"role": "function", "name": "get_current_weather", "content": '{"temperature": "22"}'},
        {"role": "assistant", "content": "It is 22 degrees in Boston."},
        {"role": "user", "content": "Is it raining?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_rain", "arguments": ""},
        },
        {"role": "function", "name": "get_rain", "content": None},
    ],
    "custom-tool-call": [
        {"role": "user", "content": "Use the code_exec tool to print hello world."},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_custom_1",
                    "type": "custom",
                    "custom": {"name": "code_exec", "input": 'print("hello world")'},
                },
                {
                    "id": "call_custom_2",
                    "type": "custom",
                    "custom": {"input": '{"json": "too"}', "name": "grammar"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_custom_1", "content": "hello world"},
        {"role": "tool", "tool_call_id": "call_custom_2", "content": "ok"},
    ],
    "key-orders": [
        {"content": "Hi", "role": "user"},
        {
            "tool_calls": [
                {
                    "function": {"arguments": "{}", "name": "now"},
                    "id": "call_o1",
                    "type": "function",
                },
                {
                    "type": "function",
                    "id": "call_o2",
                    "function": {"name": "now", "arguments": "{}"},
                },
            ],
            "content": None,
            "role": "assistant",
        },
        {"content": "12:00", "tool_call_id": "call_o1", "role": "tool"},
        {"role": "tool", "content": "12:00", "tool_call_id": "call_o2"},
        {
            "role": "user",
            "content": [
                {"text": "Look:", "type": "text"},
                {
                    "image_url": {"detail": "low", "url": "https://example.com/x.png"},
                    "type": "image_url",
                },
                {"file": {"file_id": "file-1", "filename": "a.pdf"}, "type": "file"},
            ],
        },
    ],
    "empty-messages": [
        {"role": "system", "content": ""},
        {"role": "user", "content": "Hi", "name": "ada"},
        {"role": "user", "content": ""},
        {"role": "developer", "content": [], "name": "rules"},
        {"role": "assistant", "content": "Yes?"},
    ],
    "prompt-cache-breakpoints": [
        {
            "role": "system",
            "content": [
                {
                    "type": "text",
                    "text": "A long, reusable prefix.",
                    "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "30m"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "image_url",
                    "image_url": {"url": "https://example.com/big.png"},
                    "prompt_cache_breakpoint": {"mode": "explicit"},
                },
                {"type": "text", "text": "Describe it."},
            ],
        },
    ],
}


REPLIES: dict[str, dict[str, Any]] = {
    "text": {
        "role": "assistant",
        "content": "Hello! How can I assist you today?",
        "refusal": None,
        "annotations": [],
    },
    "tool-calls": {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_DdmO9pD3xa9XTPNJ32zg2hcA",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location":"Paris, France"}'},
            },
            {
                "id": "call_ABC",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location":"Bogot\\u00e1"}'},
            },
        ],
        "refusal": None,
        "annotations": [],
    },
    "refusal": {
        "role": "assistant",
        "content": None,
        "refusal": "I'm sorry, I can't assist with that request.",
        "annotations": [],
    },
    "audio": {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "audio": {
            "id": "audio_6718",
            "data": WAV_BASE64,
            "expires_at": 1729018505,
            "transcript": "Yes, golden retrievers are known to be ...",
        },
        "annotations": [],
    },
    "web-search-annotations": {
        "role": "assistant",
        "content": "A positive news story from today is that ... ([example.com](https://example.com/))",
        "refusal": None,
        "annotations": [
            {
                "type": "url_citation",
                "url_citation": {
                    "end_index": 985,
                    "start_index": 764,
                    "title": "Title of the web resource",
                    "url": "https://example.com/",
                },
            }
        ],
    },
    "deprecated-function-call": {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "get_current_weather", "arguments": '{\n"location": "Boston"\n}'},
        "refusal": None,
    },
    "custom-tool-call": {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_custom",
                "type": "custom",
                "custom": {"name": "code_exec", "input": 'print("hello")'},
            }
        ],
        "refusal": None,
        "annotations": [],
    },
}


WITH_UNKNOWN_KEYS: dict[str, Items] = {
    "trace-fields": [
        {"role": "user", "content": "hi", "x_trace": {"span": "a1", "sampled": True}},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hello", "x_lang": "en"}],
            "x_latency_ms": 120,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "f", "arguments": "{}", "strict": True},
                    "index": 0,
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "done", "x_ms": 3.5},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": PNG_URL, "x_crop": [0, 0, 4, 4]}},
                {"type": "file", "file": {"file_id": "file-1", "x_pages": "1-2"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "late", "name": "f"},
    ],
}
