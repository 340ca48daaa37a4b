"""InMemoryStorage used from many threads at once: nothing lost, every order kept."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from sqlmemory import InMemoryStorage, Message
from tests.support.cases import texts

# --- threads ----------------------------------------------------------------------------------


@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads as often as the interpreter allows, so races show up."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@pytest.mark.usefixtures("frequent_thread_switches")
def test_concurrent_appends_lose_nothing_and_keep_each_threads_order() -> None:
    store = InMemoryStorage()
    threads_n, per_thread = 8, 200
    barrier = threading.Barrier(threads_n)
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            barrier.wait()
            for k in range(per_thread):
                if k % 10 == 9:
                    store.append("s", *[Message.user(f"{t}:{k}:{j}") for j in range(3)])
                else:
                    store.append("s", Message.user(f"{t}:{k}"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()

    assert errors == []
    loaded = store.load("s")
    per_batch = per_thread // 10
    assert len(loaded) == threads_n * (per_thread - per_batch + 3 * per_batch)
    assert len({m.id for m in loaded}) == len(loaded)
    for t in range(threads_n):
        mine = [m.text_content() for m in loaded if m.text_content().split(":")[0] == str(t)]
        expected = [
            f"{t}:{k}:{j}" if k % 10 == 9 else f"{t}:{k}"
            for k in range(per_thread)
            for j in (range(3) if k % 10 == 9 else range(1))
        ]
        assert mine == expected
    # a batch is atomic: its three messages are adjacent
    positions = {m.text_content(): i for i, m in enumerate(loaded)}
    for t in range(threads_n):
        for k in range(9, per_thread, 10):
            first = positions[f"{t}:{k}:0"]
            assert [positions[f"{t}:{k}:{j}"] for j in range(3)] == [first, first + 1, first + 2]
    stamps = [m.recorded_at for m in loaded]
    assert stamps == sorted(stamps)  # type: ignore[type-var]


@pytest.mark.usefixtures("frequent_thread_switches")
def test_concurrent_appends_to_different_sessions() -> None:
    store = InMemoryStorage()

    def worker(t: int) -> None:
        for k in range(100):
            store.append(f"s{t}", Message.user(str(k)))

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(store.sessions()) == sorted(f"s{t}" for t in range(8))
    for t in range(8):
        assert texts(store.load(f"s{t}")) == [str(k) for k in range(100)]
