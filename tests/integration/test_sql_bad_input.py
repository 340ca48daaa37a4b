"""Every bad-input row of SPEC section 6 at the SQL storage boundary: typed error, no write."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from sqlmemory import (
    BlobTooLargeError,
    DocumentBlock,
    ImageBlock,
    InvalidMessageError,
    Message,
    SqlStorage,
)
from tests.support.cases import (
    BAD_COUNTS,
    BAD_MESSAGE_BUILDERS,
    BAD_SESSION_IDS,
    GOOD_SESSION_IDS,
    NOT_MESSAGES,
    noisy_png,
    timeless,
    tool_history,
)
from tests.support.tables import row_counts, snapshot

SID = "bad-input"
EMPTY = {"sessions": 0, "messages": 0, "blocks": 0, "blobs": 0}


def counts(engine: sa.Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return row_counts(conn)


def rows(engine: sa.Engine) -> dict[str, list[tuple[object, ...]]]:
    with engine.connect() as conn:
        return snapshot(conn)


def every_method(storage: Any, session_id: object) -> dict[str, Callable[[], object]]:
    """Each storage method called with ``session_id`` and otherwise valid arguments."""
    message = Message.user("valid", id="valid")
    return {
        "append": lambda: storage.append(session_id, message),
        "load": lambda: storage.load(session_id),
        "save": lambda: storage.save(session_id, [message]),
        "recent": lambda: storage.recent(session_id, 3),
        "evict": lambda: storage.evict(session_id, 1),
        "clear": lambda: storage.clear(session_id),
        "count": lambda: storage.count(session_id),
        "session": lambda: storage.session(session_id),
    }


@pytest.mark.parametrize(
    ("session_id", "error"), BAD_SESSION_IDS, ids=[repr(v)[:30] for v, _ in BAD_SESSION_IDS]
)
def test_a_bad_session_id_is_refused_by_every_method(
    storage: SqlStorage, engine: sa.Engine, session_id: object, error: type[Exception]
) -> None:
    storage.append(SID, *tool_history())
    before = rows(engine)
    for name, call in every_method(storage, session_id).items():
        with pytest.raises(error):
            call()
        assert rows(engine) == before, name


@pytest.mark.parametrize("session_id", GOOD_SESSION_IDS, ids=[v[:20] for v in GOOD_SESSION_IDS])
def test_hostile_looking_session_ids_are_plain_ids(
    storage: SqlStorage, engine: sa.Engine, session_id: str
) -> None:
    history = tool_history()
    storage.append(session_id, *history)
    storage.append("bystander", Message.user("untouched", id="b"))
    assert timeless(storage.load(session_id)) == timeless(history)
    assert storage.sessions() == sorted([session_id, "bystander"])
    assert storage.sessions(session_id) == [session_id]
    assert storage.count(session_id) == 9
    assert storage.clear(session_id) == 9
    assert counts(engine) == {"sessions": 1, "messages": 1, "blocks": 0, "blobs": 0}


@pytest.mark.parametrize("name", sorted(BAD_MESSAGE_BUILDERS))
def test_a_bad_message_cannot_be_built(name: str) -> None:
    # Messages are validated when built, so a bad one never reaches a storage.
    with pytest.raises(InvalidMessageError):
        BAD_MESSAGE_BUILDERS[name]()


@pytest.mark.parametrize("value", NOT_MESSAGES, ids=[type(v).__name__ for v in NOT_MESSAGES])
def test_a_value_that_is_not_a_message_is_refused_before_any_write(
    storage: SqlStorage, engine: sa.Engine, value: object
) -> None:
    good = Message.user("fine", id="fine")
    with pytest.raises(InvalidMessageError):
        storage.append(SID, good, value)  # type: ignore[arg-type]
    with pytest.raises(InvalidMessageError):
        storage.save(SID, [good, value])  # type: ignore[list-item]
    assert counts(engine) == EMPTY


def test_a_bare_string_is_not_a_history(storage: SqlStorage, engine: sa.Engine) -> None:
    with pytest.raises((InvalidMessageError, TypeError)):
        storage.save(SID, "not a list of messages")  # type: ignore[arg-type]
    assert counts(engine) == EMPTY


@pytest.mark.parametrize(("value", "error"), BAD_COUNTS, ids=[repr(v) for v, _ in BAD_COUNTS])
def test_bad_recent_n_and_evict_keep_are_refused(
    storage: SqlStorage, engine: sa.Engine, value: object, error: type[Exception]
) -> None:
    storage.append(SID, *tool_history())
    before = rows(engine)
    with pytest.raises(error):
        storage.recent(SID, value)  # type: ignore[arg-type]
    with pytest.raises(error):
        storage.evict(SID, value)  # type: ignore[arg-type]
    with pytest.raises(error):
        storage.session(SID).evict(value)  # type: ignore[arg-type]
    assert rows(engine) == before


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
    engine: sa.Engine, block: Callable[[], ImageBlock | DocumentBlock]
) -> None:
    storage = SqlStorage(engine, max_blob_bytes=LIMIT)
    assert storage.max_blob_bytes == LIMIT
    good = Message.user("fine", id="fine")
    too_big = Message.user(["too big", block()], id="big")
    with pytest.raises(BlobTooLargeError):
        storage.append(SID, good, too_big)
    with pytest.raises(BlobTooLargeError):
        storage.save(SID, [good, too_big])
    assert counts(engine) == EMPTY
    storage.append(SID, good)
    before = rows(engine)
    with pytest.raises(BlobTooLargeError):
        storage.append(SID, too_big)
    with pytest.raises(BlobTooLargeError):
        storage.save(SID, [good, too_big])
    assert rows(engine) == before


def test_blob_at_the_limit_is_accepted(engine: sa.Engine) -> None:
    data = b"t" * LIMIT
    storage = SqlStorage(engine, max_blob_bytes=LIMIT)
    storage.append(SID, Message.user(DocumentBlock(data, "text/plain"), id="at-limit"))
    (loaded,) = storage.load(SID)
    assert loaded.content[0].data == data  # type: ignore[union-attr]


def test_default_limit_is_twenty_mebibytes_and_such_a_blob_round_trips(
    storage: SqlStorage, engine: sa.Engine
) -> None:
    limit = 20 * 1024 * 1024
    assert storage.max_blob_bytes == limit
    with pytest.raises(BlobTooLargeError):
        storage.append(SID, Message.user(DocumentBlock(b"x" * (limit + 1), "text/plain")))
    assert counts(engine) == EMPTY
    data = bytes(range(256)) * (limit // 256)
    storage.append(SID, Message.user(DocumentBlock(data, "application/pdf"), id="20MiB"))
    (loaded,) = storage.load(SID)
    assert loaded.content[0].data == data  # type: ignore[union-attr]
