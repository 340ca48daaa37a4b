"""Forking processes, run against a session that other processes append to.

A module that imports no test framework, so a ``spawn``-ed child imports only this and
sqlmemory. Each forker forks the source again and again, every other time at a message
it has just read, and reports what it made.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

FORKS = 12


def fork_name(forker: str, n: int) -> str:
    return f"fork/{forker}/{n:03d}"


def _forks(storage: Any, source: str, forker: str, chosen: random.Random) -> list[str]:
    made = []
    for n in range(FORKS):
        at = None
        if n % 2:
            stored = storage.load(source)
            at = chosen.choice(stored).id if stored else None
        storage.fork(source, fork_name(forker, n), at=at)
        made.append(fork_name(forker, n))
    return made


async def _async_forks(url: str, source: str, forker: str, go: Any) -> list[str]:
    from sqlmemory import AsyncSqlStorage

    storage = AsyncSqlStorage.from_url(url)
    chosen = random.Random(forker)
    try:
        await storage.count(source)
        if not go.wait(120):
            raise TimeoutError("no go signal")
        made = []
        for n in range(FORKS):
            at = None
            if n % 2:
                stored = await storage.load(source)
                at = chosen.choice(stored).id if stored else None
            await storage.fork(source, fork_name(forker, n), at=at)
            made.append(fork_name(forker, n))
        return made
    finally:
        await storage.close()


def process_forker(
    url: str, is_async: bool, source: str, forker: str, ready: Any, go: Any, done: Any
) -> None:
    """Entry point of a spawned forker: its own engine (sync or async), then every fork.

    Reports ``("ready", forker)`` once started, and ``("done", forker, made)`` or
    ``("error", forker, repr)`` on ``done``.
    """
    try:
        ready.put(("ready", forker))
        if is_async:
            made = asyncio.run(_async_forks(url, source, forker, go))
        else:
            from sqlmemory import SqlStorage

            storage = SqlStorage.from_url(url)
            try:
                storage.count(source)
                if not go.wait(120):
                    raise TimeoutError("no go signal")
                made = _forks(storage, source, forker, random.Random(forker))
            finally:
                storage.close()
    except BaseException as exc:
        done.put(("error", forker, repr(exc)))
        raise
    done.put(("done", forker, made))
