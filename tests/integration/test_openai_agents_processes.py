"""SqlMemorySession from several processes at once: items added while another process
pops are each either still stored or popped, once, and in order."""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
from typing import Any

import pytest

from tests.support.agents_workers import ADDS, item_key, response, run_worker
from tests.support.processes import running

SID = "shared-agents"
ADDERS = ("a0", "a1")
POPS = 30
TIMEOUT = 120


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_adds_and_pops_from_processes_lose_and_repeat_nothing(
    kind: str, db_url: str, async_db_url: str, async_storage: Any
) -> None:
    from sqlmemory.integrations.openai_agents import SqlMemorySession

    url = async_db_url if kind == "async" else db_url
    context = multiprocessing.get_context("spawn")
    ready, done, go = context.Queue(), context.Queue(), context.Event()
    workers = [(name, 0) for name in ADDERS] + [("popper", POPS)]
    processes = [
        context.Process(
            target=run_worker, args=(kind, url, SID, name, pops, ready, go, done), daemon=True
        )
        for name, pops in workers
    ]
    # Something to pop from the start: the popper never waits on an empty session.
    session = SqlMemorySession(SID, async_storage)
    await session.add_items(response("seed", 0))  # type: ignore[arg-type]
    with running(processes, TIMEOUT):
        for _ in processes:
            report = ready.get(timeout=TIMEOUT)
            assert report[0] == "ready", report
        go.set()
        reports = {r[1]: r for r in (done.get(timeout=TIMEOUT) for _ in processes)}
    assert all(r[0] == "done" for r in reports.values()), reports
    assert [p.exitcode for p in processes] == [0] * len(processes)

    added = [item_key(i) for n in range(ADDS) for name in ADDERS for i in response(name, n)]
    added += [item_key(i) for i in response("seed", 0)]
    popped = reports["popper"][2]
    stored = [item_key(i) for i in await session.get_items()]
    # Every item added is stored or was popped, exactly once.
    assert sorted(stored + popped) == sorted(added)
    assert len(popped) == POPS
    # Each adder's stored items keep their order, and pops took items from the end only:
    # what is left of a response is a prefix of it.
    for name in ADDERS:
        mine = [k for k in stored if k.endswith(tuple(f"{name}-{n:03d}" for n in range(ADDS)))]
        expected = [item_key(i) for n in range(ADDS) for i in response(name, n)]
        assert mine == [k for k in expected if k in mine]
    for n in range(ADDS):
        for name in ADDERS:
            keys = [item_key(i) for i in response(name, n)]
            left = [k for k in keys if k in stored]
            assert left == keys[: len(left)]


def _usage_result(n: int) -> Any:
    """A finished run's result as ``store_run_usage`` reads it: one response, whose output
    is the seed's function call, reporting ``n`` input tokens (a new usage each time)."""
    from types import SimpleNamespace

    from agents.usage import Usage as AgentsUsage

    response = SimpleNamespace(
        output=[{"id": "fc_seed-000"}], usage=AgentsUsage(input_tokens=n, output_tokens=1)
    )
    return SimpleNamespace(raw_responses=[response], new_items=[])


async def test_store_run_usage_beside_appends_from_processes_loses_no_item(
    db_url: str, async_db_url: str, async_storage: Any
) -> None:
    # One write under the session's lock (``_rewrite``); the sync storage's path to it
    # (through a worker thread) is run by test_openai_agents_usage.py.
    from sqlmemory.integrations.openai_agents import SqlMemorySession

    session = SqlMemorySession(SID, async_storage)
    await session.add_items(response("seed", 0))  # type: ignore[arg-type]
    context = multiprocessing.get_context("spawn")
    ready, done, go = context.Queue(), context.Queue(), context.Event()
    processes = [
        context.Process(
            target=run_worker, args=(adder, url, SID, name, 0, ready, go, done), daemon=True
        )
        for name, adder, url in zip(ADDERS, ("async", "sync"), (async_db_url, db_url), strict=True)
    ]
    rewrites = 0
    with running(processes, TIMEOUT):
        for _ in processes:
            report = ready.get(timeout=TIMEOUT)
            assert report[0] == "ready", report
        go.set()
        reports: list[Any] = []
        # Usage stored again and again (each time a change, so each time a write of the
        # history from the seed's message on) for as long as the adders append.
        while len(reports) < len(processes):
            rewrites += 1
            assert await session.store_run_usage(_usage_result(rewrites)) == 1
            with contextlib.suppress(queue.Empty):
                reports.append(done.get_nowait())
    assert all(r[0] == "done" for r in reports), reports
    added = [item_key(i) for n in range(ADDS) for name in ADDERS for i in response(name, n)]
    added += [item_key(i) for i in response("seed", 0)]
    stored = await async_storage.load(SID)
    items = [item_key(i) for i in await session.get_items()]
    # Every item appended is there once, and the seed's message has the last usage.
    assert sorted(items) == sorted(added)
    assert stored[1].usage is not None and stored[1].usage.input_tokens == rewrites
