"""The write scenarios: single and batch appends, and re-saving a growing history.

Each is a function of a :class:`scenarios.Run` (one backend): it times sqlmemory's write
against the raw driver's, the peers' and the async storage's, each contender's calls in a
row (:func:`timing.in_turns`, as ``../shared/bench/compare.sh`` times writes), then checks
what each stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from corpus import agent_message, chunks, raw_agent_row, to_message
from peers import Peer
from timing import in_turns, summarize

from sqlmemory import Message

if TYPE_CHECKING:
    from scenarios import Run


def append_one(run: Run) -> None:
    """``append_one``: one message a call into one session."""
    s = run.sizes
    sid = run.sid("append-one")
    rows = run.corpus.rows(s.append_warmup + s.append_one)
    messages = [to_message(role, text) for role, text in rows]
    storage, raw = run.storage, run.raw
    peers = {p.name: _appends(p, sid, [[p.item(*r)] for r in rows]) for p in run.peers}

    def appends(store: Any, session: str) -> Callable[[int], object]:
        return lambda i: store.append(session, messages[i])

    peers.update(run.async_write(sid, appends))
    ours, theirs, others = run.timed(
        appends(storage, sid),
        lambda i: raw.append_one(sid, *rows[i]),
        peers,
        s.append_one,
        s.append_warmup,
        in_turns,
    )
    run.check_counts(sid, len(rows))
    run.check_peer_counts(sid, len(rows))
    run.record("append_one", f"append_one x{s.append_one}", ours, theirs, others)


def append_batch(run: Run) -> None:
    """``append_batch``: ``batch_size`` messages a call into one session."""
    s = run.sizes
    rows = run.corpus.rows((s.batch_warmup + s.batches) * s.batch_size)
    _batches(
        run, "append_batch", rows, lambda r: to_message(*r), lambda r: r, lambda p, r: p.item(*r)
    )


def append_tool_batch(run: Run) -> None:
    """``append_tool_batch``: ``batch_size`` messages a call into one session, an agent's
    conversation (a tool call and its result in every ten messages, as
    ``../shared/bench/compare.sh`` writes): each call a block row, the general shape."""
    s = run.sizes
    rows = run.corpus.agent_rows((s.batch_warmup + s.batches) * s.batch_size)
    _batches(run, "append_tool_batch", rows, agent_message, raw_agent_row, Peer.agent_item)


def _batches(
    run: Run,
    scenario: str,
    rows: Sequence[Any],
    message: Callable[[Any], Message],
    raw_row: Callable[[Any], tuple[str, str]],
    peer_item: Callable[[Peer, Any], Any],
) -> None:
    """Time ``rows`` appended ``batch_size`` a call into one session: by sqlmemory (each
    row its ``message``), the raw side (its ``raw_row``), each peer (its
    ``peer_item(peer, row)``) and the async storage; then check the counts."""
    s = run.sizes
    sid = run.sid(scenario.replace("_", "-"))
    batches = list(chunks(rows, s.batch_size))
    messages = [[message(row) for row in b] for b in batches]
    raw_batches = [[raw_row(row) for row in b] for b in batches]
    storage, raw = run.storage, run.raw
    peers = {
        p.name: _appends(p, sid, [[peer_item(p, row) for row in b] for b in batches])
        for p in run.peers
    }

    def appends(store: Any, session: str) -> Callable[[int], object]:
        return lambda i: store.append(session, *messages[i])

    peers.update(run.async_write(sid, appends))
    ours, theirs, others = run.timed(
        appends(storage, sid),
        lambda i: raw.append_many(sid, raw_batches[i]),
        peers,
        s.batches,
        s.batch_warmup,
        in_turns,
    )
    run.check_counts(sid, len(rows))
    run.check_peer_counts(sid, len(rows))
    run.record(scenario, f"{scenario} {s.batches}x{s.batch_size}", ours, theirs, others)


def resave(run: Run, append_one_median: float | None) -> None:
    """``resave``: each turn saves the whole history, grown by a pair of messages (the raw
    side and the peers append the pair); with ``append_one_median``, the row also gives its
    median as a multiple of ``append_one``'s."""
    s = run.sizes
    sid = run.sid("resave")
    rows = run.corpus.rows(2 * s.resave_turns)
    storage, raw = run.storage, run.raw

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
        for p in run.peers
    }
    peers.update(run.async_write(sid, saves))
    mine, raw_times, others = run.timed(
        saves(storage, sid), theirs, peers, s.resave_turns, 0, in_turns
    )
    run.check_counts(sid, len(rows))
    run.check_peer_counts(sid, len(rows))
    tail = s.resave_tail
    entry = run.record(
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


def _appends(peer: Peer, sid: str, batches: list[list[Any]]) -> Callable[[int], object]:
    """Rep ``i`` appends ``batches[i]`` with one call (``append`` for a single item)."""
    if all(len(b) == 1 for b in batches):
        return lambda i: peer.append(sid, batches[i][0])
    return lambda i: peer.append_many(sid, batches[i])
