"""Storage-boundary validation on InMemoryStorage: session ids and the blob size limit.

The session id rows of SPEC section 6, and ``BlobTooLargeError`` (section 6) with
``InMemoryStorage(max_blob_bytes=...)``.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import (
    BlobTooLargeError,
    DocumentBlock,
    ImageBlock,
    InMemoryStorage,
    InvalidSessionIdError,
    Message,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIB = 1024 * 1024


@pytest.fixture
def store() -> InMemoryStorage:
    return InMemoryStorage()


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


# --- session ids ----------------------------------------------------------------------------

BAD_SESSION_IDS = {
    "empty": "",
    "256 chars": "x" * 256,
    "leading space": " abc",
    "trailing space": "abc ",
    "trailing newline": "abc\n",
    "leading tab": "\tabc",
    "nul inside": "ab\x00c",
    "newline inside": "ab\nc",
    "escape inside": "ab\x1bc",
    "DEL inside": "ab\x7fc",
    "only spaces": "   ",
}


def _every_method(store: InMemoryStorage, sid: Any) -> list[Any]:
    return [
        lambda: store.append(sid, Message.user("x")),
        lambda: store.load(sid),
        lambda: store.save(sid, [Message.user("x")]),
        lambda: store.recent(sid, 1),
        lambda: store.evict(sid, 1),
        lambda: store.clear(sid),
        lambda: store.count(sid),
        lambda: store.session(sid).load(),
    ]


@pytest.mark.parametrize("sid", list(BAD_SESSION_IDS.values()), ids=list(BAD_SESSION_IDS))
def test_invalid_session_id(store: InMemoryStorage, sid: str) -> None:
    for call in _every_method(store, sid):
        with pytest.raises(InvalidSessionIdError):
            call()
    assert list(store.sessions()) == []


@pytest.mark.parametrize("sid", [123, None, b"abc", ["a"]], ids=["int", "None", "bytes", "list"])
def test_session_id_of_another_type(store: InMemoryStorage, sid: Any) -> None:
    for call in _every_method(store, sid):
        with pytest.raises(TypeError):
            call()
    assert list(store.sessions()) == []


@pytest.mark.parametrize(
    "sid", ["'; DROP TABLE x;--", "x" * 255, "a b", "user@example.com/chat#1", "会话"]
)
def test_valid_session_ids(store: InMemoryStorage, sid: str) -> None:
    m = Message.user("x")
    store.append(sid, m)
    assert ids(store.load(sid)) == [m.id]
    assert list(store.sessions()) == [sid]


# --- blob limit -----------------------------------------------------------------------------


def _image(size: int) -> Message:
    return Message.user([ImageBlock(data=PNG_MAGIC + b"\x00" * (size - 8), media_type="image/png")])


def _document(size: int) -> Message:
    return Message.user([DocumentBlock(data=b"a" * size, media_type="text/plain")])


@pytest.mark.parametrize("build", [_image, _document], ids=["image", "document"])
def test_blob_over_configured_limit(build: Any) -> None:
    store = InMemoryStorage(max_blob_bytes=1000)
    store.append("s", build(1000))  # exactly at the limit is fine
    with pytest.raises(BlobTooLargeError):
        store.append("s", Message.user("same batch"), build(1001))
    assert store.count("s") == 1
    with pytest.raises(BlobTooLargeError):
        store.save("s", [build(1001)])
    assert store.count("s") == 1


def test_blob_limit_defaults_to_20_mib() -> None:
    store = InMemoryStorage()
    store.append("s", _image(20 * MIB))
    with pytest.raises(BlobTooLargeError):
        store.append("s", _image(20 * MIB + 1))
    assert store.count("s") == 1
