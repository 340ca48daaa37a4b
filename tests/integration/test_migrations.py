"""The shipped migrations: upgrade, check, downgrade on every backend; the wheel ships them.

The backend tests share their database with the ``migrated_engine`` fixture, so each one
leaves the schema at head when it finishes, whatever happens in between (the ``db``
fixture of ``tests/integration/conftest.py``).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from sqlmemory import migrate
from sqlmemory._tables import is_search_object
from sqlmemory.errors import SchemaError, StorageError
from sqlmemory.storage.sql.schema import Base
from tests.support.backends import drop_sqlmemory_tables

REPO = Path(__file__).resolve().parents[2]
TABLES = {table.name for table in Base.metadata.sorted_tables}
VERSION_TABLE = "sqlmemory_alembic_version"


def sqlmemory_tables(engine: sa.Engine) -> set[str]:
    with engine.connect() as conn:
        return {n for n in sa.inspect(conn).get_table_names() if n.startswith("sqlmemory_")}


def model_tables(engine: sa.Engine) -> set[str]:
    """The tables of the models: SQLite's FTS5 table of search (and its shadow tables)
    is there too, only there."""
    found = sqlmemory_tables(engine)
    assert ("sqlmemory_search" in found) == (engine.dialect.name == "sqlite")
    return {name for name in found if not is_search_object(name)}


def test_upgrade_check_downgrade_upgrade(db: sa.Engine) -> None:
    migrate.upgrade(db)
    migrate.check(db)
    assert migrate.current(db) == migrate.head() == "0009"
    assert model_tables(db) == TABLES | {VERSION_TABLE}

    migrate.downgrade(db, "base")
    assert sqlmemory_tables(db) == set()
    assert migrate.current(db) is None

    migrate.upgrade(db)
    migrate.check(db)
    assert migrate.current(db) == migrate.head()
    assert model_tables(db) == TABLES | {VERSION_TABLE}


def test_upgrade_at_head_is_a_no_op(db: sa.Engine) -> None:
    migrate.upgrade(db)
    migrate.upgrade(db)
    assert migrate.current(db) == migrate.head()


def test_upgrade_and_downgrade_accept_a_url(db: sa.Engine, db_url: str) -> None:
    migrate.downgrade(db_url, "base")
    assert migrate.current(db_url) is None
    migrate.upgrade(db_url)
    migrate.check(db_url)
    assert migrate.current(db_url) == migrate.head()


def test_host_tables_and_host_alembic_history_are_untouched(db: sa.Engine) -> None:
    host = sa.MetaData()
    items = sa.Table(
        "host_items",
        host,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(50)),
    )
    host_version = sa.Table(
        "alembic_version", host, sa.Column("version_num", sa.String(32), primary_key=True)
    )
    host.create_all(db)
    with db.begin() as conn:
        conn.execute(items.insert(), [{"id": 1, "name": "kept"}])
        conn.execute(host_version.insert(), [{"version_num": "host_rev_42"}])

    migrate.downgrade(db, "base")
    migrate.upgrade(db)
    # `alembic check` would report host_items as a table to drop if it were not filtered.
    migrate.check(db)
    migrate.downgrade(db, "base")
    migrate.upgrade(db)

    with db.connect() as conn:
        names = set(sa.inspect(conn).get_table_names())
        assert {"host_items", "alembic_version"} <= names
        assert conn.execute(sa.select(host_version.c.version_num)).scalars().all() == [
            "host_rev_42"
        ]
        assert conn.execute(sa.select(items.c.name)).scalars().all() == ["kept"]
    assert migrate.current(db) == migrate.head()


def test_check_reports_drift_in_sqlmemory_tables_only(db: sa.Engine) -> None:
    migrate.upgrade(db)
    extra = sa.Table("sqlmemory_extra", sa.MetaData(), sa.Column("id", sa.Integer))
    extra.create(db)
    with pytest.raises(SchemaError, match="sqlmemory_extra"):
        migrate.check(db)
    extra.drop(db)
    migrate.check(db)


def test_require_head_names_the_command_on_a_database_without_the_tables(
    db: sa.Engine,
) -> None:
    migrate.downgrade(db, "base")
    with db.connect() as conn, pytest.raises(SchemaError) as caught:
        migrate.require_head(conn)
    message = str(caught.value)
    assert "sqlmemory migrate --url" in message
    assert str(make_url(str(db.url)).database) in message
    with pytest.raises(SchemaError, match="sqlmemory migrate"):
        migrate.check(db)

    migrate.upgrade(db)
    with db.connect() as conn:
        migrate.require_head(conn)


def test_require_head_on_an_empty_or_unknown_version(db: sa.Engine) -> None:
    migrate.upgrade(db)
    version = sa.table(VERSION_TABLE, sa.column("version_num"))
    with db.begin() as conn:
        conn.execute(version.delete())
    with db.connect() as conn, pytest.raises(SchemaError, match="sqlmemory migrate"):
        migrate.require_head(conn)

    with db.begin() as conn:
        conn.execute(version.insert().values(version_num="9999"))
    with db.connect() as conn, pytest.raises(SchemaError, match="upgrade the sqlmemory package"):
        migrate.require_head(conn)
    with db.begin() as conn:
        conn.execute(version.update().values(version_num=migrate.head()))


def test_failed_upgrade_is_rolled_back(db: sa.Engine, backend: str) -> None:
    migrate.downgrade(db, "base")
    # A table in the way of the last CREATE TABLE of the first revision.
    blocker = sa.Table("sqlmemory_blocks", sa.MetaData(), sa.Column("x", sa.Integer))
    blocker.create(db)
    try:
        with pytest.raises(StorageError, match="sqlmemory_blocks"):
            migrate.upgrade(db)
        assert migrate.current(db) is None  # a revision is recorded only once it is whole
        if backend != "mysql":  # MySQL/MariaDB commit each DDL statement on their own
            assert sqlmemory_tables(db) == {"sqlmemory_blocks"}
    finally:
        blocker.drop(db)
        drop_sqlmemory_tables(db)
    migrate.upgrade(db)
    migrate.check(db)


# -- SQLite only: connection state around a migration -----------------------------------


def test_sqlite_foreign_keys_are_restored_after_a_migration(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path}/fk.db", poolclass=StaticPool)

    @sa.event.listens_for(engine, "connect")
    def _foreign_keys_on(dbapi_connection: object, record: object) -> None:
        dbapi_connection.execute("PRAGMA foreign_keys = ON")  # type: ignore[attr-defined]

    seen: list[int] = []
    original = command.upgrade

    def spy(cfg: Config, revision: str) -> None:
        conn: sa.Connection = cfg.attributes["connection"]
        seen.append(conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one())
        original(cfg, revision)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(command, "upgrade", spy)
            migrate.upgrade(engine)
        assert seen == [0]  # off during the migration: batch table copies cascade otherwise
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        migrate.check(engine)
    finally:
        engine.dispose()


def test_a_storage_engine_can_be_migrated(tmp_path: Path) -> None:
    from sqlmemory import Message, SqlStorage

    engine = sa.create_engine(f"sqlite:///{tmp_path}/storage.db")
    try:
        storage = SqlStorage(engine)  # sets the engine up: WAL, BEGIN IMMEDIATE, foreign keys
        migrate.upgrade(engine)
        migrate.check(engine)
        storage.append("s", Message.user("hello"))
        assert storage.count("s") == 1
    finally:
        engine.dispose()


# -- without a database ----------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///offline.db",
        "postgresql+psycopg://u@h/db",
        "mysql+pymysql://u@h/db",
    ],
)
def test_offline_mode_writes_the_sql(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SQLMEMORY_URL", raising=False)
    output = io.StringIO()
    cfg = Config(output_buffer=output)
    cfg.set_main_option("script_location", str(migrate.script_location()))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "head", sql=True)
    sql = output.getvalue()
    assert "CREATE TABLE sqlmemory_alembic_version" in sql
    for table in TABLES:
        assert f"CREATE TABLE {table}" in sql
    assert "ix_sqlmemory_blocks_session_id_blob_sha256" in sql
    if url.startswith("mysql"):
        assert "ENGINE=InnoDB" in sql and "COLLATE utf8mb4_bin" in sql


def test_script_location_is_the_repository_migrations_in_a_checkout() -> None:
    assert migrate.script_location() == REPO / "migrations"
    assert migrate.head() == "0009"


def test_sync_url_maps_async_drivers() -> None:
    assert str(migrate.sync_url("postgresql+asyncpg://u@h/d")) == "postgresql+psycopg://u@h/d"
    assert str(migrate.sync_url("mysql+aiomysql://u@h/d")) == "mysql+pymysql://u@h/d"
    assert str(migrate.sync_url("sqlite+aiosqlite:///x.db")) == "sqlite+pysqlite:///x.db"
    assert str(migrate.sync_url("sqlite:///x.db")) == "sqlite:///x.db"
    with pytest.raises(ValueError, match="postgresql\\+psycopg://user:password@host"):
        migrate.sync_url("postgresql://u@h:port/d")


def test_a_bad_url_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'not a url' is not a database URL"):
        migrate.upgrade("not a url")
    with pytest.raises(TypeError):
        migrate.upgrade(42)  # type: ignore[arg-type]


def test_developer_alembic_ini_runs_from_the_repository(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/dev.db"
    env = {k: v for k, v in os.environ.items() if k != "SQLMEMORY_URL"}
    for args in (["upgrade", "head"], ["check"], ["current"]):
        done = subprocess.run(
            [sys.executable, "-m", "alembic", "-x", f"url={url}", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    assert migrate.current(url) == migrate.head()
