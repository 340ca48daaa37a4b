"""``sqlmemory migrate``, ``current``, ``check`` and ``downgrade``: the schema's revision."""

from __future__ import annotations

import click

from sqlmemory._urls import redact
from sqlmemory.cli._command import (
    CliError,
    Command,
    database_url,
    migrate_hint,
    missing_sqlite_file,
    open_engine,
    url_option,
)

__all__ = ["check", "current", "downgrade", "migrate"]


@click.command(cls=Command)
@url_option
@click.option("--revision", default="head", show_default=True, help="The revision to reach.")
@click.option(
    "--search-config",
    metavar="NAME",
    help="PostgreSQL's text-search configuration of the search index (simple).",
)
def migrate(url: str, revision: str, search_config: str | None) -> None:
    """Create or upgrade the sqlmemory_* tables.

    Brings them to the head revision, or to --revision. Safe to run again: a database
    already at the revision is left alone. Only tables named sqlmemory_* and the version
    table sqlmemory_alembic_version are touched. --search-config is used when revision
    0008 builds the search index on PostgreSQL (by default $SQLMEMORY_SEARCH_CONFIG, else
    simple).
    """
    from sqlmemory import migrate as migrations
    from sqlmemory.storage.sql.search_index import check_search_config

    if search_config is not None:
        try:
            check_search_config(search_config)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--search-config'") from None
    engine = open_engine(url, read_only=False)
    try:
        before = migrations.current(engine)
        migrations.upgrade(engine, revision, search_config=search_config)
        after = migrations.current(engine)
    finally:
        engine.dispose()
    shown = redact(engine.url)
    if before == after:
        click.echo(f"{shown}: sqlmemory schema already at revision {after or 'base'}")
    else:
        click.echo(f"{shown}: sqlmemory schema upgraded from {before or 'base'} to {after}")


@click.command(cls=Command)
@url_option
def current(url: str) -> None:
    """Print the schema's revision, and whether it is the head.

    Reads only: a SQLite file that does not exist is reported, not created.
    """
    from sqlmemory import migrate as migrations

    parsed = database_url(url)
    head = migrations.head()
    if missing_sqlite_file(parsed) is not None:
        click.echo(f"{redact(parsed)}: no database file; run `{migrate_hint(parsed)}`")
        return
    engine = open_engine(url, read_only=True)
    try:
        revision = migrations.current(engine)
    finally:
        engine.dispose()
    if revision is None:
        state = f"no sqlmemory schema; run `{migrate_hint(parsed)}`"
    elif revision == head:
        state = f"{revision} (head)"
    else:
        state = f"{revision} (head is {head}; run `{migrate_hint(parsed)}`)"
    click.echo(f"{redact(parsed)}: {state}")


@click.command(cls=Command)
@url_option
def check(url: str) -> None:
    """Fail unless the schema is at head and matches the models.

    Exits with status 1, naming what differs or the command to run, otherwise 0.
    """
    from sqlmemory import migrate as migrations

    engine = open_engine(url, read_only=True)
    try:
        migrations.check(engine)
    finally:
        engine.dispose()
    head = migrations.head()
    click.echo(f"{redact(engine.url)}: sqlmemory schema at head {head}, matching the models")


@click.command(cls=Command)
@url_option
@click.argument("revision")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def downgrade(url: str, revision: str, yes: bool) -> None:
    """Downgrade the schema to REVISION ("base" drops it).

    REVISION is a revision id, "-1" for one step, or "base". What a downgrade drops is
    lost, so it asks first unless --yes is given.
    """
    from sqlmemory import migrate as migrations

    engine = open_engine(url, read_only=True)
    try:
        before = migrations.current(engine)
        shown = redact(engine.url)
        if before is None:
            raise CliError(f"{shown}: no sqlmemory schema to downgrade")
        if not yes:
            click.confirm(
                f"Downgrade the sqlmemory schema of {shown} from {before} to {revision}? "
                "What it drops is lost",
                abort=True,
                err=True,
            )
        migrations.downgrade(engine, revision)
        after = migrations.current(engine)
    finally:
        engine.dispose()
    click.echo(f"{shown}: sqlmemory schema downgraded from {before} to {after or 'base'}")
