#!/usr/bin/env python
"""A web server's load: concurrent chat turns on PostgreSQL or MySQL/MariaDB, beside the peers.

A turn is what a chat endpoint does for one request: append the user's message, read a
window of the newest 20 messages for the model, append the reply (an assistant message
with a tool call) and the tool's result. ``C`` clients run turns at once, each on a
session of its own (``--clients``, default 1, 8, 32, 64), then 8 clients share one
session; every client runs ``--turns`` turns. The sync stores run their clients in
threads, the async ones in tasks on one event loop; every store gets an engine made the
same way (``pool_size`` = the number of clients, capped by ``--pool``, no overflow, no
pre-ping), so they wait on the pool alike. Reported per store and ``C``: turns per second
(all turns over the wall time) and the p50 and p99 of one turn's time, in ms.

- ``sqlmemory_sync``: ``SqlStorage`` on psycopg, in threads.
- ``sqlmemory_async``: ``AsyncSqlStorage`` on asyncpg, in tasks.
- ``agents_sqlalchemy``: the OpenAI Agents SDK's ``SQLAlchemySession`` on asyncpg, in
  tasks (its items: the user message, a ``function_call`` and its output).
- ``langchain_sql``: LangChain's ``SQLChatMessageHistory`` on psycopg, in threads (no
  windowed read: the window is the tail of the whole history).

``--latency-ms`` puts every store behind the same :class:`~latency_proxy.LatencyProxy`.
Results go to ``bench/results-chat-turn.json``; ``--quick`` runs tiny sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import sqlalchemy as sa  # noqa: E402
from latency_proxy import LatencyProxy  # noqa: E402
from machine import machine_info  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from sqlmemory import AsyncSqlStorage, FixedWindow, Message, SqlStorage, ToolCall  # noqa: E402
from sqlmemory.migrate import upgrade  # noqa: E402

DEFAULT_JSON = BENCH_DIR / "results-chat-turn.json"
DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
DEFAULT_MYSQL_URL = "mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4"
WINDOW = 20
PEER_TABLES = ("bench_peer_turn_sessions", "bench_peer_turn_messages", "bench_peer_turn_lc")
STORES = ("sqlmemory_sync", "sqlmemory_async", "agents_sqlalchemy", "langchain_sql")


DRIVERS = {
    "postgresql": {"sync": "postgresql+psycopg", "async": "postgresql+asyncpg"},
    "mysql": {"sync": "mysql+pymysql", "async": "mysql+aiomysql"},
}
"""Each server's drivers: the sync stores' and the async stores'."""


def _url(url: str, kind: str) -> str:
    """``url`` with the ``kind`` ("sync" or "async") driver of its server."""
    parsed = make_url(url)
    driver = DRIVERS[parsed.get_backend_name()][kind]
    return parsed.set(drivername=driver).render_as_string(hide_password=False)


class Store:
    """One store under load: its turn, sync (``turn``) or async (``aturn``)."""

    name = ""
    is_async = False

    def __init__(self, url: str, pool: int) -> None:
        self.url = url
        self.pool = pool

    def turn(self, sid: str, i: int) -> None:
        raise NotImplementedError

    async def aturn(self, sid: str, i: int) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None

    def close(self) -> None:
        return None


def _reply(sid: str, i: int) -> tuple[Message, Message]:
    call = ToolCall(id=f"c-{sid}-{i}", name="lookup", arguments={"q": f"turn {i}"})
    return (
        Message.assistant(f"let me look up turn {i}", tool_calls=[call]),
        Message.tool(call.id, f"result {i}: " + "x" * 120),
    )


class SqlmemorySync(Store):
    name = "sqlmemory_sync"

    def __init__(self, url: str, pool: int) -> None:
        super().__init__(url, pool)
        engine_url = _url(url, "sync")
        self.storage = SqlStorage.from_url(engine_url, pool_size=pool, max_overflow=0)

    def turn(self, sid: str, i: int) -> None:
        self.storage.append(sid, Message.user(f"question {i} " + "q" * 100))
        window = self.storage.load(sid, FixedWindow(WINDOW))
        assert window, "the window holds the message just appended"  # noqa: S101
        self.storage.append(sid, *_reply(sid, i))

    def close(self) -> None:
        self.storage.close()


class SqlmemoryAsync(Store):
    name = "sqlmemory_async"
    is_async = True

    def __init__(self, url: str, pool: int) -> None:
        super().__init__(url, pool)
        engine_url = _url(url, "async")
        self.storage = AsyncSqlStorage.from_url(engine_url, pool_size=pool, max_overflow=0)

    async def aturn(self, sid: str, i: int) -> None:
        await self.storage.append(sid, Message.user(f"question {i} " + "q" * 100))
        window = await self.storage.load(sid, FixedWindow(WINDOW))
        assert window, "the window holds the message just appended"  # noqa: S101
        await self.storage.append(sid, *_reply(sid, i))

    async def aclose(self) -> None:
        await self.storage.close()


class AgentsSQLAlchemy(Store):
    name = "agents_sqlalchemy"
    is_async = True

    def __init__(self, url: str, pool: int) -> None:
        super().__init__(url, pool)
        from sqlalchemy.ext.asyncio import create_async_engine

        engine_url = _url(url, "async")
        self.engine = create_async_engine(engine_url, pool_size=pool, max_overflow=0)
        self.sessions: dict[str, Any] = {}

    def _session(self, sid: str) -> Any:
        from agents.extensions.memory import SQLAlchemySession

        found = self.sessions.get(sid)
        if found is None:
            found = self.sessions[sid] = SQLAlchemySession(
                sid,
                engine=self.engine,
                create_tables=True,
                sessions_table=PEER_TABLES[0],
                messages_table=PEER_TABLES[1],
            )
        return found

    async def aturn(self, sid: str, i: int) -> None:
        session = self._session(sid)
        await session.add_items([{"role": "user", "content": f"question {i} " + "q" * 100}])
        window = await session.get_items(limit=WINDOW)
        assert window, "the window holds the message just appended"  # noqa: S101
        call_id = f"c-{sid}-{i}"
        await session.add_items(
            [
                {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": "lookup",
                    "arguments": json.dumps({"q": f"turn {i}"}),
                },
                {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": f"result {i}: " + "x" * 120,
                },
            ]
        )

    async def aclose(self) -> None:
        await self.engine.dispose()


class LangChainSQL(Store):
    name = "langchain_sql"

    def __init__(self, url: str, pool: int) -> None:
        super().__init__(url, pool)
        engine_url = _url(url, "sync")
        self.engine = sa.create_engine(engine_url, pool_size=pool, max_overflow=0)
        self.histories: dict[str, Any] = {}
        self.lock = threading.Lock()

    def _history(self, sid: str) -> Any:
        with self.lock:
            found = self.histories.get(sid)
            if found is None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    from langchain_community.chat_message_histories import (
                        SQLChatMessageHistory,
                    )

                    found = self.histories[sid] = SQLChatMessageHistory(
                        session_id=sid, table_name=PEER_TABLES[2], connection=self.engine
                    )
            return found

    def turn(self, sid: str, i: int) -> None:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        history = self._history(sid)
        history.add_message(HumanMessage(content=f"question {i} " + "q" * 100))
        window = history.messages[-WINDOW:]
        assert window, "the window holds the message just appended"  # noqa: S101
        call_id = f"c-{sid}-{i}"
        call = {"name": "lookup", "args": {"q": f"turn {i}"}, "id": call_id}
        history.add_messages(
            [
                AIMessage(content=f"let me look up turn {i}", tool_calls=[call]),
                ToolMessage(content=f"result {i}: " + "x" * 120, tool_call_id=call_id),
            ]
        )

    def close(self) -> None:
        for history in self.histories.values():
            history.session_maker.remove()
        self.engine.dispose()


CLASSES: dict[str, type[Store]] = {
    c.name: c for c in (SqlmemorySync, SqlmemoryAsync, AgentsSQLAlchemy, LangChainSQL)
}


def _summary(times: Sequence[float], wall: float) -> dict[str, Any]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {
        "turns": len(times),
        "turns_per_s": round(len(times) / wall, 1),
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(p99 * 1000, 2),
    }


def _sync_load(store: Store, sids: Sequence[str], turns: int) -> tuple[list[float], float]:
    times: list[float] = []
    barrier = threading.Barrier(len(sids) + 1)

    def client(sid: str) -> list[float]:
        mine = []
        barrier.wait()
        for i in range(turns):
            started = time.perf_counter()
            store.turn(sid, i)
            mine.append(time.perf_counter() - started)
        return mine

    with ThreadPoolExecutor(max_workers=len(sids)) as pool:
        futures = [pool.submit(client, sid) for sid in sids]
        barrier.wait()
        started = time.perf_counter()
        for future in futures:
            times += future.result()
        wall = time.perf_counter() - started
    return times, wall


async def _async_load(store: Store, sids: Sequence[str], turns: int) -> tuple[list[float], float]:
    times: list[float] = []

    async def client(sid: str) -> None:
        for i in range(turns):
            started = time.perf_counter()
            await store.aturn(sid, i)
            times.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client(sid) for sid in sids))
    return times, time.perf_counter() - started


def run_case(name: str, url: str, clients: int, shared: bool, turns: int, pool: int) -> Any:
    """``clients`` clients of store ``name`` running ``turns`` turns each; the figures."""
    store = CLASSES[name](url, min(clients, pool))
    run_id = uuid.uuid4().hex[:8]
    sids = [f"bench-turn-{run_id}-{0 if shared else c}" for c in range(clients)]
    loop = asyncio.new_event_loop()
    try:
        if store.is_async:
            loop.run_until_complete(store.aturn(f"bench-turn-{run_id}-warm", 0))
            times, wall = loop.run_until_complete(_async_load(store, sids, turns))
        else:
            store.turn(f"bench-turn-{run_id}-warm", 0)
            times, wall = _sync_load(store, sids, turns)
    finally:
        if store.is_async:
            loop.run_until_complete(store.aclose())
        store.close()
        loop.close()
    return _summary(times, wall)


def _clean(url: str) -> None:
    engine = sa.create_engine(_url(url, "sync"))
    try:
        with engine.begin() as conn:
            for table in PEER_TABLES[::-1]:
                quoted = conn.dialect.identifier_preparer.quote(table)
                conn.exec_driver_sql(f"DROP TABLE IF EXISTS {quoted}")
            conn.execute(
                sa.text("DELETE FROM sqlmemory_sessions WHERE session_id LIKE :p"),
                {"p": "bench-turn-%"},
            )
    finally:
        engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pg-url", default=os.environ.get("SQLMEMORY_BENCH_POSTGRES_URL") or DEFAULT_PG_URL
    )
    parser.add_argument(
        "--mysql-url",
        default=os.environ.get("SQLMEMORY_BENCH_MYSQL_URL") or DEFAULT_MYSQL_URL,
    )
    parser.add_argument("--backend", choices=sorted(DRIVERS), default="postgresql")
    parser.add_argument("--clients", default="1,8,32,64")
    parser.add_argument("--turns", type=int, default=20, help="turns per client")
    parser.add_argument("--pool", type=int, default=64, help="the largest pool_size")
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    clients = [int(c) for c in args.clients.split(",")]
    turns = 3 if args.quick else args.turns
    if args.quick:
        clients = [1, 4]
    url = args.pg_url if args.backend == "postgresql" else args.mysql_url
    upgrade(_url(url, "sync"))
    proxy = None
    report: dict[str, Any] = {"machine": machine_info(), "turns": turns, "results": []}
    if args.latency_ms > 0:
        target = make_url(url)
        default_port = 5432 if args.backend == "postgresql" else 3306
        proxy = LatencyProxy(
            target.host or "127.0.0.1", target.port or default_port, args.latency_ms
        )
        url = proxy.start().url(url)
        measured = proxy.measured_round_trip_ms(_url(url, "sync"))
        report["latency_proxy"] = {"delay_ms_each_way": args.latency_ms, "round_trip_ms": measured}
        print(f"latency proxy: a SELECT 1 round trip takes {measured} ms", file=sys.stderr)
    cases = [(c, False) for c in clients] + [(8 if not args.quick else 4, True)]
    stores = [s for s in args.stores.split(",") if s]
    if args.backend == "mysql" and "agents_sqlalchemy" in stores:
        # Its tables declare VARCHAR without a length, which MySQL cannot create.
        stores.remove("agents_sqlalchemy")
        print("agents_sqlalchemy: left out, it cannot create its tables on MySQL", file=sys.stderr)
    say: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    try:
        _clean(url)
        for c, shared in cases:
            for name in stores:
                figures = run_case(name, url, c, shared, turns, args.pool)
                row = {"store": name, "clients": c, "shared_session": shared, **figures}
                report["results"].append(row)
                say(f"{name:18} C={c:<3}{' shared' if shared else '       '} {figures}")
    finally:
        _clean(url)
        if proxy is not None:
            proxy.stop()
    print(render(report["results"]))
    args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 0


def render(results: Sequence[dict[str, Any]]) -> str:
    """One line per case: each store's turns/s and p50/p99 (ms)."""
    cases = sorted(
        {(r["clients"], r["shared_session"]) for r in results}, key=lambda x: (x[1], x[0])
    )
    stores = list(dict.fromkeys(r["store"] for r in results))
    lines = [f"{'clients':>14} " + "".join(f"{s:>28}" for s in stores)]
    lines.append(f"{'':>14} " + "".join(f"{'turns/s  p50  p99':>28}" for _ in stores))
    for c, shared in cases:
        label = f"{c}{' one session' if shared else ''}"
        cells = []
        for s in stores:
            r = next(
                x
                for x in results
                if (x["clients"], x["shared_session"], x["store"]) == (c, shared, s)
            )
            cells.append(f"{r['turns_per_s']:>12.1f} {r['p50_ms']:>7.1f} {r['p99_ms']:>7.1f}")
        lines.append(f"{label:>14} " + "".join(f"{c:>28}" for c in cells))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
