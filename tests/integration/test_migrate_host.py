"""sqlmemory beside a host application's Alembic, and ``upgrade_async``, on every backend.

The host project is what ``alembic init`` makes, with its own models, its own ``env.py``
passing ``sqlmemory.migrate.include_name`` / ``include_object`` to ``context.configure``
(docs/production.md), and its own version table ``alembic_version``. Its autogenerate
must propose nothing for the ``sqlmemory_*`` tables, and its own changes as usual.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from sqlmemory import Message, SqlStorage, migrate

HOST_ENV = '''
"""The host application's Alembic environment: its models, and sqlmemory's filters."""
import importlib.util
from pathlib import Path

import sqlalchemy as sa
from alembic import context

from sqlmemory.migrate import include_name, include_object

# A real application writes `from myapp.models import metadata`; the test loads the file.
MODELS = Path(__file__).parents[1] / "models.py"
spec = importlib.util.spec_from_file_location("host_models", MODELS)
models = importlib.util.module_from_spec(spec)
spec.loader.exec_module(models)

engine = sa.create_engine(context.config.get_main_option("sqlalchemy.url"), poolclass=sa.NullPool)
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=models.metadata,
        include_name=include_name,
        include_object=include_object,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
'''

MODELS = """
import sqlalchemy as sa

metadata = sa.MetaData()
users = sa.Table(
    "host_users",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
{extra})
"""


def host_metadata(extra: str = "") -> sa.MetaData:
    namespace: dict[str, object] = {}
    exec(MODELS.format(extra=extra), namespace)  # noqa: S102 - the test's own text
    metadata = namespace["metadata"]
    assert isinstance(metadata, sa.MetaData)
    return metadata


@pytest.fixture
def host(tmp_path: Path, db_url: str, engine: sa.Engine) -> Iterator[Config]:
    """An ``alembic init`` project on the migrated database, its tables dropped afterwards."""
    config = Config(str(tmp_path / "alembic.ini"), stdout=io.StringIO())
    command.init(config, str(tmp_path / "migrations"))
    config.set_main_option("script_location", str(tmp_path / "migrations"))
    config.set_main_option("sqlalchemy.url", db_url.replace("%", "%%"))
    (tmp_path / "migrations" / "env.py").write_text(HOST_ENV, encoding="utf-8")
    (tmp_path / "models.py").write_text(MODELS.format(extra=""), encoding="utf-8")
    try:
        yield config
    finally:
        with engine.begin() as conn:
            for name in ("host_users", "alembic_version"):
                sa.Table(name, sa.MetaData()).drop(conn, checkfirst=True)


def revision_text(config: Config, rev_id: str) -> str:
    script = ScriptDirectory.from_config(config).get_revision(rev_id)
    assert script is not None and script.path is not None
    return Path(script.path).read_text(encoding="utf-8")


def test_without_the_filters_autogenerate_would_drop_sqlmemory_tables(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn)
        removed = {
            diff[1].name
            for diff in compare_metadata(context, host_metadata())
            if diff[0] == "remove_table"
        }
    assert {"sqlmemory_sessions", "sqlmemory_messages", migrate.VERSION_TABLE} <= removed


def test_host_autogenerate_proposes_nothing_for_sqlmemory_tables(
    host: Config, tmp_path: Path, db_url: str, engine: sa.Engine
) -> None:
    SqlStorage(engine).append("chat", Message.user("kept"))

    command.revision(host, message="users", autogenerate=True, rev_id="h1")
    first = revision_text(host, "h1")
    assert "op.create_table('host_users'" in first
    assert "sqlmemory" not in first

    command.upgrade(host, "head")
    command.check(host)  # nothing left to propose: sqlmemory's tables are not the host's

    (tmp_path / "models.py").write_text(
        MODELS.format(extra='    sa.Column("email", sa.String(200)),\n'), encoding="utf-8"
    )
    command.revision(host, message="email", autogenerate=True, rev_id="h2")
    second = revision_text(host, "h2")
    assert "op.add_column('host_users', sa.Column('email'" in second
    assert "sqlmemory" not in second
    command.upgrade(host, "head")
    command.check(host)

    # Each side keeps its own version table and its data.
    with engine.connect() as conn:
        host_version = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    assert host_version == "h2"
    assert migrate.current(engine) == migrate.head()
    migrate.check(engine)
    assert [m.text_content() for m in SqlStorage(engine).load("chat")] == ["kept"]


@pytest.mark.anyio
async def test_upgrade_async_migrates_on_the_async_engine(
    async_db_url: str, db_url: str, engine: sa.Engine
) -> None:
    async_engine = create_async_engine(async_db_url, poolclass=NullPool)
    try:
        migrate.downgrade(db_url, "base")
        assert migrate.current(db_url) is None
        await migrate.upgrade_async(async_engine)
        assert migrate.current(db_url) == migrate.head()
        await migrate.upgrade_async(async_engine)  # at head: nothing to do
    finally:
        await async_engine.dispose()
        migrate.upgrade(db_url)  # the next test needs the schema, whatever happened here
    migrate.check(db_url)


@pytest.mark.anyio
async def test_upgrade_async_refuses_an_in_memory_sqlite_database() -> None:
    async_engine = create_async_engine("sqlite+aiosqlite://")
    try:
        with pytest.raises(ValueError, match="in-memory SQLite"):
            await migrate.upgrade_async(async_engine)
    finally:
        await async_engine.dispose()


def test_the_filters_agree_with_sqlmemory_own_environment() -> None:
    from sqlmemory._tables import only_sqlmemory_name, only_sqlmemory_object

    tables = [migrate.VERSION_TABLE, "sqlmemory_messages", "users", "sqlmemory", "my_sqlmemory_x"]
    for name in tables:
        assert migrate.include_name(name, "table", {}) != only_sqlmemory_name(name, "table", {})
        table = sa.Table(name, sa.MetaData(), sa.Column("id", sa.Integer))
        for obj, kind in ((table, "table"), (table.c.id, "column")):
            assert migrate.include_object(
                obj, obj.name, kind, False, None
            ) != only_sqlmemory_object(obj, obj.name, kind, False, None)
    # Schemas are not tables: both sides compare them.
    assert migrate.include_name(None, "schema", {}) and only_sqlmemory_name(None, "schema", {})
