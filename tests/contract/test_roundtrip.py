"""What goes into a storage comes back exactly, as new values nobody else can change.

docs/contract/messages.md (blocks, immutability) and docs/contract/persistence.md (text
fidelity): every block kind, every text, every id round-trips on every storage; the lists
a storage returns or is given are the caller's own, and messages are immutable values.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from sqlmemory import (
    ImageBlock,
    InvalidMessageError,
    Message,
    NoOp,
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
    chat,
    every_block_kind,
    fidelity_messages,
    ids,
    image_sizes,
    texts,
    timeless,
)

SID = "roundtrip"


# --- every block kind, every field -----------------------------------------------------------


def test_every_block_kind_round_trips(storage: Any) -> None:
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


def test_every_block_kind_round_trips_through_save(storage: Any) -> None:
    history = every_block_kind()
    storage.save(SID, history)
    loaded = storage.load(SID)
    assert timeless(loaded) == timeless(history)
    assert image_sizes(loaded) == image_sizes(history)


def test_tool_call_argument_order_survives_at_every_depth(storage: Any) -> None:
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


def test_metadata_round_trips_in_order(storage: Any) -> None:
    message = Message.user("hi", id="m", metadata=METADATA)
    storage.append(SID, message)
    (loaded,) = storage.load(SID)
    assert loaded.metadata == message.metadata
    assert list(loaded.metadata) == ["z", "a", "trace"]
    assert list(loaded.metadata["a"]) == ["k2", "k1"]
    assert list(loaded.metadata["a"]["k1"]) == [3, 2, 1]


def test_supplied_recorded_at_is_stored_as_given(storage: Any) -> None:
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


def test_recorded_at_round_trips_at_both_ends_of_the_accepted_years(storage: Any) -> None:
    # Reads take the time as text (four-digit years, six-digit microseconds).
    first = datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=timezone.utc)
    last = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)
    storage.append(
        SID,
        Message.user("first", id="first", recorded_at=first),
        Message.user("last", id="last", recorded_at=last),
        Message.user("on the second", id="whole", recorded_at=last.replace(microsecond=0)),
    )
    assert [m.recorded_at for m in storage.load(SID)] == [first, last, last.replace(microsecond=0)]
    assert [m.recorded_at for m in storage.recent(SID, 2)] == [last, last.replace(microsecond=0)]


# --- text fidelity and ids --------------------------------------------------------------------


def test_texts_round_trip_exactly_everywhere_they_are_stored(storage: Any) -> None:
    history = fidelity_messages()
    storage.append(SID, *history)
    loaded = storage.load(SID)
    assert timeless(loaded) == timeless(history)
    for before, after in zip(history, loaded, strict=True):
        assert after.text_content() == before.text_content()
        assert [b.text for b in after.content if isinstance(b, TextBlock)] == [
            b.text for b in before.content if isinstance(b, TextBlock)
        ]


def test_ten_megabyte_text_round_trips(storage: Any) -> None:
    storage.append(
        SID,
        Message.user(BIG_TEXT, id="big-inline"),
        Message.user([TextBlock(BIG_TEXT[:100]), TextBlock(BIG_TEXT)], id="big-blocks"),
    )
    inline, blocks = storage.load(SID)
    assert inline.content[0].text == BIG_TEXT
    assert blocks.content[1].text == BIG_TEXT
    assert estimate_tokens(inline) == 4 + len(BIG_TEXT.encode()) // 4


def test_message_ids_differing_by_case_or_trailing_space_are_distinct(storage: Any) -> None:
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
    storage: Any, odd_id: str
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


def test_long_ids_of_four_byte_characters_round_trip(storage: Any) -> None:
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


# --- images by URL ----------------------------------------------------------------------------


def test_url_image_keeps_the_size_the_caller_gave(storage: Any) -> None:
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
    storage: Any,
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


# --- copy semantics and immutability ------------------------------------------------------------


def test_mutating_the_returned_list_does_not_change_the_store(storage: Any) -> None:
    history = chat(3)
    storage.append("s", *history)
    loaded = storage.load("s")
    loaded.clear()
    storage.recent("s", 2).append(Message.user("intruder"))
    storage.load("s", policy=NoOp()).pop()
    assert ids(storage.load("s")) == ids(history)


def test_mutating_the_saved_list_does_not_change_the_store(storage: Any) -> None:
    history = chat(3)
    storage.save("s", history)
    history.append(Message.user("late"))
    history[0] = Message.user("swapped")
    assert storage.count("s") == 3
    assert texts(storage.load("s")) == ["m0", "m1", "m2"]


def test_caller_metadata_dict_does_not_reach_the_store(storage: Any) -> None:
    meta: dict[str, Any] = {"n": 1, "tags": ["a"]}
    storage.append("s", Message(role="user", content=[TextBlock("x")], metadata=meta))
    meta["n"] = 2
    meta["tags"].append("b")
    stored = storage.load("s")[0].metadata
    assert stored["n"] == 1
    assert list(stored["tags"]) == ["a"]


def test_loaded_messages_are_values(storage: Any) -> None:
    storage.append("s", Message.user("x"))
    loaded = storage.load("s")[0]
    with pytest.raises((AttributeError, TypeError)):
        loaded.content = (TextBlock("y"),)  # type: ignore[misc]
    assert texts(storage.load("s")) == ["x"]
