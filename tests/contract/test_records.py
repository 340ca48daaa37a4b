"""Session records on every storage: ``session_info``, ``update_session``, ``list_sessions``
and ``prune`` (docs/contract/storage.md, session records).

A record exists while its session does (it holds messages, or ``update_session`` made
it); every write that changes the session moves ``updated_at`` to the wall clock (never
backwards, never to a message's own ``recorded_at``) and keeps ``message_count`` equal to
``count``, in the same transaction. Pages come newest first and a walk through them with
their cursors meets every session once.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import FixedWindow, Message, SessionInfo, SessionPage
from tests.support.cases import IMPORTED_AT, chat, tool_history
from tests.support.storages import Subject

SID = "rec"
FUTURE = datetime(2999, 1, 1, tzinfo=timezone.utc)


def now() -> datetime:
    return datetime.now(timezone.utc)


def info(storage: Any, sid: str = SID) -> SessionInfo:
    found = storage.session_info(sid)
    assert found is not None
    return found


def walk(storage: Any, prefix: str | None = None, limit: int = 2) -> list[SessionInfo]:
    """Every record, through pages of ``limit`` and their cursors."""
    items: list[SessionInfo] = []
    cursor = None
    while True:
        page = storage.list_sessions(prefix, limit=limit, cursor=cursor)
        assert isinstance(page, SessionPage)
        assert len(page.items) <= limit
        items += page.items
        if page.next_cursor is None:
            return items
        assert len(page.items) == limit
        cursor = page.next_cursor


# --- session_info -----------------------------------------------------------------------


def test_a_session_gets_its_record_with_its_first_write(storage: Any) -> None:
    assert storage.session_info(SID) is None
    before = now()
    storage.append(SID, *chat(3))
    record = info(storage)
    assert record.session_id == SID
    assert record.message_count == 3
    assert record.title is None and record.metadata == {}
    assert before <= record.created_at <= record.updated_at <= now()
    for moment in (record.created_at, record.updated_at):
        assert moment.tzinfo is not None and moment.utcoffset() == timedelta(0)
    assert storage.session(SID).session_info() == record


def test_updated_at_is_the_wall_clock_of_the_last_change(storage: Any) -> None:
    storage.append(SID, *tool_history())
    first = info(storage)

    # A caller's recorded_at, far in the past or the future, does not move the clock.
    before = now()
    storage.append(SID, Message.user("old", id="old", recorded_at=IMPORTED_AT))
    storage.append(SID, Message.user("late", id="late", recorded_at=FUTURE))
    moved = info(storage)
    assert before <= moved.updated_at <= now()
    assert moved.updated_at >= first.updated_at
    assert moved.created_at == first.created_at

    # Writes that change nothing leave it; reads too.
    history = storage.load(SID)
    storage.append(SID, Message.user("old", id="old", recorded_at=IMPORTED_AT))
    storage.save(SID, history)
    assert storage.evict(SID, 100) == 0
    storage.recent(SID, 2)
    storage.count(SID)
    storage.sessions()
    storage.list_sessions()
    assert info(storage) == moved

    for change in (
        lambda: storage.save(SID, history[:-1]),
        lambda: storage.save(SID, [*history, Message.user("more", id="more")]),
        lambda: storage.evict(SID, 3),
        lambda: storage.pop(SID),
        lambda: storage.update_session(SID, title="renamed"),
        lambda: storage.append(SID, Message.user("again", id="again")),
    ):
        previous = info(storage)
        before = now()
        change()
        current = info(storage)
        assert before <= current.updated_at <= now()
        assert current.updated_at >= previous.updated_at
        assert current.created_at == first.created_at
        assert current.message_count == storage.count(SID)


def test_message_count_follows_every_write(storage: Any) -> None:
    history = tool_history()
    steps = [
        lambda: storage.append(SID, *history[:4]),
        lambda: storage.append(SID, *history),  # a retry of the first four, plus five
        lambda: storage.save(SID, history[:2]),
        lambda: storage.save(SID, [*history[:2], *chat(5)]),
        lambda: storage.evict(SID, 4),
        lambda: storage.pop(SID),
        lambda: storage.append(SID, *chat(3, "x")),
    ]
    for step in steps:
        step()
        assert info(storage).message_count == storage.count(SID)


def test_compact_keeps_the_record(storage: Any) -> None:
    storage.append(SID, *chat(10))
    before = info(storage)
    moment = now()

    def summarize(older: list[Message]) -> Message:
        return Message.user(f"summary of {len(older)}")

    assert storage.compact(SID, summarize, keep=FixedWindow(1)) > 0
    record = info(storage)
    assert record.message_count == storage.count(SID) < 10
    assert moment <= record.updated_at <= now()
    assert record.created_at == before.created_at


def clear_by(storage: Any, how: str) -> None:
    if how == "clear":
        storage.clear(SID)
    elif how == "save":
        storage.save(SID, [])
    elif how == "evict":
        storage.evict(SID, 0)
    elif how == "pop":
        while storage.pop(SID) is not None:
            pass
    else:
        assert storage.prune(FUTURE) >= 1


@pytest.mark.parametrize("how", ["clear", "save", "evict", "pop", "prune"])
def test_a_cleared_session_loses_its_record(storage: Any, how: str) -> None:
    storage.append(SID, *chat(4))
    storage.update_session(SID, title="going", metadata={"a": 1})
    storage.append("other", *chat(1))
    clear_by(storage, how)
    assert storage.session_info(SID) is None
    assert SID not in storage.sessions()
    assert [i.session_id for i in walk(storage)] == ([] if how == "prune" else ["other"])
    # A new session under the same id starts afresh.
    storage.append(SID, *chat(1))
    assert info(storage).title is None and info(storage).message_count == 1


# --- update_session ---------------------------------------------------------------------


def test_update_session_sets_title_and_metadata_independently(storage: Any) -> None:
    storage.append(SID, *chat(2))
    storage.update_session(SID, title="Trip to Lyon")
    assert (info(storage).title, info(storage).metadata) == ("Trip to Lyon", {})
    storage.update_session(SID, metadata={"z": 1, "a": [True, None, 1.5], "user": "ü😀"})
    record = info(storage)
    assert record.title == "Trip to Lyon"
    assert record.metadata == {"z": 1, "a": [True, None, 1.5], "user": "ü😀"}
    assert list(record.metadata) == ["z", "a", "user"]  # key order kept
    storage.update_session(SID, title=None)
    assert info(storage).title is None and info(storage).metadata["z"] == 1
    storage.update_session(SID, metadata=None)
    assert info(storage).metadata == {}
    storage.session(SID).update_session(title="via the view")
    assert info(storage).title == "via the view"
    assert info(storage).message_count == 2
    assert len(storage.load(SID)) == 2


def test_update_session_creates_the_record_of_a_new_session(storage: Any) -> None:
    before = now()
    storage.update_session("fresh", title="")
    record = info(storage, "fresh")
    assert record.title == "" and record.message_count == 0
    assert before <= record.created_at <= record.updated_at <= now()
    assert storage.sessions() == ["fresh"]
    assert storage.load("fresh") == [] and storage.count("fresh") == 0
    storage.append("fresh", *chat(2))
    assert info(storage, "fresh").title == "" and info(storage, "fresh").message_count == 2
    assert info(storage, "fresh").created_at == record.created_at


BAD_UPDATES: list[tuple[dict[str, Any], type[Exception]]] = [
    ({"title": 3}, TypeError),
    ({"title": b"bytes"}, TypeError),
    ({"title": "lone \ud800"}, ValueError),
    ({"metadata": [1, 2]}, TypeError),
    ({"metadata": "text"}, TypeError),
    ({"metadata": {"x": float("nan")}}, ValueError),
    ({"metadata": {1: "int key"}}, ValueError),
    ({"metadata": {"x": {1, 2}}}, ValueError),
    ({"title": "ok", "metadata": {"x": object()}}, ValueError),
]


@pytest.mark.parametrize(
    ("fields", "error"), BAD_UPDATES, ids=[repr(f)[:40] for f, _ in BAD_UPDATES]
)
def test_bad_titles_and_metadata_are_refused_before_anything_is_written(
    subject: Subject, fields: dict[str, Any], error: type[Exception]
) -> None:
    storage = subject.storage
    storage.append(SID, *chat(2))
    storage.update_session(SID, title="kept", metadata={"kept": True})
    before = subject.state()
    with pytest.raises(error):
        storage.update_session(SID, **fields)
    with pytest.raises(error):
        storage.update_session("new-session", **fields)
    assert subject.state() == before


# --- list_sessions ----------------------------------------------------------------------


def test_pages_come_newest_first_and_a_walk_meets_every_session_once(storage: Any) -> None:
    for i in range(7):
        storage.append(f"s{i}", *chat(i + 1))
    storage.update_session("s2", title="touched last")
    expected = ["s2", "s6", "s5", "s4", "s3", "s1", "s0"]
    for limit in (1, 2, 3, 7, 50):
        found = walk(storage, limit=limit)
        assert [i.session_id for i in found] == expected, limit
        assert [i.message_count for i in found] == [3, 7, 6, 5, 4, 2, 1]
        assert found == sorted(found, key=lambda i: i.updated_at, reverse=True)
        assert found[0] == storage.session_info("s2")
    # A full last page says it is the last, as a short one does.
    assert storage.list_sessions(limit=7).next_cursor is None
    assert storage.list_sessions(limit=6).next_cursor is not None
    assert storage.list_sessions().items == walk(storage)


def test_a_page_after_a_cursor_does_not_move_when_newer_sessions_arrive(storage: Any) -> None:
    for i in range(4):
        storage.append(f"s{i}", *chat(1))
    first = storage.list_sessions(limit=2)
    storage.append("newcomer", *chat(1))
    second = storage.list_sessions(limit=2, cursor=first.next_cursor)
    assert [i.session_id for i in first.items + second.items] == ["s3", "s2", "s1", "s0"]
    assert second.next_cursor is None


def test_list_sessions_filters_by_a_literal_case_sensitive_prefix(storage: Any) -> None:
    ids = ["user:1/a", "user:1/b", "user:10/a", "User:1/c", "user%1/d", "user_1/e", "other"]
    for sid in ids:
        storage.append(sid, *chat(1))
    assert {i.session_id for i in walk(storage, "user:1/")} == {"user:1/a", "user:1/b"}
    assert {i.session_id for i in walk(storage, "user:1", limit=1)} == {
        "user:1/a",
        "user:1/b",
        "user:10/a",
    }
    assert [i.session_id for i in walk(storage, "user%")] == ["user%1/d"]
    assert [i.session_id for i in walk(storage, "user_")] == ["user_1/e"]
    assert walk(storage, "nobody") == []
    assert len(walk(storage, "")) == len(ids)


BAD_PAGES: list[tuple[dict[str, Any], type[Exception]]] = [
    ({"limit": 0}, ValueError),
    ({"limit": -1}, ValueError),
    ({"limit": 10**6}, ValueError),
    ({"limit": True}, TypeError),
    ({"limit": 2.0}, TypeError),
    ({"cursor": 5}, TypeError),
    ({"cursor": "not a cursor"}, ValueError),
    ({"cursor": ""}, ValueError),
    ({"cursor": "W10"}, ValueError),  # "[]"
    ({"prefix": 1}, TypeError),
]


@pytest.mark.parametrize(("options", "error"), BAD_PAGES, ids=[repr(o) for o, _ in BAD_PAGES])
def test_bad_page_arguments_are_refused(
    storage: Any, options: dict[str, Any], error: type[Exception]
) -> None:
    storage.append(SID, *chat(1))
    options = dict(options)
    prefix = options.pop("prefix", None)
    with pytest.raises(error):
        storage.list_sessions(prefix, **options)


# --- prune ------------------------------------------------------------------------------


def test_prune_deletes_the_sessions_not_updated_since(subject: Subject) -> None:
    storage = subject.storage
    for sid in ("old-1", "old-2"):
        storage.append(sid, *tool_history())
    cutoff = now()
    storage.append("new", *chat(2))
    storage.update_session("titled", title="kept")
    assert storage.prune(cutoff) == 2
    assert storage.sessions() == ["new", "titled"]
    assert storage.load("old-1") == []
    assert storage.prune(timedelta(days=1)) == 0
    assert storage.prune(cutoff) == 0
    assert storage.sessions() == ["new", "titled"]
    assert storage.prune(timedelta(0)) == 2
    subject.assert_counts(sessions=0, messages=0, blocks=0, blobs=0)


def test_prune_with_an_age_keeps_what_was_written_within_it(storage: Any) -> None:
    storage.append(SID, *chat(2))
    assert storage.prune(timedelta(hours=1)) == 0
    assert storage.prune(timedelta.max) == 0
    assert storage.sessions() == [SID]


@pytest.mark.parametrize(
    ("older_than", "error"),
    [
        (datetime(2020, 1, 1), ValueError),  # noqa: DTZ001 - naive on purpose
        (timedelta(seconds=-1), ValueError),
        (30, TypeError),
        ("30d", TypeError),
        (None, TypeError),
    ],
)
def test_bad_prune_arguments_are_refused_before_anything_is_deleted(
    subject: Subject, older_than: object, error: type[Exception]
) -> None:
    subject.storage.append(SID, *chat(2))
    before = subject.state()
    with pytest.raises(error):
        subject.storage.prune(older_than)
    assert subject.state() == before


# --- the invariant, over random writes --------------------------------------------------

WRITES = st.lists(
    st.tuples(
        st.sampled_from(["append", "save", "evict", "pop", "clear", "title"]),
        st.sampled_from(["a", "b"]),
        st.integers(0, 4),
    ),
    max_size=8,
)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(writes=WRITES)
def test_records_match_the_sessions_after_any_writes(storage: Any, writes: list[Any]) -> None:
    for sid in storage.sessions():
        storage.clear(sid)
    for step, (kind, sid, n) in enumerate(writes):
        if kind == "append":
            storage.append(sid, *chat(n, f"p{step}-"))
        elif kind == "save":
            storage.save(sid, storage.load(sid)[:n] + chat(n % 2, f"q{step}-"))
        elif kind == "evict":
            storage.evict(sid, n)
        elif kind == "pop":
            storage.pop(sid)
        elif kind == "clear":
            storage.clear(sid)
        else:
            storage.update_session(sid, title=f"t{n}")
    listed = walk(storage, limit=1)
    assert sorted(i.session_id for i in listed) == storage.sessions()
    for record in listed:
        assert record == storage.session_info(record.session_id)
        assert record.message_count == storage.count(record.session_id)
    assert [i.updated_at for i in listed] == sorted((i.updated_at for i in listed), reverse=True)
