"""Messages that use every field of the lossless model, shaped like what providers send.

Data, not test bodies (docs/contract/messages.md): the contract suite stores these on
every storage, the wire tests send them through JSON and the JSON Schema, the migration
tests leave them out of 0001 (which cannot hold them).
"""

from __future__ import annotations

import base64
from typing import Any

from sqlmemory import (
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from tests.support.cases import PDF_BYTES, image_bytes

CACHE = {"cache_control": {"type": "ephemeral", "ttl": "5m"}}
CITATIONS = {
    "citations": [
        {
            "type": "char_location",
            "cited_text": "The grass is green.",
            "document_index": 0,
            "start_char_index": 0,
            "end_char_index": 20,
            "document_title": None,
        }
    ]
}
REASONING_EXTRAS = {
    "id": "rs_68af3c",
    "summary": [{"type": "summary_text", "text": "**Weighing** the options"}],
    "encrypted_content": "gAAAAABo_encrypted==",
    "status": None,
}
WEB_SEARCH_CALL: dict[str, Any] = {
    "id": "ws_67c9fa05",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "weather Oslo", "sources": None},
}
SERVER_TOOL_USE: dict[str, Any] = {
    "type": "server_tool_use",
    "id": "srvtoolu_01",
    "name": "web_search",
    "input": {"query": "weather Oslo"},
}
WEB_SEARCH_RESULT: dict[str, Any] = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.com/oslo",
            "title": "Oslo weather",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAw",
            "page_age": "2 days ago",
        }
    ],
}
COMPUTER_CALL: dict[str, Any] = {
    "type": "computer_call",
    "id": "cu_1",
    "call_id": "call_computer_1",
    "action": {"type": "click", "button": "left", "x": 10, "y": 20},
    "pending_safety_checks": [],
    "status": "completed",
}
COMPUTER_OUTPUT: dict[str, Any] = {
    "type": "computer_call_output",
    "call_id": "call_computer_1",
    "output": {"type": "computer_screenshot", "image_url": "https://example.com/shot.png"},
}
ODD_JSON: dict[str, Any] = {
    "zeta": 1.0,
    "alpha": [True, 1, 0.5, -0.0, 10**18, None, "é\x00😀"],
    "nested": {"b": {"d": [], "c": {}}, "a": ""},
}
"""Key order at every depth, 1.0 beside 1, True beside 1, -0.0, NUL and 4-byte text."""


def every_new_field() -> list[Message]:
    """A history using every field the lossless model added, each in the place it belongs."""
    png = image_bytes(33, 17, seed=3)
    data_url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    return [
        Message.developer("Answer in French.", id="dev", extras={"name": "policy"}),
        Message.system([TextBlock("Be terse.", extras=CACHE)], id="sys-cached"),
        Message.user(
            [
                TextBlock("what is in these?"),
                ImageBlock(url="https://example.com/cat.png", detail="high", extras=CACHE),
                ImageBlock(file_id="file-img-1", detail="low"),
                ImageBlock(url=data_url, detail="auto"),  # stored as bytes
                ImageBlock(png, "image/png", detail="original"),
                ImageBlock(
                    url="https://example.com/dog.jpg", media_type="image/jpeg", width=64, height=48
                ),
                DocumentBlock(url="https://example.com/report.pdf", title="report.pdf"),
                DocumentBlock(file_id="file-doc-1", media_type="application/pdf"),
                DocumentBlock(
                    PDF_BYTES,
                    "application/pdf",
                    title="spec",
                    extras={"context": "the spec", "citations": {"enabled": True}, **CACHE},
                ),
                DocumentBlock(url="data:text/plain;charset=utf-8,plain%20text%20%E2%9C%93"),
            ],
            id="references",
            metadata={"request": "r-1"},
        ),
        Message.assistant(
            [
                ThinkingBlock("Let me look.", signature="EqQBCgIYAh=="),
                RedactedThinkingBlock("EmwKAhgBEgy3va3pzix/LafPsn4a"),
                TextBlock("First I search.", extras=CITATIONS),
                ToolCall("toolu_01", "search", {"q": "cats", "limit": 3}, extras=CACHE),
                TextBlock("Then I fetch."),
                ToolCall("toolu_02", "fetch", arguments_text='{"url": "https://x", "n": 1}'),
                OpaqueBlock("anthropic", SERVER_TOOL_USE),
                OpaqueBlock("anthropic", WEB_SEARCH_RESULT),
            ],
            id="interleaved",
            extras={"stop_reason": "tool_use"},
        ),
        Message.tool("toolu_01", [TextBlock("3 cats", extras=CACHE)], id="result-1"),
        Message.tool("toolu_02", id="result-2-empty", is_error=True),
        Message.assistant(
            [
                ThinkingBlock("", extras=REASONING_EXTRAS),
                ToolCall(
                    "call_abc",
                    "get_weather",
                    arguments_text='{"city": "Oslo", "units": "metric"',  # cut short: not JSON
                    extras={"id": "fc_1", "status": "completed"},
                ),
                ToolCall("call_def", "ping", arguments_text="[1, 2]"),  # JSON, not an object
                ToolCall("call_ghi", "compact", arguments_text='{"b":1,"a":{"d":2,"c":3}}'),
                ToolCall("call_jkl", "both", {"a": 1}, arguments_text='{"a": 1}'),
                OpaqueBlock("openai", WEB_SEARCH_CALL, extras={"note": "hosted"}),
                OpaqueBlock("openai", COMPUTER_CALL, call_id="call_computer_1"),
                OpaqueBlock("openai", {"type": "odd", **ODD_JSON}),
            ],
            id="responses-output",
        ),
        Message.tool("call_abc", [TextBlock("")], id="result-abc-empty-text"),
        Message.tool("call_def", [], id="result-def-no-blocks"),
        Message.tool(
            "call_ghi",
            [TextBlock("done"), ImageBlock(file_id="file-shot")],
            id="result-ghi",
            extras={"type": "function_call_output", "id": "fco_1"},
        ),
        Message.tool("call_jkl", "ok", id="result-jkl"),
        Message.tool(
            "call_computer_1", OpaqueBlock("openai", COMPUTER_OUTPUT), id="computer-output"
        ),
        Message.assistant(
            ToolCall("call_args", "args", ODD_JSON, extras=ODD_JSON),
            id="odd-json",
            metadata=ODD_JSON,
            extras=ODD_JSON,
        ),
        Message.tool("call_args", "fine", id="odd-json-result", metadata={"t": True, "o": 1}),
        Message(Role.DOCUMENT, [DocumentBlock(file_id="file-doc-2")], id="document-role"),
    ]
