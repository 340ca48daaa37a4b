"""Rows as revision 0001 wrote them, to test upgrading a populated database.

The encoder is sqlmemory's 0001 codec, frozen here (tool calls as a JSON column after the
content, a message of exactly one text block inline, the digest of 0001); the writer
inserts its rows with plain SQL. Only messages 0001 could hold are accepted: no extras,
no references but image URLs, tool calls after the rest of the content.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import sqlalchemy as sa

from sqlmemory import DocumentBlock, ImageBlock, Message, TextBlock, ThinkingBlock, ToolCall
from sqlmemory.policy import estimate_tokens
from sqlmemory.storage.sql import column_types

LEGACY_BLOCK_KEYS = (
    "kind",
    "text",
    "signature",
    "media_type",
    "url",
    "title",
    "width",
    "height",
    "blob_sha256",
)

SESSIONS = sa.table(
    "sqlmemory_sessions",
    sa.column("session_id", column_types.Key()),
    sa.column("next_seq", sa.BigInteger()),
    sa.column("last_recorded_at", column_types.UTCDateTime()),
    sa.column("created_at", column_types.UTCDateTime()),
)
MESSAGES = sa.table(
    "sqlmemory_messages",
    *(
        sa.column(name, kind)
        for name, kind in [
            ("session_id", column_types.Key()),
            ("seq", sa.BigInteger()),
            ("message_id", column_types.Key()),
            ("role", sa.String()),
            ("tool_call_id", column_types.Key()),
            ("text", column_types.LegacyUtf8Text()),
            ("n_blocks", sa.Integer()),
            ("call_ids", column_types.LegacyUtf8Text()),
            ("tool_calls", column_types.LegacyUtf8Text()),
            ("metadata_json", column_types.LegacyUtf8Text()),
            ("recorded_at", column_types.UTCDateTime()),
            ("digest", sa.String()),
            ("tokens", sa.Integer()),
        ]
    ),
)
BLOCKS = sa.table(
    "sqlmemory_blocks",
    sa.column("session_id", column_types.Key()),
    sa.column("seq", sa.BigInteger()),
    sa.column("position", sa.Integer()),
    sa.column("kind", sa.String()),
    sa.column("text", column_types.LegacyUtf8Text()),
    sa.column("signature", column_types.LegacyUtf8Text()),
    sa.column("media_type", sa.String()),
    sa.column("url", column_types.LegacyUtf8Text()),
    sa.column("title", column_types.LegacyUtf8Text()),
    sa.column("width", sa.Integer()),
    sa.column("height", sa.Integer()),
    sa.column("blob_sha256", sa.String()),
)
BLOBS = sa.table(
    "sqlmemory_blobs",
    sa.column("session_id", column_types.Key()),
    sa.column("sha256", sa.String()),
    sa.column("data", sa.LargeBinary()),
    sa.column("size", sa.BigInteger()),
    sa.column("width", sa.Integer()),
    sa.column("height", sa.Integer()),
)
LEGACY_TABLES = {"messages": MESSAGES, "blocks": BLOCKS, "blobs": BLOBS}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _block_row(block: Any, blobs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(LEGACY_BLOCK_KEYS)
    row["kind"] = block.kind
    if isinstance(block, TextBlock):
        row["text"] = block.text
    elif isinstance(block, ThinkingBlock):
        row["text"], row["signature"] = block.thinking, block.signature
    elif isinstance(block, ImageBlock):
        row["media_type"], row["url"] = block.media_type, block.url
        row["width"], row["height"] = block.width, block.height
        if block.data is not None:
            sha = hashlib.sha256(block.data).hexdigest()
            row["blob_sha256"] = sha
            blobs.setdefault(sha, {"data": block.data, "w": block.width, "h": block.height})
    elif isinstance(block, DocumentBlock):
        assert block.data is not None, "0001 held documents as bytes only"
        sha = hashlib.sha256(block.data).hexdigest()
        row["media_type"], row["title"], row["blob_sha256"] = block.media_type, block.title, sha
        blobs.setdefault(sha, {"data": block.data, "w": None, "h": None})
    else:
        raise AssertionError(f"0001 could not hold a {block.kind} block")
    return row


def encode_0001(message: Message, blobs: dict[str, dict[str, Any]]) -> tuple[dict, list[dict]]:
    """The message row and block rows 0001 wrote for ``message`` (blobs collected)."""
    assert not message.extras and not message.is_error
    content = [b for b in message.content if not isinstance(b, ToolCall)]
    calls = message.tool_calls
    assert list(message.content) == content + list(calls), "0001 kept calls after content"
    inline = len(content) == 1 and isinstance(content[0], TextBlock)
    blocks = [] if inline else [_block_row(b, blobs) for b in content]
    assert all(not c.extras and c.arguments_text is None for c in calls)
    tool_calls = (
        _compact([{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls])
        if calls
        else None
    )
    metadata = _compact(message.metadata) if message.metadata else None
    text = content[0].text if inline else None  # type: ignore[union-attr]
    source = _compact(
        [
            message.role.value,
            message.tool_call_id,
            tool_calls,
            metadata,
            text,
            [[b[k] for k in sorted(b)] for b in blocks],
        ]
    )
    row = {
        "message_id": message.id,
        "role": message.role.value,
        "tool_call_id": message.tool_call_id,
        "text": text,
        "n_blocks": len(blocks),
        "call_ids": json.dumps(list(message.call_ids)) if calls else None,
        "tool_calls": tool_calls,
        "metadata_json": metadata,
        "digest": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "tokens": estimate_tokens(message),
    }
    return row, blocks


STAMP = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)


def write_0001(conn: sa.Connection, sid: str, messages: Sequence[Message]) -> list[Message]:
    """Store ``messages`` in session ``sid`` as 0001 did; returns them as stored (with times)."""
    blobs: dict[str, dict[str, Any]] = {}
    message_rows, block_rows, stored = [], [], []
    for seq, message in enumerate(messages, 1):
        row, blocks = encode_0001(message, blobs)
        recorded = message.recorded_at or STAMP
        message_rows.append({**row, "session_id": sid, "seq": seq, "recorded_at": recorded})
        for position, block in enumerate(blocks):
            block_rows.append({**block, "session_id": sid, "seq": seq, "position": position})
        stored.append(message.with_recorded_at(recorded))
    conn.execute(
        sa.insert(SESSIONS),
        [
            {
                "session_id": sid,
                "next_seq": len(messages) + 1,
                "last_recorded_at": STAMP,
                "created_at": STAMP,
            }
        ],
    )
    blob_rows = [
        {"session_id": sid, "sha256": sha, "data": b["data"], "size": len(b["data"])}
        | {"width": b["w"], "height": b["h"]}
        for sha, b in blobs.items()
    ]
    if blob_rows:
        conn.execute(sa.insert(BLOBS), blob_rows)
    conn.execute(sa.insert(MESSAGES), message_rows)
    if block_rows:
        conn.execute(sa.insert(BLOCKS), block_rows)
    return stored


def legacy_rows(conn: sa.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the message, block and blob tables as 0001 defines them, in key order."""
    keys = {
        "messages": ("session_id", "seq"),
        "blocks": ("session_id", "seq", "position"),
        "blobs": ("session_id", "sha256"),
    }
    result = {}
    for name, table in LEGACY_TABLES.items():
        query = sa.select(table).order_by(*(table.c[k] for k in keys[name]))
        result[name] = [
            tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
            for r in conn.execute(query)
        ]
    return result
