"""What ``owner_costs.py`` measures, on one backend: owned pages, owned views, erasure.

Each function takes the backend's storages (``SqlStorage.from_url`` and, for the view
ratios, ``AsyncSqlStorage.from_url`` on the same database) and a :class:`Sizes`, and
returns its result rows. The session records of :func:`fill_records` are written with
plain ``INSERT``s (what the storage would store), the messages through the storage.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import sqlalchemy as sa
from corpus import Corpus, noise_png, to_message
from timing import shuffled, summarize

from sqlmemory import AsyncSqlStorage, FixedWindow, ImageBlock, Message, SqlStorage, TextBlock
from sqlmemory.storage.sql.schema import blobs_table, messages_table, sessions_table

T = TypeVar("T")
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
FILL_CHUNK = 5000
LAST = -1
"""The page number that stands for an owner's (or the whole list's) last page."""


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much work each measure does; :data:`FULL` is the default run."""

    sessions: int = 100_000
    owners: int = 1_000
    big_every: int = 10
    """Every ``big_every``-th session is the measured owner's (10,000 of 100,000); the
    others are spread evenly over the other owners."""
    limit: int = 50
    pages: tuple[int, ...] = (0, 10, 50, LAST)
    page_reps: int = 100
    append_reps: int = 500
    append_warmup: int = 20
    window_messages: int = 1_000
    window: int = 10
    window_reps: int = 1_000
    window_warmup: int = 20
    erase_sessions: int = 100
    erase_messages: int = 1_000
    image_every: int = 100
    """One message in ``image_every`` of an erased session carries an image."""
    image_side: int = 64  # RGB noise: a PNG of about 12 KiB


FULL = Sizes()
QUICK = Sizes(
    sessions=3_000,
    owners=20,
    limit=5,
    page_reps=5,
    append_reps=30,
    append_warmup=3,
    window_messages=100,
    window_reps=30,
    window_warmup=3,
    erase_sessions=6,
    erase_messages=1_000,
    image_every=50,
    image_side=16,
)


@dataclasses.dataclass(frozen=True)
class Names:
    """The run's session ids and owners, unique to it (``run`` is random)."""

    run: str

    def session(self, i: int | str) -> str:
        return f"bench-owners-{self.run}-{i:07d}" if isinstance(i, int) else f"{self.prefix}{i}"

    def owner(self, k: int) -> str:
        return f"bench-owner-{self.run}-{k:04d}"

    @property
    def prefix(self) -> str:
        return f"bench-owners-{self.run}-"


def owner_index(i: int, sizes: Sizes) -> int:
    """Whose session ``i`` is: owner 0 (the measured one) every ``big_every``-th, else one
    of the others in turn."""
    if i % sizes.big_every == 0:
        return 0
    return 1 + (i // sizes.big_every) % (sizes.owners - 1)


def fill_records(engine: sa.Engine, names: Names, sizes: Sizes) -> None:
    """``sizes.sessions`` session records over ``sizes.owners`` owners, three to a second
    of ``updated_at`` (ties), every owner's scattered over the whole time range."""
    for start in range(0, sizes.sessions, FILL_CHUNK):
        rows = []
        for i in range(start, min(sizes.sessions, start + FILL_CHUNK)):
            at = START + timedelta(seconds=i // 3)
            rows.append(
                {
                    "session_id": names.session(i),
                    "next_seq": 1,
                    "last_recorded_at": at,
                    "created_at": START,
                    "updated_at": at,
                    "message_count": 0,
                    "owner": names.owner(owner_index(i, sizes)),
                }
            )
        with engine.begin() as conn:
            conn.execute(sa.insert(sessions_table), rows)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if engine.dialect.name == "postgresql":
            # VACUUM too: the dead rows that earlier runs deleted (or anything else did)
            # would otherwise make the planner walk them whenever it reads an end of an
            # index for an estimate, as a database that autovacuum keeps would not.
            conn.exec_driver_sql("VACUUM ANALYZE sqlmemory_sessions")
        elif engine.dialect.name in ("mysql", "mariadb"):
            conn.exec_driver_sql("ANALYZE TABLE sqlmemory_sessions")


def cursors(list_page: Callable[[str | None], Any], pages: tuple[int, ...]) -> dict[int, Any]:
    """The cursor of each page of ``pages`` (``None`` for the first), found by walking the
    pages one by one; :data:`LAST` becomes the last page's number."""
    found: dict[int, Any] = {}
    cursor, number = None, 0
    while True:
        if number in pages:
            found[number] = cursor
        page = list_page(cursor)
        if page.next_cursor is None:
            if LAST in pages:
                found[number] = cursor
            return found
        cursor, number = page.next_cursor, number + 1


def paired(mine: list[float], theirs: list[float]) -> float:
    """The median over the repetitions of ``mine[i] / theirs[i]``: both ran in the same
    repetition, a few milliseconds apart, so a load that comes and goes over seconds
    weighs on both sides of each ratio alike."""
    return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))


def _walk(list_sessions: Callable[..., Any], limit: int, cursor: str | None) -> Any:
    return list_sessions(limit=limit, cursor=cursor)


def pages(storage: SqlStorage, names: Names, sizes: Sizes) -> list[dict[str, Any]]:
    """Milliseconds per page of the measured owner (through its owned view) and of the
    unscoped list, at each page number, all interleaved in every repetition; ``x_first``:
    a page's time over the same list's first page's, paired by repetition."""
    owner = names.owner(0)
    view = storage.owned_by(owner)
    limit = sizes.limit
    cases: list[tuple[str, int, bool, Callable[[int], object]]] = []
    scopes: list[tuple[str, Callable[..., Any]]] = [
        ("owner", view.list_sessions),
        ("all", storage.list_sessions),
    ]
    for scope, list_sessions in scopes:
        walked = cursors(functools.partial(_walk, list_sessions, limit), sizes.pages)
        last = max(walked) if LAST in sizes.pages else None
        for number, cursor in walked.items():
            page = list_sessions(limit=limit, cursor=cursor)
            if scope == "owner" and {i.owner for i in page.items} != {owner}:
                raise RuntimeError(f"page {number} of {owner} holds other owners' sessions")
            if len(page.items) != limit:
                raise RuntimeError(f"page {number} holds {len(page.items)} sessions, not {limit}")
            cases.append((scope, number, number == last, _page_call(list_sessions, limit, cursor)))
    samples = shuffled([case[-1] for case in cases], sizes.page_reps, 2)
    timed = list(zip(cases, samples, strict=True))
    first = {scope: values for (scope, number, *_), values in timed if number == 0}
    return [
        {
            "scope": scope,
            "page": number,
            "last": is_last,
            **summarize(values),
            "x_first": paired(values, first[scope]),
        }
        for (scope, number, is_last, _), values in timed
    ]


def _page_call(
    list_sessions: Callable[..., Any], limit: int, cursor: Any
) -> Callable[[int], object]:
    def call(_: int) -> object:
        return list_sessions(limit=limit, cursor=cursor)

    return call


class Loop:
    """One event loop, each awaitable run to completion on it (as ``async_side.py``)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, awaitable: Awaitable[T]) -> T:
        return self.loop.run_until_complete(awaitable)

    def close(self) -> None:
        self.loop.close()


def _messages(corpus: Corpus, n: int) -> list[Message]:
    return [to_message(role, text) for role, text in corpus.rows(n)]


def _calls(
    store: Any, drive: Callable[[Any], Any], sid: str, batch: list[Message], window: tuple[str, int]
) -> tuple[Callable[[int], object], Callable[[int], list[Message]]]:
    """``store``'s timed calls: the ``i``-th append of ``batch`` to ``sid``, and the window
    read; ``drive`` runs an async storage's call to completion (a sync one's has run)."""

    def append(i: int) -> object:
        return drive(store.append(sid, batch[i]))

    def load(_: int) -> list[Message]:
        messages: list[Message] = drive(store.load(window[0], FixedWindow(window[1])))
        return messages

    return append, load


def view_ratios(
    storage: SqlStorage, aio: AsyncSqlStorage | None, loop: Loop, names: Names, sizes: Sizes
) -> list[dict[str, Any]]:
    """An owned view's ``append`` of one message and window read against the unscoped
    storage's, sync and async; a call's contenders of one flavour run in one loop, in a
    new random order every repetition (``timing.shuffled``).

    Each flavour runs the unscoped storage twice (``unscoped`` and ``again``, the same
    calls): their ratio is what the noise of the run alone makes of two equal contenders.
    The window is read from one session of ``window_messages`` messages, the view's
    owner's, by all; each appends to a session of its own."""
    owner = names.owner(0)
    corpus = Corpus(seed=25)
    history = _messages(corpus, sizes.window_messages)
    window = (names.session("window"), sizes.window)
    storage.owned_by(owner).append(window[0], *history)
    expected = [m.id for m in FixedWindow(sizes.window).apply(history)]
    flavours: list[tuple[str, Any, Callable[[Any], Any]]] = [("sync", storage, lambda r: r)]
    if aio is not None:
        flavours.append(("async", aio, loop.run))
    appends: list[tuple[str, str, Callable[[int], object]]] = []
    reads: list[tuple[str, str, Callable[[int], object]]] = []
    for flavour, base, drive in flavours:
        for scope, store in (("unscoped", base), ("again", base), ("owned", base.owned_by(owner))):
            sid = names.session(f"append-{flavour}-{scope}")
            batch = _messages(corpus, sizes.append_reps + sizes.append_warmup)
            append, load = _calls(store, drive, sid, batch, window)
            if [m.id for m in load(0)] != expected:
                raise RuntimeError(f"the {flavour} {scope} window is not the newest {window[1]}")
            appends.append((flavour, scope, append))
            reads.append((flavour, scope, load))
    measures = (
        ("append 1", appends, sizes.append_reps, sizes.append_warmup),
        (
            f"FixedWindow({sizes.window}) @{sizes.window_messages}",
            reads,
            sizes.window_reps,
            sizes.window_warmup,
        ),
    )
    rows = []
    for call, cases, reps, warmup in measures:
        for flavour, _, _ in flavours:
            mine = [(s, fn) for f, s, fn in cases if f == flavour]
            samples = shuffled([fn for _, fn in mine], reps, warmup, seed=25)
            raw = {s: v for (s, _), v in zip(mine, samples, strict=True)}
            by = {s: summarize(v) for s, v in raw.items()}
            unscoped, again, owned = by["unscoped"], by["again"], by["owned"]
            rows.append(
                {
                    "call": call,
                    "flavour": flavour,
                    "unscoped": unscoped,
                    "again": again,
                    "owned": owned,
                    "owned_x_unscoped": owned["median_ms"] / unscoped["median_ms"],
                    "again_x_unscoped": again["median_ms"] / unscoped["median_ms"],
                    "owned_x_unscoped_paired": paired(raw["owned"], raw["unscoped"]),
                    "again_x_unscoped_paired": paired(raw["again"], raw["unscoped"]),
                }
            )
    return rows


class Transactions:
    """Counts the transactions an engine commits, and times each from begin to commit."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.durations_ms: list[float] = []
        self.rollbacks = 0
        self._began: float | None = None

    def _begin(self, conn: sa.Connection) -> None:
        self._began = time.perf_counter()

    def _commit(self, conn: sa.Connection) -> None:
        if self._began is not None:
            self.durations_ms.append((time.perf_counter() - self._began) * 1000)
        self._began = None

    def _rollback(self, conn: sa.Connection) -> None:
        self.rollbacks += 1

    def __enter__(self) -> Transactions:
        for name in ("begin", "commit", "rollback"):
            sa.event.listen(self.engine, name, getattr(self, f"_{name}"))
        return self

    def __exit__(self, *exc: object) -> None:
        for name in ("begin", "commit", "rollback"):
            sa.event.remove(self.engine, name, getattr(self, f"_{name}"))


def _erased_session(corpus: Corpus, rng: random.Random, sizes: Sizes) -> list[Message]:
    """A session of ``erase_messages`` messages, one in ``image_every`` (a user's) with a
    noise image of its own beside its text."""
    messages = []
    for i, (role, text) in enumerate(corpus.rows(sizes.erase_messages)):
        if i % sizes.image_every == 0 and role == "user":
            image = ImageBlock(noise_png(rng, sizes.image_side), "image/png")
            messages.append(Message.user([TextBlock(text), image]))
        else:
            messages.append(to_message(role, text))
    return messages


def erasure(storage: SqlStorage, names: Names, sizes: Sizes) -> dict[str, Any]:
    """``erase_owner`` of an owner holding ``erase_sessions`` sessions of ``erase_messages``
    messages (one in ``image_every`` with an image of its own): its time, and how many
    transactions it committed and the longest of them."""
    owner = f"bench-erased-{names.run}"
    view = storage.owned_by(owner)
    corpus, rng = Corpus(seed=7), random.Random(7)
    began = time.perf_counter()
    for k in range(sizes.erase_sessions):
        view.append(names.session(f"erased-{k:04d}"), *_erased_session(corpus, rng, sizes))
    filled_s = time.perf_counter() - began
    ids = storage.sessions(owner=owner)
    with storage.engine.connect() as conn:
        blobs = conn.scalar(sa.select(sa.func.count()).where(blobs_table.c.session_id.in_(ids)))
    with Transactions(storage.engine) as transactions:
        began = time.perf_counter()
        erased = storage.erase_owner(owner)
        seconds = time.perf_counter() - began
    with storage.engine.connect() as conn:
        left = [
            conn.scalar(sa.select(sa.func.count()).where(table.c.session_id.in_(ids)))
            for table in (messages_table, blobs_table, sessions_table)
        ]
    if erased != sizes.erase_sessions or any(left):
        raise RuntimeError(f"erase_owner erased {erased} sessions, left {left} rows")
    durations = transactions.durations_ms
    return {
        "sessions": erased,
        "messages": sizes.erase_sessions * sizes.erase_messages,
        "blobs": blobs,
        "fill_s": filled_s,
        "seconds": seconds,
        "transactions": len(durations),
        "rollbacks": transactions.rollbacks,
        "longest_transaction_ms": max(durations),
        "median_transaction_ms": sorted(durations)[len(durations) // 2],
    }


def cleanup(engine: sa.Engine, names: Names) -> None:
    """Delete every session of the run (messages first; blocks and blobs go with them)."""
    ours = f"{names.prefix}%"
    with engine.begin() as conn:
        conn.execute(sa.delete(messages_table).where(messages_table.c.session_id.like(ours)))
        conn.execute(sa.delete(sessions_table).where(sessions_table.c.session_id.like(ours)))
