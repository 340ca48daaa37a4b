"""A URL whose driver is not installed, or runs only in the other I/O mode, names the fix."""

from __future__ import annotations

import sys

import pytest
import sqlalchemy as sa

from sqlmemory import SqlStorage


@pytest.mark.parametrize(
    ("url", "module", "extra"),
    [
        ("postgresql+psycopg2://u@127.0.0.1/db", "psycopg2", "postgres"),
        ("postgresql+psycopg://u@127.0.0.1/db", "psycopg", "postgres"),
        ("mysql+pymysql://u@127.0.0.1/db", "pymysql", "mysql"),
    ],
)
def test_from_url_names_the_extra_for_a_missing_driver(
    url: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now fails
    with pytest.raises(ModuleNotFoundError, match=rf"pip install 'sqlmemory\[{extra}\]'"):
        SqlStorage.from_url(url)


# A URL whose driver runs only in the other I/O mode is refused before any engine is made:
# the driver is hidden, and the error is still the one naming the URL form, not the
# missing module's. No server is needed (none listens on port 1).
@pytest.mark.parametrize(
    ("mode", "url", "driver", "form", "hidden"),
    [
        ("async", "sqlite:///x.db", "pysqlite", "sqlite+aiosqlite:///path/to/file.db", "sqlite3"),
        (
            "async",
            "postgresql+psycopg2://u:secret@127.0.0.1:1/d",
            "psycopg2",
            "postgresql+asyncpg://user:password@host:5432/database",
            "psycopg2",
        ),
        (
            "async",
            "mysql+pymysql://u:secret@127.0.0.1:1/d",
            "pymysql",
            "mysql+aiomysql://user:password@host:3306/database",
            "pymysql",
        ),
        (
            "async",
            "mysql://u@127.0.0.1:1/d",
            "mysqldb",
            "mysql+aiomysql://user:password@host:3306/database",
            "MySQLdb",
        ),
        ("sync", "sqlite+aiosqlite:///x.db", "aiosqlite", "sqlite:///path/to/file.db", "aiosqlite"),
        (
            "sync",
            "postgresql+asyncpg://u:secret@127.0.0.1:1/d",
            "asyncpg",
            "postgresql+psycopg://user:password@host:5432/database",
            "asyncpg",
        ),
        (
            "sync",
            "postgresql+psycopg_async://u@127.0.0.1:1/d",
            "psycopg_async",
            "postgresql+psycopg://user:password@host:5432/database",
            "psycopg",
        ),
        (
            "sync",
            "mariadb+aiomysql://u@127.0.0.1:1/d",
            "aiomysql",
            "mysql+pymysql://user:password@host:3306/database",
            "aiomysql",
        ),
    ],
)
def test_a_storage_refuses_a_driver_of_the_other_mode_naming_its_form(
    mode: str, url: str, driver: str, form: str, hidden: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlmemory import AsyncSqlStorage

    wanted, other = (
        (AsyncSqlStorage, SqlStorage) if mode == "async" else (SqlStorage, AsyncSqlStorage)
    )
    monkeypatch.setitem(sys.modules, hidden, None)
    with pytest.raises(ValueError) as raised:
        wanted.from_url(url)
    shown = url.replace(":secret@", ":***@")
    assert str(raised.value) == (
        f"{shown} selects the {'sync' if mode == 'async' else 'async'} driver {driver!r}, "
        f"which {wanted.__name__} cannot use: {wanted.__name__} takes URLs such as {form}, "
        f"and {other.__name__} takes this one"
    )


@pytest.mark.parametrize(
    "url", ["postgresql+psycopg://u@127.0.0.1:1/d", "postgresql://u@127.0.0.1:1/d"]
)
def test_psycopg_serves_both_storages(url: str) -> None:
    # psycopg has both modes: an async engine gets SQLAlchemy's psycopg_async dialect.
    import asyncio

    from sqlmemory import AsyncSqlStorage

    with SqlStorage.from_url(url) as storage:
        assert storage.engine.dialect.driver == "psycopg"
        assert not storage.engine.dialect.is_async
    async_storage = AsyncSqlStorage.from_url(url)
    assert async_storage.engine.sync_engine.dialect.is_async
    asyncio.run(async_storage.close())


def test_a_sync_engine_on_an_async_driver_names_the_sync_form() -> None:
    engine = sa.create_engine("sqlite+aiosqlite:///x.db")
    with pytest.raises(ValueError) as raised:
        SqlStorage(engine)
    assert str(raised.value) == (
        "the engine's URL sqlite+aiosqlite:///x.db selects the async driver 'aiosqlite', "
        "which SqlStorage cannot use: SqlStorage takes URLs such as "
        "sqlite:///path/to/file.db, and AsyncSqlStorage takes this one"
    )
    engine.dispose()


def test_an_engine_of_the_other_class_is_a_type_error_naming_the_storage() -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    from sqlmemory import AsyncSqlStorage

    async_engine = create_async_engine("sqlite+aiosqlite://")
    with pytest.raises(TypeError) as raised:
        SqlStorage(async_engine)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "SqlStorage takes an Engine, not 'AsyncEngine'; AsyncSqlStorage takes it"
    )
    async_engine.sync_engine.dispose()
    engine = sa.create_engine("sqlite://")
    with pytest.raises(TypeError) as raised:
        AsyncSqlStorage(engine)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "AsyncSqlStorage takes an AsyncEngine, not 'Engine'; SqlStorage takes it"
    )
    engine.dispose()
    with pytest.raises(TypeError) as raised:
        SqlStorage("sqlite://")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "SqlStorage takes an Engine, not 'str'; SqlStorage.from_url takes a URL"
    )


@pytest.mark.parametrize("storage", ["SqlStorage", "AsyncSqlStorage"])
def test_a_url_holding_nul_is_refused_before_any_engine(storage: str) -> None:
    import sqlmemory

    kind = getattr(sqlmemory, storage)
    url = "sqlite:///chat\x00.db" if storage == "SqlStorage" else "sqlite+aiosqlite:///\x00"
    with pytest.raises(ValueError, match=r"is not a database URL \(it holds a NUL character\)"):
        kind.from_url(url)
