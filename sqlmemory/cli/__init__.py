"""The ``sqlmemory`` command (also ``python -m sqlmemory``), built on Click.

Schema: ``migrate``, ``current``, ``check``, ``downgrade``. Sessions: ``sessions``,
``show``, ``fork``, ``export``, ``import``, ``delete``, ``prune``. And ``demo``. Every command takes
``--url`` (default ``$SQLMEMORY_URL``, else ``sqlite:///sqlmemory.db``); commands that
only read never create a database file. An expected failure (a bad URL, a missing driver,
a database not at head, a server that does not answer) prints one line on stderr,
``sqlmemory: error: ...``, naming the fix, and exits with status 1; a usage error exits
with 2. ``docs/cli.md`` is the reference.

Examples:
    >>> from click.testing import CliRunner
    >>> result = CliRunner().invoke(main, ["--version"])
    >>> result.output.startswith("sqlmemory ")
    True
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from typing import Any

import click

from sqlmemory.cli._command import DEFAULT_URL, PROG, URL_ENV, Command
from sqlmemory.cli.branch_commands import fork
from sqlmemory.cli.demo import demo
from sqlmemory.cli.owner_commands import erase_owner
from sqlmemory.cli.schema_commands import check, current, downgrade, migrate
from sqlmemory.cli.search_commands import search
from sqlmemory.cli.sessions import delete, prune, sessions, show
from sqlmemory.cli.transfer import export, import_
from sqlmemory.cli.usage_commands import usage

__all__ = ["DEFAULT_URL", "SECTIONS", "URL_ENV", "main"]

SECTIONS = {
    "Schema": ("migrate", "current", "check", "downgrade"),
    "Sessions": ("sessions", "show", "fork", "export", "import", "delete", "prune", "erase-owner"),
    "Usage": ("usage",),
    "Search": ("search",),
    "Try it": ("demo",),
}
"""How ``sqlmemory --help`` groups the commands; a command in no section goes last."""


class _Main(click.Group):
    """The ``sqlmemory`` group: commands listed by section, in the order they are added."""

    command_class = Command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        placed = {name for names in SECTIONS.values() for name in names}
        sections = {**SECTIONS, "Other commands": tuple(set(self.commands) - placed)}
        limit = formatter.width - 6 - max(len(name) for name in self.commands)
        for title, names in sections.items():
            rows = [
                (name, self.commands[name].get_short_help_str(limit))
                for name in names
                if name in self.commands and not self.commands[name].hidden
            ]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _version() -> str:
    from importlib.metadata import version

    from sqlmemory import __version__

    deps = ", ".join(f"{name} {version(name)}" for name in ("SQLAlchemy", "Alembic"))
    return f"{PROG} {__version__} ({deps}, Python {platform.python_version()})"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(_version())
        ctx.exit()


@click.group(PROG, cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the versions of sqlmemory, SQLAlchemy, Alembic and Python, and exit.",
)
def main() -> None:
    """Short-term conversation memory for LLM agents, persisted in SQL.

    Operate the sqlmemory_* tables of a database: create and upgrade them, look into the
    stored sessions, export, import and delete them.

    Every command takes --url, a SQLAlchemy URL, by default $SQLMEMORY_URL, else
    sqlite:///sqlmemory.db (a file in the working directory). For example:

    \b
      sqlmemory migrate --url postgresql+psycopg://app@db/app
      sqlmemory sessions --prefix user-42/
      sqlmemory show user-42/chat-1 --window 3
      sqlmemory fork user-42/chat-1 user-42/chat-1-v2 --at MESSAGE_ID
      sqlmemory export --out backup.jsonl && sqlmemory import backup.jsonl
      sqlmemory prune --older-than 30d
      sqlmemory erase-owner user-42
      sqlmemory usage --owner user-42 --since 30d
      sqlmemory search "train zurich" --owner user-42

    Run `sqlmemory COMMAND --help` for a command's options.
    """


for _command in (
    migrate,
    current,
    check,
    downgrade,
    sessions,
    show,
    fork,
    export,
    import_,
    delete,
    prune,
    erase_owner,
    usage,
    search,
    demo,
):
    main.add_command(_command)


def run(argv: Sequence[str] | None = None) -> Any:
    """Run the command line as the ``sqlmemory`` program (``python -m sqlmemory``)."""
    return main.main(args=argv, prog_name=PROG)
