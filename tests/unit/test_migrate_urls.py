"""``sqlmemory.migrate`` given a bad URL or a URL whose driver is missing (docs/migrations.md).

A URL that is not one gets a ``ValueError`` showing the URL forms; a driver that an extra
installs gets an ``ImportError`` naming the ``pip install``; a driver sqlmemory does not
install gets a ``ValueError`` naming the URL form of the one it does. Never raw SQLAlchemy
or ``ModuleNotFoundError: No module named ...`` text.
"""

from __future__ import annotations

import sys

import pytest

from sqlmemory import migrate


@pytest.mark.parametrize("function", [migrate.upgrade, migrate.current, migrate.check])
@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("not a url", "'not a url' is not a database URL; sqlmemory uses URLs such as sqlite:///"),
        ("postgresql://u:secret@h:port/d", "'postgresql://u:***@h:port/d' is not a database URL"),
        ("oracle://u@h/d", "does not support the database 'oracle'"),
        ("postgresql+nosuch://u@h/d", "unknown driver 'nosuch'"),
        ("sqlite:///chat\x00.db", "is not a database URL (it holds a NUL character)"),
        ("postgresql+psycopg://u:secret@h/d?application_name=\x00", "holds a NUL character"),
    ],
)
def test_a_bad_url_is_a_value_error_naming_the_forms(
    function: object, url: str, fragment: str
) -> None:
    with pytest.raises(ValueError) as raised:
        function(url)  # type: ignore[operator]
    assert fragment in str(raised.value)
    assert "postgresql+psycopg://" in str(raised.value)
    assert "secret" not in str(raised.value)


@pytest.mark.parametrize(
    ("url", "hidden", "extra"),
    [
        ("postgresql+psycopg://u@127.0.0.1:1/d", "psycopg", "postgres"),
        ("postgresql+asyncpg://u@127.0.0.1:1/d", "psycopg", "postgres"),
        ("mysql+pymysql://u@127.0.0.1:1/d", "pymysql", "mysql"),
        ("mariadb+aiomysql://u@127.0.0.1:1/d", "pymysql", "mysql"),
    ],
)
def test_a_missing_driver_names_the_extra(
    url: str, hidden: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, hidden, None)  # importing it now fails
    with pytest.raises(ImportError) as raised:
        migrate.upgrade(url)
    assert str(raised.value) == (
        f"the database driver '{hidden}' is not installed: pip install 'sqlmemory[{extra}]'"
    )
    assert raised.value.name == hidden


@pytest.mark.parametrize("scheme", ["mysql", "mariadb"])
def test_mysql_without_mysqldb_names_mysql_pymysql(
    scheme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "MySQLdb", None)
    with pytest.raises(ValueError) as raised:
        migrate.upgrade(f"{scheme}://u@127.0.0.1:1/d")
    assert str(raised.value) == (
        f"{scheme}://u@127.0.0.1:1/d selects the driver 'MySQLdb', which sqlmemory does not "
        "install: use mysql+pymysql://user:password@host:3306/database "
        "(pip install 'sqlmemory[mysql]')"
    )


def test_postgresql_with_another_missing_driver_names_psycopg(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    with pytest.raises(ValueError, match=r"use postgresql\+psycopg://.*sqlmemory\[postgres\]"):
        migrate.upgrade("postgresql+psycopg2://u@127.0.0.1:1/d")


@pytest.mark.parametrize(
    ("url", "sync"),
    [
        ("postgresql+asyncpg://u@h/d", "postgresql+psycopg"),
        ("postgresql+psycopg_async://u@h/d", "postgresql+psycopg"),
        ("mysql+aiomysql://u@h/d", "mysql+pymysql"),
        ("mariadb+asyncmy://u@h/d", "mariadb+pymysql"),
        ("sqlite+aiosqlite:///x.db", "sqlite+pysqlite"),
    ],
)
def test_an_async_url_runs_through_the_sync_driver(url: str, sync: str) -> None:
    assert migrate.sync_url(url).drivername == sync


def test_upgrade_takes_an_async_sqlite_url(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "aiosqlite", None)  # the stdlib driver runs it
    url = f"sqlite+aiosqlite:///{tmp_path}/chat.db"
    migrate.upgrade(url)
    assert migrate.current(url) == migrate.head()
