"""``sqlmemory sessions``, ``show`` and ``delete``: look into stored sessions, remove one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from sqlmemory._urls import redact
from sqlmemory.cli._common import CliError, Command, open_storage, url_option
from sqlmemory.cli.render import Column, Shown, count, message_columns, table

if TYPE_CHECKING:
    from sqlmemory.policy import Policy
    from sqlmemory.storage import SqlStorage

__all__ = ["SESSION_COLUMNS", "SessionRow", "delete", "require_sessions", "sessions", "show"]


@dataclass(frozen=True)
class SessionRow:
    """What ``sqlmemory sessions`` shows of one session."""

    session_id: str
    message_count: int


SESSION_COLUMNS: list[Column[SessionRow]] = [
    Column("session", lambda row: row.session_id),
    Column("messages", lambda row: row.message_count, align=">"),
]
"""The columns of ``sqlmemory sessions``, in order; a new column is one more entry."""


def require_sessions(storage: SqlStorage, session_ids: tuple[str, ...]) -> None:
    """Fail, naming them, when some of ``session_ids`` are not stored."""
    missing = [sid for sid in session_ids if sid not in storage.sessions(prefix=sid)]
    if missing:
        names = ", ".join(repr(sid) for sid in missing)
        raise CliError(f"no session {names} in {redact(storage.engine.url)}")


@click.command(cls=Command)
@url_option
@click.option("--prefix", help="Only the sessions whose id starts with PREFIX.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    default=50,
    show_default=True,
    help="Show at most this many sessions.",
)
def sessions(url: str, prefix: str | None, limit: int) -> None:
    """List the stored sessions.

    A table of session ids, sorted, with how many messages each holds.
    """
    with open_storage(url, read_only=True) as storage:
        ids = storage.sessions(prefix)
        rows = [SessionRow(sid, storage.count(sid)) for sid in ids[:limit]]
    if not rows:
        where = f" starting with {prefix!r}" if prefix else ""
        click.echo(f"no sessions{where} in {redact(storage.engine.url)}", err=True)
        return
    for line in table(SESSION_COLUMNS, rows):
        click.echo(line)
    if len(ids) > limit:
        click.echo(f"more sessions than --limit {limit}: raise it to see them", err=True)


def _policy(window: int | None, max_tokens: int | None) -> Policy | None:
    from sqlmemory.policy import FixedWindow, TokenWindow

    if window is not None and max_tokens is not None:
        raise click.UsageError("give --window or --max-tokens, not both")
    if window is not None:
        return FixedWindow(window)
    if max_tokens is not None:
        return TokenWindow(max_tokens)
    return None


@click.command(cls=Command)
@url_option
@click.argument("session_id", metavar="SID")
@click.option(
    "--window",
    type=click.IntRange(min=0),
    metavar="N",
    help="Only the newest N exchanges (FixedWindow): what a model would be sent.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    metavar="N",
    help="Only the newest exchanges that fit N estimated tokens (TokenWindow).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the messages' JSON wire form.")
def show(
    url: str, session_id: str, window: int | None, max_tokens: int | None, as_json: bool
) -> None:
    """Print the messages of session SID.

    Oldest first: a table of position, time, role, estimated tokens and a one-line summary of the
    content; --json prints the wire form instead (Message.to_dict(), a JSON array).
    """
    policy = _policy(window, max_tokens)
    with open_storage(url, read_only=True) as storage:
        require_sessions(storage, (session_id,))
        total = storage.count(session_id)
        messages = storage.load(session_id, policy)
    if as_json:
        documents = [message.to_dict() for message in messages]
        click.echo(json.dumps(documents, indent=2, ensure_ascii=False))
        return
    kept = "" if policy is None else f"; {policy!r} keeps {len(messages)}"
    click.echo(f"Session {session_id}: {count(total, 'message')}{kept}")
    if messages:
        # A window is the tail of the history: its first message is number total - len + 1.
        first = total - len(messages) + 1
        rows = [Shown(first + i, message) for i, message in enumerate(messages)]
        click.echo()
        for line in table(message_columns(), rows):
            click.echo(line)


@click.command(cls=Command)
@url_option
@click.argument("session_ids", nargs=-1, required=True, metavar="SID...")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def delete(url: str, session_ids: tuple[str, ...], yes: bool) -> None:
    """Delete sessions and everything they hold.

    Their messages, images and documents go with them. Asks first unless --yes is given. A
    session id that is not stored is an error, and then nothing is deleted.
    """
    with open_storage(url, read_only=True) as storage:
        require_sessions(storage, session_ids)
        if not yes:
            names = ", ".join(repr(sid) for sid in session_ids)
            click.confirm(
                f"Delete {names} from {redact(storage.engine.url)}?", abort=True, err=True
            )
        for sid in session_ids:
            deleted = storage.clear(sid)
            click.echo(f"Deleted session {sid!r} ({count(deleted, 'message')})")
