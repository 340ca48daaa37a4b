#!/usr/bin/env python
"""The LlamaIndex stores beside LlamaIndex's SQLAlchemyChatStore, on one engine.

From the repository root, after ``pip install -e '.[dev,bench]'``::

    python bench/llama_index_store.py              # full sizes, SQLite and PostgreSQL
    python bench/llama_index_store.py --quick      # small sizes, a check that it runs

Every store gets the very same ``AsyncEngine`` (``create_async_engine(url)``): a fresh
SQLite file through ``aiosqlite``, and a PostgreSQL database through ``asyncpg`` when
``$SQLMEMORY_BENCH_POSTGRES_URL`` (or the default below) reaches one; sqlmemory's tables
and LlamaIndex's ``llama_index_memory`` table live side by side in it. The stores are
``SqlMemoryDBChatStore`` (``Memory``'s store, the same interface as the peer's) and
``SqlMemoryChatStore`` (``ChatMemoryBuffer``'s, its async methods), both over an
``AsyncSqlStorage``. Each history is a tool conversation (a question, a tool call, its
result, an answer), filled through each store's own batch add; then the cases are timed
interleaved, in an order that rotates every repetition (``timing.rotating``):
``get_messages`` of the whole active history at each size and of its newest 20 messages
(``SqlMemoryChatStore`` with a ``FixedWindow`` policy; the peer with ``limit`` and
``offset``), and ``add_message`` of one message. The table shows medians in milliseconds
and each sqlmemory store's median over the peer's (below 1.0x it is faster).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from adk_session import server_database  # noqa: E402
from timing import rotating, summarize  # noqa: E402

DEFAULT_PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
PG_URL_ENV = "SQLMEMORY_BENCH_POSTGRES_URL"
DEFAULT_JSON = BENCH_DIR / "results-llama-index.json"
PEER = "sqlalchemy_chat_store"
STORES = ("memory_store", "chat_store", PEER)


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much work each case does; :data:`FULL` is the default run."""

    histories: tuple[int, ...] = (1_000, 10_000)
    read_reps: tuple[int, ...] = (40, 10)
    add_reps: int = 100
    window: int = 20
    warmup: int = 3


FULL = Sizes()
QUICK = Sizes(histories=(10, 40), read_reps=(5, 3), add_reps=5, window=4, warmup=1)


def conversation(n: int, tag: str) -> list[Any]:
    """``n`` chat messages: a question, a tool call, its result, an answer, in turn."""
    from llama_index.core.base.llms.types import ChatMessage

    made = []
    for i in range(n):
        call_id = f"{tag}-call-{i // 4}"
        kind = i % 4
        if kind == 0:
            made.append(ChatMessage(role="user", content=f"What is 6 x {i}?"))
        elif kind == 1:
            call = {"id": call_id, "type": "function"}
            call["function"] = {"name": "multiply", "arguments": f'{{"a": 6, "b": {i}}}'}
            made.append(
                ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]})
            )
        elif kind == 2:
            kwargs = {"tool_call_id": call_id, "name": "multiply"}
            made.append(ChatMessage(role="tool", content=str(6 * i), additional_kwargs=kwargs))
        else:
            made.append(ChatMessage(role="assistant", content=f"It is {6 * i}."))
    return made


class Bench:
    """The three stores on one engine, and the cases timed on them."""

    def __init__(self, url: str, sizes: Sizes, loop: asyncio.AbstractEventLoop) -> None:
        from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore
        from sqlalchemy.ext.asyncio import create_async_engine

        from sqlmemory import AsyncSqlStorage, FixedWindow
        from sqlmemory.integrations.llama_index import SqlMemoryChatStore, SqlMemoryDBChatStore

        self.loop = loop
        self.sizes = sizes
        self.engine = create_async_engine(url)
        storage = AsyncSqlStorage(self.engine)
        self.stores: dict[str, Any] = {
            "memory_store": SqlMemoryDBChatStore(storage),
            "chat_store": SqlMemoryChatStore(storage),
            PEER: SQLAlchemyChatStore(table_name="llama_index_memory", async_engine=self.engine),
        }
        self.windowed = SqlMemoryChatStore(storage, policy=FixedWindow(sizes.window))

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    def _calls(self, name: str, verb: str) -> Any:
        """The store's ``get``, ``add`` or ``add_many`` coroutine function."""
        store = self.stores[name]
        if name == "chat_store":
            many = store.aset_messages
            return {"get": store.aget_messages, "add": store.async_add_message, "many": many}[verb]
        return {"get": store.get_messages, "add": store.add_message, "many": store.add_messages}[
            verb
        ]

    def fill(self, key: str, n: int) -> None:
        """A history of ``n`` messages under ``key`` (each store's own keys: the two
        sqlmemory stores share the tables, so each gets a key of its own)."""
        messages = conversation(n, key)
        for name in self.stores:
            many = self._calls(name, "many")
            if name == PEER:  # one INSERT of all rows: asyncpg takes 32,767 parameters at most
                for start in range(0, n, 1_000):
                    self.run(many(f"{name}-{key}", messages[start : start + 1_000]))
            else:
                self.run(many(f"{name}-{key}", messages))

    def time(self, label: str, calls: dict[str, Any], reps: int) -> dict[str, Any]:
        names = list(calls)
        fns = [lambda i, name=name: self.run(calls[name](i)) for name in names]
        samples = rotating(fns, reps, self.sizes.warmup)
        results = {name: summarize(s) for name, s in zip(names, samples, strict=True)}
        peer = results[PEER]["median_ms"]
        ratios = {name: results[name]["median_ms"] / peer for name in names if name != PEER}
        return {"label": label, "results": results, "ratios": ratios}

    def time_window(self, key: str, n: int, reps: int) -> dict[str, Any]:
        """The newest ``window`` messages: SqlMemoryChatStore with a ``FixedWindow`` policy (a
        tail read), the peer with ``limit`` and ``offset`` (the caller knows the count)."""
        w = self.sizes.window
        ours, peer = self.windowed.aget_messages, self.stores[PEER].get_messages
        calls = {
            "chat_store": lambda i: ours(f"chat_store-{key}"),
            PEER: lambda i: peer(f"{PEER}-{key}", limit=w, offset=n - w),
        }
        return self.time(f"newest {w} of {n} messages", calls, reps)

    def cases(self) -> list[dict[str, Any]]:
        sizes = self.sizes
        rows = []
        for n, reps in zip(sizes.histories, sizes.read_reps, strict=True):
            key = f"history-{n}"
            self.fill(key, n)

            def get(name: str, key: str = key) -> Any:
                fn = self._calls(name, "get")
                return lambda i: fn(f"{name}-{key}")

            rows.append(self.time(f"get_messages @{n} messages", {k: get(k) for k in STORES}, reps))
            rows.append(self.time_window(key, n, sizes.add_reps))
        last = f"history-{sizes.histories[-1]}"
        more = conversation(sizes.add_reps + sizes.warmup, "more")

        def add(name: str) -> Any:
            fn = self._calls(name, "add")
            return lambda i: fn(f"{name}-{last}", more[i])

        label = f"add_message @{sizes.histories[-1]} messages"
        rows.append(self.time(label, {k: add(k) for k in STORES}, sizes.add_reps))
        return rows

    def close(self) -> None:
        self.run(self.engine.dispose())


def render(backend: str, rows: list[dict[str, Any]]) -> str:
    lines = [
        f"\n{backend}: medians in ms",
        "| case | SqlMemoryDBChatStore | SqlMemoryChatStore | SQLAlchemyChatStore "
        "| x peer (DB store) | x peer (chat store) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        found, ratios = row["results"], row["ratios"]
        ms = [f"{found[n]['median_ms']:.2f}" if n in found else "-" for n in STORES]
        xs = [f"{ratios[n]:.2f}x" if n in ratios else "-" for n in STORES[:2]]
        lines.append(f"| `{row['label']}` | {' | '.join(ms)} | {' | '.join(xs)} |")
    return "\n".join(lines)


def run_backend(url: str, sizes: Sizes) -> list[dict[str, Any]]:
    from sqlmemory import migrate

    migrate.upgrade(url.replace("+aiosqlite", "").replace("+asyncpg", "+psycopg"))
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
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--postgres-only", action="store_true")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    report: dict[str, Any] = {"sizes": dataclasses.asdict(sizes), "backends": {}}
    if not args.postgres_only:
        with tempfile.TemporaryDirectory(prefix="sqlmemory-llama-bench-") as tmp:
            url = f"sqlite+aiosqlite:///{tmp}/bench.db"
            report["backends"]["sqlite"] = run_backend(url, sizes)
            print(render("SQLite", report["backends"]["sqlite"]), flush=True)
    if not args.sqlite_only:
        found = server_database(os.environ.get(PG_URL_ENV, DEFAULT_PG_URL))
        if found is None:
            print("\nPostgreSQL: not reachable, skipped")
        else:
            url, drop = found
            try:
                report["backends"]["postgresql"] = run_backend(url, sizes)
            finally:
                drop()
            print(render("PostgreSQL", report["backends"]["postgresql"]), flush=True)
    args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
