"""Properties of the Responses converter, drawn by hypothesis.

Any list of items of the kinds the converter knows, with any extra fields in any key
order, comes back exactly from ``to_openai_responses(from_openai_responses(items))``,
directly and through the wire form; and a shell always merges back into its object.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sqlmemory import Message, Role, from_openai_responses, groups, to_openai_responses
from sqlmemory.formats._shells import merge, split
from tests.formats.corpus_openai_responses import PNG

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
ids = st.from_regex(r"[A-Za-z0-9_-]{1,24}", fullmatch=True)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=6,
)

ITEM_FIELDS = frozenset(
    {"type", "role", "content", "call_id", "name", "arguments", "output", "id", "summary"}
    | {"execution", "approval_request_id", "text", "refusal", "image_url", "file_id"}
    | {"detail", "file_data", "file_url", "filename", "annotations"}
)


@st.composite
def shuffled(draw: st.DrawFn, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with a few extra fields, keys in any order."""
    extra = draw(
        st.dictionaries(names.filter(lambda k: k not in ITEM_FIELDS), json_values, max_size=2)
    )
    merged = {**fields, **extra}
    keys = draw(st.permutations(list(merged)))
    return {key: merged[key] for key in keys}


def parts(text_type: str) -> st.SearchStrategy[dict[str, Any]]:
    image_source = st.sampled_from(
        [
            {"image_url": "https://example.com/a.png"},
            {"image_url": f"data:image/png;base64,{PNG}"},
            {"file_id": "file-1"},
        ]
    )
    return st.one_of(
        texts.flatmap(lambda t: shuffled({"type": text_type, "text": t})),
        texts.flatmap(lambda t: shuffled({"type": "refusal", "refusal": t})),
        image_source.flatmap(
            lambda source: st.sampled_from(["low", "high", "auto", "original"]).flatmap(
                lambda d: shuffled({"type": "input_image", **source, "detail": d})
            )
        ),
        st.sampled_from(
            [
                {"type": "input_file", "file_id": "file-2"},
                {"type": "input_file", "file_url": "https://example.com/r.pdf"},
                {"type": "input_file", "file_data": "data:text/plain;base64,aGk=", "filename": "a"},
                {"type": "input_file", "file_data": "data:text/csv;base64,aGk="},
            ]
        ).flatmap(shuffled),
        names.filter(lambda n: n not in {"input_text", "output_text", "refusal"}).flatmap(
            lambda kind: shuffled({"type": kind})
        ),
    )


def messages(role: str) -> st.SearchStrategy[dict[str, Any]]:
    text_type = "output_text" if role == "assistant" else "input_text"
    content = texts | st.lists(parts(text_type), max_size=3)
    return content.flatmap(lambda c: shuffled({"role": role, "content": c}))


def item(position: int) -> st.SearchStrategy[dict[str, Any]]:
    call_id = f"call_{position}"
    summary = st.lists(texts.map(lambda t: {"text": t, "type": "summary_text"}), max_size=3)
    return st.one_of(
        st.sampled_from(["user", "system", "developer", "assistant"]).flatmap(messages),
        st.tuples(names, texts).flatmap(
            lambda nt: shuffled(
                {"type": "function_call", "call_id": call_id, "name": nt[0], "arguments": nt[1]}
            )
        ),
        (texts | st.lists(parts("input_text"), max_size=2)).flatmap(
            lambda out: shuffled(
                {"type": "function_call_output", "call_id": call_id, "output": out}
            )
        ),
        summary.flatmap(
            lambda s: shuffled({"type": "reasoning", "id": f"rs_{position}", "summary": s})
        ),
        st.sampled_from(
            ["web_search_call", "computer_call", "mcp_approval_request", "compaction"]
        ).flatmap(lambda kind: shuffled({"type": kind, "id": call_id, "call_id": call_id})),
        st.sampled_from(["computer_call_output", "custom_tool_call_output"]).flatmap(
            lambda kind: shuffled({"type": kind, "call_id": call_id})
        ),
        st.just({"id": f"ref_{position}"}),
    )


histories = st.integers(0, 8).flatmap(lambda n: st.tuples(*(item(i) for i in range(n))))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@settings(max_examples=60, deadline=None)
@given(histories)
def test_any_history_round_trips_exactly(history: tuple[dict[str, Any], ...]) -> None:
    items = list(history)
    read = from_openai_responses(items)
    assert _dumps(to_openai_responses(read)) == _dumps(items)
    wired = [Message.from_dict(json.loads(_dumps(m.to_dict()))) for m in read]
    assert _dumps(to_openai_responses(wired)) == _dumps(items)
    # Assistant messages never follow each other: the output of one response is one message.
    roles = [m.role for m in read]
    assert all(
        not (a is Role.ASSISTANT and b is Role.ASSISTANT) for a, b in itertools.pairwise(roles)
    )
    # Every tool message answering a call of the message before it joins that group.
    for group in groups(read):
        assert all(m.role is Role.TOOL for m in group[1:])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(names, json_values, max_size=6).flatmap(shuffled),
    st.dictionaries(names, json_values, max_size=4),
    st.lists(names, max_size=6),
)
def test_a_shell_merges_back_into_its_object(
    original: dict[str, Any], rendered: dict[str, Any], sdk: list[str]
) -> None:
    # Half the rendered fields agree with the object, as a block's fields do.
    for key in list(original)[::2]:
        rendered[key] = original[key]
    shell = split(original, rendered, sdk)
    assert _dumps(merge(shell, rendered, sdk)) == _dumps(original)
