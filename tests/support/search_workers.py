"""A writer process for the searches that race appends (``test_search_lag.py``)."""

from __future__ import annotations

from typing import Any

from sqlmemory import Message

BATCHES = 30
BATCH = 3
WORD = "quokka"


def batch_of(writer: str, batch: int) -> list[Message]:
    """The ``batch``-th batch of ``writer``: each message holds :data:`WORD`."""
    return [
        Message.user(f"{WORD} {writer} number{batch}x{j}", id=f"{writer}/{batch}/{j}")
        for j in range(BATCH)
    ]


def process_appender(url: str, writer: str, ready: Any, go: Any, done: Any) -> None:
    """Entry point of a spawned process: append every batch of ``writer`` to its session.

    Reports ``("ready", writer)`` once connected, waits for ``go``, and reports
    ``("done", writer)`` or ``("error", writer, repr)`` on ``done``.
    """
    from sqlmemory import SqlStorage

    try:
        storage = SqlStorage.from_url(url)
        try:
            storage.count(writer)  # connects and checks the schema before the race
            ready.put(("ready", writer))
            if not go.wait(120):
                raise TimeoutError("no go signal")
            for batch in range(BATCHES):
                storage.append(writer, *batch_of(writer, batch))
        finally:
            storage.close()
    except BaseException as exc:
        ready.put(("error", writer, repr(exc)))
        done.put(("error", writer, repr(exc)))
        raise
    done.put(("done", writer))
