"""Hostile input, table-driven, on every storage: the typed error, and an unchanged store.

docs/contract/errors.md (bad input) and docs/contract/messages.md (bounds): values are
checked when built or at the storage boundary, before any SQL, so each row below raises
its documented error and leaves every table exactly as it was; nothing else (no
``RecursionError``, ``OverflowError``, ``AttributeError``, raw driver error) escapes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from sqlmemory import (
    DuplicateMessageError,
    FixedWindow,
    ImageBlock,
    InvalidMessageError,
    InvalidSessionIdError,
    Message,
    OpaqueBlock,
    TokenWindow,
    ToolCall,
)
from tests.reliability.figures import FIGURES
from tests.support.cases import png_header_only, tool_history
from tests.support.storages import Subject

SID = "hostile"
HUGE = 10**20


def nested(depth: int) -> Any:
    """A JSON value of ``depth`` nested arrays around 0."""
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def user(**kwargs: Any) -> Message:
    return Message.user("hi", id="hostile-new", **kwargs)


def image(**kwargs: Any) -> Message:
    return Message.user([ImageBlock(url="https://example.com/a.png", **kwargs)])


UTC = timezone.utc
NAIVE = datetime(2020, 1, 1)  # noqa: DTZ001 - the point of the row
Call = Callable[[Any], object]

REFUSED: list[tuple[str, Call, type[Exception]]] = [
    # JSON bounds: depth (metadata, extras, tool arguments, opaque payloads)
    (
        "metadata 65 deep",
        lambda s: s.append(SID, user(metadata={"a": nested(64)})),
        InvalidMessageError,
    ),
    (
        "metadata 5000 deep",
        lambda s: s.append(SID, user(metadata={"a": nested(5000)})),
        InvalidMessageError,
    ),
    (
        "extras 100 deep",
        lambda s: s.append(SID, user(extras={"a": nested(100)})),
        InvalidMessageError,
    ),
    (
        "tool arguments 300 deep",
        lambda s: s.append(
            SID, Message.assistant(tool_calls=[ToolCall("c", "f", {"a": nested(300)})])
        ),
        InvalidMessageError,
    ),
    (
        "opaque payload 100 000 deep",
        lambda s: s.save(SID, [Message.assistant([OpaqueBlock("openai", {"a": nested(100_000)})])]),
        InvalidMessageError,
    ),
    # JSON bounds: numbers
    ("int 2**63", lambda s: s.append(SID, user(metadata={"n": 2**63})), InvalidMessageError),
    (
        "int -2**63-1",
        lambda s: s.append(SID, user(metadata={"n": -(2**63) - 1})),
        InvalidMessageError,
    ),
    (
        "int of 5000 digits",
        lambda s: s.append(SID, user(metadata={"n": 10**5000})),
        InvalidMessageError,
    ),
    ("NaN", lambda s: s.append(SID, user(metadata={"x": float("nan")})), InvalidMessageError),
    ("-Infinity", lambda s: s.append(SID, user(extras={"x": float("-inf")})), InvalidMessageError),
    # images
    (
        "image width 10**9",
        lambda s: s.append(SID, image(width=10**9, height=10)),
        InvalidMessageError,
    ),
    (
        "image height 65536",
        lambda s: s.append(SID, image(width=10, height=65_536)),
        InvalidMessageError,
    ),
    ("image width 0", lambda s: s.append(SID, image(width=0, height=10)), InvalidMessageError),
    (
        "PNG header of 70000 px",
        lambda s: s.append(
            SID, Message.user([ImageBlock(png_header_only(70_000, 10), "image/png")])
        ),
        InvalidMessageError,
    ),
    # recorded_at
    (
        "recorded_at year 9999",
        lambda s: s.append(SID, user(recorded_at=datetime(9999, 12, 31, 23, tzinfo=UTC))),
        InvalidMessageError,
    ),
    (
        "recorded_at past 9998 once in UTC",
        lambda s: s.append(
            SID, user(recorded_at=datetime(9998, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))))
        ),
        InvalidMessageError,
    ),
    (
        "recorded_at before year 1 in UTC",
        lambda s: s.append(
            SID, user(recorded_at=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))))
        ),
        InvalidMessageError,
    ),
    (
        "recorded_at naive",
        lambda s: s.append(SID, user(recorded_at=NAIVE)),
        InvalidMessageError,
    ),
    # arguments the read methods take
    ("load(policy='x')", lambda s: s.load(SID, policy="x"), TypeError),
    ("load(policy=42)", lambda s: s.load(SID, 42), TypeError),
    ("recent(n=-1)", lambda s: s.recent(SID, -1), ValueError),
    ("recent(n=True)", lambda s: s.recent(SID, True), TypeError),
    ("recent(n=1.5)", lambda s: s.recent(SID, 1.5), TypeError),
    ("evict(keep=-10**20)", lambda s: s.evict(SID, -HUGE), ValueError),
    ("evict(keep='3')", lambda s: s.evict(SID, "3"), TypeError),
    ("TokenWindow(0)", lambda s: s.load(SID, TokenWindow(0)), ValueError),
    # session ids
    ("session id ''", lambda s: s.append("", user()), InvalidSessionIdError),
    ("session id 256 chars", lambda s: s.save("x" * 256, [user()]), InvalidSessionIdError),
    ("session id with NUL", lambda s: s.clear("a\x00b"), InvalidSessionIdError),
    ("session id of bytes", lambda s: s.evict(b"sid", 1), TypeError),
    # messages
    ("lone surrogate", lambda s: s.append(SID, Message.user("\ud800")), InvalidMessageError),
    ("not a message", lambda s: s.append(SID, user(), {"role": "user"}), InvalidMessageError),
    (
        "one id twice, two contents",
        lambda s: s.append(SID, Message.user("a", id="twice"), Message.user("b", id="twice")),
        DuplicateMessageError,
    ),
    (
        "stored id, other content",
        lambda s: s.append(SID, Message.user("not what is stored", id="u1")),
        DuplicateMessageError,
    ),
]
"""``(name, call, error)``: every call raises ``error`` and changes nothing."""

ACCEPTED: list[tuple[str, Call, Callable[[Any], bool]]] = [
    ("recent(10**20)", lambda s: s.recent(SID, HUGE), lambda r: len(r) == len(tool_history())),
    ("evict(10**20)", lambda s: s.evict(SID, HUGE), lambda r: r == 0),
    (
        "FixedWindow(10**20)",
        lambda s: s.load(SID, FixedWindow(HUGE)),
        lambda r: len(r) == len(tool_history()),
    ),
    (
        "TokenWindow(10**20)",
        lambda s: s.load(SID, TokenWindow(HUGE)),
        lambda r: len(r) == len(tool_history()),
    ),
    ("FixedWindow(-5)", lambda s: s.load(SID, FixedWindow(-5)), lambda r: r == []),
    ("recent of an injection", lambda s: s.recent("'; DROP TABLE x;--", HUGE), lambda r: r == []),
]
"""``(name, call, check)``: huge but valid arguments work and change nothing."""


@pytest.fixture
def seeded(subject: Subject) -> Subject:
    subject.storage.append(SID, *tool_history())
    return subject


def test_hostile_input_gets_its_typed_error_and_changes_nothing(seeded: Subject) -> None:
    # One state snapshot for the whole table: each row must leave it as it is.
    before = seeded.state()
    wrong = []
    for name, call, error in REFUSED:
        try:
            call(seeded.storage)
        except error:
            pass
        except BaseException as exc:
            wrong.append(f"{name}: {type(exc).__name__}: {exc}")
        else:
            wrong.append(f"{name}: no error")
        FIGURES["bad inputs"] += 1
    assert wrong == []
    assert seeded.state() == before


def test_huge_but_valid_arguments_work_and_change_nothing(seeded: Subject) -> None:
    before = seeded.state()
    wrong = []
    for name, call, check in ACCEPTED:
        try:
            if not check(call(seeded.storage)):
                wrong.append(f"{name}: wrong result")
        except BaseException as exc:
            wrong.append(f"{name}: {type(exc).__name__}: {exc}")
        FIGURES["bad inputs"] += 1
    assert wrong == []
    assert seeded.state() == before


def test_the_deepest_json_accepted_round_trips(seeded: Subject) -> None:
    deepest = Message.user(
        "deep", id="deepest", metadata={"a": nested(63)}, extras={"n": 2**63 - 1}
    )
    seeded.storage.append(SID, deepest)
    assert seeded.storage.load(SID)[-1].metadata == {"a": nested(63)}
    assert seeded.storage.load(SID)[-1].extras == {"n": 2**63 - 1}


def test_unparseable_argument_text_is_kept_as_text(seeded: Subject) -> None:
    # Providers send arguments as text; text too deep to parse keeps no arguments.
    text = "[" * 100_000 + "]" * 100_000
    call = ToolCall("c9", "f", arguments_text=text)
    assert call.arguments is None
    seeded.storage.append(SID, Message.assistant(tool_calls=[call], id="odd"))
    assert seeded.storage.load(SID)[-1].tool_calls[0].arguments_text == text
