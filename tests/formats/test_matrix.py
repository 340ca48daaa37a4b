"""Every format into every format: a request the target accepts (docs/providers.md).

For each pair (source, target), each corpus history of the source, read by its converter,
is written for the target: the request passes the target's SDK types strictly and its
pairing rules (:mod:`tests.formats.targets`), keeps every tool call with its id and every
text, says what it dropped, and is itself a request the target's converter gives back
exactly. Then any history, malformed ones included, windowed by ``FixedWindow`` or
``TokenWindow``, gives every target a valid request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given

from sqlmemory import (
    FixedWindow,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    TokenWindow,
    ToolCall,
    from_anthropic,
    from_openai_chat,
    from_openai_responses,
)
from tests.formats import corpus_anthropic, corpus_openai_chat, corpus_openai_responses
from tests.formats.targets import TARGETS, Target, convert
from tests.support.lossless import every_new_field
from tests.support.windows import PURE, any_history, window_policies


def _chat_histories() -> dict[str, Callable[[], list[Message]]]:
    found: dict[str, Callable[[], list[Message]]] = {
        name: (lambda items=items: from_openai_chat(items))
        for name, items in corpus_openai_chat.REQUESTS.items()
    }
    for name, reply in corpus_openai_chat.REPLIES.items():
        # A stored reply, its calls answered as a client answers them.
        results: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": call["id"], "content": "done"}
            for call in reply.get("tool_calls") or []
        ]
        if reply.get("function_call"):
            results.append({"role": "function", "name": "f", "content": "done"})
        items = [{"role": "user", "content": "Go."}, reply, *results]
        found[f"reply {name}"] = lambda items=items: from_openai_chat(items)
    return found


SOURCES: dict[str, dict[str, Callable[[], list[Message]]]] = {
    "openai_chat": _chat_histories(),
    "openai_responses": {
        name: (lambda items=items: from_openai_responses(items))
        for name, items in corpus_openai_responses.CASES.items()
    },
    "anthropic": {
        name: (lambda request=request: from_anthropic(request["messages"], request.get("system")))
        for name, request in corpus_anthropic.REQUESTS.items()
    },
    "sqlmemory": {"every new field": every_new_field},
}
CASES = [
    (source, name, target)
    for source, histories in SOURCES.items()
    for name in histories
    for target in TARGETS
]


def _texts(history: list[Message]) -> list[str]:
    """The texts every target must carry: non-empty text blocks outside tool results."""
    return [
        block.text
        for message in history
        if message.role is not Role.TOOL
        for block in message.content
        if isinstance(block, TextBlock) and block.text.strip()
    ]


def _must_drop(history: list[Message], target: Target) -> list[str]:
    """Blocks every target but their own format must leave out (and say so)."""
    found = []
    for message in history:
        for block in message.content:
            if isinstance(block, OpaqueBlock) and block.provider != target.name:
                found.append(f"an opaque {block.provider} block")
            elif target.name == "openai_chat" and isinstance(
                block, (ThinkingBlock, RedactedThinkingBlock)
            ):
                found.append(f"a {block.kind} block")
            elif target.name == "anthropic" and _not_signed_by_anthropic(block):
                found.append(f"a {block.kind} block Anthropic did not sign")
    return found


def _not_signed_by_anthropic(block: object) -> bool:
    """Thinking Anthropic cannot replay: unsigned, or another format's."""
    if not isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
        return False
    unsigned = isinstance(block, ThinkingBlock) and block.signature is None
    return unsigned or any(key != "anthropic" for key in block.extras)


@pytest.mark.parametrize(
    ("source", "name", "target_name"), CASES, ids=[f"{s}:{n}->{t}" for s, n, t in CASES]
)
def test_every_corpus_history_gives_the_target_a_valid_request(
    source: str, name: str, target_name: str
) -> None:
    target = TARGETS[target_name]
    history = SOURCES[source][name]()
    request, dropped = convert(history, target)
    assert target.problems(request) == []
    expected_calls = [
        call.id
        for message in history
        for call in message.tool_calls
        if target.name != "openai_chat" or _has_id(call)
    ]
    assert sorted(target.call_ids(request)) == sorted(expected_calls)
    sent = json.dumps(request, ensure_ascii=False)
    missing = [
        text for text in _texts(history) if json.dumps(text, ensure_ascii=False)[1:-1] not in sent
    ]
    assert missing == []
    if _must_drop(history, target):
        assert dropped, f"{_must_drop(history, target)} dropped without a warning"
    again, _ = convert(target.read(request), target)
    assert json.dumps(again) == json.dumps(request)


def _has_id(call: ToolCall) -> bool:
    """Chat's deprecated ``function_call`` has no id on the wire: it is sent by name."""
    return call.extras.get("openai_chat", {}).get("field") != "function_call"


@pytest.mark.parametrize("target_name", sorted(TARGETS))
def test_roles_are_mapped_and_calls_kept_with_their_results(target_name: str) -> None:
    target = TARGETS[target_name]
    history = [
        Message.developer("Answer in French."),
        Message.user("6 x 7, and 2 + 2?"),
        Message.assistant(
            "Computing.",
            tool_calls=[ToolCall("c1", "mul", {"a": 6, "b": 7}), ToolCall("c2", "add", {"a": 2})],
        ),
        Message.tool("c1", "42"),
        Message.tool("c2", "4"),
        Message.assistant("42 et 4."),
    ]
    request, dropped = convert(history, target)
    assert target.problems(request) == [] and dropped == []
    assert target.call_ids(request) == ["c1", "c2"]
    back = target.read(request)
    roles = [m.role for m in history]
    if target.name == "anthropic":  # no developer role: instructions go to ``system``
        roles[0] = Role.SYSTEM
    assert [m.role for m in back] == roles
    assert [m.tool_call_id for m in back if m.role is Role.TOOL] == ["c1", "c2"]
    assert [m.text_content() for m in back] == [m.text_content() for m in history]


@PURE
@given(any_history, window_policies())
def test_any_window_of_any_history_is_a_request_every_target_accepts(
    history: list[Message], policy: FixedWindow | TokenWindow
) -> None:
    window = policy.apply(history)
    for target in TARGETS.values():
        request, _ = convert(window, target)
        assert target.problems(request) == [], target.name
