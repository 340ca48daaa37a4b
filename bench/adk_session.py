#!/usr/bin/env python
"""SqlMemorySessionService beside Google ADK's DatabaseSessionService, on one engine.

From the repository root, after ``pip install -e '.[dev,bench]'``::

    python bench/adk_session.py              # full sizes, SQLite and PostgreSQL
    python bench/adk_session.py --quick      # small sizes, a check that it runs
    python bench/adk_session.py --backends mysql   # MySQL/MariaDB only

Both services get the very same ``AsyncEngine`` (``create_async_engine(url)``): a fresh
SQLite file through ``aiosqlite``, and a PostgreSQL database through ``asyncpg`` when
``$SQLMEMORY_BENCH_POSTGRES_URL`` (or the default below) reaches one, and with
``--backends`` MySQL/MariaDB through ``aiomysql`` (``$SQLMEMORY_BENCH_MYSQL_URL``);
sqlmemory's tables
and ADK's live side by side in it. Each history is filled through the services' own
``append_event`` (events of a two-turn tool conversation, each with a state delta), then
the cases are timed interleaved, in an order that rotates every repetition
(``timing.rotating``): ``get_session`` of the newest 20 events at each history size,
``append_event`` of one event, and ``list_sessions`` of a user with many sessions. The
table shows medians in milliseconds and sqlmemory's median over ADK's (below 1.0x it is
faster).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from timing import rotating, summarize  # noqa: E402

DEFAULT_PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
PG_URL_ENV = "SQLMEMORY_BENCH_POSTGRES_URL"
DEFAULT_MYSQL_URL = "mysql+aiomysql://root@127.0.0.1:3306/test"
MYSQL_URL_ENV = "SQLMEMORY_BENCH_MYSQL_URL"
DEFAULT_JSON = BENCH_DIR / "results-adk.json"
APP = "bench"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much work each case does; :data:`FULL` is the default run."""

    histories: tuple[int, ...] = (1_000, 10_000)
    recent: int = 20
    sessions: int = 10_000
    reps: int = 100
    list_reps: int = 10
    warmup: int = 5


FULL = Sizes()
QUICK = Sizes(histories=(10, 40), recent=5, sessions=30, reps=5, list_reps=3, warmup=1)


def events(n: int, start: float) -> list[Any]:
    """``n`` ADK events: a user question, a call, its result, an answer; each with a state
    delta, timestamps one millisecond apart from ``start``."""
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    made = []
    for i in range(n):
        call_id = f"call-{i // 4}"
        kind = i % 4
        if kind == 0:
            author, role, part = "user", "user", types.Part(text=f"What is 6 x {i}?")
        elif kind == 1:
            call = types.FunctionCall(id=call_id, name="multiply", args={"a": 6, "b": i})
            author, role, part = "calc", "model", types.Part(function_call=call)
        elif kind == 2:
            answer = types.FunctionResponse(id=call_id, name="multiply", response={"r": 6 * i})
            author, role, part = "calc", "user", types.Part(function_response=answer)
        else:
            author, role, part = "calc", "model", types.Part(text=f"It is {6 * i}.")
        made.append(
            Event(
                invocation_id=f"inv-{i // 4}",
                author=author,
                content=types.Content(role=role, parts=[part]),
                actions=EventActions(state_delta={"turn": i // 4}),
                timestamp=start + i / 1000,
            )
        )
    return made


class Bench:
    """Both services on one engine, and the cases timed on them."""

    def __init__(self, url: str, sizes: Sizes, loop: asyncio.AbstractEventLoop) -> None:
        from google.adk.sessions.database_session_service import DatabaseSessionService
        from sqlalchemy.ext.asyncio import create_async_engine

        from sqlmemory import AsyncSqlStorage
        from sqlmemory.integrations.adk import SqlMemorySessionService

        self.loop = loop
        self.sizes = sizes
        self.engine = create_async_engine(url)
        self.services = {
            "sqlmemory": SqlMemorySessionService(AsyncSqlStorage(self.engine)),
            "adk_database": DatabaseSessionService(db_engine=self.engine),
        }

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    def fill(self, user: str, n: int) -> dict[str, Any]:
        """A session of ``n`` events in each service; the sessions, as each returned them."""
        made = {}
        for name, service in self.services.items():
            session = self.run(service.create_session(app_name=APP, user_id=user))
            for event in events(n, 1_700_000_000.0):
                self.run(service.append_event(session, event))
            made[name] = session
        return made

    def time(self, label: str, calls: dict[str, Any], reps: int) -> dict[str, Any]:
        names = list(calls)
        fns = [lambda i, name=name: self.run(calls[name](i)) for name in names]
        samples = rotating(fns, reps, self.sizes.warmup)
        results = {name: summarize(s) for name, s in zip(names, samples, strict=True)}
        ratio = results["sqlmemory"]["median_ms"] / results["adk_database"]["median_ms"]
        return {"label": label, "results": results, "ratio": ratio}

    def cases(self) -> list[dict[str, Any]]:
        from google.adk.sessions.base_session_service import GetSessionConfig

        sizes = self.sizes
        rows = []
        config = GetSessionConfig(num_recent_events=sizes.recent)
        appended: dict[str, Any] = {}
        for n in sizes.histories:
            made = self.fill(f"user-{n}", n)

            def recent(name: str, made: Any = made, user: str = f"user-{n}") -> Any:
                service, session = self.services[name], made[name]
                return lambda i: service.get_session(
                    app_name=APP, user_id=user, session_id=session.id, config=config
                )

            label = f"get_session(num_recent_events={sizes.recent}) @{n} events"
            rows.append(self.time(label, {k: recent(k) for k in self.services}, sizes.reps))
            appended = made
        more = {k: events(sizes.reps + sizes.warmup, 1_800_000_000.0) for k in self.services}

        def append(name: str) -> Any:
            service, session = self.services[name], appended[name]
            return lambda i: service.append_event(session, more[name][i])

        label = f"append_event @{sizes.histories[-1]} events"
        rows.append(self.time(label, {k: append(k) for k in self.services}, sizes.reps))
        for service in self.services.values():
            for _ in range(sizes.sessions):
                self.run(service.create_session(app_name=APP, user_id="many", state={"k": 1}))

        def listing(name: str) -> Any:
            service = self.services[name]
            return lambda i: service.list_sessions(app_name=APP, user_id="many")

        label = f"list_sessions @{sizes.sessions} sessions"
        rows.append(self.time(label, {k: listing(k) for k in self.services}, sizes.list_reps))
        return rows

    def close(self) -> None:
        self.run(self.engine.dispose())


def render(backend: str, rows: list[dict[str, Any]]) -> str:
    lines = [
        f"\n{backend}: medians in ms",
        "| case | sqlmemory | DatabaseSessionService | x ADK |",
        "|---|---:|---:|---:|",
    ]
    for row in rows:
        ours, theirs = row["results"]["sqlmemory"], row["results"]["adk_database"]
        lines.append(
            f"| `{row['label']}` | {ours['median_ms']:.2f} | {theirs['median_ms']:.2f} "
            f"| {row['ratio']:.2f}x |"
        )
    return "\n".join(lines)


SYNC_DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql"}


def server_database(url: str) -> tuple[str, Any] | None:
    """A fresh database on the server of ``url`` (PostgreSQL or MySQL/MariaDB), and the
    dropping of it; ``None`` when the server does not answer."""
    import sqlalchemy as sa

    parsed = sa.make_url(url)
    backend = parsed.get_backend_name()
    sync_url = parsed.set(drivername=SYNC_DRIVERS[backend])
    name = f"sqlmemory_adk_{uuid.uuid4().hex[:8]}"
    quote = "`" if backend == "mysql" else '"'
    force = " WITH (FORCE)" if backend == "postgresql" else ""
    admin = sa.create_engine(sync_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f"CREATE DATABASE {quote}{name}{quote}"))
    except sa.exc.OperationalError:
        admin.dispose()
        return None

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quote}{name}{quote}{force}"))
        admin.dispose()

    return str(sa.make_url(url).set(database=name).render_as_string(False)), drop


def run_backend(backend: str, url: str, sizes: Sizes) -> list[dict[str, Any]]:
    from sqlmemory import migrate

    sync = url.replace("+aiosqlite", "").replace("+asyncpg", "+psycopg")
    migrate.upgrade(sync.replace("+aiomysql", "+pymysql"))
    loop = asyncio.new_event_loop()
    bench = Bench(url, sizes, loop)
    try:
        return bench.cases()
    finally:
        bench.close()
        loop.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument(
        "--backends",
        default="sqlite,postgresql",
        help="comma-separated, of sqlite, postgresql and mysql (default: sqlite,postgresql)",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    backends = args.backends.split(",")
    report: dict[str, Any] = {"sizes": dataclasses.asdict(sizes), "backends": {}}
    if "sqlite" in backends:
        with tempfile.TemporaryDirectory(prefix="sqlmemory-adk-bench-") as tmp:
            url = f"sqlite+aiosqlite:///{tmp}/bench.db"
            report["backends"]["sqlite"] = run_backend("sqlite", url, sizes)
            print(render("SQLite", report["backends"]["sqlite"]), flush=True)
    servers = {
        "postgresql": ("PostgreSQL", os.environ.get(PG_URL_ENV, DEFAULT_PG_URL)),
        "mysql": ("MySQL/MariaDB", os.environ.get(MYSQL_URL_ENV, DEFAULT_MYSQL_URL)),
    }
    for backend in (b for b in servers if b in backends):
        shown, server_url = servers[backend]
        found = server_database(server_url)
        if found is None:
            print(f"\n{shown}: not reachable, skipped")
            continue
        url, drop = found
        try:
            report["backends"][backend] = run_backend(backend, url, sizes)
        finally:
            drop()
        print(render(shown, report["backends"][backend]), flush=True)
    args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
