"""Hypothesis strategies for messages of every role, block and field.

Shared by the wire tests and the JSON Schema tests: any message these draw must
round-trip through JSON exactly and validate against the schema.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from sqlmemory import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from tests.support.cases import image_bytes

UTC = timezone.utc
PNG = image_bytes(65, 64, "image/png")


def images() -> list[ImageBlock]:
    return [
        ImageBlock(PNG, "image/png"),
        ImageBlock(image_bytes(3, 2, "image/jpeg"), "image/jpeg"),
        ImageBlock(image_bytes(1, 1, "image/gif"), "image/gif"),
        ImageBlock(image_bytes(130, 7, "image/webp"), "image/webp"),
        # Bytes with the right magic but no readable header: the size stays unknown.
        ImageBlock(b"RIFF\x00\x00\x00\x00WEBPjunk", "image/webp"),
        ImageBlock(url="https://example.com/cat.png", media_type="image/png"),
        ImageBlock(
            url="https://example.com/dog.jpg", media_type="image/jpeg", width=640, height=480
        ),
    ]


IMAGES = images()
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=5)
ZONES = [UTC, timezone(timedelta(hours=5, minutes=45)), timezone(-timedelta(hours=11))]
times = st.none() | st.datetimes(
    min_value=datetime(1900, 1, 2),  # noqa: DTZ001 - bounds; the zone comes from ``timezones``
    max_value=datetime(2200, 1, 1),  # noqa: DTZ001
    timezones=st.sampled_from(ZONES),
)
extras = st.just({}) | json_objects
ids = st.text(st.characters(blacklist_categories=["Cc", "Cs"]), min_size=1, max_size=12).filter(
    lambda s: s.strip() == s
)
usages = st.none() | st.builds(
    Usage,
    st.none() | ids,
    *[st.integers(0, 2**63 - 1) | st.integers(0, 10_000)] * 5,
)
urls = st.builds(
    lambda scheme, rest: scheme + rest,
    st.sampled_from(["https://", "http://", "HTTPS://"]),
    st.text(max_size=20),
)
references = st.fixed_dictionaries({}, optional={"url": urls, "file_id": ids}).filter(
    lambda d: len(d) == 1
)
image_types = st.sampled_from(["image/png", "image/jpeg", "image/gif", "image/webp"])
document_types = st.sampled_from(["application/pdf", "text/plain"])
sizes = st.none() | st.integers(1, 10_000)
blocks: st.SearchStrategy[Block] = st.one_of(
    st.builds(TextBlock, st.text(max_size=20), extras=extras),
    st.builds(ThinkingBlock, st.text(max_size=20), st.none() | st.text(max_size=10), extras=extras),
    st.builds(RedactedThinkingBlock, st.text(max_size=20), extras=extras),
    st.builds(
        DocumentBlock,
        st.binary(min_size=1, max_size=64),
        document_types,
        title=st.none() | st.text(max_size=10),
        extras=extras,
    ),
    references.flatmap(
        lambda source: st.builds(
            DocumentBlock,
            media_type=st.none() | document_types,
            title=st.none() | st.text(max_size=10),
            extras=extras,
            **{k: st.just(v) for k, v in source.items()},
        )
    ),
    st.sampled_from(IMAGES),
    references.flatmap(
        lambda source: st.builds(
            ImageBlock,
            media_type=st.none() | image_types,
            detail=st.none() | st.sampled_from(["low", "high", "auto", "original"]),
            width=sizes,
            height=sizes,
            extras=extras,
            **{k: st.just(v) for k, v in source.items()},
        )
    ),
)
calls_and_items: st.SearchStrategy[Block] = st.one_of(
    st.builds(
        ToolCall,
        ids,
        st.text(min_size=1, max_size=8),
        st.none() | json_objects,
        arguments_text=st.none() | st.text(max_size=12) | json_objects.map(json.dumps),
        extras=extras,
    ),
    st.builds(
        OpaqueBlock,
        st.sampled_from(["openai", "anthropic"]),
        json_objects,
        call_id=st.none() | ids,
        extras=extras,
    ),
)


def _call_ids(content: list[Block]) -> list[str]:
    return [
        b.id if isinstance(b, ToolCall) else b.call_id
        for b in content
        if isinstance(b, ToolCall) or (isinstance(b, OpaqueBlock) and b.call_id is not None)
    ]


def _message(draw: st.DrawFn, role: Role, content: list[Block], **fields: Any) -> Message:
    """A message of ``role`` holding ``content`` (a text added when it shows nothing: only
    a tool message may be empty), its id, time and a tool's call id and error drawn;
    ``fields`` the rest."""
    if role is not Role.TOOL and not any(not isinstance(b, TextBlock) or b.text for b in content):
        content.append(TextBlock(draw(st.text(min_size=1, max_size=10))))
    return Message(
        role,
        content,
        tool_call_id=draw(ids) if role is Role.TOOL else None,
        id=draw(ids),
        recorded_at=draw(times),
        is_error=draw(st.booleans()) if role is Role.TOOL else False,
        **fields,
    )


@st.composite
def messages(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(list(Role)))
    content = draw(st.lists(blocks, max_size=4))
    if role is Role.ASSISTANT:
        # Tool calls and opaque items interleaved with the other blocks, ids unique.
        for item in draw(st.lists(calls_and_items, max_size=3)):
            if not set(_call_ids([item])) & set(_call_ids(content)):
                content.insert(draw(st.integers(0, len(content))), item)
    else:
        content = [b for b in content if not isinstance(b, (ToolCall, OpaqueBlock))]
    return _message(
        draw, role, content, metadata=draw(json_objects), extras=draw(extras), usage=draw(usages)
    )


compact_json = json_objects.map(
    lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))
)
simple_calls = st.builds(
    ToolCall,
    ids,
    st.text(min_size=1, max_size=8),
    st.none() | json_objects,
    arguments_text=st.none()
    | st.text(max_size=12)
    | json_objects.map(json.dumps)
    | st.sampled_from([' {"a": 1} ', "\t", '"\\\u00e9', "{"]),
) | st.builds(ToolCall, ids, st.text(min_size=1, max_size=8), arguments_text=compact_json)
"""Tool calls without extras; the last kind's arguments are parsed from their compact
text, so they are stored once (``value_json`` NULL)."""


@st.composite
def replies(draw: st.DrawFn) -> Message:
    """A message of texts and tool calls without extras, and without metadata, provider
    extras or usage: an assistant's reply calling tools, or texts of any role (what
    ``sqlmemory/types/_canonical.py`` and ``sqlmemory/storage/sql/simple_rows.py`` write
    without the general path)."""
    role = draw(st.sampled_from(list(Role)))
    texts = st.builds(TextBlock, st.text(max_size=20) | st.sampled_from(["é" * 5, " ", "a\x00"]))
    content: list[Block] = draw(st.lists(texts, max_size=3))
    if role is Role.ASSISTANT:
        for call in draw(st.lists(simple_calls, max_size=3, unique_by=lambda c: c.id)):
            content.insert(draw(st.integers(0, len(content))), call)
    return _message(draw, role, content)
