"""Concurrent batch writers of one session, run as threads or as spawned processes.

A process writer is a module-level function of a module that imports no test framework,
so a ``spawn``-ed child imports only this and sqlmemory.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from sqlmemory import ImageBlock, Message
from tests.support.cases import image_bytes

WRITER_BATCHES = 10
BATCH_SIZE = 3
SHARED_IMAGE = image_bytes(70, 70, "image/png", seed=3)


def writer_batch(writer: str, batch: int, size: int = BATCH_SIZE) -> list[Message]:
    """Batch ``batch`` of ``writer``; its first message carries an image every writer shares."""
    messages = []
    for i in range(size):
        text = f"{writer} batch {batch} message {i}"
        content: list[str | ImageBlock] = [text]
        if i == 0:
            content.append(ImageBlock(SHARED_IMAGE, "image/png"))
        messages.append(
            Message.user(
                content,
                id=f"{writer}/{batch:03d}/{i}",
                metadata={"writer": writer, "batch": batch, "i": i},
            )
        )
    return messages


def process_writer(url: str, session_id: str, writer: str, ready: Any, go: Any, done: Any) -> None:
    """Entry point of a spawned writer process: its own engine, then every batch.

    Reports ``("ready", writer)`` once connected, waits for ``go``, and reports
    ``("done", writer)`` or ``("error", writer, repr)`` on ``done``.
    """
    from sqlmemory import SqlStorage

    try:
        storage = SqlStorage.from_url(url)
        try:
            storage.count(session_id)  # connects and checks the schema before the race
            ready.put(("ready", writer))
            if not go.wait(120):
                raise TimeoutError("no go signal")
            for batch in range(WRITER_BATCHES):
                storage.append(session_id, *writer_batch(writer, batch))
        finally:
            storage.close()
    except BaseException as exc:
        ready.put(("error", writer, repr(exc)))
        done.put(("error", writer, repr(exc)))
        raise
    done.put(("done", writer))


def check_writers_outcome(
    loaded: Sequence[Message], writers: Sequence[str], seqs: Sequence[int]
) -> None:
    """Assert that concurrent batch writers lost, duplicated and reordered nothing.

    ``seqs`` are the stored ``seq`` values in load order.
    """
    ids = [m.id for m in loaded]
    expected = {m.id for w in writers for b in range(WRITER_BATCHES) for m in writer_batch(w, b)}
    assert len(ids) == len(set(ids)), "a message was stored twice"
    assert set(ids) == expected, "a message was lost"
    for writer in writers:
        own = [i for i in ids if i.startswith(f"{writer}/")]
        assert own == sorted(own), f"{writer}'s messages are out of its order"
    for index, message in enumerate(loaded):
        if message.metadata["i"] == 0:
            batch_ids = [m.id for m in loaded[index : index + BATCH_SIZE]]
            prefix = message.id.rsplit("/", 1)[0]
            assert batch_ids == [f"{prefix}/{i}" for i in range(BATCH_SIZE)], (
                f"batch {prefix} is not contiguous"
            )
    assert all(a < b for a, b in itertools.pairwise(seqs)), "seq is not strictly increasing"
    times = [m.recorded_at for m in loaded]
    assert None not in times
    assert times == sorted(times), "recorded_at decreased"  # type: ignore[type-var]
