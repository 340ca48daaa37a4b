#!/usr/bin/env python
"""SqlMemorySession beside the OpenAI Agents SDK's own sessions, on SQLite and PostgreSQL.

From the repository root, after ``pip install -e '.[dev,bench]'`` (the ``bench`` extra
installs the SDK's ``SQLAlchemySession`` with its drivers)::

    python bench/agents_session.py            # full sizes
    python bench/agents_session.py --quick    # small sizes, a check that it runs

The contenders are :class:`sqlmemory.integrations.openai_agents.SqlMemorySession` on an
``AsyncSqlStorage``, the SDK's ``SQLAlchemySession`` (``create_tables=True``), each on an
``AsyncEngine`` made the same way (``create_async_engine(url)``, the same driver and pool
settings: ``--pre-ping`` turns ``pool_pre_ping`` on for both), and on SQLite the SDK's
``SQLiteSession``. Each case
(a scenario at a history size) gets fresh databases, one per contender: a new SQLite file,
or a new PostgreSQL database created for the case and dropped after it. The contenders
are timed interleaved, in an order that rotates every repetition (``timing.rotating``),
each call through ``run_until_complete`` of one event loop; the table shows medians and
p95 in milliseconds and sqlmemory's median over the best SDK session's. bench/README.md
says what each case does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import re
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from agents_contenders import (  # noqa: E402
    CONTENDERS,
    OURS,
    Contender,
    Place,
    PostgresPlace,
    SqlitePlace,
    SqlMemory,
    Turns,
    missing,
)
from machine import machine_info  # noqa: E402
from report import render_agents  # noqa: E402
from timing import rotating, summarize  # noqa: E402

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_URL_ENV = "SQLMEMORY_BENCH_POSTGRES_URL"
DEFAULT_JSON = BENCH_DIR / "results-agents.json"
ITEMS_PER_TURN = 4


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much work each case does; :data:`FULL` is the default run."""

    add_reps: int = 300
    add_warmup: int = 20
    histories: tuple[int, ...] = (1_000, 10_000)
    """Session sizes in items (a turn is 4 items)."""
    limit: int = 20
    limit_reps: int = 200
    limit_warmup: int = 20
    full_reps: tuple[int, ...] = (30, 10)
    """Repetitions of the whole-history read, one per history size."""
    full_warmup: int = 2
    fill_turns: int = 125
    """Turns per ``add_items`` call while filling (untimed)."""


FULL = Sizes()
QUICK = Sizes(
    add_reps=30,
    add_warmup=3,
    histories=(100, 1_000),
    limit_reps=30,
    limit_warmup=3,
    full_reps=(10, 5),
    full_warmup=1,
)


def size_label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


# --- the cases ------------------------------------------------------------------------


class Case:
    """One scenario at one size on one backend: fresh databases, fill, check, time."""

    def __init__(self, place: Place, loop: asyncio.AbstractEventLoop, label: str) -> None:
        self.place = place
        self.loop = loop
        self.label = label
        self.contenders: list[Contender] = []
        self.places: list[dict[str, str]] = []

    def run(self, awaitable: Awaitable[Any]) -> Any:
        return self.loop.run_until_complete(awaitable)

    def __enter__(self) -> Case:
        slug = re.sub(r"[^a-z0-9]+", "_", self.label.lower()).strip("_")
        for cls in CONTENDERS:
            if self.place.backend not in cls.backends:
                continue
            where = self.place.fresh(f"{slug}_{cls.name}")
            self.places.append(where)
            contender = cls(where, self.place.engine_options())
            self.contenders.append(contender)
            self.run(contender.setup())
        return self

    def __exit__(self, *exc_info: object) -> None:
        for contender in self.contenders:
            with contextlib.suppress(Exception):
                self.run(contender.close())
        for where in self.places:
            self.place.drop(where)

    def fill(self, sid: str, items: int, turns: Turns, batch: int) -> None:
        """Untimed: ``items`` items in ``add_items`` calls of ``batch`` turns."""
        made = turns.turns(0, items // ITEMS_PER_TURN)
        for start in range(0, len(made), batch):
            chunk = [item for turn in made[start : start + batch] for item in turn]
            for contender in self.contenders:
                self.run(contender.session(sid).add_items(chunk))

    def time(
        self, call: Callable[[Contender, int], Awaitable[Any]], reps: int, warmup: int
    ) -> dict[str, dict[str, Any]]:
        fns = [self._timed(contender, call) for contender in self.contenders]
        samples = rotating(fns, reps, warmup)
        return {c.name: summarize(s) for c, s in zip(self.contenders, samples, strict=True)}

    def _timed(
        self, contender: Contender, call: Callable[[Contender, int], Awaitable[Any]]
    ) -> Callable[[int], object]:
        return lambda i: self.run(call(contender, i))

    def same(self, read: Callable[[Contender], Awaitable[list[Any]]], what: str) -> int:
        """Check every contender returns the same items; returns how many."""
        results = {c.name: self.run(read(c)) for c in self.contenders}
        first = results[SqlMemory.name]
        for name, items in results.items():
            if items != first:
                raise RuntimeError(f"{self.label}: {name} returned other items than sqlmemory")
        if not first:
            raise RuntimeError(f"{self.label}: {what} returned nothing")
        return len(first)


def case_add_items(place: Place, loop: asyncio.AbstractEventLoop, sizes: Sizes) -> dict[str, Any]:
    label = f"add_items 1 turn x{sizes.add_reps}"
    turns = Turns(seed=7)
    made = turns.turns(0, sizes.add_warmup + sizes.add_reps)
    with Case(place, loop, label) as case:

        def add(contender: Contender, i: int) -> Awaitable[None]:
            return contender.session("agents-add").add_items(made[i])  # type: ignore[no-any-return]

        results = case.time(add, sizes.add_reps, sizes.add_warmup)
        count = case.same(lambda c: c.session("agents-add").get_items(), "get_items")
        if count != len(made) * ITEMS_PER_TURN:
            raise RuntimeError(f"{label}: {count} items stored, expected {len(made) * 4}")
    return {"scenario": "add_items", "label": label, "items": ITEMS_PER_TURN, "results": results}


def case_read(
    place: Place,
    loop: asyncio.AbstractEventLoop,
    sizes: Sizes,
    history: int,
    limit: int | None,
    reps: int,
    warmup: int,
) -> dict[str, Any]:
    what = f"get_items(limit={limit})" if limit is not None else "get_items()"
    label = f"{what} @{size_label(history)}"
    sid = "agents-read"
    with Case(place, loop, label) as case:
        case.fill(sid, history, Turns(), sizes.fill_turns)

        def read(contender: Contender, i: int = 0) -> Awaitable[list[Any]]:
            return contender.session(sid).get_items(limit)  # type: ignore[no-any-return]

        count = case.same(read, what)
        expected = history if limit is None else min(limit, history)
        if count != expected:
            raise RuntimeError(f"{label}: {count} items read, expected {expected}")
        results = case.time(read, reps, warmup)
    scenario = "get_items_limit" if limit is not None else "get_items_all"
    return {"scenario": scenario, "label": label, "items": history, "results": results}


def run_backend(place: Place, sizes: Sizes, say: Callable[[str], None]) -> list[dict[str, Any]]:
    loop = asyncio.new_event_loop()
    out: list[dict[str, Any]] = []
    try:
        say(f"{place.backend}: add_items")
        out.append(case_add_items(place, loop, sizes))
        for history in sizes.histories:
            say(f"{place.backend}: get_items(limit={sizes.limit}) @{size_label(history)}")
            out.append(
                case_read(
                    place,
                    loop,
                    sizes,
                    history,
                    sizes.limit,
                    sizes.limit_reps,
                    sizes.limit_warmup,
                )
            )
        for history, reps in zip(sizes.histories, sizes.full_reps, strict=True):
            say(f"{place.backend}: get_items() @{size_label(history)}")
            out.append(case_read(place, loop, sizes, history, None, reps, sizes.full_warmup))
    finally:
        loop.close()
    for row in out:
        row["backend"] = place.backend
        sdk = {k: v for k, v in row["results"].items() if k not in OURS}
        best = min(sdk, key=lambda k: sdk[k]["median_ms"])
        row["best_sdk"] = best
        # For each of sqlmemory's contenders: its median over the fastest SDK session's.
        row["vs_best_sdk"] = {
            name: row["results"][name]["median_ms"] / sdk[best]["median_ms"] for name in OURS
        }
    return out


def versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for dist in ("openai-agents", "sqlalchemy", "aiosqlite", "asyncpg", "psycopg"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[dist] = md.version(dist)
    return out


def parse_args(
    argv: Sequence[str] | None = None,
    description: str | None = None,
    default_json: Path = DEFAULT_JSON,
) -> argparse.Namespace:
    doc = description or __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument(
        "--pg-url",
        default=os.environ.get(PG_URL_ENV, DEFAULT_PG_URL),
        help="a database on the server whose role may CREATE DATABASE (each case gets its own)",
    )
    parser.add_argument(
        "--pg-driver", default="asyncpg", choices=("asyncpg", "psycopg"), help="async driver"
    )
    parser.add_argument(
        "--pre-ping",
        action="store_true",
        help="pool_pre_ping on the contenders' PostgreSQL engines (as from_url sets it)",
    )
    parser.add_argument("--sqlite-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=default_json)
    return parser.parse_args(argv)


RunBackend = Callable[[Place, Sizes, Callable[[str], None]], list[dict[str, Any]]]


def run(
    argv: Sequence[str] | None,
    sizes: Sizes | None,
    run_backend: RunBackend,
    render: Callable[[dict[str, Any]], str],
    description: str | None = None,
    default_json: Path = DEFAULT_JSON,
) -> dict[str, Any]:
    """Parse ``argv``, run ``run_backend`` on each backend asked for (a server that cannot
    be reached is reported, not fatal), print ``render(report)``, write the JSON."""
    args = parse_args(argv, description, default_json)
    reason = missing()
    if reason is not None:
        raise SystemExit(f"the OpenAI Agents SDK's sessions are not installed: {reason}")
    sizes = sizes or (QUICK if args.quick else FULL)

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    run_id = uuid.uuid4().hex[:8]
    report: dict[str, Any] = {
        "machine": machine_info(),
        "load_before": os.getloadavg(),
        "sizes": dataclasses.asdict(sizes),
        "versions": versions(),
        "pool_pre_ping": args.pre_ping,
        "backends": {},
        "results": [],
        "skipped": {},
    }
    for backend in args.backends.split(","):
        place: Place
        try:
            if backend == "sqlite":
                place = SqlitePlace(args.sqlite_dir)
            elif backend == "postgresql":
                place = PostgresPlace(args.pg_url, run_id, args.pg_driver, args.pre_ping)
            else:
                raise SystemExit(f"unknown backend {backend!r}: sqlite or postgresql")
        except Exception as exc:  # an unreachable server is reported, not fatal
            if backend != "postgresql":
                raise
            report["skipped"][backend] = f"{type(exc).__name__}: {exc}"
            say(f"postgresql skipped: {exc}")
            continue
        try:
            report["backends"][backend] = place.version()
            report["results"] += run_backend(place, sizes, say)
        finally:
            place.close()
    report["load_after"] = os.getloadavg()
    print(render(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
        say(f"results written to {args.json}")
    return report


def main(argv: Sequence[str] | None = None, sizes: Sizes | None = None) -> dict[str, Any]:
    return run(argv, sizes, run_backend, render_agents)


if __name__ == "__main__":
    main(sys.argv[1:])
