"""A pop that waits for another writer pops what that writer left.

PostgreSQL's one-statement pop (``sqlmemory/storage/sql/one_statement_pop.py``) reads
the newest message before it waits for the session's lock; a writer that holds the lock
and appends meanwhile changes the session row's version, so the statement writes nothing
and the usual pop takes the newest message stored. The other backends wait for the lock
before they read. The same test body runs on each.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import sqlalchemy as sa

from sqlmemory import Message, SqlStorage


def _held_rewrite(
    writer: SqlStorage, locked: threading.Event, go: threading.Event, added: Message
) -> None:
    def change(history: list[Message]) -> tuple[list[Message], None]:
        locked.set()  # the session's lock is held from here to the commit
        assert go.wait(30)
        return [*history, added], None

    writer._rewrite("s", change)


def test_a_pop_waiting_for_a_writer_pops_what_the_writer_left(
    storage: Any, engine: sa.Engine
) -> None:
    history = [Message.user(f"m{i}", id=f"m{i}") for i in range(5)]
    storage.append("s", *history)
    added = Message.assistant("appended while the pop waited", id="late")
    writer = SqlStorage(sa.create_engine(engine.url))
    locked, go = threading.Event(), threading.Event()
    holder = threading.Thread(target=_held_rewrite, args=(writer, locked, go, added))
    holder.start()
    try:
        assert locked.wait(30)
        popped: list[Message | None] = []
        popper = threading.Thread(target=lambda: popped.append(storage.pop("s")))
        popper.start()
        time.sleep(0.5)  # the pop has read its snapshot and waits for the lock
        assert popper.is_alive(), "the pop did not wait for the session's lock"
        go.set()
        holder.join(30)
        popper.join(30)
    finally:
        go.set()
        writer.engine.dispose()
    assert [m.id if m else None for m in popped] == ["late"]
    assert [m.id for m in storage.load("s")] == [m.id for m in history]
    assert storage.session_info("s").message_count == len(history)
