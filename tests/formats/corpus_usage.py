"""Whole replies of each provider, with their usage, as the APIs send them.

- ``CHAT_COMPLETIONS``: ``ChatCompletion`` bodies (one choice), with and without the
  token details (cached and cache-write prompt tokens, reasoning tokens, audio);
- ``RESPONSES``: ``Response`` bodies, with reasoning, cached and cache-write tokens, one
  of reasoning and text, one of a function call;
- ``ANTHROPIC_MESSAGES``: response ``Message`` bodies, with cache reads and writes.

Each is a valid object of the provider's SDK (the tests validate them), and each reply's
``usage`` must be read into exactly the SDK's numbers.
"""

from __future__ import annotations

from typing import Any

Body = dict[str, Any]

CHAT_COMPLETIONS: dict[str, Body] = {
    "cached and reasoning": {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "o3-mini-2025-01-31",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "The answer is 42.",
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 1117,
            "completion_tokens": 46,
            "total_tokens": 1163,
            "prompt_tokens_details": {
                "cached_tokens": 1024,
                "cache_write_tokens": 64,
                "audio_tokens": 0,
            },
            "completion_tokens_details": {
                "reasoning_tokens": 320,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_fc9f1d7035",
    },
    "tool calls, no details": {
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1699896916,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_abc123",
                            "type": "function",
                            "function": {
                                "name": "get_current_weather",
                                "arguments": '{\n"location": "Boston, MA"\n}',
                            },
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99},
    },
    "null details": {
        "id": "chatcmpl-null",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi."},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 2,
            "total_tokens": 11,
            "prompt_tokens_details": None,
            "completion_tokens_details": None,
        },
    },
}

RESPONSES: dict[str, Body] = {
    "reasoning and text": {
        "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        "object": "response",
        "created_at": 1741476542,
        "status": "completed",
        "model": "o4-mini-2025-04-16",
        "output": [
            {
                "id": "rs_6876cf02e0bc8192b74af0fb64b715ff06fa2fcced15a5ac",
                "type": "reasoning",
                "summary": [],
            },
            {
                "type": "message",
                "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": "In a peaceful grove beneath a silver moon...",
                        "annotations": [],
                    }
                ],
            },
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 2036,
            "input_tokens_details": {"cached_tokens": 1920, "cache_write_tokens": 0},
            "output_tokens": 588,
            "output_tokens_details": {"reasoning_tokens": 448},
            "total_tokens": 2624,
        },
    },
    "function call": {
        "id": "resp_fc",
        "object": "response",
        "created_at": 1741476777,
        "status": "completed",
        "model": "gpt-4.1-2025-04-14",
        "output": [
            {
                "type": "function_call",
                "id": "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0",
                "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k",
                "name": "get_current_weather",
                "arguments": '{"location":"Boston, MA","unit":"celsius"}',
                "status": "completed",
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 291,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 291},
            "output_tokens": 23,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 314,
        },
    },
}

ANTHROPIC_MESSAGES: dict[str, Body] = {
    "cache read and write": {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "The contract's term is five years."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 21,
            "cache_creation_input_tokens": 188086,
            "cache_read_input_tokens": 0,
            "output_tokens": 393,
            "cache_creation": {"ephemeral_5m_input_tokens": 188086, "ephemeral_1h_input_tokens": 0},
            "service_tier": "standard",
        },
    },
    "cached tool use": {
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-4-1-20250805",
        "content": [
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
        "usage": {
            "input_tokens": 3,
            "cache_creation_input_tokens": None,
            "cache_read_input_tokens": 188086,
            "output_tokens": 78,
        },
    },
}
