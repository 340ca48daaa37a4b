"""The LlamaIndex stores on every backend: their methods, deletes by position under the
session lock, ``Memory``'s archive, owned views and hostile input.

``SqlMemoryChatStore`` runs over the ``storage`` fixture (``SqlStorage``, and the async
storage behind a blocking face), its async twins and ``SqlMemoryDBChatStore`` over the
``AsyncSqlStorage``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import sqlalchemy as sa
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store.base_db import MessageStatus

from sqlmemory import AsyncSqlStorage, ConversionError, SessionOwnerError, SqlStorage, Storage
from sqlmemory.integrations.llama_index import SqlMemoryChatStore, SqlMemoryDBChatStore
from tests.support.tables import snapshot

KEY = "chat-1"


def said(*texts: str) -> list[ChatMessage]:
    return [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=t)
        for i, t in enumerate(texts)
    ]


def contents(messages: list[ChatMessage] | None) -> list[str | None]:
    return [m.content for m in messages or []]


def test_the_chat_store_methods(storage: Storage) -> None:
    store = SqlMemoryChatStore(storage)
    store.set_messages(KEY, said("a", "b", "c", "d", "e"))
    store.add_message(KEY, ChatMessage(role="user", content="f"))
    store.add_message("chat-2", ChatMessage(role="user", content="x"))

    assert contents(store.get_messages(KEY)) == ["a", "b", "c", "d", "e", "f"]
    assert store.get_keys() == [KEY, "chat-2"]
    assert contents([store.delete_message(KEY, 1)]) == ["b"]  # type: ignore[list-item]
    assert contents([store.delete_message(KEY, -1)]) == ["f"]  # type: ignore[list-item]
    assert store.delete_message(KEY, 9) is None and store.delete_message(KEY, -9) is None
    assert contents([store.delete_last_message(KEY)]) == ["e"]  # type: ignore[list-item]
    assert contents(store.get_messages(KEY)) == ["a", "c", "d"]
    assert contents(store.delete_messages(KEY)) == ["a", "c", "d"]
    assert store.delete_messages(KEY) is None and store.delete_last_message(KEY) is None
    assert store.get_messages(KEY) == [] and store.get_keys() == ["chat-2"]


def test_set_messages_writes_only_what_changed(storage: Storage) -> None:
    store = SqlMemoryChatStore(storage)
    store.set_messages(KEY, said("a", "b"))
    before = [m.id for m in storage.load(KEY)]

    store.set_messages(KEY, said("a", "b", "c"))
    after = [m.id for m in storage.load(KEY)]
    assert after[:2] == before and len(after) == 3
    store.set_messages(KEY, said("a", "x"))
    assert storage.load(KEY)[0].id == before[0]
    assert contents(store.get_messages(KEY)) == ["a", "x"]


def test_concurrent_deletes_by_position_never_take_one_message_twice(engine: sa.Engine) -> None:
    # Each delete reads and deletes position 0 in one transaction under the lock: three
    # at once take the three oldest messages, never one twice and never an append.
    storage = SqlStorage(engine)
    store = SqlMemoryChatStore(storage)
    store.set_messages(KEY, said(*"abcdef"))
    barrier = threading.Barrier(4)
    taken: list[Any] = []

    def delete() -> None:
        barrier.wait()
        taken.append(store.delete_message(KEY, 0))

    def append() -> None:
        barrier.wait()
        store.add_message(KEY, ChatMessage(role="user", content="new"))

    threads = [threading.Thread(target=f) for f in (delete, delete, delete, append)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(contents(taken)) == ["a", "b", "c"]  # type: ignore[type-var]
    assert contents(store.get_messages(KEY)) == ["d", "e", "f", "new"]


@pytest.mark.anyio
async def test_the_async_twins_over_the_async_storage(async_storage: AsyncSqlStorage) -> None:
    store = SqlMemoryChatStore(async_storage)
    await store.aset_messages(KEY, said("a", "b", "c"))
    await store.async_add_message(KEY, ChatMessage(role="user", content="d"))
    assert contents(await store.aget_messages(KEY)) == ["a", "b", "c", "d"]
    assert contents([await store.adelete_message(KEY, 0)]) == ["a"]  # type: ignore[list-item]
    assert contents([await store.adelete_last_message(KEY)]) == ["d"]  # type: ignore[list-item]
    assert await store.aget_keys() == [KEY]
    # A sync call from the loop's own thread would block the loop it waits for.
    with pytest.raises(TypeError, match="async method"):
        store.get_messages(KEY)
    assert contents(await store.adelete_messages(KEY)) == ["b", "c"]


@pytest.mark.anyio
async def test_memory_s_archive_keeps_the_oldest_messages(async_storage: AsyncSqlStorage) -> None:
    store = SqlMemoryDBChatStore(async_storage)
    await store.add_messages(KEY, said("a", "b", "c", "d", "e"))

    assert contents(await store.archive_oldest_messages(KEY, 2)) == ["a", "b"]
    assert contents(await store.get_messages(KEY)) == ["c", "d", "e"]
    assert contents(await store.get_messages(KEY, MessageStatus.ARCHIVED)) == ["a", "b"]
    assert contents(await store.get_messages(KEY, None, limit=2, offset=1)) == ["b", "c"]
    assert await store.count_messages(KEY) == 3
    assert await store.count_messages(KEY, MessageStatus.ARCHIVED) == 2
    # Archived messages are the oldest: none can follow active ones, and nothing is written.
    with pytest.raises(ValueError, match="oldest"):
        await store.add_message(KEY, ChatMessage(role="user", content="z"), MessageStatus.ARCHIVED)
    assert await store.count_messages(KEY, None) == 5
    # A delete by position in the archive moves its boundary with it.
    assert contents([await store.delete_message(KEY, 0)]) == ["a"]  # type: ignore[list-item]
    assert contents(await store.get_messages(KEY, MessageStatus.ARCHIVED)) == ["b"]
    assert contents(await store.delete_oldest_messages(KEY, 1)) == ["c"]
    await store.delete_messages(KEY, MessageStatus.ACTIVE)
    assert contents(await store.get_messages(KEY, None)) == ["b"]
    await store.set_messages(KEY, said("p", "q"), MessageStatus.ARCHIVED)
    assert (await store.count_messages(KEY), await store.count_messages(KEY, None)) == (0, 2)
    await store.add_message(KEY, ChatMessage(role="user", content="r"))
    await store.delete_messages(KEY, MessageStatus.ARCHIVED)
    assert contents(await store.get_messages(KEY)) == ["r"]
    assert await store.get_keys() == [KEY]
    await store.delete_messages(KEY)
    assert await store.get_keys() == []


@pytest.mark.anyio
async def test_owned_views_keep_each_user_s_history(
    async_storage: AsyncSqlStorage, engine: sa.Engine
) -> None:
    alice = SqlMemoryChatStore(async_storage.owned_by("alice"))
    bob = SqlMemoryChatStore(async_storage.owned_by("bob"))
    bob_memory = SqlMemoryDBChatStore(async_storage.owned_by("bob"))
    await alice.aset_messages(KEY, said("a", "b", "c"))
    with engine.connect() as conn:
        before = snapshot(conn)

    assert await bob.aget_messages(KEY) == [] and await bob.aget_keys() == []
    with pytest.raises(SessionOwnerError):
        await bob.async_add_message(KEY, ChatMessage(role="user", content="mine?"))
    with pytest.raises(SessionOwnerError):
        await bob.aset_messages(KEY, said("mine?"))
    assert await bob.adelete_message(KEY, 0) is None
    assert await bob.adelete_last_message(KEY) is None
    assert await bob.adelete_messages(KEY) is None
    assert await bob_memory.archive_oldest_messages(KEY, 2) == []
    assert await bob_memory.get_messages(KEY, None) == []
    await bob_memory.delete_messages(KEY, MessageStatus.ACTIVE)
    with pytest.raises(SessionOwnerError):
        await bob_memory.set_messages(KEY, said("mine?"))
    with engine.connect() as conn:
        assert snapshot(conn) == before
    assert contents(await alice.aget_messages(KEY)) == ["a", "b", "c"]


def test_hostile_input_changes_nothing(storage: Storage, engine: sa.Engine) -> None:
    store = SqlMemoryChatStore(storage)
    store.set_messages(KEY, said("a", "b"))
    with engine.connect() as conn:
        before = snapshot(conn)
    bad = ChatMessage(role="user", content="x", additional_kwargs={"x": object()})

    with pytest.raises(ConversionError):
        store.add_message(KEY, bad)
    with pytest.raises(ConversionError):
        store.set_messages(KEY, [*said("a"), bad])
    with pytest.raises(ConversionError):
        store.add_message(KEY, {"role": "user", "content": "x"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.delete_message(KEY, "0")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.get_messages(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        SqlMemoryChatStore(object())
    with engine.connect() as conn:
        assert snapshot(conn) == before
