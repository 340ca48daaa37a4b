#!/usr/bin/env python
"""The floor under SqlMemorySession: sqlmemory's own SQL alone, beside the SDK's sessions.

From the repository root, after ``pip install -e '.[dev,bench]'``::

    python bench/agents_floor.py            # full sizes
    python bench/agents_floor.py --quick    # small sizes, a check that it runs

For each case of ``bench/agents_session.py``, the statements that ``SqlMemorySession``'s
storage sends are recorded once (a ``before_cursor_execute`` listener on a sync
``SqlStorage``), then replayed through the raw driver (``sqlite3``, ``psycopg``) in a worker
thread, as the SDK's ``SQLiteSession`` runs its ``sqlite3`` calls: the same statements,
parameters and transaction, with nothing built from the rows. ``+ JSON`` also parses every
JSON column value the rows hold (message and block extras, metadata, call ids, block
values), the least any reader must do to give the items back. A replayed append writes a new
session each time (its messages' ids are unique in a session).

Neither floor converts an item or builds a message, so SqlMemorySession cannot be faster than
it. Where the floor is at or above the fastest SDK session (``SQLiteSession``, or
``SQLAlchemySession`` on asyncpg), storing the items as sqlmemory does (a row per message,
one per block, the columns a window, compaction and a lossless round trip need) costs more
than the SDK's one JSON text per item, whatever the code around it. bench/README.md has more.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from agents_contenders import Place, SqlitePlace, Turns  # noqa: E402
from agents_session import ITEMS_PER_TURN, Sizes, run, size_label  # noqa: E402
from timing import rotating, summarize  # noqa: E402

DEFAULT_JSON = BENCH_DIR / "results-agents-floor.json"
JSON_COLUMNS = frozenset({"metadata_json", "extras_json", "call_ids", "value_json"})
"""The columns of sqlmemory's rows that hold JSON text."""
SID = "floor"
__all__ = ["Floor", "Recorder", "Replay", "SqlitePlace", "Turns", "main"]


@dataclasses.dataclass(frozen=True)
class Statement:
    sql: str
    params: Any
    many: bool


class Recorder:
    """The statements a sync engine sends while :meth:`record` runs ``fn``."""

    def __init__(self, engine: Any) -> None:
        from sqlalchemy import event

        self.seen: list[Statement] = []
        self.on = False
        event.listen(engine, "before_cursor_execute", self._listen)

    def _listen(self, conn: Any, cursor: Any, sql: str, params: Any, ctx: Any, many: bool) -> None:
        # Transaction control is the replay's own (a SQLite window sends its BEGIN and
        # COMMIT as statements when watched).
        if self.on and sql.split(None, 1)[0].upper() not in ("BEGIN", "COMMIT", "ROLLBACK"):
            self.seen.append(Statement(sql, params, many))

    def record(self, fn: Callable[[], object]) -> list[Statement]:
        self.seen, self.on = [], True
        try:
            fn()
        finally:
            self.on = False
        return self.seen


def _renamed(params: Any, old: str, new: str) -> Any:
    """``params`` (a tuple or dict, or a list of them) with the session id ``old`` as ``new``."""
    if isinstance(params, list):
        return [_renamed(p, old, new) for p in params]
    if isinstance(params, dict):
        return {k: new if v == old else v for k, v in params.items()}
    return tuple(new if v == old else v for v in params)


class Replay:
    """Replays recorded statements on one raw driver connection, in its transaction."""

    def __init__(self, backend: str, where: dict[str, str]) -> None:
        self.backend = backend
        if backend == "sqlite":
            import sqlite3

            self.conn: Any = sqlite3.connect(
                where["path"], isolation_level=None, check_same_thread=False
            )
        else:
            import psycopg
            from sqlalchemy.engine import make_url

            url = make_url(where["sync_url"]).set(drivername="postgresql")
            self.conn = psycopg.connect(url.render_as_string(False), autocommit=True)

    def begin(self, write: bool) -> str:
        if self.backend == "sqlite":
            return "BEGIN IMMEDIATE" if write else "BEGIN"
        return "BEGIN" if write else "BEGIN ISOLATION LEVEL REPEATABLE READ"

    def read(self, statements: Sequence[Statement], parse: bool) -> int:
        """Run a read's statements (in a snapshot when there are several); the rows' count."""
        many = len(statements) > 1
        if many:
            self.conn.execute(self.begin(write=False))
        found = 0
        for s in statements:
            cursor = self.conn.execute(s.sql, s.params)
            rows = cursor.fetchall()
            found += len(rows)
            if parse:
                _parse(cursor.description, rows)
        if many:
            self.conn.execute("COMMIT")
        return found

    def write(self, statements: Sequence[Statement], sid: str) -> None:
        """Run an append's statements in one transaction, for the new session ``sid``."""
        self.conn.execute(self.begin(write=True))
        for s in statements:
            params = _renamed(s.params, SID, sid)
            if s.many:
                self.conn.cursor().executemany(s.sql, params)
            else:
                self.conn.execute(s.sql, params).fetchall()
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


def _parse(description: Sequence[Any], rows: Sequence[Sequence[Any]]) -> None:
    columns = [i for i, d in enumerate(description) if d[0] in JSON_COLUMNS]
    for row in rows:
        for i in columns:
            if row[i] is not None:
                json.loads(row[i])


class Floor:
    """One backend's fresh databases: sqlmemory's (recorded and replayed) and the SDK's."""

    def __init__(self, place: Place, loop: asyncio.AbstractEventLoop) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.ext.asyncio import create_async_engine

        from sqlmemory import SqlStorage, migrate

        self.place, self.loop = place, loop
        label = uuid.uuid4().hex[:6]
        self.ours, self.theirs = (
            place.fresh(f"floor_{label}_sqlm"),
            place.fresh(f"floor_{label}_sdk"),
        )
        migrate.upgrade(self.ours["sync_url"])
        self.storage = SqlStorage(create_engine(self.ours["sync_url"], **place.engine_options()))
        self.recorder = Recorder(self.storage.engine)
        self.replay = Replay(place.backend, self.ours)
        if place.backend == "sqlite":
            from agents import SQLiteSession

            self.peer: Any = SQLiteSession(SID, db_path=self.theirs["path"])
            self.peer_name = "agents_sqlite"
        else:
            from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

            engine = create_async_engine(self.theirs["async_url"], **place.engine_options())
            self.peer = SQLAlchemySession(SID, engine=engine, create_tables=True)
            self.peer_name = "agents_sqlalchemy"

    def add(self, items: list[Any]) -> None:
        from sqlmemory.formats import from_openai_responses

        self.storage.append(SID, *from_openai_responses(items))
        self.loop.run_until_complete(self.peer.add_items(items))

    def in_thread(self, fn: Callable[[], object]) -> Callable[[int], object]:
        return lambda i: self.loop.run_until_complete(asyncio.to_thread(fn))

    def close(self) -> None:
        self.replay.close()
        self.storage.engine.dispose()
        engine = getattr(self.peer, "_engine", None)
        if engine is not None:
            self.loop.run_until_complete(engine.dispose())
        with contextlib.suppress(Exception):
            self.peer.close()
        for where in (self.ours, self.theirs):
            self.place.drop(where)


def case_add(floor: Floor, sizes: Sizes) -> dict[str, Any]:
    turns = Turns(seed=7).turns(0, sizes.add_warmup + sizes.add_reps)
    from sqlmemory.formats import from_openai_responses

    statements = floor.recorder.record(
        lambda: floor.storage.append(SID, *from_openai_responses(turns[0]))
    )
    fresh = (f"{SID}-{n}" for n in itertools.count())
    fns = {
        floor.peer_name: lambda i: floor.loop.run_until_complete(floor.peer.add_items(turns[i])),
        "sql_only": floor.in_thread(lambda: floor.replay.write(statements, next(fresh))),
    }
    return _timed(fns, sizes.add_reps, sizes.add_warmup, "add_items", "add_items 1 turn", floor)


def case_read(
    floor: Floor, limit: int | None, history: int, reps: int, warmup: int
) -> dict[str, Any]:
    from sqlmemory.integrations.openai_agents import _Newest

    policy = None if limit is None else _Newest(limit)
    statements = floor.recorder.record(lambda: floor.storage.load(SID, policy))
    fns = {
        floor.peer_name: lambda i: floor.loop.run_until_complete(floor.peer.get_items(limit)),
        "sql_only": floor.in_thread(lambda: floor.replay.read(statements, parse=False)),
        "sql_and_json": floor.in_thread(lambda: floor.replay.read(statements, parse=True)),
    }
    what = f"get_items(limit={limit})" if limit is not None else "get_items()"
    scenario = "get_items_limit" if limit is not None else "get_items_all"
    return _timed(fns, reps, warmup, scenario, f"{what} @{size_label(history)}", floor)


def _timed(
    fns: dict[str, Callable[[int], object]],
    reps: int,
    warmup: int,
    scenario: str,
    label: str,
    floor: Floor,
) -> dict[str, Any]:
    samples = rotating(list(fns.values()), reps, warmup)
    results = {name: summarize(s) for name, s in zip(fns, samples, strict=True)}
    peer = results[floor.peer_name]["median_ms"]
    return {
        "scenario": scenario,
        "label": label,
        "backend": floor.place.backend,
        "sdk": floor.peer_name,
        "results": results,
        "floor_x_sdk": {
            name: r["median_ms"] / peer for name, r in results.items() if name != floor.peer_name
        },
    }


def run_backend(place: Place, sizes: Sizes, say: Callable[[str], None]) -> list[dict[str, Any]]:
    loop = asyncio.new_event_loop()
    out: list[dict[str, Any]] = []
    try:
        say(f"{place.backend}: add_items")
        floor = Floor(place, loop)
        try:
            out.append(case_add(floor, sizes))
        finally:
            floor.close()
        for history, full_reps in zip(sizes.histories, sizes.full_reps, strict=True):
            say(f"{place.backend}: reads @{size_label(history)}")
            floor = Floor(place, loop)
            try:
                turns = Turns().turns(0, history // ITEMS_PER_TURN)
                for start in range(0, len(turns), sizes.fill_turns):
                    floor.add([i for t in turns[start : start + sizes.fill_turns] for i in t])
                out.append(
                    case_read(floor, sizes.limit, history, sizes.limit_reps, sizes.limit_warmup)
                )
                out.append(case_read(floor, None, history, full_reps, sizes.full_warmup))
            finally:
                floor.close()
    finally:
        loop.close()
    return out


def render(report: dict[str, Any]) -> str:
    head = (
        f"{'case':<26} {'backend':<10} {'best SDK':>9} {'SQL only':>9} {'+ JSON':>9} "
        f"{'SQL x SDK':>10} {'+JSON x SDK':>12}"
    )
    lines = [head, "-" * len(head)]
    for r in report["results"]:
        res, ratio = r["results"], r["floor_x_sdk"]
        parsed = res.get("sql_and_json")
        lines.append(
            f"{r['label']:<26} {r['backend']:<10} {res[r['sdk']]['median_ms']:>9.3f} "
            f"{res['sql_only']['median_ms']:>9.3f} "
            + (f"{parsed['median_ms']:>9.3f} " if parsed else f"{'-':>9} ")
            + f"{ratio['sql_only']:>9.2f}x "
            + (f"{ratio['sql_and_json']:>11.2f}x" if parsed else f"{'-':>12}")
        )
    lines.append(
        "(medians in ms; best SDK: SQLiteSession on SQLite, SQLAlchemySession on PostgreSQL;"
        " SQL only / + JSON: sqlmemory's statements through the raw driver in a worker thread;"
        " at or above 1.0x, SqlMemorySession cannot be faster than the SDK's session there)"
    )
    for backend, reason in report["skipped"].items():
        lines.append(f"\n{backend} skipped: {reason}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, sizes: Sizes | None = None) -> dict[str, Any]:
    return run(argv, sizes, run_backend, render, __doc__, DEFAULT_JSON)


if __name__ == "__main__":
    main(sys.argv[1:])
