"""Database URLs: parse them, and say in one line what to do when one cannot be used.

A newcomer's URL fails in a few ways, each of which SQLAlchemy reports in its own terms
(``ArgumentError``, ``NoSuchModuleError``, ``ModuleNotFoundError: No module named
'MySQLdb'``). Here each becomes an error that names the fix:

- not a URL, or a database sqlmemory does not support: :class:`ValueError` showing the
  URL forms sqlmemory uses;
- a driver sqlmemory installs but that is missing: :class:`ModuleNotFoundError` (an
  :class:`ImportError`) naming the ``pip install 'sqlmemory[extra]'`` that brings it;
- a driver sqlmemory does not install (``mysql://`` selects MySQLdb): :class:`ValueError`
  naming the URL form of the driver sqlmemory does install (``mysql+pymysql://``);
- a driver of the other I/O mode (``sqlite://`` for ``AsyncSqlStorage``, ``asyncpg`` for
  ``SqlStorage``), in a URL or in an engine: :class:`ValueError` naming the URL form of
  the mode wanted and the storage that takes the driver as it is.
"""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Dialect, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

__all__ = [
    "ASYNC_URL_FORMS",
    "URL_FORMS",
    "check_engine_mode",
    "check_url",
    "create_sync_engine",
    "driver_error",
    "has_async_driver",
    "parse_url",
    "redact",
]

URL_FORMS = {
    "sqlite": "sqlite:///path/to/file.db",
    "postgresql": "postgresql+psycopg://user:password@host:5432/database",
    "mysql": "mysql+pymysql://user:password@host:3306/database",
}
"""The sync URL form of each supported backend."""

ASYNC_URL_FORMS = {
    "sqlite": "sqlite+aiosqlite:///path/to/file.db",
    "postgresql": "postgresql+asyncpg://user:password@host:5432/database",
    "mysql": "mysql+aiomysql://user:password@host:3306/database",
}
"""The async URL form of each supported backend."""

_BACKENDS = {"sqlite": "sqlite", "postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql"}

# The extra installing each driver sqlmemory supports (pyproject.toml).
_DRIVER_EXTRAS = {
    "psycopg": "postgres",
    "psycopg_binary": "postgres",
    "asyncpg": "postgres",
    "pymysql": "mysql",
    "aiomysql": "mysql",
    "aiosqlite": "async",
    "greenlet": "async",
}
_BACKEND_EXTRAS = {"postgresql": "postgres", "mysql": "mysql", "sqlite": "async"}


def redact(url: str | URL) -> str:
    """``url`` as text with its password hidden, even when it does not parse.

    Examples:
        >>> redact("postgresql+psycopg://app:secret@db/app")
        'postgresql+psycopg://app:***@db/app'
        >>> redact("postgresql://app:secret@db:port/app")
        'postgresql://app:***@db:port/app'
    """
    if isinstance(url, URL):
        return url.render_as_string(hide_password=True)
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # unparsable: never echo what looks like a password
        return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def _forms() -> str:
    return ", ".join(URL_FORMS.values())


def parse_url(url: str | URL) -> URL:
    """Parse ``url``; a string that is no SQLAlchemy URL gets a :class:`ValueError`.

    Examples:
        >>> parse_url("sqlite:///chat.db").get_backend_name()
        'sqlite'
        >>> parse_url("chat.db")
        Traceback (most recent call last):
        ...
        ValueError: 'chat.db' is not a database URL; sqlmemory uses URLs such as sqlite:///...

    Raises:
        ValueError: ``url`` does not parse, or holds a NUL character (no driver takes one;
            SQLite's would refuse it only at the first connection); the message shows the
            supported URL forms.
        TypeError: ``url`` is neither a string nor a ``URL``.
    """
    if isinstance(url, URL):
        parsed = url
    elif not isinstance(url, str):
        raise TypeError(f"a database URL must be a str, not {type(url).__name__}")
    else:
        try:
            parsed = make_url(url)
        except (ArgumentError, ValueError) as exc:  # a bad port escapes as a bare ValueError
            detail = "" if "Could not parse" in str(exc) else f" ({exc})"
            raise ValueError(_not_a_url(url, detail)) from None
    if _holds_nul(parsed):
        raise ValueError(_not_a_url(url, " (it holds a NUL character)"))
    return parsed


def _holds_nul(url: URL) -> bool:
    parts = [url.username, url.password, url.host, url.database]
    for value in url.query.values():
        parts += [value] if isinstance(value, str) else list(value)
    return any("\x00" in str(part) for part in parts if part is not None)


def _not_a_url(url: str | URL, detail: str) -> str:
    return f"{redact(url)!r} is not a database URL{detail}; sqlmemory uses URLs such as {_forms()}"


def _unsupported(url: URL) -> ValueError:
    return ValueError(
        f"{redact(url)}: sqlmemory does not support the database {url.get_backend_name()!r}; "
        f"it uses URLs such as {_forms()}"
    )


def driver_error(url: URL, exc: ImportError, *, is_async: bool = False) -> Exception:
    """The error telling how to fix ``exc``, raised when ``url``'s driver would not import.

    Examples:
        >>> url = parse_url("mysql://app@db/app")
        >>> print(driver_error(url, ModuleNotFoundError("no", name="MySQLdb")))
        ... # doctest: +NORMALIZE_WHITESPACE
        mysql://app@db/app selects the driver 'MySQLdb', which sqlmemory does not install:
        use mysql+pymysql://user:password@host:3306/database (pip install 'sqlmemory[mysql]')
        >>> print(driver_error(url.set(drivername="mysql+pymysql"),
        ...                    ModuleNotFoundError("no", name="pymysql")))
        the database driver 'pymysql' is not installed: pip install 'sqlmemory[mysql]'

    Returns:
        A :class:`ModuleNotFoundError` naming the extra for a driver sqlmemory installs; a
        :class:`ValueError` naming the URL form of sqlmemory's driver for another one.
    """
    module = (getattr(exc, "name", None) or "").split(".")[0]
    extra = _DRIVER_EXTRAS.get(module)
    if extra is not None:
        return ModuleNotFoundError(
            f"the database driver {module!r} is not installed: pip install 'sqlmemory[{extra}]'",
            name=module,
        )
    backend = _BACKENDS.get(url.get_backend_name())
    if backend is None:
        return _unsupported(url)
    if not isinstance(exc, ModuleNotFoundError) or not module:
        # Installed but broken (a version sqlmemory's extras exclude, for one).
        return ImportError(f"{redact(url)}: the database driver failed to import: {exc}")
    form = (ASYNC_URL_FORMS if is_async else URL_FORMS)[backend]
    wanted = _BACKEND_EXTRAS[backend] if is_async or backend != "sqlite" else None
    install = f" (pip install 'sqlmemory[{wanted}]')" if wanted else ""
    return ValueError(
        f"{redact(url)} selects the driver {module!r}, which sqlmemory does not install: "
        f"use {form}{install}"
    )


def _unknown_driver(url: URL) -> ValueError:
    return ValueError(
        f"{redact(url)}: unknown driver {url.get_driver_name()!r}; "
        f"sqlmemory uses URLs such as {_forms()}"
    )


def _storage(is_async: bool) -> str:
    return "AsyncSqlStorage" if is_async else "SqlStorage"


def _mode_error(url: URL, *, is_async: bool, subject: str = "") -> ValueError:
    """The error for ``url``, whose driver cannot run in the mode ``is_async`` asks for.

    ``subject`` goes before the URL (``"the engine's URL "``).

    Examples:
        >>> print(_mode_error(parse_url("sqlite:///chat.db"), is_async=True))
        ... # doctest: +NORMALIZE_WHITESPACE
        sqlite:///chat.db selects the sync driver 'pysqlite', which AsyncSqlStorage cannot
        use: AsyncSqlStorage takes URLs such as sqlite+aiosqlite:///path/to/file.db, and
        SqlStorage takes this one
    """
    backend = _BACKENDS.get(url.get_backend_name())
    if backend is None:
        return _unsupported(url)
    form = (ASYNC_URL_FORMS if is_async else URL_FORMS)[backend]
    return ValueError(
        f"{subject}{redact(url)} selects the {'sync' if is_async else 'async'} driver "
        f"{url.get_driver_name()!r}, which {_storage(is_async)} cannot use: "
        f"{_storage(is_async)} takes URLs such as {form}, and {_storage(not is_async)} "
        "takes this one"
    )


def _runs_in_mode(url: URL, dialect: type[Dialect], is_async: bool) -> bool:
    """Whether ``url``'s driver runs in the mode ``is_async`` asks for.

    An async-only driver (``aiosqlite``) has an async dialect; a driver of both modes
    (``psycopg``) has a sync dialect whose async twin SQLAlchemy picks for an async engine.
    """
    if not is_async:
        return not dialect.is_async
    return dialect.is_async or dialect.get_async_dialect_cls(url).is_async


def check_url(url: str | URL, *, is_async: bool) -> URL:
    """Parse ``url`` and check that sqlmemory can use its driver in the mode asked for.

    Nothing is connected or imported but SQLAlchemy's dialect module, so a server URL is
    checked without its server.

    Examples:
        >>> check_url("postgresql+psycopg://app@db/app", is_async=True).drivername
        'postgresql+psycopg'
        >>> check_url("postgresql+asyncpg://app@db/app", is_async=False)
        Traceback (most recent call last):
        ...
        ValueError: postgresql+asyncpg://app@db/app selects the async driver 'asyncpg', ...

    Raises:
        ValueError: ``url`` is no URL, names a database sqlmemory does not support, a
            driver SQLAlchemy does not know, or a driver of the other mode.
        TypeError: ``url`` is neither a string nor a ``URL``.
    """
    parsed, dialect = _dialect_of(url)
    if not _runs_in_mode(parsed, dialect, is_async):
        raise _mode_error(parsed, is_async=is_async)
    return parsed


def has_async_driver(url: str | URL) -> bool:
    """Whether ``url``'s driver runs under asyncio (``AsyncSqlStorage`` takes the URL).

    Examples:
        >>> has_async_driver("postgresql+psycopg://app@db/app")
        True
        >>> has_async_driver("sqlite:///chat.db")
        False

    Raises:
        ValueError, TypeError: as :func:`check_url`, for a URL sqlmemory cannot use at all.
    """
    parsed, dialect = _dialect_of(url)
    return _runs_in_mode(parsed, dialect, is_async=True)


def _dialect_of(url: str | URL) -> tuple[URL, type[Dialect]]:
    parsed = parse_url(url)
    if parsed.get_backend_name() not in _BACKENDS:
        raise _unsupported(parsed)
    try:
        return parsed, parsed.get_dialect()
    except NoSuchModuleError:  # an unknown driver name: "postgresql+nosuch://"
        raise _unknown_driver(parsed) from None


def check_engine_mode(engine: sa.Engine, *, is_async: bool) -> None:
    """Check that ``engine`` (an ``AsyncEngine``'s ``sync_engine`` for async) runs in that mode.

    Raises:
        ValueError: the engine's dialect is async and ``is_async`` is false, or the reverse.
    """
    if engine.dialect.is_async != is_async:
        raise _mode_error(engine.url, is_async=is_async, subject="the engine's URL ")


def create_sync_engine(url: str | URL, **kwargs: Any) -> sa.Engine:
    """``sqlalchemy.create_engine(url, **kwargs)``, with errors that name the fix.

    Examples:
        >>> create_sync_engine("sqlite://").dialect.name
        'sqlite'
        >>> create_sync_engine("oracle+cx_oracle://app@db/app")
        Traceback (most recent call last):
        ...
        ValueError: oracle+cx_oracle://app@db/app: sqlmemory does not support the database ...

    Raises:
        ValueError: ``url`` is no URL, names a database sqlmemory does not support, an
            async driver, or a driver that sqlmemory does not install and that is missing.
        ModuleNotFoundError: the driver is one sqlmemory's extras install, and missing.
    """
    parsed = check_url(url, is_async=False)
    try:
        return sa.create_engine(parsed, **kwargs)
    except ImportError as exc:
        raise driver_error(parsed, exc) from exc
