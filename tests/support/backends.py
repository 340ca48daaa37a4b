"""Where the tests find each database backend (docs/contract/backends.md).

Plain functions, kept apart from the fixtures so that the resolution rules can be
unit-tested with a fake environment and fake probes.
"""

from __future__ import annotations

import contextlib
import socket
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

BACKENDS = ("sqlite", "postgresql", "mysql")
REQUIRE_ENV = "SQLMEMORY_REQUIRE_BACKENDS"
WORKER_ENV = "PYTEST_XDIST_WORKER"
"""Set by pytest-xdist in each worker (``gw0``, ``gw1``...): each gets databases of its own."""
URL_ENV = {
    "postgresql": "SQLMEMORY_TEST_POSTGRES_URL",
    "mysql": "SQLMEMORY_TEST_MYSQL_URL",
}
LOCAL_URL = {
    "postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    "mysql": "mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4",
}
SYNC_DRIVER = {
    "sqlite": "sqlite+pysqlite",
    "postgresql": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
}
ASYNC_DRIVER = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "mysql": "mysql+aiomysql",
}
CONTAINER_IMAGE = {
    "postgresql": "postgres:16-alpine",
    "mysql": "mysql:8.4",
}
# 20 MiB blobs travel escaped inside one statement, so the server must accept packets
# well above twice that size.
MYSQL_MAX_ALLOWED_PACKET = 256 * 1024 * 1024
MYSQL_MIN_ALLOWED_PACKET = 64 * 1024 * 1024
PROBE_TIMEOUT = 5


class BackendUnavailable(Exception):
    """A backend could not be reached; the message says why."""


Probe = Callable[[str], "str | None"]
ContainerStarter = Callable[[str, contextlib.ExitStack], str]
DatabaseCreator = Callable[[str, str], None]


def required_backends(environ: Mapping[str, str]) -> frozenset[str]:
    """Return the backends named in ``$SQLMEMORY_REQUIRE_BACKENDS``.

    Raises:
        ValueError: a name is not one of :data:`BACKENDS` (a typo must not silently turn
            a required backend into an optional one).
    """
    names = {
        name.strip().lower() for name in environ.get(REQUIRE_ENV, "").split(",") if name.strip()
    }
    unknown = names.difference(BACKENDS)
    if unknown:
        raise ValueError(
            f"{REQUIRE_ENV} names unknown backends {sorted(unknown)}; known: {', '.join(BACKENDS)}"
        )
    return frozenset(names)


def unavailable(backend: str, reason: str, environ: Mapping[str, str]) -> NoReturn:
    """Skip the test for an unreachable backend, or fail it when the backend is required."""
    try:
        required = backend in required_backends(environ)
    except ValueError as exc:
        pytest.fail(str(exc), pytrace=False)
    if required:
        pytest.fail(
            f"backend {backend!r} is required by {REQUIRE_ENV} but unavailable: {reason}",
            pytrace=False,
        )
    pytest.skip(f"backend {backend!r} unavailable: {reason}")


def redact(url: str) -> str:
    """Return ``url`` with its password hidden, for messages."""
    return make_url(url).render_as_string(hide_password=True)


def normalize_sync_url(backend: str, url: str) -> str:
    """Give ``url`` its sync driver (docs/contract/backends.md) if none, and utf8mb4 on MySQL."""
    parsed = make_url(url)
    if "+" not in parsed.drivername:
        parsed = parsed.set(drivername=SYNC_DRIVER[backend])
    if backend == "mysql" and "charset" not in parsed.query:
        parsed = parsed.update_query_dict({"charset": "utf8mb4"})
    return parsed.render_as_string(hide_password=False)


def missing_driver(url: str) -> str | None:
    """Why ``url``'s driver cannot be loaded (it is not installed), or ``None``."""
    try:
        make_url(url).get_dialect().import_dbapi()
    except ImportError as exc:
        return f"driver of {make_url(url).drivername} not installed ({exc})"
    return None


def async_url(backend: str, sync_url: str) -> str:
    """Map a sync URL to the same database through the backend's async driver."""
    parsed = make_url(sync_url).set(drivername=ASYNC_DRIVER[backend])
    return parsed.render_as_string(hide_password=False)


def candidate_url(backend: str, environ: Mapping[str, str], tmp_dir: Path) -> tuple[str, str]:
    """Return the first URL to try for ``backend`` and where it came from.

    The source is ``"file"`` (SQLite), ``"env"`` (the backend's environment variable) or
    ``"local"`` (the conventional local server).
    """
    if backend == "sqlite":
        return f"{SYNC_DRIVER['sqlite']}:///{tmp_dir}/test.db", "file"
    if backend not in URL_ENV:
        raise ValueError(f"unknown backend {backend!r}")
    from_env = environ.get(URL_ENV[backend], "").strip()
    if from_env:
        return normalize_sync_url(backend, from_env), "env"
    return LOCAL_URL[backend], "local"


def worker_url(url: str, environ: Mapping[str, str]) -> str:
    """``url`` with the database ``<db>_<worker>`` in a pytest-xdist worker, else ``url``.

    Workers run at the same time, and every test drops, creates and empties the
    ``sqlmemory_*`` tables: each worker needs a database of its own on the server.
    """
    worker = environ.get(WORKER_ENV, "").strip()
    if not worker:
        return url
    if not worker.isidentifier():
        raise ValueError(f"${WORKER_ENV} = {worker!r} cannot name a database")
    parsed = make_url(url)
    return parsed.set(database=f"{parsed.database}_{worker}").render_as_string(hide_password=False)


def create_database(server_url: str, url: str) -> None:
    """Create ``url``'s database through ``server_url`` (same server) unless it exists.

    PostgreSQL refuses ``CREATE DATABASE`` while another one copies the template: workers
    starting together retry for a few seconds.
    """
    name = make_url(url).database
    if name is None or not name.replace("_", "").isalnum():
        raise ValueError(f"cannot create a database named {name!r}")
    engine = sa.create_engine(server_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        for attempt in range(20):
            try:
                with engine.connect() as conn:
                    if engine.dialect.name == "postgresql":
                        exists = conn.execute(
                            sa.text("SELECT 1 FROM pg_database WHERE datname = :name"),
                            {"name": name},
                        ).first()
                        if exists is None:
                            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
                    else:
                        conn.execute(
                            sa.text(f"CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4")
                        )
                return
            except sa.exc.DBAPIError:
                if attempt == 19:
                    raise
                time.sleep(0.25 * (attempt + 1))
    finally:
        engine.dispose()


def probe_url(url: str) -> str | None:
    """Connect to ``url`` and run ``SELECT 1``; return ``None`` or why it failed."""
    parsed = make_url(url)
    if parsed.host and parsed.port:
        # A quick TCP check first: a driver may wait much longer on a closed port.
        try:
            with socket.create_connection((parsed.host, parsed.port), timeout=PROBE_TIMEOUT):
                pass
        except OSError as exc:
            return f"{parsed.host}:{parsed.port} does not answer ({exc})"
    connect_args: dict[str, object] = {}
    if parsed.drivername in ("postgresql+psycopg", "mysql+pymysql"):
        connect_args["connect_timeout"] = PROBE_TIMEOUT
    try:
        engine = sa.create_engine(parsed, poolclass=NullPool, connect_args=connect_args)
    except ImportError as exc:  # the driver is not installed
        return f"{redact(url)}: driver not installed ({type(exc).__name__}: {exc})"
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except Exception as exc:
        return f"{redact(url)}: {type(exc).__name__}: {exc}".strip()
    finally:
        engine.dispose()
    return None


def docker_answers() -> str | None:
    """Return ``None`` when a Docker daemon answers a ping, else why not."""
    try:
        import docker  # type: ignore[import-untyped]

        client = docker.from_env(timeout=PROBE_TIMEOUT)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return f"Docker does not answer ({type(exc).__name__}: {exc})"
    return None


def start_container(backend: str, stack: contextlib.ExitStack) -> str:
    """Start a testcontainers database for ``backend``; stopped when ``stack`` closes.

    Raises:
        BackendUnavailable: Docker does not answer or the container did not start.
    """
    reason = docker_answers()
    if reason is not None:
        raise BackendUnavailable(reason)
    container: contextlib.AbstractContextManager[Any]
    try:
        if backend == "postgresql":
            try:
                from testcontainers.community.postgres import PostgresContainer
            except ImportError:  # testcontainers < 4.14
                from testcontainers.postgres import PostgresContainer
            container = PostgresContainer(CONTAINER_IMAGE[backend], driver="psycopg")
        else:
            try:
                from testcontainers.community.mysql import MySqlContainer
            except ImportError:  # testcontainers < 4.14
                from testcontainers.mysql import MySqlContainer
            # A throwaway container's root password, reachable only from this machine.
            container = MySqlContainer(
                CONTAINER_IMAGE[backend],
                dialect="pymysql",
                username="root",
                password="test",  # noqa: S106
            ).with_command(f"--max-allowed-packet={MYSQL_MAX_ALLOWED_PACKET}")
        stack.enter_context(container)
        url = str(container.get_connection_url())
    except Exception as exc:
        raise BackendUnavailable(
            f"testcontainers {CONTAINER_IMAGE[backend]} did not start ({type(exc).__name__}: {exc})"
        ) from exc
    return normalize_sync_url(backend, url)


def resolve_url(
    backend: str,
    *,
    environ: Mapping[str, str],
    tmp_dir: Path,
    stack: contextlib.ExitStack,
    probe: Probe = probe_url,
    container: ContainerStarter = start_container,
    create: DatabaseCreator = create_database,
) -> str:
    """Return a reachable sync URL for ``backend`` following docs/contract/backends.md.

    An explicit ``$SQLMEMORY_TEST_*_URL`` that does not answer is not replaced by a
    fallback: the caller asked for that server. In a pytest-xdist worker the URL names the
    worker's own database on that server (:func:`worker_url`), created if missing.

    Raises:
        BackendUnavailable: no candidate answered; the message lists why each failed.
    """
    url, source = candidate_url(backend, environ, tmp_dir)
    if source == "file":
        return url
    reason = probe(url)
    if reason is None:
        return _own_database(url, environ, probe, create)
    if source == "env":
        raise BackendUnavailable(f"${URL_ENV[backend]} ({redact(url)}) does not answer: {reason}")
    reasons = [reason]
    try:
        url = container(backend, stack)
    except BackendUnavailable as exc:
        reasons.append(str(exc))
        raise BackendUnavailable("; ".join(reasons)) from None
    reason = probe(url)
    if reason is not None:
        raise BackendUnavailable(f"testcontainers database does not answer: {reason}")
    return _own_database(url, environ, probe, create)


def _own_database(
    url: str, environ: Mapping[str, str], probe: Probe, create: DatabaseCreator
) -> str:
    own = worker_url(url, environ)
    if own == url:
        return url
    try:
        create(url, own)
    except Exception as exc:
        raise BackendUnavailable(
            f"cannot create the worker's database {redact(own)}: {type(exc).__name__}: {exc}"
        ) from None
    reason = probe(own)
    if reason is not None:
        raise BackendUnavailable(f"the worker's database does not answer: {reason}")
    return own


def mysql_packet_problem(url: str) -> str | None:
    """Why the MySQL server at ``url`` cannot take the tests' 20 MiB blobs, or ``None``.

    The tests never change server settings (another project may share the server): a
    ``max_allowed_packet`` below :data:`MYSQL_MIN_ALLOWED_PACKET` makes the backend
    unavailable, with the setting that fixes it.
    """
    engine = sa.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            size = int(conn.execute(sa.text("SELECT @@GLOBAL.max_allowed_packet")).scalar_one())
    finally:
        engine.dispose()
    return packet_size_problem(url, size)


def packet_size_problem(url: str, size: int) -> str | None:
    """:func:`mysql_packet_problem` for a server whose ``max_allowed_packet`` is ``size``."""
    if size >= MYSQL_MIN_ALLOWED_PACKET:
        return None
    mib = MYSQL_MAX_ALLOWED_PACKET // (1024 * 1024)
    return (
        f"{redact(url)} has max_allowed_packet = {size // (1024 * 1024)} MiB; the tests store "
        f"20 MiB blobs and need at least {MYSQL_MIN_ALLOWED_PACKET // (1024 * 1024)} MiB: start "
        f"the server with --max-allowed-packet={mib}M (max_allowed_packet = {mib}M under "
        f"[mysqld] in its configuration), or run SET GLOBAL max_allowed_packet = "
        f"{MYSQL_MAX_ALLOWED_PACKET} as an administrator (.ci/run does this on CI)"
    )


def _reflect(conn: sa.Connection, names: list[str]) -> sa.MetaData:
    metadata = sa.MetaData()
    if names:
        # Only names and foreign keys matter here; a reflection warning about, say, an
        # index the dialect cannot describe must not fail the run (SAWarning is an error).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sa.exc.SAWarning)
            metadata.reflect(bind=conn, only=names)
    return metadata


def _tables_of(conn: sa.Connection) -> list[str]:
    """The ``sqlmemory_*`` tables, without SQLite's FTS5 table of search and its shadows
    (dropped with the table, emptied by the triggers of the messages)."""
    from sqlmemory._tables import is_search_object

    names = sa.inspect(conn).get_table_names()
    return [n for n in names if n.startswith("sqlmemory_") and not is_search_object(n)]


def drop_sqlmemory_tables(engine: sa.Engine) -> None:
    """Drop every ``sqlmemory_*`` table, so no schema from an earlier run leaks in."""
    with engine.begin() as conn:
        if conn.dialect.name == "sqlite":
            from sqlmemory.storage.sql.search_index import drop_search_index

            drop_search_index(conn)
        names = _tables_of(conn)
        if names:
            metadata = _reflect(conn, names)
            metadata.drop_all(bind=conn)


def sqlmemory_data_tables(engine: sa.Engine) -> list[sa.Table]:
    """Return the ``sqlmemory_*`` tables holding data, children first (safe delete order)."""
    with engine.connect() as conn:
        names = [n for n in _tables_of(conn) if n != "sqlmemory_alembic_version"]
        metadata = _reflect(conn, names)
    return list(reversed(metadata.sorted_tables))


def delete_rows(engine: sa.Engine, tables: list[sa.Table]) -> None:
    """Delete every row of ``tables`` (given children first) in one transaction."""
    with engine.begin() as conn:
        for table in tables:
            conn.execute(table.delete())
