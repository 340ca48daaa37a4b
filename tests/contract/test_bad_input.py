"""Bad input at the storage boundary, on every storage: a typed error, and nothing written.

docs/contract/errors.md (bad input): an item that is not a ``Message`` raises
``InvalidMessageError``; image or document bytes over ``max_blob_bytes`` (20 MiB unless
given) raise ``BlobTooLargeError``; ``recent(n)`` / ``evict(keep)`` refuse a negative
count with ``ValueError`` and a non-``int`` (``bool`` included) with ``TypeError``. A bad
batch is refused whole (docs/contract/persistence.md, transactions). Bad session ids:
test_sessions.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sqlmemory import (
    BlobTooLargeError,
    DocumentBlock,
    ImageBlock,
    InvalidMessageError,
    Message,
)
from tests.support.cases import BAD_COUNTS, NOT_MESSAGES, chat, noisy_png, tool_history
from tests.support.storages import Subject

SID = "bad-input"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIB = 1024 * 1024


@pytest.mark.parametrize("value", NOT_MESSAGES, ids=[type(v).__name__ for v in NOT_MESSAGES])
def test_a_value_that_is_not_a_message_is_refused_before_any_write(
    subject: Subject, value: object
) -> None:
    storage = subject.storage
    good = Message.user("fine", id="fine")
    with pytest.raises(InvalidMessageError):
        storage.append(SID, good, value)
    with pytest.raises(InvalidMessageError):
        storage.save(SID, [good, value])
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)


def test_a_bare_string_is_not_a_history(subject: Subject) -> None:
    with pytest.raises((InvalidMessageError, TypeError)):
        subject.storage.save(SID, "not a list of messages")
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)


@pytest.mark.parametrize(("value", "error"), BAD_COUNTS, ids=[repr(v) for v, _ in BAD_COUNTS])
def test_bad_recent_n_and_evict_keep_are_refused(
    subject: Subject, value: object, error: type[Exception]
) -> None:
    storage = subject.storage
    storage.append(SID, *tool_history())
    before = subject.state()
    with pytest.raises(error):
        storage.recent(SID, value)
    with pytest.raises(error):
        storage.evict(SID, value)
    with pytest.raises(error):
        storage.session(SID).evict(value)
    assert subject.state() == before
    assert storage.count(SID) == 9


# --- the blob limit ---------------------------------------------------------------------------

LIMIT = 2000


def big_png() -> bytes:
    data = noisy_png(40, 40)
    assert len(data) > LIMIT
    return data


@pytest.mark.parametrize(
    "block",
    [
        lambda: ImageBlock(big_png(), "image/png"),
        lambda: DocumentBlock(b"%PDF" + b"x" * LIMIT, "application/pdf"),
        lambda: DocumentBlock(b"t" * (LIMIT + 1), "text/plain"),
    ],
    ids=["image", "pdf", "text"],
)
def test_blob_over_the_configured_limit_is_refused(
    subject: Subject, block: Callable[[], ImageBlock | DocumentBlock]
) -> None:
    subject = subject.with_options(max_blob_bytes=LIMIT)
    storage = subject.storage
    assert storage.max_blob_bytes == LIMIT
    good = Message.user("fine", id="fine")
    too_big = Message.user(["too big", block()], id="big")
    with pytest.raises(BlobTooLargeError):
        storage.append(SID, good, too_big)
    with pytest.raises(BlobTooLargeError):
        storage.save(SID, [good, too_big])
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)
    storage.append(SID, good)
    before = subject.state()
    with pytest.raises(BlobTooLargeError):
        storage.append(SID, too_big)
    with pytest.raises(BlobTooLargeError):
        storage.save(SID, [good, too_big])
    assert subject.state() == before


def _image(size: int) -> Message:
    return Message.user([ImageBlock(data=PNG_MAGIC + b"\x00" * (size - 8), media_type="image/png")])


def _document(size: int) -> Message:
    return Message.user([DocumentBlock(data=b"a" * size, media_type="text/plain")])


@pytest.mark.parametrize("build", [_image, _document], ids=["image", "document"])
def test_blob_over_configured_limit(subject: Subject, build: Any) -> None:
    store = subject.with_options(max_blob_bytes=1000).storage
    store.append("s", build(1000))  # exactly at the limit is fine
    with pytest.raises(BlobTooLargeError):
        store.append("s", Message.user("same batch"), build(1001))
    assert store.count("s") == 1
    with pytest.raises(BlobTooLargeError):
        store.save("s", [build(1001)])
    assert store.count("s") == 1


def test_blob_at_the_limit_is_accepted(subject: Subject) -> None:
    data = b"t" * LIMIT
    storage = subject.with_options(max_blob_bytes=LIMIT).storage
    storage.append(SID, Message.user(DocumentBlock(data, "text/plain"), id="at-limit"))
    (loaded,) = storage.load(SID)
    assert loaded.content[0].data == data


def test_default_limit_is_twenty_mebibytes_and_such_a_blob_round_trips(subject: Subject) -> None:
    storage = subject.storage
    limit = 20 * MIB
    assert storage.max_blob_bytes == limit
    with pytest.raises(BlobTooLargeError):
        storage.append(SID, Message.user(DocumentBlock(b"x" * (limit + 1), "text/plain")))
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)
    data = bytes(range(256)) * (limit // 256)
    storage.append(SID, Message.user(DocumentBlock(data, "application/pdf"), id="20MiB"))
    (loaded,) = storage.load(SID)
    assert loaded.content[0].data == data


def test_blob_limit_defaults_to_20_mib(storage: Any) -> None:
    storage.append("s", _image(20 * MIB))
    with pytest.raises(BlobTooLargeError):
        storage.append("s", _image(20 * MIB + 1))
    assert storage.count("s") == 1


def test_a_refused_batch_leaves_the_session_as_it_was(subject: Subject) -> None:
    # One bad item anywhere in a batch, and none of the batch is stored.
    storage = subject.storage
    storage.append(SID, *chat(2))
    before = subject.state()
    for bad in (*NOT_MESSAGES[:2], _document(20 * MIB + 1)):
        with pytest.raises((InvalidMessageError, BlobTooLargeError)):
            storage.append(SID, *chat(3, "new"), bad)
        with pytest.raises((InvalidMessageError, BlobTooLargeError)):
            storage.save(SID, [*chat(3, "new"), bad])
        assert subject.state() == before
