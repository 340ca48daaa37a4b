"""The benchmark's timing loops (bench/timing.py): which calls each contender's samples
come from, and in what order the contenders run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

from tests.support.scripts import bench_script


@pytest.fixture(scope="module")
def timing() -> Iterator[ModuleType]:
    with bench_script("timing.py") as module:
        yield module


def _contenders(calls: list[tuple[str, int]]) -> list[Callable[[int], object]]:
    def contender(name: str) -> Callable[[int], object]:
        return lambda i: calls.append((name, i))

    return [contender("a"), contender("b"), contender("c")]


def test_in_turns_runs_each_contender_s_calls_in_a_row(timing: ModuleType) -> None:
    calls: list[tuple[str, int]] = []
    samples = timing.in_turns(_contenders(calls), 3, 2)
    assert calls == [(name, i) for name in "abc" for i in range(5)]
    assert [len(s) for s in samples] == [3, 3, 3]
    assert all(t >= 0.0 for s in samples for t in s)


def test_rotating_interleaves_the_contenders_and_turns_the_order(timing: ModuleType) -> None:
    calls: list[tuple[str, int]] = []
    samples = timing.rotating(_contenders(calls), 2, 1)
    assert [name for name, _ in calls] == list("abc" + "bca" + "cab")
    assert [i for _, i in calls] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [len(s) for s in samples] == [2, 2, 2]


def test_shuffled_runs_every_contender_once_a_rep_in_a_seeded_order(timing: ModuleType) -> None:
    calls: list[tuple[str, int]] = []
    samples = timing.shuffled(_contenders(calls), 3, 1, seed=7)
    assert [sorted(name for name, i in calls if i == rep) for rep in range(4)] == [list("abc")] * 4
    assert [i for _, i in calls] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    again: list[tuple[str, int]] = []
    timing.shuffled(_contenders(again), 3, 1, seed=7)
    assert again == calls
    assert [len(s) for s in samples] == [3, 3, 3]
