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
