"""Start-up under load: many processes upgrading an empty database at once; a new
storage's first call on a busy SQLite file; a downgrade that foreign keys from outside
would break half-way.

docs/contract/persistence.md (migrations): ``upgrade`` serializes on a database lock and
the processes that wait find the schema at head; a SQLite file is left in WAL mode; a
storage's first use waits on a busy database; ``downgrade`` refuses, before changing
anything, when a table outside sqlmemory holds a foreign key to one of ours.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from sqlmemory import Message, SchemaError, SqlStorage
from sqlmemory.migrate import current, downgrade, head, upgrade
from tests.reliability.figures import FIGURES
from tests.reliability.workers import TIMEOUT, run_workers, upgrade_worker

PROCESSES = 8


@pytest.fixture
def empty_db_url(backend: str, db_url: str, tmp_path: Path) -> Iterator[str]:
    """A database of its own on the backend's server (a new file on SQLite), dropped after."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    url = sa.make_url(db_url)
    name = f"{url.database}_startup"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    quote = admin.dialect.identifier_preparer.quote
    drop = f"DROP DATABASE IF EXISTS {quote(name)}"
    if backend == "postgresql":
        drop += " WITH (FORCE)"
    with admin.connect() as conn:
        conn.exec_driver_sql(drop)
        conn.exec_driver_sql(f"CREATE DATABASE {quote(name)}")
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(drop)
        admin.dispose()


def test_eight_processes_upgrading_an_empty_database_all_succeed(empty_db_url: str) -> None:
    reports = sorted(run_workers(PROCESSES, upgrade_worker, empty_db_url, lambda i: (), TIMEOUT))
    FIGURES["faults"] += PROCESSES  # racing first-time upgrades
    assert reports == [(i, None) for i in range(PROCESSES)]
    assert current(empty_db_url) == head()
    storage = SqlStorage.from_url(empty_db_url)
    try:
        assert sorted(m.id for m in storage.load("after-upgrade")) == [
            f"u{i}" for i in range(PROCESSES)
        ]
    finally:
        storage.close()
    if empty_db_url.startswith("sqlite"):
        with sqlite3.connect(empty_db_url.removeprefix("sqlite:///")) as raw:
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_new_storage_waits_for_a_busy_sqlite_file_in_rollback_journal_mode(
    tmp_path: Path,
) -> None:
    # A file migrated by other means (still in rollback-journal mode) while another
    # connection holds its write lock: the first call waits, then switches it to WAL.
    path = tmp_path / "journal.db"
    upgrade(f"sqlite:///{path}")
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA journal_mode=DELETE")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    storages = [SqlStorage.from_url(f"sqlite:///{path}") for _ in range(4)]
    errors: list[BaseException] = []

    def first_call(index: int) -> None:
        try:
            storages[index].append("busy", Message.user(f"hello {index}", id=f"b{index}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=first_call, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    release.join()
    holder.close()
    assert errors == []
    assert sorted(m.id for m in storages[0].load("busy")) == ["b0", "b1", "b2", "b3"]
    for storage in storages:
        storage.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    FIGURES["faults"] += 1


def test_downgrade_refuses_while_an_outside_table_references_ours(empty_db_url: str) -> None:
    upgrade(empty_db_url)
    storage = SqlStorage.from_url(empty_db_url)
    storage.append("kept", Message.user("still here", id="k"))
    engine = sa.create_engine(empty_db_url, poolclass=NullPool)
    host = sa.MetaData()
    # The host's table references our sessions (made with the column type of ours).
    from sqlmemory.storage.sql.schema import sessions_table

    sa.Table(
        "host_links",
        host,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "sid", sessions_table.c.session_id.type, sa.ForeignKey(sessions_table.c.session_id)
        ),
    )
    with engine.begin() as conn:
        host.tables["host_links"].create(conn)
    try:
        with pytest.raises(SchemaError, match="host_links"):
            downgrade(empty_db_url, "base")
        assert current(empty_db_url) == head()
        assert [m.id for m in storage.load("kept")] == ["k"]
    finally:
        with engine.begin() as conn:
            host.tables["host_links"].drop(conn)
        storage.close()
        engine.dispose()
    downgrade(empty_db_url, "base")
    assert current(empty_db_url) is None
