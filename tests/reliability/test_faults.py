"""Faults: the server kills a connection mid-write or while it idles in the pool, and a
writer process is SIGKILLed mid-transaction.

docs/contract/persistence.md (transactions, retries): a write cut off before its commit
leaves nothing, the next call works on a fresh connection, a read whose connection died
is run again once; a process killed mid-transaction leaves all or nothing and no lock.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from sqlmemory import FixedWindow, Message, SqlStorage, StorageError
from tests.reliability.figures import FIGURES
from tests.reliability.workers import TIMEOUT, BlockingAsync, batch, forkserver, killed_writer
from tests.support.storages import Databases, backend_param
from tests.support.tables import orphan_blobs, snapshot

SERVERS = ("postgresql", "mysql")
PID = {"postgresql": "SELECT pg_backend_pid()", "mysql": "SELECT CONNECTION_ID()"}
KILL = {"postgresql": "SELECT pg_terminate_backend({})", "mysql": "KILL {}"}


@pytest.fixture(params=[backend_param(b) for b in SERVERS])
def server(request: pytest.FixtureRequest, databases: Databases) -> Iterator[tuple[str, str]]:
    """``(backend, url)`` of a server backend, its sqlmemory tables emptied."""
    name = str(request.param)
    databases.clean_engine(name)
    yield name, databases.url(name)


def open_storage(kind: str, url: str, **engine_kwargs: Any) -> Any:
    if kind == "sync":
        return SqlStorage.from_url(url, **engine_kwargs)
    return BlockingAsync(url, **engine_kwargs)


def sync_engine(storage: Any) -> sa.Engine:
    engine = storage.engine
    return engine if isinstance(engine, sa.Engine) else engine.sync_engine


class Killer:
    """Kills server connections by id, from a connection of its own."""

    def __init__(self, backend: str, url: str) -> None:
        self.backend = backend
        self.engine = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)

    def kill(self, pid: int) -> None:
        with self.engine.connect() as conn:
            conn.exec_driver_sql(KILL[self.backend].format(int(pid)))
        FIGURES["faults"] += 1


def raw_pid(backend: str, dbapi_connection: Any) -> int:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(PID[backend])
        return int(cursor.fetchone()[0])
    finally:
        cursor.close()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_connection_killed_mid_write_is_run_again_on_a_fresh_one(
    server: tuple[str, str], kind: str
) -> None:
    # Killed before its COMMIT was sent, the write was rolled back by the server: the
    # storage runs it again on a fresh connection, and the caller sees it succeed once.
    backend, url = server
    storage = open_storage(kind, url)
    killer = Killer(backend, url)
    engine = sync_engine(storage)
    armed = [True]

    def kill_before_messages(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        # The insert of the messages (on PostgreSQL, inside the one statement of the
        # append, whose session upsert comes first).
        if armed[0] and "INSERT INTO sqlmemory_messages" in statement:
            armed[0] = False
            killer.kill(raw_pid(backend, conn.connection.dbapi_connection))

    try:
        storage.append("victim", *batch("w", "first"))
        sa.event.listen(engine, "before_cursor_execute", kill_before_messages)
        storage.append("victim", *batch("w", "second"))
        assert not armed[0]
        ids = [m.id for m in storage.load("victim")]
        assert ids == [m.id for m in batch("w", "first") + batch("w", "second")]
        assert storage.session_info("victim").message_count == len(ids)
        FIGURES["operations"] += 3
    finally:
        storage.close()
        killer.engine.dispose()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_connection_killed_at_commit_reruns_an_append_but_not_a_pop(
    server: tuple[str, str], kind: str
) -> None:
    # Killed as its COMMIT is sent, a write may or may not have happened. An append runs
    # again (a second append of the same messages writes nothing more); a pop in a
    # transaction does not (it could pop twice): the caller gets a StorageError, and the
    # pop did not happen.
    backend, url = server
    storage = open_storage(kind, url)
    killer = Killer(backend, url)
    engine = sync_engine(storage)
    armed = [False]

    sent_only = [False]

    def kill_at_commit(conn: sa.Connection) -> None:
        # With sent_only, at a COMMIT that is sent: not after a statement in autocommit
        # (PostgreSQL's one-statement writes), which was its own transaction.
        autocommit = conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT"
        if armed[0] and not (sent_only[0] and autocommit):
            armed[0] = False
            killer.kill(raw_pid(backend, conn.connection.dbapi_connection))

    sa.event.listen(engine, "commit", kill_at_commit)
    try:
        storage.append("victim", *batch("w", "first"))
        armed[0] = True
        storage.append("victim", *batch("w", "second"))
        assert not armed[0]
        expected = [m.id for m in batch("w", "first") + batch("w", "second")]
        assert [m.id for m in storage.load("victim")] == expected
        # A pop that takes the session's record with it (its last message) is a
        # transaction on every backend.
        storage.append("single", *batch("w", "only")[:1])
        sent_only[0] = armed[0] = True
        with pytest.raises(StorageError):
            storage.pop("single")
        assert not armed[0]
        assert storage.count("single") == 1
        sent_only[0], armed[0] = False, True
        if backend == "postgresql":
            # PostgreSQL pops from a longer history in one statement in autocommit: done
            # when the statement returns, before the hook that kills the connection runs.
            popped = storage.pop("victim")
            assert not armed[0]
            assert popped is not None and popped.id == expected[-1]
            expected.pop()
        else:
            with pytest.raises(StorageError):
                storage.pop("victim")
            assert not armed[0]
        assert [m.id for m in storage.load("victim")] == expected
        assert storage.session_info("victim").message_count == len(expected)
        FIGURES["operations"] += 8
        FIGURES["faults"] += 2
    finally:
        storage.close()
        killer.engine.dispose()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_calls_survive_pooled_connections_the_server_dropped(
    server: tuple[str, str], kind: str
) -> None:
    # from_url pings no connection before use (a round trip per call): each call below
    # finds its pooled connection killed between two calls and runs on a fresh one.
    backend, url = server
    storage = open_storage(kind, url)
    assert sync_engine(storage).pool._pre_ping is False
    killer = Killer(backend, url)
    pids: list[int] = []

    def remember(dbapi_connection: Any, record: Any) -> None:
        pids.append(raw_pid(backend, dbapi_connection))
        dbapi_connection.rollback()  # leave the new connection as SQLAlchemy expects it

    sa.event.listen(sync_engine(storage), "connect", remember)
    try:
        storage.append("idle", Message.user("hello", id="h"))
        calls = {
            "load": lambda: [m.id for m in storage.load("idle")],
            "recent": lambda: [m.id for m in storage.recent("idle", 5)],
            "count": lambda: storage.count("idle"),
            "append": lambda: storage.append("idle", Message.user("again", id="a")),
            "save": lambda: storage.save("idle", [Message.user("hello", id="h")]),
            "pop": lambda: storage.pop("idle").id,
            "window": lambda: [m.id for m in storage.load("idle", FixedWindow(5))],
        }
        expected = {
            "load": ["h"],
            "recent": ["h"],
            "count": 1,
            "append": None,
            "save": None,
            "pop": "h",
            "window": [],
        }
        for name, call in calls.items():
            assert pids, "the storage opened no connection"
            for pid in pids:
                killer.kill(pid)
            pids.clear()
            assert call() == expected[name], name
            FIGURES["operations"] += 1
    finally:
        storage.close()
        killer.engine.dispose()


@pytest.mark.parametrize("table", ["sqlmemory_messages", "sqlmemory_blocks"])
def test_a_writer_sigkilled_mid_transaction_leaves_all_or_nothing(
    engine: sa.Engine, db_url: str, table: str
) -> None:
    storage = SqlStorage(engine)
    storage.append("killed", Message.user("before", id="before"))
    with engine.connect() as conn:
        before = snapshot(conn)
    context = forkserver()
    ready = context.Queue()
    process = context.Process(target=killed_writer, args=(db_url, "killed", table, ready))
    process.start()
    assert ready.get(timeout=TIMEOUT) == "ready"
    process.join(TIMEOUT)
    assert process.exitcode == -signal.SIGKILL
    FIGURES["faults"] += 1
    # The dead writer's transaction is rolled back and its lock released: the next
    # write on the session goes through at once (it would wait forever otherwise).
    storage.append("killed", Message.user("after", id="after"))
    assert [m.id for m in storage.load("killed")] == ["before", "after"]
    with engine.connect() as conn:
        after = snapshot(conn)
        assert orphan_blobs(conn) == []
    assert after["blobs"] == before["blobs"]
    assert len(after["messages"]) == len(before["messages"]) + 1
