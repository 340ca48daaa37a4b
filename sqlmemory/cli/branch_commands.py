"""``sqlmemory fork``: a session copied by the database into a new one (``docs/branches.md``)."""

from __future__ import annotations

import click

from sqlmemory.cli._command import Command, open_storage, url_option
from sqlmemory.cli.render import count

__all__ = ["fork", "lineage_line"]


def lineage_line(parent_id: str | None, forked_at: str | None) -> str | None:
    """What ``show`` prints of a session's lineage; ``None`` for a session that is no fork.

    Examples:
        >>> lineage_line("chat-1", "m3")
        "forked from: 'chat-1' at message 'm3'"
        >>> lineage_line("chat-1", None)
        "forked from: 'chat-1' (the whole history)"
    """
    if parent_id is None:
        return None
    point = "(the whole history)" if forked_at is None else f"at message {forked_at!r}"
    return f"forked from: {parent_id!r} {point}"


@click.command(cls=Command)
@url_option
@click.argument("session_id", metavar="SESSION")
@click.argument("new_session_id", metavar="NEW")
@click.option(
    "--at",
    metavar="MESSAGE_ID",
    help="Copy the messages up to and including this one (default: all of them).",
)
def fork(url: str, session_id: str, new_session_id: str, at: str | None) -> None:
    """Copy session SESSION into the new session NEW.

    NEW gets SESSION's messages (up to and including --at), its title, metadata and owner,
    and remembers SESSION as its parent. The database copies the rows in one transaction;
    afterwards the two sessions are independent. NEW must not exist yet.
    """
    with open_storage(url, read_only=True) as storage:
        info = storage.fork(session_id, new_session_id, at=at)
    upto = "" if at is None else f" up to message {at!r}"
    click.echo(
        f"Forked {session_id!r} into {new_session_id!r}: "
        f"{count(info.message_count, 'message')}{upto}"
    )
