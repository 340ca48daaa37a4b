"""Real OpenAI Responses request and response shapes, for the round-trip tests.

Each case is a list of items as a caller holds them: a request's ``input`` written by
hand (the order people write keys in), or a ``response.output`` as the SDK dumps it
(``model_dump(mode="json", exclude_unset=True, by_alias=True)``: the SDK's field order,
nulls the API sent). Every case is a valid ``list[ResponseInputItemParam]`` of the
``openai`` SDK (checked strictly by the tests), and ``to_openai_responses`` must give each
back exactly, ``json.dumps`` included (``docs/providers.md``).
"""

from __future__ import annotations

from typing import Any

PNG = (  # a 2x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4"
    "nGP8z8DAwMAAAAYIAQHLR3Z1AAAAAElFTkSuQmCC"
)
PDF = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0YK"

Item = dict[str, Any]

EASY_MESSAGES: list[Item] = [
    {"role": "system", "content": "You are terse."},
    {"role": "developer", "content": "Answer in French."},
    {"role": "user", "content": "Bonjour"},
    {"role": "assistant", "content": "Salut."},
    {"role": "user", "content": ""},
    {"type": "message", "role": "user", "content": "typed easy message"},
]

USER_CONTENT_PARTS: list[Item] = [
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is in these?"},
            {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "low"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
            {"type": "input_image", "file_id": "file-img123", "detail": "high"},
            {"type": "input_image", "detail": "original", "image_url": "https://example.com/x.png"},
            {"type": "input_file", "file_id": "file-pdf456"},
            {"type": "input_file", "file_url": "https://example.com/report.pdf"},
            {
                "type": "input_file",
                "filename": "notes.pdf",
                "file_data": f"data:application/pdf;base64,{PDF}",
            },
            {
                "type": "input_file",
                "filename": "sheet.csv",
                "file_data": "data:text/csv;base64,YSxiCjEsMgo=",
            },
            {
                "type": "input_text",
                "text": "cached prefix",
                "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "30m"},
            },
        ],
    },
    {"role": "user", "content": [{"type": "input_text", "text": "one part only"}]},
    {
        "role": "developer",
        "content": [
            {"type": "input_text", "text": "Rule 1"},
            {"type": "input_text", "text": "Rule 2"},
        ],
    },
    {
        "content": [{"text": "an input item with a status", "type": "input_text"}],
        "role": "user",
        "status": "completed",
        "type": "message",
    },
]

# A response with reasoning and parallel function calls, as response.output dumps it.
FUNCTION_CALLING: list[Item] = [
    {"role": "user", "content": "Weather in Paris and Tokyo, then 6 x 7?"},
    {
        "id": "rs_68a1",
        "summary": [
            {"text": "**Planning calls**\n\nTwo cities, one product.", "type": "summary_text"},
            {"text": "Call tools in parallel.", "type": "summary_text"},
        ],
        "type": "reasoning",
        "encrypted_content": "gAAAAABoXz-encrypted==",
    },
    {
        "arguments": '{"city":"Paris","units":"celsius"}',
        "call_id": "call_Paris1",
        "name": "get_weather",
        "type": "function_call",
        "id": "fc_68a1",
        "status": "completed",
    },
    {
        "arguments": '{ "city" : "東京",\n  "units": "celsius" }',
        "call_id": "call_Tokyo2",
        "name": "get_weather",
        "type": "function_call",
        "id": "fc_68a2",
        "status": "completed",
    },
    {
        "arguments": '{"a": 6, "b": 7',
        "call_id": "call_bad3",
        "name": "multiply",
        "type": "function_call",
        "id": "fc_68a3",
        "status": "incomplete",
    },
    {"type": "function_call_output", "call_id": "call_Paris1", "output": '{"temp": 18}'},
    {"type": "function_call_output", "call_id": "call_Tokyo2", "output": ""},
    {
        "type": "function_call_output",
        "call_id": "call_bad3",
        "output": [
            {"type": "input_text", "text": "arguments were not JSON"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "low"},
        ],
    },
    {
        "id": "rs_68b2",
        "summary": [],
        "type": "reasoning",
        "content": [{"text": "raw reasoning of an open model", "type": "reasoning_text"}],
        "encrypted_content": None,
        "status": "completed",
    },
    {
        "id": "msg_68b3",
        "content": [
            {
                "annotations": [
                    {
                        "end_index": 40,
                        "start_index": 0,
                        "title": "Météo",
                        "type": "url_citation",
                        "url": "https://meteo.example/paris",
                    },
                    {"file_id": "file-1", "filename": "w.txt", "index": 3, "type": "file_citation"},
                ],
                "text": "Paris 18°C; Tokyo unknown; 6 x 7 = 42.",
                "type": "output_text",
                "logprobs": [
                    {
                        "token": "Paris",
                        "bytes": [80, 97, 114, 105, 115],
                        "logprob": -0.0001234,
                        "top_logprobs": [{"token": "Paris", "bytes": [80], "logprob": -0.5}],
                    }
                ],
            }
        ],
        "role": "assistant",
        "status": "completed",
        "type": "message",
        "phase": "final_answer",
    },
]

# The same kind of exchange as people write it by hand (agents, tutorials).
HAND_WRITTEN_TOOLS: list[Item] = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "6 x 7?"}]},
    {"type": "function_call", "call_id": "c1", "name": "multiply", "arguments": '{"a":6,"b":7}'},
    {"type": "function_call_output", "call_id": "c1", "output": "42"},
    {"type": "function_call", "id": "fc_9", "call_id": "c2", "name": "noop", "arguments": ""},
    {"type": "function_call_output", "call_id": "c2", "output": []},
    {
        "type": "message",
        "id": "msg_1",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "It is 42.", "annotations": []}],
    },
    {"role": "user", "content": "Now help me pick a lock."},
    {
        "type": "message",
        "id": "msg_2",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "refusal", "refusal": "I will not do that."}],
    },
]

REFUSAL_AND_COMMENTARY: list[Item] = [
    {"role": "user", "content": "Help me pick a lock."},
    {
        "id": "msg_c1",
        "content": [
            {"annotations": [], "text": "Let me think.", "type": "output_text", "logprobs": []},
        ],
        "role": "assistant",
        "status": "completed",
        "type": "message",
        "phase": "commentary",
    },
    {
        "id": "msg_r1",
        "content": [
            {"refusal": "I can't help with that.", "type": "refusal"},
            {"annotations": [], "text": "", "type": "output_text"},
        ],
        "role": "assistant",
        "status": "incomplete",
        "type": "message",
    },
]

HOSTED_TOOLS: list[Item] = [
    {"role": "user", "content": "Search, read files, run code, draw."},
    {
        "id": "ws_1",
        "action": {
            "type": "search",
            "query": "sqlmemory",
            "sources": [{"type": "url", "url": "https://example.com"}],
        },
        "status": "completed",
        "type": "web_search_call",
    },
    {
        "id": "ws_2",
        "action": {"type": "open_page", "url": "https://example.com"},
        "status": "completed",
        "type": "web_search_call",
    },
    {
        "id": "fs_1",
        "queries": ["memory tables"],
        "status": "completed",
        "type": "file_search_call",
        "results": [
            {
                "attributes": {"team": "db", "year": 2026.0, "public": True},
                "file_id": "file-abc",
                "filename": "schema.md",
                "score": 0.92,
                "text": "sqlmemory_messages",
            }
        ],
    },
    {
        "id": "ci_1",
        "code": "print(6 * 7)",
        "container_id": "cntr_1",
        "outputs": [{"logs": "42\n", "type": "logs"}, {"type": "image", "url": "https://x/p.png"}],
        "status": "completed",
        "type": "code_interpreter_call",
    },
    {
        "id": "ig_1",
        "result": PNG,
        "status": "completed",
        "type": "image_generation_call",
        "revised_prompt": "A red pixel",
        "size": "1024x1024",
    },
    {
        "id": "mcpl_1",
        "server_label": "deepwiki",
        "tools": [{"input_schema": {"type": "object"}, "name": "ask", "annotations": None}],
        "type": "mcp_list_tools",
        "error": None,
    },
    {
        "id": "mcp_1",
        "arguments": '{"q":"x"}',
        "name": "ask",
        "server_label": "deepwiki",
        "type": "mcp_call",
        "approval_request_id": None,
        "error": None,
        "output": "an answer",
        "status": "completed",
    },
    {"encrypted_content": "cmp-opaque==", "type": "compaction", "id": "cmp_1"},
    {"id": "msg_prev", "type": "item_reference"},
    {"id": "rs_prev"},
    {
        "id": "msg_h",
        "content": [{"annotations": [], "text": "Done.", "type": "output_text"}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    },
]

CLIENT_TOOLS: list[Item] = [
    {"role": "user", "content": "Click the button, then run ls, patch a file, grep."},
    {
        "id": "cu_1",
        "call_id": "call_cu1",
        "pending_safety_checks": [{"id": "sc_1", "code": "malicious_instructions", "message": "?"}],
        "status": "completed",
        "type": "computer_call",
        "action": {"button": "left", "type": "click", "x": 10, "y": 20},
    },
    {
        "call_id": "call_cu1",
        "output": {"type": "computer_screenshot", "image_url": f"data:image/png;base64,{PNG}"},
        "type": "computer_call_output",
        "acknowledged_safety_checks": [{"id": "sc_1", "code": "malicious_instructions"}],
    },
    {
        "id": "lsh_1",
        "action": {"command": ["ls", "-la"], "env": {"LANG": "C"}, "type": "exec"},
        "call_id": "call_ls1",
        "status": "completed",
        "type": "local_shell_call",
    },
    {"id": "call_ls1", "output": "total 0\n", "type": "local_shell_call_output"},
    {
        "action": {"commands": ["echo hi"], "timeout_ms": 1000},
        "call_id": "call_sh1",
        "type": "shell_call",
        "id": "sh_1",
        "status": "completed",
    },
    {
        "call_id": "call_sh1",
        "output": [{"outcome": {"exit_code": 0, "type": "exit"}, "stderr": "", "stdout": "hi\n"}],
        "type": "shell_call_output",
    },
    {
        "call_id": "call_ap1",
        "operation": {"diff": "@@ -1 +1 @@\n-a\n+b\n", "path": "a.txt", "type": "update_file"},
        "status": "completed",
        "type": "apply_patch_call",
        "id": "ap_1",
    },
    {
        "call_id": "call_ap1",
        "status": "completed",
        "type": "apply_patch_call_output",
        "output": "ok",
    },
    {
        "call_id": "call_ct1",
        "input": "SELECT 1;",
        "name": "run_sql",
        "type": "custom_tool_call",
        "id": "ctc_1",
    },
    {"call_id": "call_ct1", "output": "1", "type": "custom_tool_call_output"},
    {
        "id": "mcpr_1",
        "arguments": '{"path":"/"}',
        "name": "delete",
        "server_label": "files",
        "type": "mcp_approval_request",
    },
    {
        "approval_request_id": "mcpr_1",
        "approve": False,
        "type": "mcp_approval_response",
        "reason": "no",
    },
    {
        "arguments": {"query": "weather"},
        "type": "tool_search_call",
        "call_id": "ts_c1",
        "execution": "client",
    },
    {"tools": [], "type": "tool_search_output", "call_id": "ts_c1", "execution": "client"},
    {"role": "assistant", "content": "All done."},
]

CASES: dict[str, list[Item]] = {
    "easy_messages": EASY_MESSAGES,
    "user_content_parts": USER_CONTENT_PARTS,
    "function_calling": FUNCTION_CALLING,
    "hand_written_tools": HAND_WRITTEN_TOOLS,
    "refusal_and_commentary": REFUSAL_AND_COMMENTARY,
    "hosted_tools": HOSTED_TOOLS,
    "client_tools": CLIENT_TOOLS,
}

SHAPES: dict[str, list[tuple[str, list[str]]]] = {
    "function_calling": [
        ("user", ["text"]),
        ("assistant", ["thinking", "tool_call", "tool_call", "tool_call"]),
        ("tool", ["text"]),
        ("tool", ["text"]),
        ("tool", ["text", "image"]),
        ("assistant", ["thinking", "text"]),
    ],
    "hosted_tools": [("user", ["text"]), ("assistant", ["opaque"] * 10 + ["text"])],
    "client_tools": [
        ("user", ["text"]),
        ("assistant", ["opaque"]),
        ("tool", ["opaque"]),
        ("assistant", ["opaque"]),
        ("tool", ["opaque"]),
        ("assistant", ["opaque"]),
        ("tool", ["opaque"]),
        ("assistant", ["opaque"]),
        ("tool", ["opaque"]),
        ("assistant", ["opaque"]),
        ("tool", ["opaque"]),
        ("assistant", ["opaque"]),
        ("tool", ["opaque"]),
        ("assistant", ["opaque"]),
        ("tool", ["opaque"]),
        ("assistant", ["text"]),
    ],
    "user_content_parts": [
        (
            "user",
            ["text", *["image"] * 4, *["document"] * 3, "opaque", "text"],
        ),
        ("user", ["text"]),
        ("developer", ["text", "text"]),
        ("user", ["text"]),
    ],
}
"""For some cases, the messages expected: role and block kinds."""
