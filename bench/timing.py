"""Clocks and statistics: per-operation timing, interleaved rep by rep, and its summary."""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

Timer = Callable[[Sequence[Callable[[int], object]], int, int], list[list[float]]]
"""How contenders are timed: ``timer(fns, reps, warmup)``, one list of samples per function."""


def summarize(samples_ms: Sequence[float]) -> dict[str, Any]:
    """Median, nearest-rank p95, min and count of samples in milliseconds."""
    ordered = sorted(samples_ms)
    p95 = ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]
    return {
        "median_ms": statistics.median(ordered),
        "p95_ms": p95,
        "min_ms": ordered[0],
        "n": len(ordered),
    }


def _run(
    fns: Sequence[Callable[[int], object]], calls: Iterable[tuple[int, int]], warmup: int
) -> list[list[float]]:
    """Time ``fns[index](i)`` for each ``(index, i)`` of ``calls``, in that order; one list
    of samples (ms) per function, the calls with ``i`` below ``warmup`` not recorded."""
    samples: list[list[float]] = [[] for _ in fns]
    clock = time.perf_counter
    for index, i in calls:
        start = clock()
        fns[index](i)
        elapsed = (clock() - start) * 1000.0
        if i >= warmup:
            samples[index].append(elapsed)
    return samples


def rotating(fns: Sequence[Callable[[int], object]], reps: int, warmup: int) -> list[list[float]]:
    """Time each of ``fns`` once per rep, in an order that rotates with every rep.

    Returns one list of samples (ms) per function; warm-up reps are not recorded. Running
    the contenders in the same loop makes background load hit them alike, and rotating
    the order means none always runs on a cache another just warmed.
    """
    k = len(fns)
    calls = (((i + j) % k, i) for i in range(warmup + reps) for j in range(k))
    return _run(fns, calls, warmup)


def shuffled(
    fns: Sequence[Callable[[int], object]], reps: int, warmup: int, seed: int = 0
) -> list[list[float]]:
    """Time each of ``fns`` once per rep, in a fresh random order every rep (seeded).

    Like :func:`rotating`, but no function always runs right after the same other one:
    in a rotation of A, B, C, A always follows C, and what C leaves behind (a cache it
    filled, a connection it returned, a thread it woke) weighs on A alone. For comparing
    contenders within a few percent.
    """
    rng = random.Random(seed)

    def calls() -> Iterator[tuple[int, int]]:
        order = list(range(len(fns)))
        for i in range(warmup + reps):
            rng.shuffle(order)
            yield from ((index, i) for index in order)

    return _run(fns, calls(), warmup)


def in_turns(fns: Sequence[Callable[[int], object]], reps: int, warmup: int) -> list[list[float]]:
    """Time each of ``fns`` for all its reps in a row, one after the other.

    For writes whose cost outlasts the call (a commit's pages the disk is still taking, a
    WAL another file's checkpoint competes with): interleaved, each contender pays for the
    one before it, and the cheapest pays most (``docs/performance.md``, "SQLite batches:
    where compare.sh and bench.py part"). In turns, each pays for its own, as an
    application that only does its own writes does, and as ``../shared/bench/compare.sh``
    times them (a process per contender). Returns one list of samples (ms) per function;
    each contender's first ``warmup`` reps are not recorded.
    """
    calls = ((index, i) for index in range(len(fns)) for i in range(warmup + reps))
    return _run(fns, calls, warmup)


def interleaved(
    ours: Callable[[int], object],
    raw: Callable[[int], object],
    reps: int,
    warmup: int,
) -> tuple[list[float], list[float]]:
    """Time ``ours(i)`` and ``raw(i)`` alternately (see :func:`rotating`)."""
    mine, theirs = rotating((ours, raw), reps, warmup)
    return mine, theirs


def now_utc() -> datetime:
    return datetime.now(timezone.utc)
