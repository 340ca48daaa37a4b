"""What an append or a save leaves behind for Python's cycle collector
(``docs/performance.md``, "SQLite appends: ids in order, no NULLs bound, nothing left to
collect").

A container object that outlives a call (a memo beside each message, the ``__dict__``
asked for to hold it) counts towards the next collection, and their pile towards the
full ones, which walk every object the process holds: a batch of 100 on SQLite paid
about 0.5 ms for them. What the storage works out about a message is kept in a slot
``Message`` declares for it, so a write leaves nothing per message, on every backend and
storage.
"""

from __future__ import annotations

import dataclasses
import gc
from typing import Any

from sqlmemory import Message, ToolCall


def _tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


def _turns(tag: str) -> tuple[list[Message], list[Message]]:
    chat = [Message.user(f"{tag} question {i}") for i in range(200)]
    calls = [Message.assistant(tool_calls=[ToolCall(f"c{i}", "f", {"i": i})]) for i in range(5)]
    for message in chat:  # what an application asks of its messages takes no room either
        assert message.tool_calls == message.call_ids == ()
    return chat, calls


def test_an_append_leaves_no_object_per_message(storage: Any) -> None:
    for tag in ("warm", "s"):  # the first time, the statements compile and are kept
        chat, calls = _turns(tag)
        before = _tracked()
        storage.append(tag, *chat)
        storage.append(tag, *calls)
        grown = _tracked() - before
    assert grown < 40, f"{grown} objects more after appending {len(chat) + len(calls)}"
    assert len(storage.load("s")) == 205


def test_a_save_leaves_no_object_per_message(storage: Any) -> None:
    for tag in ("warm", "s"):
        history = [Message.user(f"{tag} turn {i}") for i in range(100)]
        storage.save(tag, history)
        # The caller's objects are new (a request rebuilt them); the content is the same.
        again = [dataclasses.replace(m) for m in history]
        before = _tracked()
        storage.save(tag, [*again, Message.assistant("one more")])
        grown = _tracked() - before
    assert grown < 40, f"{grown} objects more after a save of {len(again) + 1}"
    assert len(storage.load("s")) == 101
