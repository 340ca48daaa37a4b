"""Session ids, ``sessions(prefix)`` and ``session(id)`` views on every storage.

docs/contract/storage.md (the storage API, session views) and docs/contract/errors.md
(bad input): a session id is a ``str`` of 1 to 255 characters without leading or
trailing whitespace or control characters; another type raises ``TypeError``, a bad
``str`` ``InvalidSessionIdError``, from every method, before anything is written. An id
that looks like SQL is a plain id. ``sessions`` lists ids sorted by code point, filtered
by a literal, case-sensitive prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sqlmemory import FixedWindow, InvalidSessionIdError, Message
from tests.support.cases import (
    BAD_SESSION_IDS,
    GOOD_SESSION_IDS,
    chat,
    ids,
    texts,
    timeless,
    tool_history,
)
from tests.support.storages import Subject

SID = "api"


# --- session ids ----------------------------------------------------------------------------


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
        "pop": lambda: storage.pop(session_id),
        "count": lambda: storage.count(session_id),
        "session": lambda: storage.session(session_id),
    }


@pytest.mark.parametrize(
    ("session_id", "error"), BAD_SESSION_IDS, ids=[repr(v)[:30] for v, _ in BAD_SESSION_IDS]
)
def test_a_bad_session_id_is_refused_by_every_method(
    subject: Subject, session_id: object, error: type[Exception]
) -> None:
    storage = subject.storage
    storage.append(SID, *tool_history())
    before = subject.state()
    for name, call in every_method(storage, session_id).items():
        with pytest.raises(error):
            call()
        assert subject.state() == before, name


@pytest.mark.parametrize("session_id", GOOD_SESSION_IDS, ids=[v[:20] for v in GOOD_SESSION_IDS])
def test_hostile_looking_session_ids_are_plain_ids(subject: Subject, session_id: str) -> None:
    storage = subject.storage
    history = tool_history()
    storage.append(session_id, *history)
    storage.append("bystander", Message.user("untouched", id="b"))
    assert timeless(storage.load(session_id)) == timeless(history)
    assert storage.sessions() == sorted([session_id, "bystander"])
    assert storage.sessions(session_id) == [session_id]
    assert storage.count(session_id) == 9
    assert storage.clear(session_id) == 9
    subject.assert_counts(sessions=1, messages=1, blocks=0, blobs=0)


def test_session_ids_differing_by_case_or_normalisation_are_distinct(storage: Any) -> None:
    names = ["chat", "Chat", "CHAT", "ch\u00e4t", "cha\u0308t"]  # composed and decomposed ä
    for sid in names:
        storage.append(sid, Message.user(f"in {sid}", id="same-id"))
    assert storage.sessions() == sorted(names)
    for sid in names:
        assert [m.text_content() for m in storage.load(sid)] == [f"in {sid}"]
    assert storage.clear("Chat") == 1
    assert storage.count("chat") == 1
    assert storage.count("CHAT") == 1


# --- sessions(prefix) -----------------------------------------------------------------------


def test_sessions_and_prefix(storage: Any) -> None:
    for sid in ["user-1", "user-2", "bot-1", "user_x", "userA"]:
        storage.append(sid, Message.user("x"))
    assert sorted(storage.sessions()) == ["bot-1", "user-1", "user-2", "userA", "user_x"]
    assert sorted(storage.sessions(prefix="user-")) == ["user-1", "user-2"]
    assert sorted(storage.sessions("user")) == ["user-1", "user-2", "userA", "user_x"]
    assert list(storage.sessions(prefix="nobody")) == []


@pytest.mark.parametrize(("prefix", "expected"), [("a_", ["a_1"]), ("a%", ["a%1"])])
def test_sessions_prefix_is_literal(storage: Any, prefix: str, expected: list[str]) -> None:
    for sid in ["a_1", "ab1", "a%1", "abc"]:
        storage.append(sid, Message.user("x"))
    assert sorted(storage.sessions(prefix)) == expected


def test_sessions_lists_ids_sorted_and_filters_by_a_literal_prefix(storage: Any) -> None:
    names = ["a%b", "a%c", "aXb", "a_b", "abb", "a\\b", "a/b", "ab", "b", "é", "x%y"]
    for name in names:
        storage.append(name, Message.user(name))
    assert storage.sessions() == sorted(names)
    assert storage.sessions(None) == sorted(names)
    assert storage.sessions("") == sorted(names)
    assert storage.sessions("a%") == ["a%b", "a%c"]
    assert storage.sessions("a_") == ["a_b"]
    assert storage.sessions("a\\") == ["a\\b"]
    assert storage.sessions("a/") == ["a/b"]
    assert storage.sessions("ab") == ["ab", "abb"]
    assert storage.sessions("zzz") == []
    assert storage.sessions("a%bc") == []


def test_sessions_prefix_is_case_sensitive(storage: Any) -> None:
    for name in ("abc", "ABC", "Abc", "aBc", "éa", "Éa"):
        storage.append(name, Message.user(name))
    assert storage.sessions("a") == ["aBc", "abc"]
    assert storage.sessions("A") == ["ABC", "Abc"]
    assert storage.sessions("ab") == ["abc"]
    assert storage.sessions("é") == ["éa"]


def test_session_prefix_is_case_sensitive_on_every_backend(storage: Any) -> None:
    for sid in ("abc-1", "ABC-2", "Abc-3", "abd"):
        storage.append(sid, Message.user("hi"))
    assert storage.sessions("abc") == ["abc-1"]
    assert storage.sessions("ABC") == ["ABC-2"]
    assert storage.sessions("a") == ["abc-1", "abd"]
    assert storage.sessions() == ["ABC-2", "Abc-3", "abc-1", "abd"]


@pytest.mark.parametrize("stored", [False, True], ids=["no-sessions", "with-sessions"])
@pytest.mark.parametrize("prefix", [1, b"a"], ids=repr)
def test_sessions_refuses_a_prefix_that_is_not_a_str(
    storage: Any, prefix: object, stored: bool
) -> None:
    # InMemoryStorage used to answer [] when it held no session (and raised otherwise).
    if stored:
        storage.append("a1", Message.user("x"))
    with pytest.raises(TypeError):
        storage.sessions(prefix)


# --- session(id) views ----------------------------------------------------------------------


def test_session_view_has_the_same_methods(storage: Any) -> None:
    view = storage.session("s")
    history = chat(5)
    view.append(*history)
    assert ids(view.load()) == ids(history)
    assert ids(storage.load("s")) == ids(history)
    assert ids(view.load(policy=FixedWindow(2))) == ids(history[-2:])
    assert view.count() == 5
    assert ids(view.recent(2)) == ids(history[-2:])
    assert view.evict(3) == 2
    assert ids(storage.load("s")) == ids(history[-3:])
    view.save(history[:1])
    assert ids(view.load()) == ids(history[:1])
    assert view.clear() == 1
    assert storage.count("s") == 0
    view.append()
    assert view.count() == 0


def test_session_views_are_isolated(storage: Any) -> None:
    a, b = storage.session("a"), storage.session("b")
    a.append(Message.user("for a"))
    assert b.load() == []
    assert texts(a.load()) == ["for a"]


def test_session_view_binds_every_method_to_one_session(storage: Any) -> None:
    view = storage.session(SID)
    assert view.session_id == SID
    history = tool_history()
    view.append(*history)
    storage.append("other", Message.user("elsewhere"))
    assert timeless(view.load()) == timeless(history)
    assert ids(view.load(FixedWindow(1))) == ["a4"]
    assert ids(view.recent(3)) == ["a3", "t3", "a4"]
    assert view.count() == 9
    assert view.evict(3) == 6
    view.save([*view.load(), Message.user("saved", id="saved"), Message.user("x", id="x")])
    newest = storage.load(SID)[-1]
    assert view.pop() == newest
    assert ids([newest]) == ["x"]
    assert ids(view.load()) == ["a3", "t3", "a4", "saved"]
    assert view.clear() == 4
    assert view.count() == 0
    assert storage.count("other") == 1
    with pytest.raises(InvalidSessionIdError):
        storage.session(" padded")
