"""What one install of sqlmemory must be able to do: run inside a clean virtualenv.

``tools/check_extras.py`` installs the wheel with one extra into a fresh virtualenv and
runs this file there, from a directory outside the checkout, with the extra's name::

    python extras_smoke.py core       # pip install sqlmemory
    python extras_smoke.py postgres   # pip install 'sqlmemory[postgres]'
    python extras_smoke.py mysql      # pip install 'sqlmemory[mysql]'
    python extras_smoke.py async      # pip install 'sqlmemory[async]'

Each extra must give a working sync *and* async storage on its database (a migration,
an append, a windowed load and a clear); the core alone gives the sync storage on SQLite,
the CLI, and for async a one-line error naming the extra. Server URLs come from
``$SQLMEMORY_TEST_POSTGRES_URL`` / ``$SQLMEMORY_TEST_MYSQL_URL``, else the local test
servers (docs/contract/backends.md). It uses only sqlmemory's public API and the
standard library: nothing else is installed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlmemory
from sqlmemory import FixedWindow, Message, SqlStorage, ToolCall, migrate

LOCAL = {
    "postgres": (
        "SQLMEMORY_TEST_POSTGRES_URL",
        "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    ),
    "mysql": (
        "SQLMEMORY_TEST_MYSQL_URL",
        "mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4",
    ),
}
ASYNC_DRIVERS = {
    "postgresql": "postgresql+asyncpg",
    "mysql": "mysql+aiomysql",
    "sqlite": "sqlite+aiosqlite",
}


@contextmanager
def fresh_database(url: str) -> Iterator[str]:
    """A new empty database on the server of ``url``, dropped afterwards.

    The smoke test migrates from nothing: a database left at some other revision by an
    earlier run (a branch's migrations, an interrupted check) must not decide the result.
    When the account may not create databases, ``url`` itself is used.
    """
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    name = f"sqlmemory_smoke_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {name}"))
    except SQLAlchemyError:
        admin.dispose()
        yield url
        return
    try:
        yield make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE {name}"))
        admin.dispose()


def conversation() -> list[Message]:
    return [
        Message.user("What is 6 x 7?"),
        Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6, "b": 7})]),
        Message.tool("c1", "42"),
        Message.assistant("6 x 7 = 42."),
    ]


def sync_round_trip(url: str) -> None:
    migrate.upgrade(url)
    migrate.check(url)
    session = f"extras-smoke-{uuid.uuid4().hex}"
    with SqlStorage.from_url(url) as storage:
        try:
            storage.append(session, *conversation())
            window = storage.load(session, FixedWindow(2))
            assert [m.role.value for m in window] == ["assistant", "tool", "assistant"], window
        finally:
            storage.clear(session)


async def async_round_trip(url: str) -> None:
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import create_async_engine

    from sqlmemory import AsyncSqlStorage

    parsed = make_url(url)
    async_url = parsed.set(drivername=ASYNC_DRIVERS[parsed.get_backend_name()])
    engine = create_async_engine(async_url)
    try:
        await migrate.upgrade_async(engine)
        storage = AsyncSqlStorage(engine)
        session = f"extras-smoke-{uuid.uuid4().hex}"
        try:
            await storage.append(session, *conversation())
            assert await storage.count(session) == 4
            assert [m.text_content() for m in await storage.recent(session, 1)] == ["6 x 7 = 42."]
        finally:
            await storage.clear(session)
    finally:
        await engine.dispose()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).parent / "sqlmemory"
    return subprocess.run(
        [str(command), *args], capture_output=True, text=True, timeout=120, check=False
    )


def core() -> None:
    """No extra: SQLite sync, the CLI, and errors naming the extra for everything else."""
    url = f"sqlite:///{Path.cwd() / 'core.db'}"
    sync_round_trip(url)
    try:
        from sqlmemory import AsyncSqlStorage

        AsyncSqlStorage.from_url(f"sqlite+aiosqlite:///{Path.cwd() / 'core.db'}")
    except ImportError as exc:
        assert "pip install 'sqlmemory[async]'" in str(exc), exc
    else:
        raise AssertionError("the async storage worked without the async extra")

    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("sqlmemory "), version
    for _ in range(2):  # the README's command, twice: the default URL, in the working dir
        demo = cli("demo")
        assert demo.returncode == 0 and "TokenWindow(200)" in demo.stdout, demo
    assert (Path.cwd() / "sqlmemory.db").is_file()
    for server, extra in (("postgresql+psycopg", "postgres"), ("mysql+pymysql", "mysql")):
        missing = cli("migrate", "--url", f"{server}://u@127.0.0.1:1/x")
        assert missing.returncode == 1, missing
        driver = "psycopg" if extra == "postgres" else "pymysql"
        assert missing.stderr.strip().splitlines() == [
            f"sqlmemory: error: the database driver '{driver}' is not installed: "
            f"pip install 'sqlmemory[{extra}]'"
        ], missing.stderr


def main() -> None:
    extra = sys.argv[1]
    where = Path(sqlmemory.__file__).resolve()
    assert Path(sys.prefix).resolve() in where.parents, f"sqlmemory imported from {where}"
    if extra == "core":
        core()
        return
    if extra == "async":
        url = f"sqlite:///{Path.cwd() / 'async.db'}"
    else:
        variable, default = LOCAL[extra]
        server = os.environ.get(variable, "").strip() or default
        with fresh_database(server) as url:
            sync_round_trip(url)
            asyncio.run(async_round_trip(url))
        return
    sync_round_trip(url)
    asyncio.run(async_round_trip(url))


if __name__ == "__main__":
    main()
    print(f"{sys.argv[1]}: ok")
