"""Worker processes of the owner tests: owners racing to create one session id, and an
``erase_owner`` that is SIGKILLed half-way. Plain functions, no test framework.

They run in processes of :func:`tests.reliability.workers.forkserver` (sqlmemory
preloaded), and report on queues, as the reliability suite's workers do.
"""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from sqlmemory import SessionOwnerError, SqlStorage
from tests.reliability.workers import TIMEOUT, BlockingAsync, batch
from tests.support.cases import image_bytes

WON, REFUSED = "won", "refused"
"""What a racer reports of a round: it created the session, or got ``SessionOwnerError``."""


def racer_owner(index: int) -> str:
    """The owner racer ``index`` writes as."""
    return f"racer-{index}"


def racer_image(index: int) -> bytes:
    """The image of racer ``index``'s batches: one of its own, so a blob tells whose it is."""
    return image_bytes(2, 2, "image/png", seed=40 + index)


def race_sid(round_: int) -> str:
    """The brand-new session id the racers all write to in round ``round_``."""
    return f"race-{round_:03d}"


def open_kind(kind: str, url: str) -> Any:
    """A ``SqlStorage`` (``"sync"``) or a blocking ``AsyncSqlStorage`` (``"async"``)."""
    return SqlStorage.from_url(url) if kind == "sync" else BlockingAsync(url)


def race_worker(url: str, index: int, kind: str, rounds: int, barrier: Any, results: Any) -> None:
    """Each round, write a batch (with an image) to that round's new session through the
    view of owner ``racer_owner(index)``, all racers released together by ``barrier``:
    an ``append`` in one round, a ``save`` in the next, so both ways of creating a
    session race.

    Reports ``(index, outcomes)``: per round, :data:`WON`, :data:`REFUSED` or the error
    that no racer may get.
    """
    outcomes: list[str] = []
    owner = racer_owner(index)
    try:
        storage = open_kind(kind, url)
        try:
            view = storage.owned_by(owner)
            view.count("warm-up")  # connects and checks the schema before the race
            for r in range(rounds):
                messages = batch(owner, f"r{r}", racer_image(index))
                barrier.wait(TIMEOUT)
                try:
                    if (r + index) % 2 == 0:
                        view.append(race_sid(r), *messages)
                    else:
                        view.save(race_sid(r), messages)
                    outcomes.append(WON)
                except SessionOwnerError:
                    outcomes.append(REFUSED)
                except Exception as exc:  # every other error is a finding: report it
                    outcomes.append(f"{type(exc).__name__}: {exc}")
        finally:
            storage.close()
    except BaseException as exc:
        outcomes.append(f"racer {index} died: {type(exc).__name__}: {exc}")
        barrier.abort()
    results.put((index, outcomes))


def killed_eraser(
    url: str,
    kind: str,
    owner: str,
    sizes: tuple[int, int],
    after_commits: int,
    holding: Any,
) -> None:
    """Run ``erase_owner(owner)`` with batches of at most ``sizes`` (sessions, messages),
    and stop inside the transaction of the batch after ``after_commits`` committed ones,
    right after its first ``DELETE`` ran: report the commits on ``holding`` and wait to be
    SIGKILLed there. ``"finished"`` if the erasure ended first (the test then fails).
    """
    from sqlmemory.storage.sql import erasure

    erasure.ERASE_SESSIONS, erasure.ERASE_MESSAGES = sizes
    storage = open_kind(kind, url)
    storage.count("warm-up")  # the schema check, before the commits are counted
    engine: sa.Engine = storage.engine
    commits = [0]

    def count(conn: sa.Connection) -> None:
        commits[0] += 1

    def hold(conn: sa.Connection, cursor: Any, statement: str, *args: Any) -> None:
        if commits[0] >= after_commits and statement.lstrip().upper().startswith("DELETE"):
            holding.put(commits[0])
            time.sleep(TIMEOUT)  # the kill comes here, the transaction open

    sa.event.listen(engine, "commit", count)
    sa.event.listen(engine, "after_cursor_execute", hold)
    storage.erase_owner(owner)
    holding.put("finished")
