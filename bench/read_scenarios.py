"""The read scenarios: windows by session size, full reads, a window among many
sessions, and a window over images.

Each is a function of a :class:`scenarios.Run` (one backend): before timing, it checks that
sqlmemory, the raw driver, the peers and the async storage return the same messages, then
times their reads in one rotating loop.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from corpus import chunks, noise_png, to_message
from sizes import size_label
from timing import rotating

from sqlmemory import FixedWindow, ImageBlock, Message, TokenWindow, estimate_tokens

if TYPE_CHECKING:
    from scenarios import Run


def window_peers(run: Run, sid: str, n: int, expected: Sequence[tuple[str, str]]) -> dict:
    """The peers' window reads of ``sid`` (``n`` messages), checked against ``expected``."""
    s = run.sizes
    fns: dict[str, Callable[[int], object]] = {}
    for peer in run.peers:
        if not peer.bounded_window and n > s.unbounded_window_limit:
            continue
        run.check_peer(peer, peer.window(sid, s.window), expected)
        fns[peer.name] = lambda _i, peer=peer: peer.window(sid, s.window)
    return fns


def windows_and_full(run: Run) -> None:
    """``window_read`` (``FixedWindow`` and ``TokenWindow``, every session size in one
    loop) and ``full_read`` (the whole history of the ``full_read``-message session)."""
    s = run.sizes
    storage, raw = run.storage, run.raw
    full_sid: str | None = None
    sessions: list[tuple[int, str, int]] = []  # (messages, sid, token budget)
    for n in s.window_sessions:
        sid = run.sid(f"window-{n}")
        start = time.perf_counter()
        newest = run.fill(sid, run.corpus.rows(n))
        run.log(f"  filled {n:,} messages in {time.perf_counter() - start:.1f}s")
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
            run.check_same(got, expected)
            policies.append((policy, len(got)))
            fns.append(lambda _i, policy=policy, sid=sid: storage.load(sid, policy))
            fns.append(lambda _i, sid=sid: raw.window(sid, s.window))
            peers = {}
            if variant == "FixedWindow":
                pairs = [(r["role"], r["content"]) for r in expected]
                peers = window_peers(run, sid, n, pairs)
            peers.update(
                run.async_read(sid, policy, lambda got, e=expected: run.check_same(got, e))
            )
            peer_names.append(list(peers))
            fns.extend(peers.values())
        gc.collect()
        samples = rotating(fns, s.window_reps, s.window_warmup)
        at = 0
        for k, (n, _sid, _budget) in enumerate(sessions):
            policy, returned = policies[k]
            names = peer_names[k]
            run.record(
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
        full_sid = run.sid("full")
        run.fill(full_sid, run.corpus.rows(s.full_read))
    got = storage.load(full_sid)
    expected = raw.full(full_sid)
    run.check_same(got, expected)
    pairs = [(r["role"], r["content"]) for r in expected]
    peers: dict[str, Callable[[int], object]] = {}
    for peer in run.peers:
        run.check_peer(peer, peer.full(full_sid), pairs)
        peers[peer.name] = lambda _i, peer=peer, sid=full_sid: peer.full(sid)
    peers.update(run.async_read(full_sid, None, lambda got: run.check_same(got, expected)))
    gc.collect()
    sid = full_sid
    ours, theirs, others = run.timed(
        lambda _i: storage.load(sid),
        lambda _i: raw.full(sid),
        peers,
        s.full_reps,
        s.full_warmup,
    )
    run.record(
        "full_read",
        f"full_read @{size_label(s.full_read)}",
        ours,
        theirs,
        others,
        messages=s.full_read,
    )


def window_read_shared(run: Run) -> None:
    """A window of one session among many, the table filled turn by turn round-robin:
    what a store serving many conversations sees (rows of a session are scattered)."""
    s = run.sizes
    sids = [run.sid(f"shared-{j}") for j in range(s.shared_sessions)]
    rows = run.corpus.rows(s.shared_messages)
    start = time.perf_counter()
    chunk = s.shared_chunk
    for at in range(0, len(rows), chunk):
        part = rows[at : at + chunk]
        messages = [to_message(role, text) for role, text in part]
        for sid in sids:
            run.storage.append(sid, *messages)
            run.raw.append_many(sid, part)
            for peer in run.peers:
                peer.append_many(sid, [peer.item(*r) for r in part])
    total = s.shared_sessions * s.shared_messages
    run.log(f"  filled {total:,} messages in {time.perf_counter() - start:.1f}s")
    sid = sids[0]
    policy = FixedWindow(s.window)
    expected = run.raw.window(sid, s.window)
    run.check_same(run.storage.load(sid, policy), expected)
    pairs = [(r["role"], r["content"]) for r in expected]
    peers = window_peers(run, sid, s.shared_messages, pairs)
    peers.update(run.async_read(sid, policy, lambda got: run.check_same(got, expected)))
    storage, raw = run.storage, run.raw
    gc.collect()
    ours, theirs, others = run.timed(
        lambda _i: storage.load(sid, policy),
        lambda _i: raw.window(sid, s.window),
        peers,
        s.window_reps,
        s.window_warmup,
    )
    run.record(
        "window_read_shared",
        f"window_read_shared @{size_label(s.shared_messages)} x{s.shared_sessions}",
        ours,
        theirs,
        others,
        messages=s.shared_messages,
        sessions=s.shared_sessions,
    )


def image_window(run: Run) -> None:
    """``image_window_read``: a ``FixedWindow`` of a session where every ``image_every``-th
    message carries a noise PNG."""
    s = run.sizes
    sid = run.sid("images")
    rng = random.Random(99)
    texts = run.corpus.rows(s.image_messages)
    raw_rows: list[tuple[str, str, bytes | None]] = []
    messages: list[Message] = []
    peer_items: dict[str, list[Any]] = {p.name: [] for p in run.peers}
    image_bytes = 0
    for i, (role, text) in enumerate(texts):
        if i % s.image_every == s.image_every - 1:
            png = noise_png(rng, s.image_side)
            image_bytes += len(png)
            raw_rows.append(("user", text, png))
            messages.append(Message.user([text, ImageBlock(data=png, media_type="image/png")]))
            for p in run.peers:
                peer_items[p.name].append(p.image_item(text, png))
        else:
            raw_rows.append((role, text, None))
            messages.append(to_message(role, text))
            for p in run.peers:
                peer_items[p.name].append(p.item(role, text))
    for part in chunks(messages, 100):
        run.storage.append(sid, *part)
    run.raw.fill_images(sid, raw_rows, 100)
    for p in run.peers:
        for part in chunks(peer_items[p.name], 100):
            p.append_many(sid, part)
    storage, raw = run.storage, run.raw
    policy = FixedWindow(s.window)
    expected = raw.image_window(sid, s.window)
    images = run.check_images(storage.load(sid, policy), expected)
    pairs = [(r["role"], r["content"]) for r in expected]
    peers = window_peers(run, sid, s.image_messages, pairs)
    peers.update(run.async_read(sid, policy, lambda got: run.check_images(got, expected)))
    gc.collect()
    ours, theirs, others = run.timed(
        lambda _i: storage.load(sid, policy),
        lambda _i: raw.image_window(sid, s.window),
        peers,
        s.image_reps,
        s.image_warmup,
    )
    run.record(
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
