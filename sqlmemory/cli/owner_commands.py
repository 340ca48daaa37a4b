"""``sqlmemory erase-owner``: delete every session of one owner (``docs/many-users.md``)."""

from __future__ import annotations

import click

from sqlmemory._urls import redact
from sqlmemory.cli._command import Command, open_storage, url_option
from sqlmemory.cli.render import count
from sqlmemory.cli.sessions import check_option

__all__ = ["erase_owner"]


@click.command("erase-owner", cls=Command)
@url_option
@click.argument("owner", metavar="OWNER")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def erase_owner(url: str, owner: str, yes: bool) -> None:
    """Delete every session of OWNER with all it holds.

    Their messages, images, documents and records go, a batch of sessions per transaction,
    so a large owner never holds one long transaction; if the command is interrupted,
    running it again finishes the work. Asks first unless --yes is given.
    """
    checked = check_option(owner, "OWNER")
    assert checked is not None  # noqa: S101 - click gives the argument
    with open_storage(url, read_only=True) as storage:
        if not yes:
            held = len(storage.sessions(owner=checked))
            click.confirm(
                f"Delete the {count(held, 'session')} of owner {checked!r} from "
                f"{redact(storage.engine.url)}?",
                abort=True,
                err=True,
            )
        deleted = storage.erase_owner(checked)
    click.echo(f"Erased owner {checked!r}: {count(deleted, 'session')} deleted")
