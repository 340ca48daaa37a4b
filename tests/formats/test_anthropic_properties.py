"""Property: any Anthropic request the SDK's types describe round-trips exactly.

Hypothesis builds requests from every block the converter maps (text, images and documents
of each source, thinking, redacted thinking, tool use and results, server tool blocks,
search results), with optional fields present, absent or null, and every dict's keys in
any order (``docs/providers.md``, section "Anthropic"), in turns the API accepts: the
user's turn first, every call answered in the next turn, results first in it.
"""

from __future__ import annotations

import json
import string
import warnings
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import from_anthropic, to_anthropic
from tests.formats.anthropic_types import api_problems
from tests.formats.corpus_anthropic import GIF_1PX, PDF, PNG_1PX

TEXT = st.text(min_size=1, max_size=12).filter(str.strip)  # the API refuses blank text
IDS = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=16)
CACHE = st.sampled_from([{"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}, None])
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
INPUT = st.dictionaries(st.text(max_size=6), JSON, max_size=4)
ABSENT = object()


@st.composite
def _shaped(draw: st.DrawFn, required: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    """``required`` plus any of ``optional`` (each value a strategy), keys in any order."""
    fields = dict(required)
    for key, strategy in optional.items():
        value = draw(st.one_of(st.just(ABSENT), strategy))
        if value is not ABSENT:
            fields[key] = value
    return dict(draw(st.permutations(list(fields.items()))))


def _shape(required: dict[str, Any], **optional: Any) -> st.SearchStrategy[dict[str, Any]]:
    return _shaped(required, optional)


def _block(kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A block of ``kind`` whose fields are drawn, keys in any order."""
    return st.fixed_dictionaries(fields).flatmap(
        lambda drawn: st.permutations([("type", kind), *drawn.items()]).map(dict)
    )


def _with_optional(
    blocks: st.SearchStrategy[dict[str, Any]], **optional: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    return blocks.flatmap(lambda block: _shaped(block, optional))


CITATION = st.fixed_dictionaries(
    {
        "type": st.just("char_location"),
        "cited_text": TEXT,
        "document_index": st.integers(0, 3),
        "document_title": st.none() | TEXT,
        "start_char_index": st.integers(0, 9),
        "end_char_index": st.integers(10, 20),
    }
)
TEXT_BLOCK = _with_optional(
    _block("text", text=TEXT),
    cache_control=CACHE,
    citations=st.none() | st.lists(CITATION, max_size=1),
)
SOURCES = {
    "image": st.sampled_from(
        [
            {"type": "base64", "media_type": "image/png", "data": PNG_1PX},
            {"type": "base64", "media_type": "image/gif", "data": GIF_1PX},
            {"type": "url", "url": "https://example.com/a.png"},
            {"type": "file", "file_id": "file_011CNha8iCJcU1"},
        ]
    ),
    "document": st.sampled_from(
        [
            {"type": "base64", "media_type": "application/pdf", "data": PDF},
            {"type": "url", "url": "https://example.com/a.pdf"},
            {"type": "file", "file_id": "file_abc"},
            {"type": "content", "content": "inline"},
        ]
    )
    | TEXT.map(lambda text: {"type": "text", "media_type": "text/plain", "data": text}),
}


def _source(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return SOURCES[kind].flatmap(lambda source: st.permutations(list(source.items())).map(dict))


IMAGE_BLOCK = _with_optional(_block("image", source=_source("image")), cache_control=CACHE)
DOCUMENT_BLOCK = _with_optional(
    _block("document", source=_source("document")),
    title=st.none() | TEXT,
    context=st.none() | TEXT,
    citations=st.just({"enabled": True}),
    cache_control=CACHE,
)
SEARCH_RESULT = _block(
    "search_result",
    source=st.just("https://example.com"),
    title=TEXT,
    content=st.lists(_block("text", text=TEXT), min_size=1, max_size=2),
)
USER_BLOCK = st.one_of(TEXT_BLOCK, IMAGE_BLOCK, DOCUMENT_BLOCK, SEARCH_RESULT)
RESULT_CONTENT = st.one_of(
    st.just(ABSENT),
    st.text(max_size=8),
    st.lists(st.one_of(TEXT_BLOCK, IMAGE_BLOCK, DOCUMENT_BLOCK), max_size=3),
)


@st.composite
def _tool_result(draw: st.DrawFn, call_id: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id}
    content = draw(RESULT_CONTENT)
    if content is not ABSENT:
        block["content"] = content
    return draw(_shaped(block, {"is_error": st.booleans(), "cache_control": CACHE}))


THINKING = _block("thinking", thinking=st.text(max_size=12), signature=TEXT)
REDACTED = _block("redacted_thinking", data=TEXT)
SERVER_USE = _block(
    "server_tool_use", id=IDS, name=st.just("web_search"), input=st.just({"query": "x"})
)
SEARCH_TOOL_RESULT = _block("web_search_tool_result", tool_use_id=IDS, content=st.just([]))


@st.composite
def _assistant_blocks(draw: st.DrawFn, turn: int) -> list[dict[str, Any]]:
    """An assistant turn's blocks; its calls' ids are unique in the request, as the API wants."""
    kinds = st.sampled_from(
        ["text", "thinking", "redacted", "tool_use", "tool_use", "tool_use", "server", "result"]
    )
    blocks: list[dict[str, Any]] = []
    for number, kind in enumerate(draw(st.lists(kinds, min_size=1, max_size=5))):
        if kind == "tool_use":
            use = {
                "type": "tool_use",
                "id": f"toolu_{turn}_{number}",
                "name": draw(IDS),
                "input": draw(INPUT),
            }
            blocks.append(draw(_shaped(use, {"cache_control": CACHE})))
        else:
            strategy = {
                "text": TEXT_BLOCK,
                "thinking": THINKING,
                "redacted": REDACTED,
                "server": SERVER_USE,
                "result": SEARCH_TOOL_RESULT,
            }[kind]
            blocks.append(draw(strategy))
    return blocks


def _turn(role: str, content: Any) -> st.SearchStrategy[dict[str, Any]]:
    return st.permutations([("role", role), ("content", content)]).map(dict)


@st.composite
def _user_turn(draw: st.DrawFn, calls: list[str]) -> dict[str, Any]:
    """A user turn; after an assistant turn that called tools, a result for each call.

    The API takes a result only for a call of the assistant turn right before, once, and
    wants every call answered there, the results before anything else in the turn.
    """
    blocks = [draw(_tool_result(call_id)) for call_id in draw(st.permutations(calls))]
    blocks += draw(st.lists(USER_BLOCK, min_size=0 if blocks else 1, max_size=3))
    if not calls and draw(st.booleans()):
        return draw(_turn("user", draw(TEXT)))
    return draw(_turn("user", blocks))


@st.composite
def _conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turns the API accepts: system turns anywhere but between calls and their results,
    the user's turn before the assistant's, every call answered in the next turn."""
    turns: list[dict[str, Any]] = []
    calls: list[str] = []
    roles = st.sampled_from(["user", "assistant", "user", "assistant", "system"])
    user_spoke = False
    for drawn in draw(st.lists(roles, max_size=6)):
        role = "user" if calls or (drawn == "assistant" and not user_spoke) else drawn
        if role == "user":
            turns.append(draw(_user_turn(calls)))
            calls = []
            user_spoke = True
            continue
        if role == "assistant":
            content = draw(
                st.one_of(TEXT, _assistant_blocks(len(turns)), _assistant_blocks(len(turns)))
            )
            calls = [b["id"] for b in content if isinstance(b, dict) and b["type"] == "tool_use"]
        else:
            content = draw(TEXT | st.lists(TEXT_BLOCK, min_size=1, max_size=2))
            calls = []
        turns.append(draw(_turn(role, content)))
    if calls or not user_spoke:
        turns.append(draw(_user_turn(calls)))
    return turns


SYSTEM = st.one_of(st.just(ABSENT), TEXT, st.lists(TEXT_BLOCK, min_size=1, max_size=3))


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    request: dict[str, Any] = {}
    system = draw(SYSTEM)
    if system is not ABSENT:
        request["system"] = system
    request["messages"] = draw(_conversation())
    return request


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_any_request_round_trips_exactly(request: dict[str, Any]) -> None:
    assert api_problems(request) == []  # the strategy builds what the API accepts
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        messages = from_anthropic(request["messages"], request.get("system"))
        back = to_anthropic(messages)
    assert json.dumps(back) == json.dumps(request)
    assert back == request
