"""Usage on every storage (docs/usage.md): kept exactly, part of the content, totalled.

A message's ``usage`` survives every write and read as it was given; it is part of what
makes two messages the same content. ``storage.usage(...)`` adds up the messages that
carry one, per model and in total, for a session, an owner or everything, between two
``recorded_at`` times; through an owned view only its owner's sessions count. Hypothesis
checks the totals against a Python sum over random histories, for every filter.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import (
    DuplicateMessageError,
    FixedWindow,
    InvalidSessionIdError,
    Message,
    Usage,
    UsageReport,
)
from sqlmemory.types.token_usage import MAX_TOKENS, TOKEN_FIELDS
from tests.support.storages import Subject

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
BIG = Usage("gpt-4o", MAX_TOKENS, MAX_TOKENS, MAX_TOKENS, MAX_TOKENS, MAX_TOKENS)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def reply(i: int, usage: Usage | None, minutes: int | None = None) -> Message:
    when = None if minutes is None else at(minutes)
    return Message.assistant(f"a{i}", id=f"a{i}", usage=usage, recorded_at=when)


def test_usage_is_stored_exactly_and_read_back_by_every_read(storage: Any) -> None:
    usages = [
        Usage("gpt-4o", 1200, 80, 1024, 0, 64),
        None,
        Usage(),
        BIG,
        Usage("claude-sonnet-4-5", input_tokens=12, cache_write_tokens=3000),
    ]
    history = [Message.user("q", id="q", usage=None)] + [
        reply(i, usage) for i, usage in enumerate(usages)
    ]
    storage.append("s", *history)
    loaded = storage.load("s")
    assert [m.usage for m in loaded] == [None, *usages]
    assert [m.usage for m in storage.load("s", FixedWindow(2))] == usages[-2:]
    assert [m.usage for m in storage.recent("s", 3)] == usages[-3:]
    storage.save("s2", loaded)
    assert storage.load("s2") == loaded
    popped = storage.pop("s")
    assert popped is not None and popped.usage == usages[-1]


def test_usage_is_part_of_the_content(storage: Any) -> None:
    storage.append("s", reply(1, Usage("m", 5)))
    storage.append("s", reply(1, Usage("m", 5)))  # the same message: skipped
    assert storage.count("s") == 1
    for other in (Usage("m", 6), Usage(None, 5), None):
        with pytest.raises(DuplicateMessageError):
            storage.append("s", reply(1, other))
    assert storage.load("s")[0].usage == Usage("m", 5)


def test_totals_per_model_and_in_all(storage: Any) -> None:
    storage.append(
        "s",
        Message.user("q"),
        reply(1, Usage("gpt-4o", 100, 10, 50, 0, 5)),
        reply(2, Usage("gpt-4o", 200, 20, 0, 0, 7)),
        reply(3, Usage("claude", 1, 2, 3, 4, 0)),
        reply(4, Usage(None, 1000)),
        reply(5, None),
    )
    report = storage.usage("s")
    assert isinstance(report, UsageReport)
    assert report.messages == 4
    assert report.total == Usage(None, 1301, 32, 53, 4, 12)
    assert dict(report.by_model) == {
        "claude": Usage("claude", 1, 2, 3, 4, 0),
        "gpt-4o": Usage("gpt-4o", 300, 30, 50, 0, 12),
    }
    assert list(report.by_model) == ["claude", "gpt-4o"]
    assert storage.usage() == report
    assert storage.usage("absent") == UsageReport()
    assert storage.usage("absent").total == Usage()


def test_totals_between_two_times(storage: Any) -> None:
    storage.append("s", *[reply(i, Usage("m", 10**i), minutes=i) for i in range(5)])
    assert storage.usage("s", since=at(1)).total.input_tokens == 11110
    assert storage.usage("s", until=at(3)).total.input_tokens == 111
    assert storage.usage("s", since=at(1), until=at(3)).messages == 2
    assert storage.usage("s", since=at(3), until=at(1)) == UsageReport()
    # The bounds in another zone mean the same instants.
    east = timezone(timedelta(hours=5))
    assert storage.usage("s", since=at(4).astimezone(east)).total.input_tokens == 10000


def test_totals_of_an_owner_and_through_owned_views(storage: Any) -> None:
    storage.owned_by("alice").append("a1", reply(1, Usage("m", 1)))
    storage.owned_by("alice").append("a2", reply(2, Usage("m", 2)))
    storage.owned_by("bob").append("b1", reply(3, Usage("m", 4)))
    storage.append("nobody", reply(4, Usage("m", 8)))
    assert storage.usage(owner="alice").total.input_tokens == 3
    assert storage.usage(owner="bob").total.input_tokens == 4
    assert storage.usage().total.input_tokens == 15
    assert storage.usage("a1", owner="bob") == UsageReport()
    alice = storage.owned_by("alice")
    assert alice.usage().total.input_tokens == 3
    assert alice.usage(owner="alice").total.input_tokens == 3
    assert alice.usage("a2").total.input_tokens == 2
    assert alice.usage(owner="bob") == UsageReport()
    assert alice.usage("b1") == UsageReport()
    assert alice.usage("nobody") == UsageReport()


def test_sums_past_64_bits_are_exact(storage: Any) -> None:
    storage.append("s", *[reply(i, BIG) for i in range(3)])
    storage.owned_by("o").append("t", reply(9, BIG))
    report = storage.usage()
    assert report.messages == 4
    for name in TOKEN_FIELDS:
        assert getattr(report.total, name) == 4 * MAX_TOKENS
        assert getattr(report.by_model["gpt-4o"], name) == 4 * MAX_TOKENS
    assert storage.usage(owner="o").total.input_tokens == MAX_TOKENS


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"session_id": ""}, InvalidSessionIdError),
        ({"session_id": 5}, TypeError),
        ({"owner": ""}, InvalidSessionIdError),
        ({"owner": 5}, TypeError),
        ({"since": "2026-01-01"}, TypeError),
        ({"until": datetime(2026, 1, 1)}, ValueError),  # noqa: DTZ001 - naive on purpose
        ({"since": timedelta(days=1)}, TypeError),
    ],
)
def test_bad_arguments_are_refused(storage: Any, arguments: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        storage.usage(**arguments)


def test_compaction_keeps_the_usage_of_the_kept_messages(storage: Any) -> None:
    history = [reply(i, Usage("m", 1 << i)) for i in range(6)]
    storage.append("s", *history)

    def summarize(older: list[Message]) -> Message:
        return Message.user("summary", usage=Usage("summarizer", 1000))

    replaced = storage.compact("s", summarize, keep=FixedWindow(2))
    kept = storage.load("s")
    assert replaced == 4 and [m.usage for m in kept[1:]] == [m.usage for m in history[-2:]]
    report = storage.usage("s")
    assert report.messages == 3
    assert report.by_model["m"].input_tokens == (1 << 4) + (1 << 5)
    assert report.by_model["summarizer"].input_tokens == 1000


# --- totals against a Python sum, over random histories --------------------------------

OWNERS = [None, "alice", "bob"]
SESSIONS = ["s0", "s1", "s2", "s3"]
usages = st.none() | st.builds(
    Usage,
    st.sampled_from([None, "gpt-4o", "claude", "gemini"]),
    *[st.integers(0, 10**6) | st.sampled_from([0, MAX_TOKENS])] * 5,
)
histories = st.lists(
    st.tuples(st.sampled_from(SESSIONS), usages, st.integers(0, 20)), min_size=0, max_size=25
)
bounds = st.none() | st.integers(-1, 21).map(at)


def expected(
    stored: list[tuple[str, str | None, Message]],
    session_id: str | None,
    owner: str | None,
    since: datetime | None,
    until: datetime | None,
) -> UsageReport:
    groups: dict[str | None, list[int]] = {}
    for sid, sid_owner, message in stored:
        usage, when = message.usage, message.recorded_at
        if usage is None or when is None:
            continue
        if (session_id is not None and sid != session_id) or (
            owner is not None and sid_owner != owner
        ):
            continue
        if (since is not None and when < since) or (until is not None and when >= until):
            continue
        sums = groups.setdefault(usage.model, [0] * 6)
        sums[0] += 1
        for i, name in enumerate(TOKEN_FIELDS, 1):
            sums[i] += getattr(usage, name)
    total = [sum(s[i] for s in groups.values()) for i in range(6)]
    return {  # type: ignore[return-value]
        "messages": total[0],
        "total": tuple(total[1:]),
        "by_model": {m: tuple(s[1:]) for m, s in groups.items() if m is not None},
    }


def shape(report: UsageReport) -> dict[str, Any]:
    def counts(usage: Usage) -> tuple[int, ...]:
        return tuple(getattr(usage, name) for name in TOKEN_FIELDS)

    assert report.total.model is None
    assert all(usage.model == model for model, usage in report.by_model.items())
    return {
        "messages": report.messages,
        "total": counts(report.total),
        "by_model": {m: counts(u) for m, u in report.by_model.items()},
    }


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=histories,
    filters=st.lists(
        st.tuples(st.sampled_from([None, *SESSIONS]), st.sampled_from(OWNERS), bounds, bounds),
        min_size=1,
        max_size=6,
    ),
    scope=st.sampled_from(OWNERS),
)
def test_totals_match_a_python_sum_for_every_filter(
    subject: Subject, history: list[Any], filters: list[Any], scope: str | None
) -> None:
    storage = subject.storage
    for sid in storage.sessions():
        storage.clear(sid)
    owner_of = {sid: OWNERS[i % len(OWNERS)] for i, sid in enumerate(SESSIONS)}
    stored = []
    for i, (sid, usage, minutes) in enumerate(history):
        owner = owner_of[sid]
        writer = storage if owner is None else storage.owned_by(owner)
        message = reply(i, usage, minutes)
        writer.append(sid, message)
        stored.append((sid, owner, message))
    view = storage if scope is None else storage.owned_by(scope)
    for session_id, owner, since, until in filters:
        if scope is not None and owner not in (None, scope):
            assert view.usage(session_id, owner=owner, since=since, until=until) == UsageReport()
            continue
        wanted = scope if owner is None else owner
        want = expected(stored, session_id, wanted, since, until)
        got = view.usage(session_id, owner=owner, since=since, until=until)
        assert shape(got) == want
