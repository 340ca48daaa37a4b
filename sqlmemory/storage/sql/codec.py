"""Messages to rows and back, and the content digest that makes appends idempotent.

No SQL here: these functions turn a :class:`Message` into the plain dicts the SQL layer
inserts, and rows (as mappings) back into messages.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from sqlmemory.policy import Entry, estimate_tokens
from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.types._json import dump_json, freeze_json

# Role(value) goes through Enum.__call__; a dict lookup is several times cheaper per row.
ROLES = {role.value: role for role in Role}
EMPTY: Mapping[str, Any] = MappingProxyType({})

__all__ = [
    "BlobData",
    "EncodedMessage",
    "decode_message",
    "digest_of",
    "encode_message",
    "entry_of",
    "history_digest",
    "time_is_stored",
]


@dataclass(frozen=True)
class BlobData:
    """Bytes to store once per session, with the image size read from the header."""

    sha256: str
    data: bytes
    width: int | None
    height: int | None


@dataclass
class EncodedMessage:
    """A message as rows: the message row, its block rows, the blobs they reference."""

    message: Message
    row: dict[str, Any]
    blocks: list[dict[str, Any]] = field(default_factory=list)
    blobs: list[BlobData] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return str(self.row["digest"])


def _block_row(block: Block, blobs: list[BlobData]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "kind": block.kind,
        "text": None,
        "signature": None,
        "media_type": None,
        "url": None,
        "title": None,
        "width": None,
        "height": None,
        "blob_sha256": None,
    }
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
            blobs.append(BlobData(sha, block.data, block.width, block.height))
    else:
        sha = hashlib.sha256(block.data).hexdigest()
        row["media_type"], row["title"], row["blob_sha256"] = block.media_type, block.title, sha
        blobs.append(BlobData(sha, block.data, None, None))
    return row


class _Memo:
    """What the storage has worked out about one message, kept beside it."""

    __slots__ = ("chain", "digest", "loaded")

    def __init__(self, digest: str | None = None, loaded: bool = False) -> None:
        self.digest = digest
        """The content digest, once computed (or as stored, for a loaded message)."""
        self.loaded = loaded
        """Built from stored rows: its ``recorded_at`` is the stored one."""
        self.chain: tuple[str, str] | None = None
        """The history-chain link this message adds after a given predecessor."""


class _Memos:
    """:class:`_Memo` values by message identity, for as long as the message lives.

    Messages are frozen (and, holding mappings, unhashable), so what is memoised about
    them lives here, outside the values: equality, ``repr`` and copies never see it.
    """

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref[Message], _Memo]] = {}

    def get(self, message: Message) -> _Memo | None:
        item = self._items.get(id(message))
        if item is not None and item[0]() is message:
            return item[1]
        return None

    def of(self, message: Message) -> _Memo:
        memo = self.get(message)
        if memo is None:
            memo = self.add(message, _Memo())
        return memo

    def add(self, message: Message, memo: _Memo) -> _Memo:
        key = id(message)
        self._items[key] = (weakref.ref(message, self._forget(key)), memo)
        return memo

    def _forget(self, key: int) -> Any:
        items = self._items

        def forget(ref: weakref.ref[Message]) -> None:
            item = items.get(key)
            if item is not None and item[0] is ref:
                del items[key]

        return forget


_MEMOS = _Memos()


def time_is_stored(message: Message) -> bool:
    """Whether ``message.recorded_at`` is known to equal the stored one (or is unset)."""
    if message.recorded_at is None:
        return True
    memo = _MEMOS.get(message)
    return memo is not None and memo.loaded


def history_digest(messages: Sequence[Message], count: int) -> str:
    """A hash chain over the ids and content digests of ``messages[:count]``.

    Equal chains mean equal histories (ids, order and content). Each message memoises the
    link it adds after a given predecessor, so re-hashing a history that grew by k
    messages hashes k links.
    """
    link = ""
    for message in messages[:count]:
        memo = _MEMOS.of(message)
        if memo.chain is not None and memo.chain[0] == link:
            link = memo.chain[1]
            continue
        # Ids hold no control characters, so the unit separator cannot be forged.
        data = f"{link}\x1f{message.id}\x1f{digest_of(message)}".encode()
        following = hashlib.sha256(data).hexdigest()
        memo.chain = (link, following)
        link = following
    return link


def digest_of(message: Message) -> str:
    """The SHA-256 content digest of ``message`` (its id and ``recorded_at`` aside)."""
    memo = _MEMOS.get(message)
    if memo is not None and memo.digest is not None:
        return memo.digest
    return encode_message(message).digest


def encode_message(message: Message) -> EncodedMessage:
    """The rows of ``message`` (without ``session_id``, ``seq`` and ``recorded_at``)."""
    blobs: list[BlobData] = []
    inline = len(message.content) == 1 and isinstance(message.content[0], TextBlock)
    blocks = [] if inline else [_block_row(b, blobs) for b in message.content]
    tool_calls = (
        json.dumps(
            [
                {"id": c.id, "name": c.name, "arguments": json.loads(c.arguments_json)}
                for c in message.tool_calls
            ],
            ensure_ascii=False,
            separators=(",", ":"),
        )
        if message.tool_calls
        else None
    )
    metadata = dump_json(message.metadata) if message.metadata else None
    text = message.content[0].text if inline else None  # type: ignore[union-attr]
    digest_source = json.dumps(
        [
            message.role.value,
            message.tool_call_id,
            tool_calls,
            metadata,
            text,
            [[b[k] for k in sorted(b)] for b in blocks],
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    digest = hashlib.sha256(digest_source.encode("utf-8")).hexdigest()
    row = {
        "message_id": message.id,
        "role": message.role.value,
        "tool_call_id": message.tool_call_id,
        "text": text,
        "n_blocks": len(blocks),
        "call_ids": json.dumps(list(message.call_ids)) if message.tool_calls else None,
        "tool_calls": tool_calls,
        "metadata_json": metadata,
        "digest": digest,
        "tokens": estimate_tokens(message),
    }
    _MEMOS.of(message).digest = digest
    return EncodedMessage(message, row, blocks, blobs)


def _new(cls: type, **values: Any) -> Any:
    # Rows were validated when they were written, so values are rebuilt without the
    # checks of __post_init__: reading 10,000 messages must cost what the SQL costs.
    obj: Any = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def decode_block(row: Mapping[Any, Any], blobs: Mapping[str, tuple[bytes, Any, Any]]) -> Block:
    """A block from its row; ``blobs`` maps sha256 to ``(data, width, height)``."""
    kind = row["kind"]
    if kind == "text":
        return _new(TextBlock, text=row["text"])  # type: ignore[no-any-return]
    if kind == "thinking":
        return _new(  # type: ignore[no-any-return]
            ThinkingBlock, thinking=row["text"], signature=row["signature"]
        )
    sha = row["blob_sha256"]
    if kind == "image":
        data, width, height = blobs[sha] if sha is not None else (None, None, None)
        return _new(  # type: ignore[no-any-return]
            ImageBlock,
            data=data,
            media_type=row["media_type"],
            url=row["url"],
            # The block's own size first: a URL image's is the caller's, and bytes stored
            # first as a document have no size in their blob row.
            width=row["width"] if row["width"] is not None else width,
            height=row["height"] if row["height"] is not None else height,
        )
    return _new(  # type: ignore[no-any-return]
        DocumentBlock, data=blobs[sha][0], media_type=row["media_type"], title=row["title"]
    )


def decode_message(row: Mapping[Any, Any], blocks: Sequence[Block]) -> Message:
    """A message from its row and its decoded blocks."""
    text = row["text"]
    content: tuple[Block, ...] = tuple(blocks)
    if text is not None:
        content = (_new(TextBlock, text=text),)
    calls: tuple[ToolCall, ...] = ()
    if row["tool_calls"] is not None:
        calls = tuple(
            _new(ToolCall, id=c["id"], name=c["name"], arguments=freeze_json(c["arguments"], ""))
            for c in json.loads(row["tool_calls"])
        )
    metadata = row["metadata_json"]
    message: Message = _new(
        Message,
        role=ROLES[row["role"]],
        content=content,
        tool_calls=calls,
        tool_call_id=row["tool_call_id"],
        metadata=freeze_json(json.loads(metadata), "") if metadata else EMPTY,
        id=row["message_id"],
        recorded_at=row["recorded_at"],
    )
    _MEMOS.add(message, _Memo(row["digest"], loaded=True))
    return message


def entry_of(row: Mapping[Any, Any]) -> Entry:
    """What a policy needs to know of a stored message, from its row alone."""
    call_ids = row["call_ids"]
    return Entry(
        role=ROLES[row["role"]],
        tool_call_id=row["tool_call_id"],
        call_ids=tuple(json.loads(call_ids)) if call_ids else (),
        tokens=row["tokens"],
    )
