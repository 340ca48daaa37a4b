"""What goes into SqlStorage comes back exactly: every block kind, every text, every id."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from sqlmemory import (
    ImageBlock,
    InvalidMessageError,
    Message,
    SqlStorage,
    TextBlock,
    TokenWindow,
    ToolCall,
    estimate_tokens,
)
from tests.support.cases import (
    BIG_TEXT,
    IMPORTED_AT,
    METADATA,
    NESTED_ARGUMENTS,
    every_block_kind,
    fidelity_messages,
    ids,
    image_sizes,
    timeless,
)
from tests.support.tables import MESSAGES

SID = "roundtrip"


def test_every_block_kind_round_trips(storage: SqlStorage) -> None:
    history = every_block_kind()
    storage.append(SID, *history)
    loaded = storage.load(SID)
    assert timeless(loaded) == timeless(history)
    assert image_sizes(loaded) == image_sizes(history)
    assert [estimate_tokens(m) for m in loaded] == [estimate_tokens(m) for m in history]
    # Each block comes back as its own class, bytes as bytes.
    for before, after in zip(history, loaded, strict=True):
        assert [type(b) for b in after.content] == [type(b) for b in before.content]
        assert after.role is before.role
        for block in after.content:
            data = getattr(block, "data", None)
            assert data is None or type(data) is bytes


def test_tool_call_argument_order_survives_at_every_depth(storage: SqlStorage) -> None:
    call = ToolCall("c1", "search", NESTED_ARGUMENTS)
    storage.append(SID, Message.assistant(tool_calls=[call], id="a"))
    (loaded,) = storage.load(SID)
    (got,) = loaded.tool_calls
    assert got == call
    assert list(got.arguments) == ["zeta", "alpha", "mid", "beta"]
    assert list(got.arguments["alpha"]) == ["y", "x", "m"]
    assert list(got.arguments["alpha"]["y"][1]) == ["b", "a"]
    assert got.arguments_json == call.arguments_json  # byte-exact replay
    assert got.arguments["alpha"]["y"][1]["a"] == 1.5
    assert got.arguments["alpha"]["m"] is True
    assert got.arguments["alpha"]["x"] is None


def test_metadata_round_trips_in_order(storage: SqlStorage) -> None:
    message = Message.user("hi", id="m", metadata=METADATA)
    storage.append(SID, message)
    (loaded,) = storage.load(SID)
    assert loaded.metadata == message.metadata
    assert list(loaded.metadata) == ["z", "a", "trace"]
    assert list(loaded.metadata["a"]) == ["k2", "k1"]
    assert list(loaded.metadata["a"]["k1"]) == [3, 2, 1]


def test_single_text_block_is_kept_inline(storage: SqlStorage, engine: sa.Engine) -> None:
    storage.append(
        SID,
        Message.user("inline", id="one"),
        Message.user([TextBlock("two"), TextBlock("blocks")], id="two"),
    )
    with engine.connect() as conn:
        rows = dict(
            conn.execute(
                sa.select(MESSAGES.c.message_id, MESSAGES.c.n_blocks).where(
                    MESSAGES.c.session_id == SID
                )
            ).all()
        )
    assert rows == {"one": 0, "two": 2}
    assert [m.content for m in storage.load(SID)] == [
        (TextBlock("inline"),),
        (TextBlock("two"), TextBlock("blocks")),
    ]


def test_supplied_recorded_at_is_stored_as_given(storage: SqlStorage) -> None:
    exact = datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=timezone.utc)
    storage.append(
        SID,
        Message.user("imported", id="imported", recorded_at=IMPORTED_AT),
        Message.user("leap", id="leap", recorded_at=exact),
    )
    imported, leap = storage.load(SID)
    assert imported.recorded_at == IMPORTED_AT
    assert imported.recorded_at == datetime(2001, 2, 2, 22, 35, 6, 789012, tzinfo=timezone.utc)
    assert leap.recorded_at == exact
    for message in (imported, leap):
        assert message.recorded_at is not None
        assert message.recorded_at.utcoffset() == timedelta(0)


def test_store_assigned_recorded_at_is_aware_utc_now(storage: SqlStorage) -> None:
    before = datetime.now(timezone.utc)
    storage.append(SID, Message.user("now", id="now"))
    after = datetime.now(timezone.utc)
    (loaded,) = storage.load(SID)
    assert loaded.recorded_at is not None
    assert loaded.recorded_at.tzinfo is not None
    assert loaded.recorded_at.utcoffset() == timedelta(0)
    # Microseconds survive, so the bounds hold to the microsecond.
    assert before <= loaded.recorded_at <= after


def test_texts_round_trip_exactly_everywhere_they_are_stored(storage: SqlStorage) -> None:
    history = fidelity_messages()
    storage.append(SID, *history)
    loaded = storage.load(SID)
    assert timeless(loaded) == timeless(history)
    for before, after in zip(history, loaded, strict=True):
        assert after.text_content() == before.text_content()
        assert [b.text for b in after.content if isinstance(b, TextBlock)] == [
            b.text for b in before.content if isinstance(b, TextBlock)
        ]


def test_ten_megabyte_text_round_trips(storage: SqlStorage) -> None:
    storage.append(
        SID,
        Message.user(BIG_TEXT, id="big-inline"),
        Message.user([TextBlock(BIG_TEXT[:100]), TextBlock(BIG_TEXT)], id="big-blocks"),
    )
    inline, blocks = storage.load(SID)
    assert inline.content[0].text == BIG_TEXT  # type: ignore[union-attr]
    assert blocks.content[1].text == BIG_TEXT  # type: ignore[union-attr]
    assert estimate_tokens(inline) == 4 + len(BIG_TEXT.encode()) // 4


def test_message_ids_differing_by_case_or_trailing_space_are_distinct(
    storage: SqlStorage,
) -> None:
    variants = ["a", "a ", "a  ", "A", " a", "\u00e4", "a\u0308", "😀", "😀 "]
    storage.append(SID, *(Message.user(f"text of {v!r}", id=v) for v in variants))
    assert storage.count(SID) == len(variants)
    loaded = storage.load(SID)
    assert ids(loaded) == variants
    assert [m.text_content() for m in loaded] == [f"text of {v!r}" for v in variants]
    # A retry of one of them is recognised as that one, not as a near twin.
    storage.append(SID, Message.user("text of 'a '", id="a "))
    assert storage.count(SID) == len(variants)


@pytest.mark.parametrize("odd_id", ["nul\x00", "\x00", "\x01\x1f\x7f"], ids=repr)
def test_ids_holding_control_characters_round_trip_or_are_refused_when_built(
    storage: SqlStorage, odd_id: str
) -> None:
    # Message ids and tool call ids are any str; whatever a backend's column types, they
    # must either be refused when the message is built (before any SQL), or round-trip.
    try:
        messages = [
            Message.assistant(tool_calls=[ToolCall(odd_id, "f")], id=odd_id),
            Message.tool(odd_id, "result", id=odd_id + " tool"),
        ]
    except InvalidMessageError:
        return
    storage.append(SID, *messages)
    loaded = storage.load(SID)
    assert timeless(loaded) == timeless(messages)
    assert loaded[1].tool_call_id == odd_id


def test_session_ids_differing_by_case_or_normalisation_are_distinct(
    storage: SqlStorage,
) -> None:
    names = ["chat", "Chat", "CHAT", "ch\u00e4t", "cha\u0308t"]  # composed and decomposed ä
    for sid in names:
        storage.append(sid, Message.user(f"in {sid}", id="same-id"))
    assert storage.sessions() == sorted(names)
    for sid in names:
        assert [m.text_content() for m in storage.load(sid)] == [f"in {sid}"]
    assert storage.clear("Chat") == 1
    assert storage.count("chat") == 1
    assert storage.count("CHAT") == 1


def test_long_ids_of_four_byte_characters_round_trip(storage: SqlStorage) -> None:
    sid = "😀" * 255
    message_id = "𝄞" * 255
    tool_call_id = "🀄" * 255
    storage.append(
        sid,
        Message.assistant(tool_calls=[ToolCall(tool_call_id, "f")], id=message_id),
        Message.tool(tool_call_id, "done", id="t"),
    )
    assert storage.sessions() == [sid]
    first, second = storage.load(sid)
    assert first.id == message_id
    assert first.tool_calls[0].id == tool_call_id
    assert second.tool_call_id == tool_call_id


def test_url_image_keeps_the_size_the_caller_gave(storage: SqlStorage) -> None:
    # Equality of ImageBlock ignores width/height, but the token estimate does not:
    # a size lost in storage changes the windows TokenWindow picks after a reload.
    block = ImageBlock(
        url="https://example.com/big.png", media_type="image/png", width=640, height=480
    )
    message = Message.user(block, id="u")
    storage.append(SID, message)
    (loaded,) = storage.load(SID)
    assert image_sizes([loaded]) == [(640, 480)]
    assert estimate_tokens(loaded) == estimate_tokens(message)


def test_token_window_over_a_url_image_matches_the_policy_applied_to_the_history(
    storage: SqlStorage,
) -> None:
    # 640x480 costs 13600 tokens, an image of unknown size 2500: the stored estimate and
    # the loaded message's estimate must agree, or load(policy) != policy.apply(load()).
    block = ImageBlock(
        url="https://example.com/big.png", media_type="image/png", width=640, height=480
    )
    history = [Message.user(block, id="picture"), Message.user("hi", id="hi")]
    storage.append(SID, *history)
    policy = TokenWindow(5000)
    assert ids(storage.load(SID, policy)) == ids(policy.apply(storage.load(SID)))
    assert ids(storage.load(SID, policy)) == ids(policy.apply(history)) == ["hi"]
