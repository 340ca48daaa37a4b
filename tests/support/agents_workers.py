"""SqlMemorySession workers run as spawned processes: adders of whole responses, and a
popper. Like :mod:`tests.support.writers`, this imports no test framework."""

from __future__ import annotations

import asyncio
from typing import Any

ADDS = 12
"""Responses each adder stores."""


def response(adder: str, n: int) -> list[dict[str, Any]]:
    """The items of response ``n`` of ``adder``: the user's message, then a reasoning item
    and a function call, output items of one response (stored as one message)."""
    key = f"{adder}-{n:03d}"
    return [
        {"role": "user", "content": f"ask {key}"},
        {"id": f"rs_{key}", "summary": [], "type": "reasoning"},
        {
            "arguments": "{}",
            "call_id": f"call_{key}",
            "name": "f",
            "type": "function_call",
            "id": f"fc_{key}",
        },
    ]


def item_key(item: dict[str, Any]) -> str:
    """What tells an item of :func:`response` apart from every other."""
    return str(item.get("id") or item["content"])


def run_worker(
    kind: str, url: str, session_id: str, name: str, pops: int, ready: Any, go: Any, done: Any
) -> None:
    """Entry point of a spawned worker: an adder (``pops == 0``) stores its responses, a
    popper pops ``pops`` items. Reports ``("ready", name)``, waits for ``go``, then
    reports ``("done", name, popped keys)`` or ``("error", name, repr)`` on ``done``."""
    try:
        popped = asyncio.run(_work(kind, url, session_id, name, pops, ready, go))
        done.put(("done", name, popped))
    except BaseException as exc:
        ready.put(("error", name, repr(exc)))
        done.put(("error", name, repr(exc)))


async def _work(
    kind: str, url: str, session_id: str, name: str, pops: int, ready: Any, go: Any
) -> list[str]:
    from sqlmemory import AsyncSqlStorage, SqlStorage
    from sqlmemory.integrations.openai_agents import SqlMemorySession

    storage: Any = AsyncSqlStorage.from_url(url) if kind == "async" else SqlStorage.from_url(url)
    try:
        session = SqlMemorySession(session_id, storage)
        await session.get_items(limit=1)  # connects and checks the schema before the race
        ready.put(("ready", name))
        if not await asyncio.to_thread(go.wait, 120):
            raise TimeoutError("no go signal")
        if not pops:
            for n in range(ADDS):
                await session.add_items(response(name, n))  # type: ignore[arg-type]
            return []
        return await _pop(session, pops)
    finally:
        closed = storage.close()
        if closed is not None:
            await closed


async def _pop(session: Any, pops: int) -> list[str]:
    """Pop ``pops`` items, waiting for the adders when the session is empty."""
    popped: list[str] = []
    deadline = asyncio.get_running_loop().time() + 60
    while len(popped) < pops:
        item = await session.pop_item()
        if item is not None:
            popped.append(item_key(item))
        elif asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"the session stayed empty after {len(popped)} pops")
        else:
            await asyncio.sleep(0.005)
    return popped
