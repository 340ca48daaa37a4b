"""``MessageCache``: what it hands out, and the memory it holds (a stateful model)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from sqlmemory.storage.sql.message_cache import MessageCache

MAX_BYTES = 1000
keys = st.integers(0, 30)
MAX_SIZE = 600
sizes = st.integers(1, MAX_SIZE)


class CacheModel(RuleBasedStateMachine):
    """The cache against a plain record of what was put: a value handed out is the one
    last put under its key; the newest put is always kept (if it fits a generation);
    what is held stays within the bound."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: MessageCache[Any] = MessageCache(max_bytes=MAX_BYTES)
        self.last: dict[int, tuple[object, int]] = {}
        self.newest: int | None = None

    @rule(key=keys, size=sizes)
    def put(self, key: int, size: int) -> None:
        value = object()
        self.cache.put(key, value, size)
        self.last[key] = (value, size)
        self.newest = key

    @rule(key=keys)
    def get(self, key: int) -> None:
        found = self.cache.get(key)
        if found is not None:
            assert found is self.last[key][0]

    @rule()
    def clear(self) -> None:
        self.cache.clear()
        assert len(self.cache) == 0
        assert self.cache.get(0) is None
        self.newest = None

    @invariant()
    def the_newest_is_kept(self) -> None:
        if self.newest is not None and self.last[self.newest][1] <= MAX_BYTES // 2:
            assert self.cache.get(self.newest) is self.last[self.newest][0]

    @invariant()
    def within_the_bound(self) -> None:
        # Each generation is filled to half the bound, or holds one entry larger than that.
        generation = max(MAX_BYTES // 2, MAX_SIZE)
        for held in (self.cache._new, self.cache._old):
            assert sum(size for _, size in held.values()) <= generation
        assert self.cache._new_bytes == sum(size for _, size in self.cache._new.values())
        assert not self.cache._new.keys() & self.cache._old.keys()


TestCacheModel = CacheModel.TestCase


def test_a_bound_of_zero_keeps_nothing() -> None:
    cache: MessageCache[str] = MessageCache(max_bytes=0)
    cache.put("k", "v", 10)
    assert cache.get("k") is None
    assert len(cache) == 0


def test_a_message_found_in_the_old_generation_moves_to_the_new() -> None:
    cache: MessageCache[str] = MessageCache(max_bytes=100)
    cache.put("a", "A", 40)
    cache.put("b", "B", 40)  # the new generation is full: "a" is old now
    assert cache.get("a") == "A"  # ... and new again
    cache.put("c", "C", 40)  # "b" and "a" go old, one by one
    cache.put("d", "D", 40)
    assert cache.get("b") is None  # gone with the generation before
    assert [cache.get(k) for k in "cd"] == ["C", "D"]
