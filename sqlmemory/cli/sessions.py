"""``sqlmemory sessions``, ``show`` and ``delete``: look into stored sessions, remove one."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import click

from sqlmemory._urls import redact
from sqlmemory.cli._command import CliError, Command, open_storage, url_option
from sqlmemory.cli.branch_commands import lineage_line
from sqlmemory.cli.durations import duration_callback
from sqlmemory.cli.render import Column, Shown, count, message_columns, table
from sqlmemory.storage.records import MAX_PAGE_LIMIT, SessionInfo

if TYPE_CHECKING:
    from sqlmemory.policy import Policy
    from sqlmemory.storage import SqlStorage

__all__ = [
    "SESSION_COLUMNS",
    "check_option",
    "delete",
    "prune",
    "require_sessions",
    "sessions",
    "shorten",
    "show",
]


def _updated(info: SessionInfo) -> str:
    return info.updated_at.strftime("%Y-%m-%d %H:%M:%S")


SESSION_COLUMNS: list[Column[SessionInfo]] = [
    Column("session", lambda info: info.session_id),
    Column("owner", lambda info: "" if info.owner is None else shorten(info.owner, 24)),
    Column("title", lambda info: "" if info.title is None else shorten(info.title, 40)),
    Column("updated (UTC)", _updated),
    Column("messages", lambda info: info.message_count, align=">"),
]
"""The columns of ``sqlmemory sessions``, in order; a new column is one more entry. The
owner column shows only on a page where some session has an owner."""


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def check_option(owner: str | None, option: str) -> str | None:
    """``owner`` checked as an owner (``None`` stays ``None``); a bad one is a usage error."""
    from sqlmemory.storage.owners import check_owner_filter

    try:
        return check_owner_filter(owner)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=f"'{option}'") from None


def require_sessions(storage: SqlStorage, session_ids: tuple[str, ...]) -> None:
    """Fail, naming them, when some of ``session_ids`` are not stored."""
    missing = [sid for sid in session_ids if sid not in storage.sessions(prefix=sid)]
    if missing:
        names = ", ".join(repr(sid) for sid in missing)
        raise CliError(f"no session {names} in {redact(storage.engine.url)}")


@click.command(cls=Command)
@url_option
@click.option("--prefix", help="Only the sessions whose id starts with PREFIX.")
@click.option("--owner", help="Only the sessions of OWNER.")
@click.option(
    "--limit",
    type=click.IntRange(min=1, max=MAX_PAGE_LIMIT),
    metavar="N",
    default=50,
    show_default=True,
    help="Sessions on a page.",
)
@click.option("--cursor", metavar="TOKEN", help="Show the page after the one that printed TOKEN.")
def sessions(
    url: str, prefix: str | None, owner: str | None, limit: int, cursor: str | None
) -> None:
    """List the stored sessions, the most recently updated first.

    A table of session ids with their owner, title, the time of their last change and how
    many messages each holds, a page at a time: when there are more, the command prints
    (on stderr) the --cursor that shows the next page.
    """
    owner = check_option(owner, "--owner")
    with open_storage(url, read_only=True) as storage:
        try:
            page = storage.list_sessions(prefix, owner=owner, limit=limit, cursor=cursor)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--cursor'") from None
    if not page.items:
        where = f" starting with {prefix!r}" if prefix else ""
        where += f" of owner {owner!r}" if owner is not None else ""
        more = " after that cursor" if cursor else ""
        click.echo(f"no sessions{where}{more} in {redact(storage.engine.url)}", err=True)
        return
    owned = any(info.owner is not None for info in page.items)
    columns = [c for c in SESSION_COLUMNS if owned or c.header != "owner"]
    for line in table(columns, page.items):
        click.echo(line)
    if page.next_cursor is not None:
        click.echo(f"more sessions: the next page is --cursor {page.next_cursor}", err=True)


@click.command(cls=Command)
@url_option
@click.option(
    "--older-than",
    required=True,
    callback=duration_callback,
    metavar="DURATION",
    help="Delete the sessions not updated for this long: 30d, 12h, 1w2d, 90m, 45s.",
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def prune(url: str, older_than: timedelta, yes: bool) -> None:
    """Delete the sessions idle for longer than --older-than.

    A session's last update is its last write: an append, a save, an evict, a new title.
    Asks first unless --yes is given.
    """
    with open_storage(url, read_only=True) as storage:
        if not yes:
            click.confirm(
                f"Delete every session of {redact(storage.engine.url)} not updated in "
                f"{older_than}?",
                abort=True,
                err=True,
            )
        deleted = storage.prune(older_than)
    click.echo(f"Pruned {count(deleted, 'session')} not updated in {older_than}")


def record_lines(info: SessionInfo) -> list[str]:
    """What ``show`` prints of a session's record: title, times, metadata."""
    lines = []
    if info.owner is not None:
        lines.append(f"owner: {shorten(info.owner, 72)}")
    if info.title is not None:
        lines.append(f"title: {shorten(info.title, 72)}")
    lines.append(f"created: {_time(info.created_at)}, updated: {_time(info.updated_at)} (UTC)")
    lineage = lineage_line(info.parent_id, info.forked_at)
    if lineage is not None:
        lines.append(shorten(lineage, 80))
    if info.metadata:
        text = json.dumps(info.metadata, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"metadata: {shorten(text, 69)}")
    return lines


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


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
        info = storage.session_info(session_id)
        if info is None:
            require_sessions(storage, (session_id,))
        messages = storage.load(session_id, policy)
        total = storage.count(session_id)
        forks = [] if as_json else storage.branches(session_id)
    if as_json:
        documents = [message.to_dict() for message in messages]
        click.echo(json.dumps(documents, indent=2, ensure_ascii=False))
        return
    kept = "" if policy is None else f"; {policy!r} keeps {len(messages)}"
    click.echo(f"Session {session_id}: {count(total, 'message')}{kept}")
    if info is not None:
        for line in record_lines(info):
            click.echo(f"  {line}")
    if forks:
        names = ", ".join(repr(b.session_id) for b in forks)
        click.echo(f"  branches ({len(forks)}): {shorten(names, 66)}")
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
