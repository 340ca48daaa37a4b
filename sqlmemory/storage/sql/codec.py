"""Messages to rows and back, and the content digests that make appends idempotent.

No SQL here: these functions turn a :class:`Message` into the plain dicts the SQL layer
inserts, and rows (as mappings) back into messages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmemory.policy import Entry, estimate_tokens
from sqlmemory.storage.checks import content_digest
from sqlmemory.storage.search_rules import visible_text
from sqlmemory.storage.sql.base64_text import BLOCK_TEXT, FLAG, decode, decoded
from sqlmemory.storage.sql.plain_rows import PLAIN_DIGEST, plain_row, plain_values
from sqlmemory.storage.sql.simple_rows import BLOCK_KEYS, call_value, simple_rows
from sqlmemory.storage.sql.usage_rows import usage_of, usage_row
from sqlmemory.types import (
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
)
from sqlmemory.types._json import EMPTY, dump_json, freeze_trusted
from sqlmemory.types.blocks import data_sha256

# Role(value) goes through Enum.__call__; a dict lookup is several times cheaper per row.
ROLES = {role.value: role for role in Role}
MESSAGE_FIELDS = (
    "seq",
    "message_id",
    "role",
    "tool_call_id",
    "text",
    "n_blocks",
    "call_ids",
    "metadata_json",
    "extras_json",
    "is_error",
    "recorded_at",
    "tokens",
    "digest",
    "text_base64",
    "usage",
)
"""The columns of a message row, in the order the reads select them: rows are read as
tuples (a mapping per row costs more than the row) and taken apart by these positions."""
(
    SEQ,
    MESSAGE_ID,
    ROLE,
    TOOL_CALL_ID,
    TEXT,
    N_BLOCKS,
    CALL_IDS,
    METADATA_JSON,
    EXTRAS_JSON,
    IS_ERROR,
    RECORDED_AT,
    TOKENS,
    DIGEST,
    TEXT_BASE64,
    USAGE,
) = range(len(MESSAGE_FIELDS))
# What the storage works out about a message (its digest, its link in a history chain)
# is kept in a slot ``Message`` has for it, set with ``object.__setattr__``: never a
# field (equality, ``repr`` and ``replace()`` never see it), and no object per message
# for the collector to count (a memo object and the ``__dict__`` asked for to hold it
# were two, whose pile started the full collections a batch of 100 paid 0.5 ms for).
MEMO_KEY = "_sqlmemory_memo"
"""A message's content digest, once computed (or as stored, for a loaded message); or,
once it has been linked into a history chain, ``(digest, given, link)``: also the link it
adds to the chain after the link ``given``."""
LOADED_KEY = "_sqlmemory_loaded"
"""``True`` on a message built from stored rows: its ``recorded_at`` is the stored one."""

__all__ = [
    "MEMO_KEY",
    "MESSAGE_FIELDS",
    "BlobData",
    "EncodedMessage",
    "decode_message",
    "digest_of",
    "encode_message",
    "entry_of",
    "time_is_stored",
]

MAX_STORED_TOKENS = 2**31 - 1
"""The ``tokens`` column is a 32-bit INTEGER: an estimate above it (dozens of images of
65,535 x 65,535 pixels) is stored as this, which no token budget fits anyway."""


@dataclass(frozen=True)
class BlobData:
    """Bytes to store once per session, with the image size read from the header."""

    sha256: str
    data: bytes
    width: int | None
    height: int | None


class EncodedMessage:
    """A message as rows: the message row, its block rows, the blobs they reference.

    A text alone is encoded as its :data:`~sqlmemory.storage.sql.plain_rows.PLAIN_COLUMNS`
    (``plain``): SQLite inserts a batch of them from those values, and :attr:`row` is
    made from them when a write asks for it."""

    __slots__ = ("_row", "blobs", "blocks", "message", "plain")

    def __init__(
        self,
        message: Message,
        row: dict[str, Any] | None = None,
        blocks: Sequence[dict[str, Any]] = (),
        blobs: Sequence[BlobData] = (),
        *,
        plain: tuple[Any, ...] | None = None,
    ) -> None:
        if (row is None) == (plain is None):
            raise TypeError("an EncodedMessage takes its row or its plain values")
        self.message = message
        self._row = row
        self.blocks = blocks
        self.blobs = blobs
        self.plain = plain

    def __repr__(self) -> str:
        return f"EncodedMessage({self.message.id!r}, {self.row!r}, blocks={len(self.blocks)})"

    @property
    def row(self) -> dict[str, Any]:
        """The message row (without ``session_id``, ``seq`` and ``recorded_at``)."""
        row = self._row
        if row is None:
            row = self._row = plain_row(self.plain)  # type: ignore[arg-type]
        return row

    @property
    def digest(self) -> str:
        plain = self.plain
        return str(self.row["digest"] if plain is None else plain[PLAIN_DIGEST])


def _blob(block: ImageBlock | DocumentBlock, row: dict[str, Any], blobs: list[BlobData]) -> None:
    row["media_type"], row["url"], row["file_id"] = block.media_type, block.url, block.file_id
    if block.data is not None:
        sha = data_sha256(block)
        row["blob_sha256"] = sha
        if isinstance(block, ImageBlock):
            blobs.append(BlobData(sha, block.data, block.width, block.height))
        else:
            blobs.append(BlobData(sha, block.data, None, None))


def _image_row(block: ImageBlock, row: dict[str, Any], blobs: list[BlobData]) -> None:
    _blob(block, row, blobs)
    row["detail"], row["width"], row["height"] = block.detail, block.width, block.height


def _document_row(block: DocumentBlock, row: dict[str, Any], blobs: list[BlobData]) -> None:
    _blob(block, row, blobs)
    row["title"] = block.title


def _text_row(block: TextBlock, row: dict[str, Any], blobs: list[BlobData]) -> None:
    row["text"] = block.text


def _thinking_row(block: ThinkingBlock, row: dict[str, Any], blobs: list[BlobData]) -> None:
    row["text"], row["signature"] = block.thinking, block.signature


def _redacted_row(block: RedactedThinkingBlock, row: dict[str, Any], blobs: list[BlobData]) -> None:
    row["text"] = block.data


def _tool_call_row(block: ToolCall, row: dict[str, Any], blobs: list[BlobData]) -> None:
    row["call_id"], row["name"], row["text"] = block.id, block.name, block.arguments_text
    row["value_json"], _ = call_value(block)


def _opaque_row(block: OpaqueBlock, row: dict[str, Any], blobs: list[BlobData]) -> None:
    row["name"], row["call_id"] = block.provider, block.call_id
    row["value_json"] = dump_json(block.payload)


_ROW_OF: dict[type, Any] = {
    TextBlock: _text_row,
    ImageBlock: _image_row,
    DocumentBlock: _document_row,
    ThinkingBlock: _thinking_row,
    RedactedThinkingBlock: _redacted_row,
    ToolCall: _tool_call_row,
    OpaqueBlock: _opaque_row,
}


def _block_row(block: Block, position: int, blobs: list[BlobData]) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(BLOCK_KEYS)
    row["position"] = position
    row["kind"] = block.kind
    row[FLAG] = False  # the writes set it on PostgreSQL, for text that holds NUL
    if block.extras:
        row["extras_json"] = dump_json(block.extras)
    _ROW_OF[type(block)](block, row, blobs)
    return row


def time_is_stored(message: Message) -> bool:
    """Whether ``message.recorded_at`` is known to equal the stored one (or is unset)."""
    return message.recorded_at is None or getattr(message, LOADED_KEY, False)


def digest_of(message: Message) -> str:
    """The content digest of ``message``: SHA-256 of its canonical form (``recorded_at`` aside)."""
    memo: str | tuple[str, str, str] | None = getattr(message, MEMO_KEY, None)
    if memo is None:
        digest = content_digest(message)
        object.__setattr__(message, MEMO_KEY, digest)
        return digest
    return memo if type(memo) is str else memo[0]


def encode_message(message: Message) -> EncodedMessage:
    """The rows of ``message`` (without ``session_id``, ``seq`` and ``recorded_at``).

    The first block stays in the message row when it is a text block without extras, so
    a message of one text needs no block row; every other block is a row at its index.
    """
    plain = plain_values(message, digest_of, MAX_STORED_TOKENS)  # a text alone: plain_rows.py
    if plain is not None:
        return EncodedMessage(message, plain=plain)
    simple = simple_rows(message, digest_of, MAX_STORED_TOKENS)  # texts and calls: simple_rows.py
    if simple is not None:
        return EncodedMessage(message, *simple)
    blobs: list[BlobData] = []
    content = message.content
    first = content[0] if content else None
    inline = type(first) is TextBlock and not first.extras
    start = 1 if inline else 0
    blocks = [_block_row(b, i, blobs) for i, b in enumerate(content[start:], start)]
    call_ids = message.call_ids
    row = {
        "message_id": message.id,
        "role": message.role.value,
        "tool_call_id": message.tool_call_id,
        "text": first.text if inline else None,  # type: ignore[union-attr]
        "n_blocks": len(blocks),
        "call_ids": json.dumps(list(call_ids)) if call_ids else None,
        "metadata_json": dump_json(message.metadata) if message.metadata else None,
        "extras_json": dump_json(message.extras) if message.extras else None,
        "is_error": message.is_error,
        "digest": digest_of(message),
        "tokens": min(estimate_tokens(message), MAX_STORED_TOKENS),
        FLAG: False,  # the writes set it on PostgreSQL, for text that holds NUL
        **usage_row(message.usage),
        "search_text": visible_text(message),
    }
    return EncodedMessage(message, row, blocks, blobs)


_NEW = object.__new__
_SET = object.__setattr__
_parse_time = datetime.fromisoformat


def _new(cls: type, **values: Any) -> Any:
    # Rows were validated when they were written, so values are rebuilt without the
    # checks of __post_init__: reading 10,000 messages must cost what the SQL costs.
    obj: Any = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def _json_of(text: str | None) -> Any:
    return freeze_trusted(json.loads(text)) if text else EMPTY


def _decode_tool_call(row: Mapping[Any, Any]) -> ToolCall:
    value = row["value_json"]
    if value is None:
        arguments = freeze_trusted(json.loads(row["text"]))
    elif value == "null":
        arguments = None
    else:
        arguments = freeze_trusted(json.loads(value))
    return _new(  # type: ignore[no-any-return]
        ToolCall,
        id=row["call_id"],
        name=row["name"],
        arguments=arguments,
        arguments_text=row["text"],
        extras=_json_of(row["extras_json"]),
    )


def _decode_media(row: Mapping[Any, Any], blobs: Mapping[str, tuple[bytes, Any, Any]]) -> Block:
    sha = row["blob_sha256"]
    data, width, height = blobs[sha] if sha is not None else (None, None, None)
    fields = {
        "data": data,
        "media_type": row["media_type"],
        "url": row["url"],
        "file_id": row["file_id"],
        "extras": _json_of(row["extras_json"]),
    }
    if sha is not None:
        fields["_sha256"] = sha  # the canonical form needs it: no hashing of bytes again
    if row["kind"] == "document":
        return _new(DocumentBlock, title=row["title"], **fields)  # type: ignore[no-any-return]
    return _new(  # type: ignore[no-any-return]
        ImageBlock,
        detail=row["detail"],
        # The block's own size first: a reference's is the caller's, and bytes stored
        # first as a document have no size in their blob row.
        width=row["width"] if row["width"] is not None else width,
        height=row["height"] if row["height"] is not None else height,
        **fields,
    )


def decode_block(row: Mapping[Any, Any], blobs: Mapping[str, tuple[bytes, Any, Any]]) -> Block:
    """A block from its row; ``blobs`` maps sha256 to ``(data, width, height)``."""
    if row[FLAG]:
        row = decoded(row, BLOCK_TEXT)
    kind = row["kind"]
    if kind == "text":
        return _new(TextBlock, text=row["text"], extras=_json_of(row["extras_json"]))  # type: ignore[no-any-return]
    if kind == "tool_call":
        return _decode_tool_call(row)
    if kind == "thinking":
        return _new(  # type: ignore[no-any-return]
            ThinkingBlock,
            thinking=row["text"],
            signature=row["signature"],
            extras=_json_of(row["extras_json"]),
        )
    if kind == "redacted_thinking":
        return _new(  # type: ignore[no-any-return]
            RedactedThinkingBlock, data=row["text"], extras=_json_of(row["extras_json"])
        )
    if kind == "opaque":
        return _new(  # type: ignore[no-any-return]
            OpaqueBlock,
            provider=row["name"],
            payload=freeze_trusted(json.loads(row["value_json"])),
            call_id=row["call_id"],
            extras=_json_of(row["extras_json"]),
        )
    return _decode_media(row, blobs)


def decode_message(row: Sequence[Any], blocks: Sequence[Block]) -> Message:
    """A message from its row (:data:`MESSAGE_FIELDS`) and its decoded blocks."""
    text = row[TEXT]
    if row[TEXT_BASE64]:
        text = decode(text)
    content: tuple[Block, ...] = tuple(blocks)
    if text is not None:
        first: TextBlock = _NEW(TextBlock)
        first.__dict__.update(text=text, extras=EMPTY)
        content = (first, *content)
    metadata, extras = row[METADATA_JSON], row[EXTRAS_JSON]
    # Every read selects the UTC time as text (column_types.utc_text), parsed with its
    # zone: several times faster than a driver's datetime and replace(tzinfo=) after it.
    recorded_at = _parse_time(row[RECORDED_AT] + "+00:00")
    message: Message = _NEW(Message)
    # One dict update: the fields as __init__ would set them (they were checked when
    # written), and that it was built from a stored row (LOADED_KEY); its digest goes in its slot.
    message.__dict__.update(
        role=ROLES[row[ROLE]],
        content=content,
        tool_call_id=row[TOOL_CALL_ID],
        metadata=freeze_trusted(json.loads(metadata)) if metadata else EMPTY,
        id=row[MESSAGE_ID],
        recorded_at=recorded_at,
        is_error=bool(row[IS_ERROR]),
        extras=freeze_trusted(json.loads(extras)) if extras else EMPTY,
        usage=None if row[USAGE] is None else usage_of(row[USAGE]),
        _sqlmemory_loaded=True,
    )
    _SET(message, MEMO_KEY, row[DIGEST])
    return message


def entry_of(row: Sequence[Any]) -> Entry:
    """What a policy needs to know of a stored message, from its row alone."""
    call_ids = row[CALL_IDS]
    return Entry(
        role=ROLES[row[ROLE]],
        tool_call_id=row[TOOL_CALL_ID],
        call_ids=tuple(json.loads(call_ids)) if call_ids else (),
        tokens=row[TOKENS],
    )
