"""The backend fixtures themselves: reachability, URLs, and the skip-or-fail rule."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.support.backends import (
    LOCAL_URL,
    MYSQL_MIN_ALLOWED_PACKET,
    REQUIRE_ENV,
    URL_ENV,
    WORKER_ENV,
    BackendUnavailable,
    ContainerStarter,
    Probe,
    async_url,
    candidate_url,
    delete_rows,
    drop_sqlmemory_tables,
    mysql_packet_problem,
    packet_size_problem,
    required_backends,
    resolve_url,
    sqlmemory_data_tables,
    unavailable,
    worker_url,
)

# --- live: every backend answers -----------------------------------------------------


def test_sync_url_answers(backend: str, db_url: str) -> None:
    engine = sa.create_engine(db_url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1
            assert conn.dialect.name == backend
    finally:
        engine.dispose()


@pytest.mark.anyio
async def test_async_url_answers(backend: str, async_db_url: str) -> None:
    engine = create_async_engine(async_db_url, poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(sa.text("SELECT 1"))).scalar_one() == 1
            assert conn.dialect.name == backend
            assert conn.dialect.is_async
    finally:
        await engine.dispose()


def test_sync_and_async_urls_reach_the_same_database(db_url: str, async_db_url: str) -> None:
    sync, asynchronous = make_url(db_url), make_url(async_db_url)
    assert sync.drivername != asynchronous.drivername
    assert sync.set(drivername="x") == asynchronous.set(drivername="x")


@pytest.mark.parametrize("backend", ["mysql"], indirect=True)
def test_mysql_connection_is_utf8mb4_with_room_for_large_blobs(db_url: str) -> None:
    assert make_url(db_url).query.get("charset") == "utf8mb4"
    engine = sa.create_engine(db_url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            charset, packet = conn.execute(
                sa.text("SELECT @@character_set_connection, @@max_allowed_packet")
            ).one()
    finally:
        engine.dispose()
    assert charset == "utf8mb4"
    assert int(packet) >= MYSQL_MIN_ALLOWED_PACKET


@pytest.mark.parametrize("backend", ["mysql"], indirect=True)
def test_checking_the_packet_size_changes_no_server_setting(db_url: str) -> None:
    statements: list[str] = []

    def record(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    sa.event.listen(sa.Engine, "before_cursor_execute", record)
    try:
        assert mysql_packet_problem(db_url) is None
    finally:
        sa.event.remove(sa.Engine, "before_cursor_execute", record)
    assert statements
    assert all(s.lstrip().upper().startswith("SELECT") for s in statements), statements


def test_a_small_packet_size_names_the_fix() -> None:
    url = "mysql+pymysql://root:secret@db/test"
    assert packet_size_problem(url, MYSQL_MIN_ALLOWED_PACKET) is None
    problem = packet_size_problem(url, 16 * 1024 * 1024)
    assert problem is not None
    assert "max_allowed_packet = 16 MiB" in problem and "secret" not in problem
    assert "--max-allowed-packet=256M" in problem
    assert "SET GLOBAL max_allowed_packet = 268435456" in problem


# --- resolution rules, with a fake environment and fake probes ------------------------


def answers(url: str) -> str | None:
    return None


def refuses(url: str) -> str | None:
    return "connection refused"


def no_docker(backend: str, stack: contextlib.ExitStack) -> str:
    raise BackendUnavailable("Docker does not answer")


def fake_container(backend: str, stack: contextlib.ExitStack) -> str:
    return f"{backend}+driver://user@container:1234/test"


def resolve(
    backend: str,
    environ: dict[str, str],
    probe: Probe,
    container: ContainerStarter,
    created: list[tuple[str, str]] | None = None,
) -> str:
    def create(server_url: str, url: str) -> None:
        if created is None:
            raise AssertionError("no database is created outside an xdist worker")
        created.append((server_url, url))

    with contextlib.ExitStack() as stack:
        return resolve_url(
            backend,
            environ=environ,
            tmp_dir=Path("/nonexistent"),
            stack=stack,
            probe=probe,
            container=container,
            create=create,
        )


def test_sqlite_uses_a_file_in_the_temporary_directory(tmp_path: Path) -> None:
    url, source = candidate_url("sqlite", {}, tmp_path)
    assert source == "file"
    assert url == f"sqlite+pysqlite:///{tmp_path}/test.db"
    assert make_url(url).database == f"{tmp_path}/test.db"


@pytest.mark.parametrize("name", ["postgresql", "mysql"])
def test_env_url_wins_over_local_server(name: str) -> None:
    env_url = LOCAL_URL[name].replace("127.0.0.1", "db.example")
    assert candidate_url(name, {URL_ENV[name]: env_url}, Path("/tmp")) == (env_url, "env")
    assert candidate_url(name, {URL_ENV[name]: "  "}, Path("/tmp")) == (LOCAL_URL[name], "local")


def test_local_defaults_follow_the_spec() -> None:
    pg = make_url(LOCAL_URL["postgresql"])
    assert (pg.drivername, pg.username, pg.host, pg.port, pg.database) == (
        "postgresql+psycopg",
        "postgres",
        "127.0.0.1",
        5432,
        "test",
    )
    my = make_url(LOCAL_URL["mysql"])
    assert (my.drivername, my.username, my.password, my.host, my.port, my.database) == (
        "mysql+pymysql",
        "root",
        None,
        "127.0.0.1",
        3306,
        "test",
    )
    assert my.query["charset"] == "utf8mb4"


def test_env_urls_get_the_spec_drivers_and_utf8mb4() -> None:
    pg, _ = candidate_url("postgresql", {URL_ENV["postgresql"]: "postgresql://u:p@h/d"}, Path())
    assert pg == "postgresql+psycopg://u:p@h/d"
    my, _ = candidate_url("mysql", {URL_ENV["mysql"]: "mysql://u@h/d"}, Path())
    assert make_url(my).drivername == "mysql+pymysql"
    assert make_url(my).query["charset"] == "utf8mb4"
    latin, _ = candidate_url("mysql", {URL_ENV["mysql"]: "mysql://u@h/d?charset=x"}, Path())
    assert make_url(latin).query["charset"] == "x"


@pytest.mark.parametrize(
    ("name", "sync", "expected"),
    [
        ("sqlite", "sqlite+pysqlite:////tmp/a/test.db", "sqlite+aiosqlite:////tmp/a/test.db"),
        (
            "postgresql",
            "postgresql+psycopg://postgres:s3cret@127.0.0.1:5432/test",
            "postgresql+asyncpg://postgres:s3cret@127.0.0.1:5432/test",
        ),
        (
            "mysql",
            "mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4",
            "mysql+aiomysql://root@127.0.0.1:3306/test?charset=utf8mb4",
        ),
    ],
)
def test_async_url_swaps_only_the_driver(name: str, sync: str, expected: str) -> None:
    assert async_url(name, sync) == expected


def test_local_server_is_used_when_it_answers() -> None:
    assert resolve("postgresql", {}, probe=answers, container=no_docker) == LOCAL_URL["postgresql"]


def test_container_is_the_fallback_for_a_silent_local_server() -> None:
    def local_refuses(url: str) -> str | None:
        return "refused" if "127.0.0.1" in url else None

    url = resolve("mysql", {}, probe=local_refuses, container=fake_container)
    assert url == "mysql+driver://user@container:1234/test"


def test_unreachable_everywhere_lists_every_reason() -> None:
    with pytest.raises(BackendUnavailable, match=r"connection refused; Docker does not answer"):
        resolve("mysql", {}, probe=refuses, container=no_docker)


def test_unreachable_env_url_does_not_fall_back_and_hides_the_password() -> None:
    environ = {URL_ENV["postgresql"]: "postgresql+psycopg://u:s3cret@db.example/test"}
    with pytest.raises(BackendUnavailable, match=URL_ENV["postgresql"]) as info:
        resolve("postgresql", environ, probe=refuses, container=fake_container)
    assert "s3cret" not in str(info.value)


def test_each_xdist_worker_gets_a_database_of_its_own() -> None:
    created: list[tuple[str, str]] = []
    url = resolve("postgresql", {WORKER_ENV: "gw3"}, answers, no_docker, created)
    assert url == LOCAL_URL["postgresql"] + "_gw3"
    assert created == [(LOCAL_URL["postgresql"], url)]

    environ = {WORKER_ENV: "gw0", URL_ENV["mysql"]: "mysql://u:pw@h:1/app?charset=utf8mb4"}
    created.clear()
    url = resolve("mysql", environ, answers, no_docker, created)
    assert url == "mysql+pymysql://u:pw@h:1/app_gw0?charset=utf8mb4"
    assert created == [("mysql+pymysql://u:pw@h:1/app?charset=utf8mb4", url)]


def test_a_worker_database_that_cannot_be_made_is_an_unavailable_backend() -> None:
    def base_only(url: str) -> str | None:
        return "unknown database" if url.endswith("_gw1") else None

    with pytest.raises(BackendUnavailable, match="worker's database does not answer"):
        resolve("postgresql", {WORKER_ENV: "gw1"}, base_only, no_docker, [])


def test_worker_url_leaves_a_run_without_workers_alone() -> None:
    assert worker_url(LOCAL_URL["mysql"], {}) == LOCAL_URL["mysql"]
    assert worker_url(LOCAL_URL["mysql"], {WORKER_ENV: ""}) == LOCAL_URL["mysql"]
    with pytest.raises(ValueError, match="cannot name a database"):
        worker_url(LOCAL_URL["mysql"], {WORKER_ENV: "gw0; DROP"})


def test_the_run_uses_the_workers_own_database(backend: str, db_url: str) -> None:
    worker = os.environ.get(WORKER_ENV, "")
    database = make_url(db_url).database or ""
    if backend != "sqlite" and worker:
        assert database.endswith(f"_{worker}")
    else:
        assert re.search(r"_gw\d+$", database) is None


def test_required_backends_parses_a_comma_list() -> None:
    assert required_backends({}) == frozenset()
    assert required_backends({REQUIRE_ENV: ""}) == frozenset()
    assert required_backends({REQUIRE_ENV: " SQLite, postgresql,,mysql "}) == {
        "sqlite",
        "postgresql",
        "mysql",
    }
    with pytest.raises(ValueError, match="postgres"):
        required_backends({REQUIRE_ENV: "postgres"})


def test_unavailable_backend_is_skipped_when_not_required() -> None:
    with pytest.raises(pytest.skip.Exception, match="no server"):
        unavailable("mysql", "no server", {REQUIRE_ENV: "sqlite,postgresql"})


def test_unavailable_backend_fails_when_required() -> None:
    with pytest.raises(pytest.fail.Exception, match=f"required by {REQUIRE_ENV}.*no server"):
        unavailable("mysql", "no server", {REQUIRE_ENV: "sqlite,postgresql,mysql"})


def test_misspelt_requirement_fails_instead_of_skipping() -> None:
    with pytest.raises(pytest.fail.Exception, match="unknown backends"):
        unavailable("mysql", "no server", {REQUIRE_ENV: "mariadb"})


# --- schema reset and per-test cleanup, on a private SQLite file ----------------------


def test_cleanup_deletes_children_first_and_drops_only_sqlmemory_tables(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite+pysqlite:///{tmp_path}/cleanup.db", poolclass=NullPool)

    @sa.event.listens_for(engine, "connect")
    def _foreign_keys_on(dbapi_conn: Any, _record: object) -> None:
        dbapi_conn.execute("PRAGMA foreign_keys = ON")

    metadata = sa.MetaData()
    parent = sa.Table("sqlmemory_parent", metadata, sa.Column("id", sa.Integer, primary_key=True))
    child = sa.Table(
        "sqlmemory_child",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("parent_id", sa.ForeignKey("sqlmemory_parent.id"), nullable=False),
    )
    version = sa.Table(
        "sqlmemory_alembic_version", metadata, sa.Column("version_num", sa.String(32))
    )
    other = sa.Table("host_app_table", metadata, sa.Column("id", sa.Integer, primary_key=True))
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(parent.insert(), [{"id": 1}])
        conn.execute(child.insert(), [{"id": 1, "parent_id": 1}])
        conn.execute(version.insert(), [{"version_num": "head"}])
        conn.execute(other.insert(), [{"id": 1}])

    tables = sqlmemory_data_tables(engine)
    assert [t.name for t in tables] == ["sqlmemory_child", "sqlmemory_parent"]
    delete_rows(engine, tables)

    def count(table: sa.Table) -> int:
        with engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())

    assert (count(parent), count(child), count(version), count(other)) == (0, 0, 1, 1)

    drop_sqlmemory_tables(engine)
    assert sa.inspect(engine).get_table_names() == ["host_app_table"]
    engine.dispose()
