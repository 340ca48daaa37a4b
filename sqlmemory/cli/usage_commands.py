"""``sqlmemory usage``: what a session, an owner or everything used (``docs/usage.md``)."""

from __future__ import annotations

from datetime import timedelta

import click

from sqlmemory.cli._command import Command, open_storage, url_option
from sqlmemory.cli.durations import duration_callback
from sqlmemory.cli.render import Column, count, table
from sqlmemory.cli.sessions import check_option
from sqlmemory.storage.usage_report import total_usage
from sqlmemory.types import Usage, utc_now
from sqlmemory.types.token_usage import TOKEN_FIELDS

__all__ = ["USAGE_COLUMNS", "usage"]

NO_MODEL = "(no model)"
"""The row of the usage that names no model."""


def _number(name: str) -> Column[tuple[str, Usage]]:
    header = name.removesuffix("_tokens").replace("_", " ")
    return Column(header, lambda row: f"{getattr(row[1], name):,}", align=">")


USAGE_COLUMNS: list[Column[tuple[str, Usage]]] = [
    Column("model", lambda row: row[0]),
    *(_number(name) for name in TOKEN_FIELDS),
]
"""The columns of ``sqlmemory usage``: the model, then each count (in tokens)."""


def _rest(total: Usage, parts: list[Usage]) -> Usage | None:
    """What ``total`` holds beyond ``parts``: the usage that names no model, if any."""
    left = [getattr(total, n) - sum(getattr(p, n) for p in parts) for n in TOKEN_FIELDS]
    return total_usage(None, left) if any(left) else None


def _session_option(session_id: str | None) -> str | None:
    from sqlmemory.storage.checks import check_session_id

    try:
        return None if session_id is None else check_session_id(session_id)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--session'") from None


@click.command(cls=Command)
@url_option
@click.option("--session", "session_id", metavar="SID", help="Only this session.")
@click.option("--owner", metavar="OWNER", help="Only the sessions of this owner.")
@click.option(
    "--since",
    callback=duration_callback,
    metavar="DURATION",
    help="Only the messages recorded in the last DURATION: 30d, 12h, 1w2d, 90m, 45s.",
)
def usage(url: str, session_id: str | None, owner: str | None, since: timedelta | None) -> None:
    """Print the tokens used, per model and in total, as a table.

    Counts the messages that carry a usage (the model and token counts of a reply, kept
    by the converters and adapters): of one session, of one owner's sessions, or of
    every session; the database adds them up.
    """
    sid = _session_option(session_id)
    wanted = check_option(owner, "--owner")
    start = None if since is None else utc_now() - since
    with open_storage(url, read_only=True) as storage:
        report = storage.usage(sid, owner=wanted, since=start)
    rows = [(model, usage) for model, usage in report.by_model.items()]
    rest = _rest(report.total, [u for _, u in rows])
    if rest is not None:
        rows.append((NO_MODEL, rest))
    click.echo(f"{count(report.messages, 'message')} with usage")
    if report.messages:
        for line in table(USAGE_COLUMNS, [*rows, ("total", report.total)]):
            click.echo(line)
