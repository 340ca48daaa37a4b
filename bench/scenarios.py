"""``Run``: one backend's scenarios, each timing sqlmemory against the raw driver.

``Run`` holds what every scenario shares: the backend's storage, raw driver and peers,
the sessions it made (cleared at the end), filling sessions, the rotating timing loop,
the checks that every side returns the same and the rows of the report. The scenarios are
functions of a ``Run``: the writes in :mod:`write_scenarios`, the reads in
:mod:`read_scenarios`; :meth:`Run.run` runs them in order.

The async storage (:class:`async_side.AsyncSide`), when on, is one more contender in each
scenario's rotating loop, under the key ``async_side.NAME`` among the peers' calls;
:meth:`Run.record` takes it out into the row's async fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import read_scenarios
import write_scenarios
from async_side import NAME, AsyncSide, figures
from backends import Backend
from corpus import Corpus, chunks, to_message
from peers import Peer, Peers
from sizes import Sizes
from timing import Timer, rotating, summarize

from sqlmemory import FixedWindow, ImageBlock, Message, SqlStorage, TokenWindow


class Run:
    """One backend's scenarios; every sqlmemory session it makes is cleared at the end."""

    def __init__(
        self,
        backend: Backend,
        sizes: Sizes,
        run_id: str,
        log: Callable[[str], None],
        peers: Peers | None = None,
        aio: AsyncSide | None = None,
    ):
        self.b = backend
        self.sizes = sizes
        self.run_id = run_id
        self.log = log
        self.storage: SqlStorage = backend.storage
        self.raw = backend.raw
        self.peers: list[Peer] = list(peers or [])
        self.aio = aio
        self.sessions: list[str] = []
        self.results: list[dict[str, Any]] = []
        self.corpus = Corpus()

    def sid(self, what: str) -> str:
        sid = f"bench-{self.run_id}-{what}"
        self.sessions.append(sid)
        return sid

    def record(
        self,
        scenario: str,
        label: str,
        ours: Sequence[float],
        raw: Sequence[float] | None,
        peers: dict[str, Sequence[float]] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        mine = summarize(ours)
        theirs = summarize(raw) if raw is not None else None
        others = {name: summarize(samples) for name, samples in (peers or {}).items()}
        aio = (peers or {}).get(NAME)
        others.pop(NAME, None)
        best = min(others, key=lambda name: others[name]["median_ms"], default=None)
        entry: dict[str, Any] = {
            "scenario": scenario,
            "label": label,
            "backend": self.b.name,
            "sqlmemory": mine,
            "raw": theirs,
            "ratio": mine["median_ms"] / theirs["median_ms"] if theirs else None,
            "peers": others,
            "best_peer": best,
            "vs_best_peer": (
                mine["median_ms"] / others[best]["median_ms"] if best is not None else None
            ),
        }
        entry.update(figures(entry, aio))
        entry.update(extra)
        self.results.append(entry)
        return entry

    def fill(self, sid: str, rows: Sequence[tuple[str, str]], peers: bool = True) -> list[Message]:
        """Untimed: the same rows into sqlmemory (large batch appends), the raw table and
        (with ``peers``) every peer.

        Returns the newest ``window`` messages given to sqlmemory.
        """
        batch = self.sizes.fill_batch
        last: list[Message] = []
        for part in chunks(rows, batch):
            last = [to_message(role, text) for role, text in part]
            self.storage.append(sid, *last)
        self.raw.fill(sid, rows, batch)
        if peers:
            for peer in self.peers:
                unbounded = self.sizes.unbounded_window_limit
                if (
                    peer.bounded_window
                    or len(rows) in range(unbounded + 1)
                    or (len(rows) == self.sizes.full_read)
                ):
                    peer.fill(sid, rows, batch)
        return last[-self.sizes.window :]

    def timed(
        self,
        ours: Callable[[int], object],
        raw: Callable[[int], object],
        peers: dict[str, Callable[[int], object]],
        reps: int,
        warmup: int,
        timer: Timer = rotating,
    ) -> tuple[list[float], list[float], dict[str, list[float]]]:
        """sqlmemory, raw and the peers timed by ``timer``: in one rotating loop (see
        :func:`rotating`) unless told otherwise."""
        samples = timer([ours, raw, *peers.values()], reps, warmup)
        return samples[0], samples[1], dict(zip(peers, samples[2:], strict=True))

    def check_peer(
        self, peer: Peer, got: Sequence[Any], expected: Sequence[tuple[str, str]]
    ) -> None:
        if peer.texts(got) != list(expected):
            raise AssertionError(f"{peer.name} returned {len(got)} messages; they differ from raw")

    def check_peer_counts(self, sid: str, expected: int) -> None:
        for peer in self.peers:
            got = len(peer.full(sid))
            if got != expected:
                raise AssertionError(f"{peer.name}: {sid} holds {got} messages, not {expected}")

    def async_read(
        self,
        sid: str,
        policy: FixedWindow | TokenWindow | None,
        check: Callable[[Sequence[Message]], object],
    ) -> dict[str, Callable[[int], object]]:
        """The async storage's read of ``sid`` as a contender (none when it is off), after
        ``check`` has accepted what it returns."""
        aio = self.aio
        if aio is None:
            return {}
        check(aio.load(sid, policy))
        return {NAME: lambda _i: aio.load(sid, policy)}

    def async_write(
        self, sid: str, make: Callable[[Any, str], Callable[[int], object]]
    ) -> dict[str, Callable[[int], object]]:
        """The async storage's write as a contender (none when it is off): ``make(store,
        session)``, the same maker as the sync side's, on a session of its own,
        ``<sid>-async`` (both storages write to the same database)."""
        if self.aio is None:
            return {}
        mine = f"{sid}-async"
        self.sessions.append(mine)
        return {NAME: make(self.aio, mine)}

    # -- checks and cleanup -------------------------------------------------------------

    def check_counts(self, sid: str, expected: int) -> None:
        """``sid`` holds ``expected`` messages, and so does the async storage's twin session
        (read through the sync storage: the same database)."""
        for session in [sid, *([f"{sid}-async"] if self.aio is not None else [])]:
            got = self.storage.count(session)
            if got != expected:
                raise AssertionError(
                    f"{session}: sqlmemory holds {got} messages, expected {expected}"
                )

    @staticmethod
    def check_same(got: Sequence[Message], expected: Sequence[dict[str, Any]]) -> None:
        """Both sides returned the same messages (same texts, same roles, same order)."""
        ours = [(m.role.value, m.content[0].text) for m in got]  # type: ignore[union-attr]
        theirs = [(r["role"], r["content"]) for r in expected]
        if ours != theirs:
            raise AssertionError(
                f"sqlmemory returned {len(ours)} messages, raw {len(theirs)}; they differ"
            )

    @staticmethod
    def check_images(got: Sequence[Message], expected: Sequence[dict[str, Any]]) -> int:
        """The same texts as raw and as many images; returns how many images."""
        images = sum(1 for m in got for b in m.content if isinstance(b, ImageBlock))
        texts = [m.content[0].text for m in got]  # type: ignore[union-attr]
        if texts != [r["content"] for r in expected] or images != sum(
            1 for r in expected if r["image"] is not None
        ):
            raise AssertionError("sqlmemory and raw disagree on the image window")
        return images

    def clear(self) -> None:
        """Best effort: a failure here must not hide the one that ended the run."""
        for sid in self.sessions:
            try:
                self.storage.clear(sid)
            except Exception as exc:
                self.log(f"{self.b.name}: could not clear {sid}: {exc}")

    def run(self) -> list[dict[str, Any]]:
        name = self.b.name
        try:
            self.log(f"{name}: append_one")
            write_scenarios.append_one(self)
            append_one_median = self.results[-1]["sqlmemory"]["median_ms"]
            self.log(f"{name}: append_batch")
            write_scenarios.append_batch(self)
            self.log(f"{name}: append_tool_batch")
            write_scenarios.append_tool_batch(self)
            self.log(f"{name}: window_read, full_read")
            read_scenarios.windows_and_full(self)
            self.log(f"{name}: window_read_shared")
            read_scenarios.window_read_shared(self)
            self.log(f"{name}: resave")
            write_scenarios.resave(self, append_one_median)
            self.log(f"{name}: image_window_read")
            read_scenarios.image_window(self)
        finally:
            self.clear()
        return self.results
