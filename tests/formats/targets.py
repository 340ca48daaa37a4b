"""Each provider format as a target: how to write a request, and what makes it valid.

docs/providers.md (Across providers): a request built for a target must be one the target
accepts. ``Target.problems`` says why a request is not, independently of the converters:
the SDK's own TypedDicts, strictly (:mod:`tests.support.provider_types`; for Anthropic,
param blocks only: :mod:`tests.formats.anthropic_types`), and the rules the types cannot
say: every tool call answered, every result after its call (right after it in Chat; in
Anthropic, in the user turn right after, results first, and the user's turn first).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from openai.types.chat import ChatCompletionAssistantMessageParam, ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from typing_extensions import Required, TypedDict

from sqlmemory import (
    DroppedContentWarning,
    Message,
    from_anthropic,
    from_openai_chat,
    from_openai_responses,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
)
from tests.formats.anthropic_types import api_problems
from tests.support.provider_types import problems

__all__ = ["TARGETS", "Target", "convert"]


class _URLCitation(TypedDict):
    end_index: int
    start_index: int
    title: str
    url: str


class _Annotation(TypedDict):
    type: Literal["url_citation"]
    url_citation: _URLCitation


class _ReplyAudio(TypedDict, total=False):
    id: Required[str]
    data: str
    expires_at: int
    transcript: str


class ReplayedReply(ChatCompletionAssistantMessageParam, total=False):
    """A reply (``ChatCompletionMessage``) sent back as the SDK sends it when a client
    appends it to ``messages``: with its ``annotations`` and its whole ``audio`` object."""

    annotations: list[_Annotation] | None
    audio: _ReplyAudio | None  # type: ignore[misc]


CHAT_REQUEST = list[ChatCompletionMessageParam | ReplayedReply]
"""What a Chat request may hold: the SDK's params, and replies replayed."""


def _chat_pairing(request: list[dict[str, Any]]) -> list[str]:
    """Chat: the results of an assistant's calls come right after it, one per call."""
    found: list[str] = []
    open_calls: set[str] = set()
    function_open = False
    for index, param in enumerate(request):
        role = param["role"]
        if role == "tool":
            if param["tool_call_id"] not in open_calls:
                found.append(f"[{index}] a result of {param['tool_call_id']!r} not right after it")
            open_calls.discard(param["tool_call_id"])
        elif role == "function":
            if not function_open:
                found.append(f"[{index}] a function result without its function_call before it")
            function_open = False
        else:
            if open_calls or function_open:
                found.append(f"[{index}] calls {sorted(open_calls)} are not answered before it")
            open_calls = {call["id"] for call in param.get("tool_calls") or []}
            function_open = param.get("function_call") is not None
    if open_calls or function_open:
        found.append(f"calls {sorted(open_calls)} are never answered")
    return found


_ANSWERED_CALLS = ("function_call", "custom_tool_call")
"""The calls a Responses request must answer (other client-side calls are opaque items)."""


def _responses_pairing(request: list[dict[str, Any]]) -> list[str]:
    """Responses: every function call answered later; every output after its call."""
    found: list[str] = []
    made: dict[str, str] = {}
    answered: set[str] = set()
    for index, item in enumerate(request):
        kind = item.get("type", "message")
        call_id = item.get("call_id")
        if call_id is None:
            continue
        if kind.endswith("_output"):
            base = kind.removesuffix("_output")
            if made.get(call_id) not in (base, f"{base}_call"):
                found.append(f"[{index}] {kind} {call_id!r} before (or without) its call")
            answered.add(call_id)
        else:
            made[call_id] = kind
    unanswered = sorted(
        c for c, kind in made.items() if kind in _ANSWERED_CALLS and c not in answered
    )
    if unanswered:
        found.append(f"calls {unanswered} are never answered")
    return found


def _chat_problems(request: Any) -> list[str]:
    return problems(request, CHAT_REQUEST) + _chat_pairing(request)


def _responses_problems(request: Any) -> list[str]:
    return problems(request, ResponseInputParam) + _responses_pairing(request)


def _chat_calls(request: list[dict[str, Any]]) -> list[str]:
    return [call["id"] for param in request for call in param.get("tool_calls") or []]


def _responses_calls(request: list[dict[str, Any]]) -> list[str]:
    return [item["call_id"] for item in request if item.get("type") == "function_call"]


def _anthropic_read(request: dict[str, Any]) -> list[Message]:
    return from_anthropic(request["messages"], request.get("system"))


def _anthropic_calls(request: dict[str, Any]) -> list[str]:
    return [
        block["id"]
        for turn in request["messages"]
        if isinstance(turn["content"], list)
        for block in turn["content"]
        if block["type"] == "tool_use"
    ]


@dataclass(frozen=True)
class Target:
    """A provider format seen from outside: its converters and the request rules."""

    name: str
    write: Callable[[list[Message]], Any]
    read: Callable[[Any], list[Message]]
    problems: Callable[[Any], list[str]]
    call_ids: Callable[[Any], list[str]]


TARGETS = {
    target.name: target
    for target in (
        Target("openai_chat", to_openai_chat, from_openai_chat, _chat_problems, _chat_calls),
        Target(
            "openai_responses",
            to_openai_responses,
            from_openai_responses,
            _responses_problems,
            _responses_calls,
        ),
        Target("anthropic", to_anthropic, _anthropic_read, api_problems, _anthropic_calls),
    )
}


def convert(messages: list[Message], target: Target) -> tuple[Any, list[str]]:
    """The request ``target`` builds of ``messages``, and the dropped-content warnings.

    Any other warning fails the test.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        request = target.write(messages)
    others = [w for w in caught if not issubclass(w.category, DroppedContentWarning)]
    assert not others, [str(w.message) for w in others]
    json.dumps(request)  # plain JSON values only
    return request, [str(w.message) for w in caught]
