"""Storage construction: engines it owns or borrows, and databases not at head."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import QueuePool

from sqlmemory import (
    AsyncSqlStorage,
    Message,
    SqlStorage,
)
from sqlmemory._urls import ASYNC_URL_FORMS, URL_FORMS, redact

SID = "api"


def test_from_url_owns_and_disposes_its_engine(engine: sa.Engine, db_url: str) -> None:
    with SqlStorage.from_url(db_url) as owned:
        assert isinstance(owned.engine, sa.Engine)
        assert owned.engine.url.render_as_string(hide_password=False) == db_url
        owned.append(SID, Message.user("via from_url", id="u"))
        assert [m.id for m in owned.load(SID)] == ["u"]
        pool = owned.engine.pool
        assert isinstance(pool, QueuePool)
        assert pool.checkedin() >= 1
    assert owned.engine.pool is not pool  # disposed: the pool was replaced
    assert pool.checkedin() == 0
    owned.close()  # closing twice is harmless
    reader = SqlStorage(engine)
    assert [m.text_content() for m in reader.load(SID)] == ["via from_url"]


def test_from_url_pings_no_pooled_connection(engine: sa.Engine, db_url: str) -> None:
    # docs/production.md, "Connections that die": a ping is a round trip before every
    # call; a dead pooled connection is found by the call, which runs again on a fresh
    # one (tests/reliability/test_faults.py). The pool's own setting is read: the ping
    # runs below the statement events. A caller may still ask for it.
    with SqlStorage.from_url(db_url) as storage:
        assert storage.engine.pool._pre_ping is False
    with SqlStorage.from_url(db_url, pool_pre_ping=True) as storage:
        assert storage.engine.pool._pre_ping is True
        storage.append(SID, Message.user("pinged"))
        assert storage.count(SID) == 1


def test_a_url_of_the_other_io_mode_names_the_url_form_to_use(
    engine: sa.Engine, db_url: str, async_db_url: str, backend: str
) -> None:
    # Refused before an engine is made; a server URL is checked without connecting.
    async_url = make_url(async_db_url)
    with pytest.raises(ValueError) as raised:
        SqlStorage.from_url(async_db_url)
    assert str(raised.value) == (
        f"{redact(async_url)} selects the async driver {async_url.get_driver_name()!r}, "
        f"which SqlStorage cannot use: SqlStorage takes URLs such as {URL_FORMS[backend]}, "
        "and AsyncSqlStorage takes this one"
    )
    sync_url = make_url(db_url)
    if sync_url.get_driver_name() != "psycopg":
        with pytest.raises(ValueError) as raised:
            AsyncSqlStorage.from_url(db_url)
        assert str(raised.value) == (
            f"{redact(sync_url)} selects the sync driver {sync_url.get_driver_name()!r}, "
            "which AsyncSqlStorage cannot use: AsyncSqlStorage takes URLs such as "
            f"{ASYNC_URL_FORMS[backend]}, and SqlStorage takes this one"
        )
        return

    async def through_psycopg_async() -> list[str]:  # psycopg has both modes
        async with AsyncSqlStorage.from_url(db_url) as storage:
            assert storage.engine.sync_engine.dialect.is_async
            await storage.append(SID, Message.user("through psycopg", id="p"))
            return [m.id for m in await storage.load(SID)]

    assert asyncio.run(through_psycopg_async()) == ["p"]


def test_an_engine_of_the_other_io_mode_is_refused(
    engine: sa.Engine, async_db_url: str, backend: str
) -> None:
    async_driver_engine = sa.create_engine(async_db_url)
    try:
        with pytest.raises(ValueError) as raised:
            SqlStorage(async_driver_engine)
    finally:
        async_driver_engine.dispose()
    assert str(raised.value).startswith(
        f"the engine's URL {redact(make_url(async_db_url))} selects the async driver"
    )
    assert f"SqlStorage takes URLs such as {URL_FORMS[backend]}," in str(raised.value)
    with pytest.raises(TypeError, match="AsyncSqlStorage takes an AsyncEngine, not 'Engine'"):
        AsyncSqlStorage(engine)  # type: ignore[arg-type]


def test_close_leaves_an_engine_it_was_given_alone(engine: sa.Engine) -> None:
    storage = SqlStorage(engine)
    assert storage.engine is engine
    storage.count(SID)
    pool = engine.pool
    storage.close()
    with storage:
        pass
    assert engine.pool is pool
    assert SqlStorage(engine).count(SID) == 0


def test_storage_on_a_database_without_the_schema_names_the_command(tmp_path: object) -> None:
    from sqlmemory import SchemaError, StorageError

    url = f"sqlite:///{tmp_path}/empty.db"
    with SqlStorage.from_url(url) as storage:
        for call in (
            lambda: storage.append(SID, Message.user("hi")),
            lambda: storage.load(SID),
            lambda: storage.count(SID),
            lambda: storage.sessions(),
        ):
            with pytest.raises(SchemaError, match="sqlmemory migrate") as caught:
                call()
            assert isinstance(caught.value, StorageError)
        with storage.engine.connect() as conn:
            assert sa.inspect(conn).get_table_names() == []  # nothing was created


def test_storage_on_a_database_at_an_unknown_revision_raises(tmp_path: object) -> None:
    from sqlmemory import SchemaError
    from sqlmemory.migrate import upgrade

    url = f"sqlite:///{tmp_path}/moved.db"
    upgrade(url)
    with SqlStorage.from_url(url) as storage:
        storage.append(SID, Message.user("at head"))
        with storage.engine.begin() as conn:
            conn.execute(sa.text("UPDATE sqlmemory_alembic_version SET version_num = 'ffff0000'"))
    # The database is newer than the package: the message says what to upgrade.
    with SqlStorage.from_url(url) as storage, pytest.raises(SchemaError, match="ffff0000"):
        storage.load(SID)


def _other_writer_is_locked_out(path: str) -> bool:
    """Whether another connection to the file finds its write lock taken."""
    import sqlite3

    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
        return True
    else:
        other.execute("ROLLBACK")
        return False
    finally:
        other.close()


@pytest.mark.parametrize("driver", ["sqlite", "sqlite+aiosqlite"])
def test_sqlite_writes_begin_immediate_and_reads_do_not_lock(tmp_path: object, driver: str) -> None:
    # The storage begins SQLite transactions on the driver's connection: a write takes
    # the database's write lock at BEGIN, so two writers queue on the busy timeout
    # instead of both reading and then failing to upgrade; a read takes no lock.
    import asyncio

    from sqlmemory import migrate
    from sqlmemory.storage.sql.engine import WRITE_OPTION

    path = f"{tmp_path}/begin.db"
    migrate.upgrade(f"sqlite:///{path}")

    def check(conn: sa.Connection) -> tuple[bool, bool]:
        return conn.connection.driver_connection.in_transaction, _other_writer_is_locked_out(path)  # type: ignore[union-attr]

    if driver == "sqlite":
        storage = SqlStorage.from_url(f"sqlite:///{path}")
        found = []
        for write in (True, False):
            options = {WRITE_OPTION: write}
            with storage.engine.connect().execution_options(**options) as conn, conn.begin():
                found.append(check(conn))
        storage.close()
    else:
        from sqlmemory import AsyncSqlStorage

        async def run() -> list[tuple[bool, bool]]:
            storage = AsyncSqlStorage.from_url(f"sqlite+aiosqlite:///{path}")
            found = []
            for write in (True, False):
                async with storage.engine.connect() as conn:
                    conn = await conn.execution_options(**{WRITE_OPTION: write})
                    async with conn.begin():
                        found.append(await conn.run_sync(check))
            await storage.close()
            return found

        found = asyncio.run(run())
    assert found == [(True, True), (True, False)]
