"""ShortTermMemory over InMemoryStorage: one session and a policy (docs/contract/storage.md).

The storage methods themselves, on every storage: tests/contract/.
"""

from __future__ import annotations

import pytest

from sqlmemory import (
    FixedWindow,
    InMemoryStorage,
    InvalidSessionIdError,
    Message,
    ShortTermMemory,
)
from tests.support.cases import chat, ids


@pytest.fixture
def store() -> InMemoryStorage:
    return InMemoryStorage()


def test_short_term_memory_default_policy_is_noop(store: InMemoryStorage) -> None:
    memory = ShortTermMemory(store, "s")
    history = chat(4)
    memory.append(*history[:2])
    memory.append(history[2], history[3])
    assert ids(memory.messages()) == ids(history)
    assert ids(store.load("s")) == ids(history)


def test_short_term_memory_applies_its_policy_at_read_time(store: InMemoryStorage) -> None:
    memory = ShortTermMemory(store, "s", policy=FixedWindow(2))
    history = chat(5)
    memory.append(*history)
    assert ids(memory.messages()) == ids(history[-2:])
    assert store.count("s") == 5
    assert ids(ShortTermMemory(store, "s", FixedWindow(3)).messages()) == ids(history[-3:])


def test_short_term_memory_sessions_are_isolated(store: InMemoryStorage) -> None:
    ShortTermMemory(store, "a").append(Message.user("a"))
    assert ShortTermMemory(store, "b").messages() == []


def test_short_term_memory_rejects_bad_session_id(store: InMemoryStorage) -> None:
    with pytest.raises(InvalidSessionIdError):
        ShortTermMemory(store, " bad").append(Message.user("x"))


def test_short_term_memory_with_a_window_that_keeps_the_system_prompt(
    store: InMemoryStorage,
) -> None:
    memory = ShortTermMemory(store, "s", FixedWindow(2, keep_system=True, start_on="user"))
    memory.append(Message.system("Answer in French.", id="sys"))
    for turn in range(5):
        memory.append(Message.user(f"q{turn}", id=f"q{turn}"))
        memory.append(Message.assistant(f"a{turn}", id=f"a{turn}"))
    assert ids(memory.messages()) == ["sys", "q4", "a4"]
    memory.append(Message.user("q5", id="q5"))
    # the newest 2 groups are [a4] [q5]: the window starts at the user message
    assert ids(memory.messages()) == ["sys", "q5"]


@pytest.mark.parametrize("policy", ["FixedWindow(2)", 2, FixedWindow])
def test_short_term_memory_refuses_what_is_not_a_policy(
    store: InMemoryStorage, policy: object
) -> None:
    with pytest.raises(TypeError, match="Policy"):
        ShortTermMemory(store, "s", policy)  # type: ignore[arg-type]
