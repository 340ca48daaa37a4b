"""The scenarios: each times sqlmemory against the raw driver on one backend.

The async storage (:class:`async_side.AsyncSide`), when on, is one more contender in each
scenario's rotating loop, under the key ``async_side.NAME`` among the peers' calls;
:meth:`Run.record` takes it out into the row's async fields.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from async_side import NAME, AsyncSide, figures
from backends import Backend
from corpus import Corpus, chunks, noise_png, to_message
from peers import Peer, Peers
from sizes import Sizes, size_label
from timing import rotating, summarize

from sqlmemory import (
    FixedWindow,
    ImageBlock,
    Message,
    SqlStorage,
    TokenWindow,
    estimate_tokens,
)


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
    ) -> tuple[list[float], list[float], dict[str, list[float]]]:
        """sqlmemory, raw and the peers in one rotating loop (see :func:`rotating`)."""
        samples = rotating([ours, raw, *peers.values()], reps, warmup)
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

    # -- scenarios ---------------------------------------------------------------------

    def append_one(self) -> None:
        s = self.sizes
        sid = self.sid("append-one")
        rows = self.corpus.rows(s.append_warmup + s.append_one)
        messages = [to_message(role, text) for role, text in rows]
        storage, raw = self.storage, self.raw
        peers = {p.name: _appends(p, sid, [[p.item(*r)] for r in rows]) for p in self.peers}

        def appends(store: Any, session: str) -> Callable[[int], object]:
            return lambda i: store.append(session, messages[i])

        peers.update(self.async_write(sid, appends))
        ours, theirs, others = self.timed(
            appends(storage, sid),
            lambda i: raw.append_one(sid, *rows[i]),
            peers,
            s.append_one,
            s.append_warmup,
        )
        self.check_counts(sid, len(rows))
        self.check_peer_counts(sid, len(rows))
        self.record("append_one", f"append_one x{s.append_one}", ours, theirs, others)

    def append_batch(self) -> None:
        s = self.sizes
        sid = self.sid("append-batch")
        total = s.batch_warmup + s.batches
        rows = self.corpus.rows(total * s.batch_size)
        batches = list(chunks(rows, s.batch_size))
        messages = [[to_message(role, text) for role, text in b] for b in batches]
        storage, raw = self.storage, self.raw
        peers = {
            p.name: _appends(p, sid, [[p.item(*r) for r in b] for b in batches]) for p in self.peers
        }

        def appends(store: Any, session: str) -> Callable[[int], object]:
            return lambda i: store.append(session, *messages[i])

        peers.update(self.async_write(sid, appends))
        ours, theirs, others = self.timed(
            appends(storage, sid),
            lambda i: raw.append_many(sid, batches[i]),
            peers,
            s.batches,
            s.batch_warmup,
        )
        self.check_counts(sid, len(rows))
        self.check_peer_counts(sid, len(rows))
        self.record(
            "append_batch", f"append_batch {s.batches}x{s.batch_size}", ours, theirs, others
        )

    def window_peers(self, sid: str, n: int, expected: Sequence[tuple[str, str]]) -> dict:
        """The peers' window reads of ``sid`` (``n`` messages), checked against ``expected``."""
        s = self.sizes
        fns: dict[str, Callable[[int], object]] = {}
        for peer in self.peers:
            if not peer.bounded_window and n > s.unbounded_window_limit:
                continue
            self.check_peer(peer, peer.window(sid, s.window), expected)
            fns[peer.name] = lambda _i, peer=peer: peer.window(sid, s.window)
        return fns

    def windows_and_full(self) -> None:
        s = self.sizes
        storage, raw = self.storage, self.raw
        full_sid: str | None = None
        sessions: list[tuple[int, str, int]] = []  # (messages, sid, token budget)
        for n in s.window_sessions:
            sid = self.sid(f"window-{n}")
            start = time.perf_counter()
            newest = self.fill(sid, self.corpus.rows(n))
            self.log(f"  filled {n:,} messages in {time.perf_counter() - start:.1f}s")
            if n == s.full_read:
                full_sid = sid
            # The exact cost of the newest `window` messages: TokenWindow picks just them.
            sessions.append((n, sid, sum(estimate_tokens(m) for m in newest)))
        for variant in ("FixedWindow", "TokenWindow"):
            # Every session size and the raw reads run in one rotating loop, so the
            # 100k / 1k ratio compares reads made under the same conditions. The peers
            # have no token window: they read the newest messages in the FixedWindow loop.
            fns: list[Callable[[int], object]] = []
            policies = []
            peer_names: list[list[str]] = []
            for n, sid, budget in sessions:
                policy = FixedWindow(s.window) if variant == "FixedWindow" else TokenWindow(budget)
                got = storage.load(sid, policy)
                expected = raw.window(sid, s.window)
                self.check_same(got, expected)
                policies.append((policy, len(got)))
                fns.append(lambda _i, policy=policy, sid=sid: storage.load(sid, policy))
                fns.append(lambda _i, sid=sid: raw.window(sid, s.window))
                peers = {}
                if variant == "FixedWindow":
                    pairs = [(r["role"], r["content"]) for r in expected]
                    peers = self.window_peers(sid, n, pairs)
                peers.update(
                    self.async_read(sid, policy, lambda got, e=expected: self.check_same(got, e))
                )
                peer_names.append(list(peers))
                fns.extend(peers.values())
            gc.collect()
            samples = rotating(fns, s.window_reps, s.window_warmup)
            at = 0
            for k, (n, _sid, _budget) in enumerate(sessions):
                policy, returned = policies[k]
                names = peer_names[k]
                self.record(
                    "window_read",
                    f"window_read {variant} @{size_label(n)}",
                    samples[at],
                    samples[at + 1],
                    dict(zip(names, samples[at + 2 : at + 2 + len(names)], strict=True)),
                    variant=variant,
                    messages=n,
                    returned=returned,
                    policy=repr(policy),
                )
                at += 2 + len(names)
        if full_sid is None:
            full_sid = self.sid("full")
            self.fill(full_sid, self.corpus.rows(s.full_read))
        got = storage.load(full_sid)
        expected = raw.full(full_sid)
        self.check_same(got, expected)
        pairs = [(r["role"], r["content"]) for r in expected]
        peers: dict[str, Callable[[int], object]] = {}
        for peer in self.peers:
            self.check_peer(peer, peer.full(full_sid), pairs)
            peers[peer.name] = lambda _i, peer=peer, sid=full_sid: peer.full(sid)
        peers.update(self.async_read(full_sid, None, lambda got: self.check_same(got, expected)))
        gc.collect()
        sid = full_sid
        ours, theirs, others = self.timed(
            lambda _i: storage.load(sid),
            lambda _i: raw.full(sid),
            peers,
            s.full_reps,
            s.full_warmup,
        )
        self.record(
            "full_read",
            f"full_read @{size_label(s.full_read)}",
            ours,
            theirs,
            others,
            messages=s.full_read,
        )

    def window_read_shared(self) -> None:
        """A window of one session among many, the table filled turn by turn round-robin:
        what a store serving many conversations sees (rows of a session are scattered)."""
        s = self.sizes
        sids = [self.sid(f"shared-{j}") for j in range(s.shared_sessions)]
        rows = self.corpus.rows(s.shared_messages)
        start = time.perf_counter()
        chunk = s.shared_chunk
        for at in range(0, len(rows), chunk):
            part = rows[at : at + chunk]
            messages = [to_message(role, text) for role, text in part]
            for sid in sids:
                self.storage.append(sid, *messages)
                self.raw.append_many(sid, part)
                for peer in self.peers:
                    peer.append_many(sid, [peer.item(*r) for r in part])
        total = s.shared_sessions * s.shared_messages
        self.log(f"  filled {total:,} messages in {time.perf_counter() - start:.1f}s")
        sid = sids[0]
        policy = FixedWindow(s.window)
        expected = self.raw.window(sid, s.window)
        self.check_same(self.storage.load(sid, policy), expected)
        pairs = [(r["role"], r["content"]) for r in expected]
        peers = self.window_peers(sid, s.shared_messages, pairs)
        peers.update(self.async_read(sid, policy, lambda got: self.check_same(got, expected)))
        storage, raw = self.storage, self.raw
        gc.collect()
        ours, theirs, others = self.timed(
            lambda _i: storage.load(sid, policy),
            lambda _i: raw.window(sid, s.window),
            peers,
            s.window_reps,
            s.window_warmup,
        )
        self.record(
            "window_read_shared",
            f"window_read_shared @{size_label(s.shared_messages)} x{s.shared_sessions}",
            ours,
            theirs,
            others,
            messages=s.shared_messages,
            sessions=s.shared_sessions,
        )

    def resave(self, append_one_median: float | None) -> None:
        s = self.sizes
        sid = self.sid("resave")
        rows = self.corpus.rows(2 * s.resave_turns)
        storage, raw = self.storage, self.raw

        def saves(store: Any, session: str) -> Callable[[int], object]:
            history: list[Message] = []

            def save(turn: int) -> None:
                pair = rows[2 * turn : 2 * turn + 2]
                history.extend(to_message(role, text) for role, text in pair)
                store.save(session, history)

            return save

        # The raw application and the peers' keep their history in memory too and
        # persist the new pair.
        def theirs(turn: int) -> None:
            raw.append_many(sid, rows[2 * turn : 2 * turn + 2])

        peers = {
            p.name: _appends(p, sid, [[p.item(*r) for r in pair] for pair in chunks(rows, 2)])
            for p in self.peers
        }
        peers.update(self.async_write(sid, saves))
        mine, raw_times, others = self.timed(saves(storage, sid), theirs, peers, s.resave_turns, 0)
        self.check_counts(sid, len(rows))
        self.check_peer_counts(sid, len(rows))
        tail = s.resave_tail
        entry = self.record(
            "resave",
            f"resave @turn{s.resave_turns} (last {tail})",
            mine[-tail:],
            raw_times[-tail:],
            {name: samples[-tail:] for name, samples in others.items()},
            turns=s.resave_turns,
            first_turns=summarize(mine[:tail]),
        )
        if append_one_median:
            entry["vs_append_one"] = entry["sqlmemory"]["median_ms"] / append_one_median

    def image_window(self) -> None:
        s = self.sizes
        sid = self.sid("images")
        rng = random.Random(99)
        texts = self.corpus.rows(s.image_messages)
        raw_rows: list[tuple[str, str, bytes | None]] = []
        messages: list[Message] = []
        peer_items: dict[str, list[Any]] = {p.name: [] for p in self.peers}
        image_bytes = 0
        for i, (role, text) in enumerate(texts):
            if i % s.image_every == s.image_every - 1:
                png = noise_png(rng, s.image_side)
                image_bytes += len(png)
                raw_rows.append(("user", text, png))
                messages.append(Message.user([text, ImageBlock(data=png, media_type="image/png")]))
                for p in self.peers:
                    peer_items[p.name].append(p.image_item(text, png))
            else:
                raw_rows.append((role, text, None))
                messages.append(to_message(role, text))
                for p in self.peers:
                    peer_items[p.name].append(p.item(role, text))
        for part in chunks(messages, 100):
            self.storage.append(sid, *part)
        self.raw.fill_images(sid, raw_rows, 100)
        for p in self.peers:
            for part in chunks(peer_items[p.name], 100):
                p.append_many(sid, part)
        storage, raw = self.storage, self.raw
        policy = FixedWindow(s.window)
        expected = raw.image_window(sid, s.window)
        images = self.check_images(storage.load(sid, policy), expected)
        pairs = [(r["role"], r["content"]) for r in expected]
        peers = self.window_peers(sid, s.image_messages, pairs)
        peers.update(self.async_read(sid, policy, lambda got: self.check_images(got, expected)))
        gc.collect()
        ours, theirs, others = self.timed(
            lambda _i: storage.load(sid, policy),
            lambda _i: raw.image_window(sid, s.window),
            peers,
            s.image_reps,
            s.image_warmup,
        )
        self.record(
            "image_window_read",
            f"image_window_read FixedWindow @{size_label(s.image_messages)}",
            ours,
            theirs,
            others,
            messages=s.image_messages,
            images_in_session=s.image_messages // s.image_every,
            images_in_window=images,
            mean_image_bytes=image_bytes // max(len(texts) // s.image_every, 1),
        )

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
            self.append_one()
            append_one_median = self.results[-1]["sqlmemory"]["median_ms"]
            self.log(f"{name}: append_batch")
            self.append_batch()
            self.log(f"{name}: window_read, full_read")
            self.windows_and_full()
            self.log(f"{name}: window_read_shared")
            self.window_read_shared()
            self.log(f"{name}: resave")
            self.resave(append_one_median)
            self.log(f"{name}: image_window_read")
            self.image_window()
        finally:
            self.clear()
        return self.results


def _appends(peer: Peer, sid: str, batches: list[list[Any]]) -> Callable[[int], object]:
    """Rep ``i`` appends ``batches[i]`` with one call (``append`` for a single item)."""
    if all(len(b) == 1 for b in batches):
        return lambda i: peer.append(sid, batches[i][0])
    return lambda i: peer.append_many(sid, batches[i])
