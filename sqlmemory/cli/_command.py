"""What every ``sqlmemory`` command shares: ``--url``, opening the database, one-line errors."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from sqlmemory._urls import create_sync_engine, redact
from sqlmemory.errors import SchemaError, SqlMemoryError

if TYPE_CHECKING:
    import sqlalchemy as sa

    from sqlmemory.storage import SqlStorage

__all__ = [
    "DEFAULT_URL",
    "PROG",
    "URL_ENV",
    "CliError",
    "Command",
    "database_url",
    "missing_sqlite_file",
    "open_engine",
    "open_storage",
    "url_option",
]

PROG = "sqlmemory"
URL_ENV = "SQLMEMORY_URL"
DEFAULT_URL = "sqlite:///sqlmemory.db"

F = TypeVar("F", bound=Callable[..., Any])


class CliError(click.ClickException):
    """A failure told in one line on stderr, ``sqlmemory: error: ...``, with status 1."""

    def show(self, file: Any = None) -> None:
        sys.stdout.flush()
        click.echo(f"{PROG}: error: {self.format_message()}", file=file or sys.stderr, err=True)


def url_option(function: F) -> F:
    """The ``--url`` option of every command: ``$SQLMEMORY_URL``, else ``sqlmemory.db``."""
    return click.option(
        "--url",
        envvar=URL_ENV,
        default=DEFAULT_URL,
        show_default=True,
        show_envvar=True,
        metavar="URL",
        help="SQLAlchemy database URL; an async one (+asyncpg, ...) is run through the "
        "backend's sync driver.",
    )(function)


def database_url(url: str) -> URL:
    """``url`` parsed, with an async driver replaced by its sync twin (the CLI is sync)."""
    from sqlmemory.migrate import sync_url

    return sync_url(url)


def migrate_hint(url: URL) -> str:
    return f"sqlmemory migrate --url {shlex.quote(redact(url))}"


def missing_sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite ``url`` when it does not exist (connecting would create it)."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    uri = str(url.query.get("uri", "")).lower() in ("true", "1")
    if uri and database.startswith("file:"):
        if "mode=memory" in database:
            return None
        database = database[len("file:") :].split("?")[0]
    if database in ("", ":memory:"):
        return None
    path = Path(database)
    return None if path.exists() else path


def open_engine(url: str, *, read_only: bool) -> sa.Engine:
    """An engine on ``url`` (caller disposes it); read-only commands never create a file.

    Raises:
        CliError: a read-only command was given a SQLite file that does not exist.
    """
    parsed = database_url(url)
    if read_only:
        missing = missing_sqlite_file(parsed)
        if missing is not None:
            raise CliError(
                f"{redact(parsed)}: no database file {str(missing)!r}; "
                f"create it with `{migrate_hint(parsed)}`"
            )
    return create_sync_engine(parsed, poolclass=NullPool)


@contextmanager
def open_storage(url: str, *, read_only: bool) -> Iterator[SqlStorage]:
    """A ``SqlStorage`` on ``url``, its engine disposed at the end of the block."""
    from sqlmemory.storage import SqlStorage

    engine = open_engine(url, read_only=read_only)
    try:
        yield SqlStorage(engine)
    finally:
        engine.dispose()


def _one_line(text: str) -> str:
    # SQLAlchemy appends the statement, its parameters and a documentation link on lines
    # of their own; the driver's message is what tells the user what went wrong.
    skip = ("[SQL:", "[parameters:", "(Background on this error")
    lines = (line.strip() for line in text.splitlines())
    return " ".join(line for line in lines if line and not line.startswith(skip))


def _reason(exc: BaseException) -> str:
    """Describe ``exc`` in one line: the driver's message when a driver failed."""
    cause: BaseException | None = exc
    for _ in range(10):  # a bounded walk down the __cause__ chain
        if cause is None:
            break
        if isinstance(cause, DBAPIError) and cause.orig is not None:
            return _one_line(f"{type(cause.orig).__name__}: {cause.orig}")
        if isinstance(cause, SQLAlchemyError):
            return _one_line(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__
    return _one_line(str(exc)) or type(exc).__name__


def describe(exc: Exception, command: str, url: str | None) -> str | None:
    """The one line telling what went wrong and how to fix it, or ``None`` for a bug."""
    shown = redact(url) if url is not None else "the database"
    if isinstance(exc, ImportError):  # a driver: the message names the extra to install
        return _one_line(str(exc))
    if isinstance(exc, SchemaError):  # says what is wrong and which command fixes it
        return f"{shown}: {_one_line(str(exc))}"
    if isinstance(exc, ValueError):  # a URL of the wrong form, bad input: names the fix
        return _one_line(str(exc))
    if isinstance(exc, (SqlMemoryError, SQLAlchemyError)):
        return f"{command} on {shown} failed: {_reason(exc)}"
    if isinstance(exc, OSError):
        return f"{command}: {exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    return None


class Command(click.Command):
    """A command whose expected failures end in one line on stderr, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            message = describe(exc, ctx.info_name or self.name or PROG, ctx.params.get("url"))
            if message is None:
                raise
            raise CliError(message) from exc
