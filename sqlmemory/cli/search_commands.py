"""``sqlmemory search``: the messages matching a few words, best first (``docs/search.md``)."""

from __future__ import annotations

import click

from sqlmemory.cli._command import Command, open_storage, url_option
from sqlmemory.cli.render import Column, count, table
from sqlmemory.cli.sessions import check_option
from sqlmemory.storage.search_results import MAX_LIMIT, SearchHit

__all__ = ["SEARCH_COLUMNS", "search"]

SEARCH_COLUMNS: list[Column[SearchHit]] = [
    Column("session", lambda hit: hit.session_id),
    Column("recorded at", lambda hit: hit.recorded_at.strftime("%Y-%m-%d %H:%M:%S")),
    Column("role", lambda hit: hit.role.value),
    Column("snippet", lambda hit: hit.snippet),
]
"""The columns of ``sqlmemory search``: where each hit is, and its marked snippet."""


@click.command(cls=Command)
@url_option
@click.argument("query")
@click.option("--owner", metavar="OWNER", help="Only the sessions of this owner.")
@click.option("--session", "session_id", metavar="SID", help="Only this session.")
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_LIMIT),
    default=20,
    show_default=True,
    help="The most hits to print.",
)
@click.option("--cursor", metavar="CURSOR", help="The next page, as the previous one printed.")
def search(
    url: str,
    query: str,
    owner: str | None,
    session_id: str | None,
    limit: int,
    cursor: str | None,
) -> None:
    """Print the messages matching QUERY, best first.

    A message matches when its text holds every word of QUERY. "Quoted phrases" match in
    order and the last word matches as a prefix; the words are matched with case and
    accents folded as the database folds them. Matched words are marked **like this**.
    """
    from sqlmemory.storage.checks import check_session_id
    from sqlmemory.storage.search_rules import parse_query

    try:
        parse_query(query)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'QUERY'") from None
    wanted = check_option(owner, "--owner")
    try:
        sid = None if session_id is None else check_session_id(session_id)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--session'") from None
    with open_storage(url, read_only=True) as storage:
        try:
            page = storage.search(query, owner=wanted, session_id=sid, limit=limit, cursor=cursor)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--cursor'") from None
    click.echo(
        count(len(page.hits), "hit") + (" (more with --cursor below)" if page.next_cursor else "")
    )
    if page.hits:
        for line in table(SEARCH_COLUMNS, page.hits):
            click.echo(line)
    if page.next_cursor is not None:
        click.echo(f"next page: --cursor {page.next_cursor}")
