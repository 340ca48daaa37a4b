"""Real Anthropic Messages shapes: requests, and responses as the SDK parses them.

Each request is ``{"system": ..., "messages": [...]}`` (``system`` left out when there is
none), the way ``to_anthropic`` returns it and ``client.messages.create(**request)``
takes it; the tests check each against the SDK's own TypedDicts and the API's rules on
turns (``tests.formats.anthropic_types.api_problems``). Responses are JSON bodies
of the Messages API, which the tests parse with ``anthropic.types.Message``. The shapes
follow the API reference: a block's keys in the order the docs write them, and also in the
order the SDK's models dump them (``citations``, ``text``, ``type``).
"""

from __future__ import annotations

from typing import Any

PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
GIF_1PX = "R0lGODlhAQABAAAAACw="
PDF = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0YK"
EPHEMERAL = {"type": "ephemeral"}
SIGNATURE = "EqQBCkgIARABGAIiQL2Qx0b3u3ewdT4zTq4NE8WKkFqQdYw2nF0u0VAWZ4uFYiF9cdcT0Iw"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2Yfr"


def _nested(depth: int) -> dict[str, Any]:
    """A tool input ``depth`` objects deep (within the model's JSON depth limit)."""
    value: dict[str, Any] = {"leaf": [1, 2.5, None, True, "x"]}
    for level in range(depth - 1):
        value = {"level": level, "child": value}
    return value


REQUESTS: dict[str, dict[str, Any]] = {
    "plain strings": {
        "system": "You are a terse assistant.",
        "messages": [
            {"role": "user", "content": "Hello, Claude"},
            {"role": "assistant", "content": "Hi. What do you need?"},
            {"role": "user", "content": "Nothing, thanks."},
        ],
    },
    "no system, prefill": {
        "messages": [
            {"role": "user", "content": "What's the Greek name for Sun? (A) Sol (B) Helios"},
            {"role": "assistant", "content": "The best answer is ("},
        ],
    },
    "system blocks with cache_control, list content": {
        "system": [
            {"type": "text", "text": "You answer questions about the attached book."},
            {
                "type": "text",
                "text": "<book>Call me Ishmael.</book>",
                "cache_control": {"type": "ephemeral", "ttl": "1h"},
            },
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Who narrates?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Ishmael."}]},
        ],
    },
    "one system block": {
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [{"role": "user", "content": "Hi"}],
    },
    "images by bytes, url and file id": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX},
                    },
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/cat.jpg"},
                        "cache_control": EPHEMERAL,
                    },
                    {"type": "image", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1"}},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/gif", "data": GIF_1PX},
                    },
                    {"type": "text", "text": "Compare these images."},
                ],
            },
            {"role": "assistant", "content": "The second one is a cat."},
        ],
    },
    "documents of every source": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                        "title": "Annual report",
                        "context": "Released in March.",
                        "citations": {"enabled": True},
                        "cache_control": EPHEMERAL,
                    },
                    {
                        "type": "document",
                        "source": {
                            "type": "text",
                            "media_type": "text/plain",
                            "data": "The grass is green. The sky is blue.",
                        },
                        "title": "My Document",
                        "citations": {"enabled": True},
                    },
                    {
                        "type": "document",
                        "source": {"type": "url", "url": "https://example.com/paper.pdf"},
                    },
                    {"type": "document", "source": {"type": "file", "file_id": "file_abc"}},
                    {
                        "type": "document",
                        "source": {
                            "type": "content",
                            "content": [
                                {"type": "text", "text": "First chunk"},
                                {"type": "text", "text": "Second chunk"},
                            ],
                        },
                        "title": "Chunks",
                        "context": None,
                    },
                    {"type": "document", "source": {"type": "content", "content": "Just text"}},
                    {"type": "text", "text": "What colour is the grass?"},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "According to the document, "},
                    {
                        "type": "text",
                        "text": "the grass is green",
                        "citations": [
                            {
                                "type": "char_location",
                                "cited_text": "The grass is green.",
                                "document_index": 1,
                                "document_title": "My Document",
                                "start_char_index": 0,
                                "end_char_index": 20,
                            }
                        ],
                    },
                    {"type": "text", "text": "."},
                ],
            },
        ],
    },
    "thinking, text and tool calls interleaved": {
        "system": "Use the tools.",
        "messages": [
            {"role": "user", "content": "Weather in Paris and Oslo?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "Two cities, two calls.",
                        "signature": SIGNATURE,
                    },
                    {"type": "redacted_thinking", "data": REDACTED},
                    {"type": "text", "text": "Checking Paris."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01A09q90qw90lq917835lq9",
                        "name": "get_weather",
                        "input": {"location": "Paris, France", "unit": "celsius"},
                    },
                    {"type": "text", "text": "And Oslo."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01B09q90qw90lq917835lq9",
                        "name": "get_weather",
                        "input": {"unit": "celsius", "location": "Oslo, Norway"},
                        "cache_control": EPHEMERAL,
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                        "content": "15 degrees",
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01B09q90qw90lq917835lq9",
                        "content": [{"type": "text", "text": "3 degrees"}],
                        "cache_control": EPHEMERAL,
                    },
                    {"type": "text", "text": "Which is warmer?"},
                ],
            },
            {"role": "assistant", "content": "Paris."},
        ],
    },
    "tool results: errors, empty, images": {
        "messages": [
            {"role": "user", "content": "Run the checks."},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "check", "input": {}},
                    {"type": "tool_use", "id": "toolu_2", "name": "check", "input": {"n": 2}},
                    {"type": "tool_use", "id": "toolu_3", "name": "check", "input": {"n": 3}},
                    {"type": "tool_use", "id": "toolu_4", "name": "check", "input": {"n": 4}},
                    {"type": "tool_use", "id": "toolu_5", "name": "screenshot", "input": {}},
                    {"type": "tool_use", "id": "toolu_6", "name": "check", "input": {"n": 6}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": ""},
                    {"type": "tool_result", "tool_use_id": "toolu_3", "content": []},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_4",
                        "content": "ConnectionError: the weather service API is not available",
                        "is_error": True,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_5",
                        "content": [
                            {"type": "text", "text": "Here is the screen:"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": PNG_1PX,
                                },
                            },
                        ],
                        "is_error": False,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_6",
                        "content": [
                            {
                                "type": "search_result",
                                "source": "https://example.com/kb/1",
                                "title": "KB 1",
                                "content": [{"type": "text", "text": "Restart it."}],
                                "citations": {"enabled": True},
                            },
                            {"type": "tool_reference", "tool_name": "restart"},
                        ],
                    },
                ],
            },
            {"role": "assistant", "content": "Check 4 failed."},
        ],
    },
    "text after the results, and a separate user turn after them": {
        "messages": [
            {"role": "user", "content": "Add 1 and 2."},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_a", "name": "add", "input": {"a": 1, "b": 2}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "3"},
                    {"type": "text", "text": "Go on."},
                ],
            },
            {"role": "assistant", "content": "3."},
            {"role": "user", "content": "Again."},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_b", "name": "add", "input": {"a": 1, "b": 2}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_b", "content": "3"}],
            },
            {"role": "user", "content": "Thanks."},
            {"role": "user", "content": [{"type": "text", "text": "Bye."}]},
        ],
    },
    "server tools: web search with citations": {
        "messages": [
            {"role": "user", "content": "How do I update a web app to TypeScript 5.5?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "I'll search for that."},
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                        "name": "web_search",
                        "input": {"query": "TypeScript 5.5 upgrade"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                        "content": [
                            {
                                "type": "web_search_result",
                                "url": "https://devblogs.microsoft.com/typescript/announcing-typescript-5-5/",
                                "title": "Announcing TypeScript 5.5",
                                "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUt",
                                "page_age": "June 20, 2024",
                            }
                        ],
                    },
                    {
                        "type": "text",
                        "text": "TypeScript 5.5 adds inferred type predicates.",
                        "citations": [
                            {
                                "type": "web_search_result_location",
                                "url": "https://devblogs.microsoft.com/typescript/announcing-typescript-5-5/",
                                "title": "Announcing TypeScript 5.5",
                                "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm",
                                "cited_text": "TypeScript 5.5 infers type predicates.",
                            }
                        ],
                    },
                ],
            },
            {"role": "user", "content": "Fetch the page."},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_02",
                        "name": "web_fetch",
                        "input": {"url": "https://example.com/page"},
                    },
                    {
                        "type": "web_fetch_tool_result",
                        "tool_use_id": "srvtoolu_02",
                        "content": {
                            "type": "web_fetch_tool_result_error",
                            "error_code": "url_not_accessible",
                        },
                    },
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_03",
                        "name": "code_execution",
                        "input": {"code": "print(1 + 1)"},
                    },
                    {
                        "type": "code_execution_tool_result",
                        "tool_use_id": "srvtoolu_03",
                        "content": {
                            "type": "code_execution_result",
                            "stdout": "2\n",
                            "stderr": "",
                            "return_code": 0,
                            "content": [],
                        },
                    },
                    {"type": "text", "text": "The page cannot be reached; 1 + 1 is 2."},
                ],
            },
        ],
    },
    "search results and container uploads in user turns": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "search_result",
                        "source": "https://docs.example.com/api",
                        "title": "API Reference",
                        "content": [{"type": "text", "text": "The API takes JSON."}],
                        "citations": {"enabled": True},
                        "cache_control": EPHEMERAL,
                    },
                    {"type": "container_upload", "file_id": "file_011CPd1"},
                    {"type": "text", "text": "Summarise the result and the uploaded file."},
                ],
            },
            {"role": "assistant", "content": "It takes JSON."},
        ],
    },
    "tool use from a toolset, called by code execution": {
        "messages": [
            {"role": "user", "content": "Open the browser."},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_c1",
                        "name": "browser_navigate",
                        "input": {"url": "https://example.com"},
                        "caller": {"type": "direct"},
                        "toolset_name": None,
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_c1",
                        "content": "navigated",
                        "toolset_name": None,
                    }
                ],
            },
        ],
    },
    "system turns inside messages": {
        "system": "Top-level instructions.",
        "messages": [
            {"role": "system", "content": "Also: answer in French."},
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Bonjour"},
            {"role": "system", "content": [{"type": "text", "text": "Now answer in German."}]},
            {"role": "user", "content": "Hello again"},
        ],
    },
    "SDK key order": {
        "messages": [
            {
                "content": [
                    {"text": "Describe it.", "type": "text", "cache_control": EPHEMERAL},
                    {
                        "source": {"data": PNG_1PX, "media_type": "image/png", "type": "base64"},
                        "type": "image",
                    },
                ],
                "role": "user",
            },
            {
                "role": "assistant",
                "content": [
                    {"signature": SIGNATURE, "thinking": "Look first.", "type": "thinking"},
                    {"citations": None, "text": "A dot.", "type": "text"},
                    {
                        "id": "toolu_z",
                        "input": {"b": 1, "a": 2},
                        "name": "zoom",
                        "type": "tool_use",
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "content": "zoomed",
                        "is_error": False,
                        "tool_use_id": "toolu_z",
                        "type": "tool_result",
                    }
                ],
            },
        ],
    },
    "deeply nested tool input": {
        "messages": [
            {"role": "user", "content": "Store the tree."},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_deep", "name": "store", "input": _nested(60)}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_deep", "content": "ok"}],
            },
        ],
    },
    "unicode and odd text": {
        "messages": [
            {"role": "user", "content": "naïve café — 東京 🚀 \x00 nul and \u2028 separators"},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "\t  indented,\n\ntwo lines"}],
            },
        ],
    },
}
"""Requests, by name: what ``to_anthropic(from_anthropic(...))`` must give back exactly."""


RESPONSES: dict[str, dict[str, Any]] = {
    "thinking and a tool call": {
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "I should look it up.", "signature": SIGNATURE},
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "get_weather",
                "input": {"location": "San Francisco, CA"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 2095, "output_tokens": 503},
    },
    "plain text": {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-1",
        "content": [{"type": "text", "text": "Hi! My name is Claude."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 12,
            "output_tokens": 6,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        },
    },
    "web search": {
        "id": "msg_01WebSearch",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_01",
                "name": "web_search",
                "input": {"query": "claude shannon birth date"},
            },
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_01",
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                        "title": "Claude Shannon - Wikipedia",
                        "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgx",
                        "page_age": "April 30, 2025",
                    }
                ],
            },
            {
                "type": "text",
                "text": "Claude Shannon was born on April 30, 1916.",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                        "title": "Claude Shannon - Wikipedia",
                        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm",
                        "cited_text": "Claude Elwood Shannon (April 30, 1916 - February 24, 2001)",
                    }
                ],
            },
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 6039,
            "output_tokens": 931,
            "server_tool_use": {"web_fetch_requests": 0, "web_search_requests": 1},
        },
    },
    "redacted thinking": {
        "id": "msg_01Redacted",
        "type": "message",
        "role": "assistant",
        "model": "claude-3-7-sonnet-20250219",
        "content": [
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "text", "text": "Done."},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    },
}
"""Response bodies, by name: each becomes one assistant message whose replay is its content."""
