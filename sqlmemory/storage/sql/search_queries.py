"""Full-text search in SQL: each engine's query built from the words of a parsed query,
and the pages walked over its candidates (``docs/search.md``).

The engine's query is built only from the words :func:`~sqlmemory.storage.search_rules.
parse_query` found (letters, digits and marks), each quoted for its engine, and passed
as a bound parameter:

- SQLite: an FTS5 expression of quoted strings (``"w"``, ``"w1 w2"`` for a phrase,
  ``"w"*`` for the prefix), all of which must match; ranked by ``bm25`` (negated: higher
  is better);
- PostgreSQL: ``plainto_tsquery``, ``phraseto_tsquery`` and ``to_tsquery(quote_literal(w)
  || ':*')`` joined by ``&&``, in the index's configuration; ranked by ``ts_rank``;
- MySQL/MariaDB: ``MATCH ... AGAINST`` in boolean mode with ``+w``, ``+"w1 w2"`` and
  ``+w*``, ranked by its relevance. The index leaves out words shorter than
  ``innodb_ft_min_token_size`` (3) and InnoDB's stop words: a term made of such words
  is looked for with ``LIKE`` among the rows the other terms (and the owner and session
  filters) leave; a query of such terms only scans the owner's or the session's rows.

Every candidate is then checked against the rules in Python
(:func:`~sqlmemory.storage.search_results.collect`), so no engine returns more than the
words. Plain functions over a ``Connection``, like the other statement modules.

On SQLite and MySQL/MariaDB a search of one owner or one session holding at most
:data:`SCAN_LIMIT` messages reads their visible text and ranks it by the rules' score
instead: ``bm25`` and InnoDB's relevance score every message of the whole index that
holds a word, which for a common word is a large part of a big table (seconds over a
million messages), while the owner's own messages are a few thousand rows at most.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Double,
    FromClause,
    Select,
    and_,
    cast,
    column,
    func,
    literal,
    literal_column,
    or_,
    select,
    table,
    text,
    true,
)
from sqlalchemy.dialects import mysql, postgresql

from sqlmemory.storage.search_results import (
    Candidate,
    Key,
    SearchPage,
    WalkState,
    collect,
    fetch_sorted,
)
from sqlmemory.storage.search_rules import SearchQuery, Term, fold, matches, score_of
from sqlmemory.storage.sql.schema import messages_table, sessions_table
from sqlmemory.storage.sql.search_index import (
    DEFAULT_SEARCH_CONFIG,
    FTS_TABLE,
    SEARCH_VECTOR,
    search_config,
)
from sqlmemory.storage.sql.search_lag import IndexBehind, catch_up, index_is_behind

__all__ = ["fts5_query", "indexing_search_page", "innodb_query", "search_page"]

_m = messages_table.c
_FTS = table(FTS_TABLE, column("rowid"))
_FTS_NAME: ColumnElement[Any] = literal_column(FTS_TABLE)
_MESSAGE_ROWID: ColumnElement[Any] = literal_column("sqlmemory_messages.rowid")
_VECTOR: ColumnElement[Any] = literal_column(f"sqlmemory_messages.{SEARCH_VECTOR}")

_STOPWORDS = """a about an are as at be by com de en for from how i in is it la of on or that
the this to was what when where who will with und www"""
INNODB_STOPWORDS = frozenset(_STOPWORDS.split())
"""InnoDB's default stop word list (``INFORMATION_SCHEMA.INNODB_FT_DEFAULT_STOPWORD``):
words its ``FULLTEXT`` index leaves out."""
TOKEN_SIZES = text("SELECT @@innodb_ft_min_token_size, @@innodb_ft_max_token_size")
SCAN_LIMIT = 20_000
"""The most messages of an owner (or a session) that SQLite and MySQL/MariaDB search by
reading them rather than through the index (see the module)."""


def _quoted(words: Sequence[str]) -> str:
    return '"' + " ".join(words).replace('"', '""') + '"'


def fts5_query(query: SearchQuery) -> str:
    """The FTS5 expression of ``query``: its terms as quoted strings, all required.

    Examples:
        >>> from sqlmemory.storage.search_rules import parse_query
        >>> fts5_query(parse_query('NEAR(a b) "x y" OR c'))
        '"NEAR" "a" "b" "x y" "OR" "c"*'
    """
    return " ".join(_quoted(t.raw) + ("*" if t.prefix else "") for t in query.terms)


def innodb_query(query: SearchQuery, min_size: int, max_size: int) -> tuple[str, list[str]]:
    """The boolean-mode expression of what InnoDB's index can find, and the words it
    cannot (left to ``LIKE``).

    Examples:
        >>> from sqlmemory.storage.search_rules import parse_query
        >>> innodb_query(parse_query('"hello world" of ai pyth'), 3, 84)
        ('+"hello world" +pyth*', ['of', 'ai'])
    """

    def served(word: str) -> bool:
        return min_size <= len(word) <= max_size and fold(word) not in INNODB_STOPWORDS

    parts: list[str] = []
    scanned: list[str] = []
    for term in query.terms:
        if all(served(word) for word in term.raw):
            suffix = "*" if term.prefix else ""
            parts.append("+" + (_quoted(term.raw) if term.phrase else term.raw[0]) + suffix)
            continue
        for word in term.raw:
            if served(word) and not term.prefix:
                parts.append("+" + word)
            else:
                scanned.append(word)
    return " ".join(parts), list(dict.fromkeys(scanned))


def _tsquery(term: Term, config: ColumnElement[Any]) -> ColumnElement[Any]:
    if term.phrase:
        return func.phraseto_tsquery(config, " ".join(term.raw), type_=postgresql.TSQUERY)
    word = term.raw[0]
    if term.prefix:
        prefix = func.quote_literal(word).op("||")(":*")
        return func.to_tsquery(config, prefix, type_=postgresql.TSQUERY)
    return func.plainto_tsquery(config, word, type_=postgresql.TSQUERY)


Engine = tuple[FromClause, Any, Any, bool]
"""What the query of an engine reads from, its score, its condition, and whether its
candidates are checked against the rules."""


def _postgres(conn: Connection, query: SearchQuery) -> Engine:
    name = search_config(conn)
    config = cast(literal(name), postgresql.REGCONFIG)
    parts = [_tsquery(term, config) for term in query.terms]
    tsquery = functools.reduce(lambda a, b: a.op("&&")(b), parts)
    score = cast(func.ts_rank(_VECTOR, tsquery), Double)
    # A configuration that stems (english...) matches other forms of the words on
    # purpose; the rules would drop them. Its query is made of the words alone anyway.
    return messages_table, score, _VECTOR.op("@@")(tsquery), name == DEFAULT_SEARCH_CONFIG


def _sqlite(conn: Connection, query: SearchQuery) -> Engine:
    source = _FTS.join(messages_table, _FTS.c.rowid == _MESSAGE_ROWID)
    match = _FTS_NAME.op("MATCH")(fts5_query(query))
    return source, -func.bm25(_FTS_NAME), match, True


def _mysql(conn: Connection, query: SearchQuery) -> Engine:
    min_size, max_size = conn.execute(TOKEN_SIZES).one()
    against, scanned = innodb_query(query, int(min_size), int(max_size))
    likes = [_m.search_text.contains(word, autoescape=True) for word in scanned]
    if not against:
        condition = and_(_m.search_text.is_not(None), *likes)
        return messages_table, literal(0.0, Double), condition, True
    found = mysql.match(_m.search_text, against=literal(against)).in_boolean_mode()
    return messages_table, found, and_(found > 0, *likes), True


_ENGINES: dict[str, Callable[[Connection, SearchQuery], Engine]] = {
    "postgresql": _postgres,
    "sqlite": _sqlite,
}


def _after(sub: Any, after: Key) -> ColumnElement[bool]:
    score, at, sid, mid = after
    same_time = and_(
        sub.c.recorded_at == at,
        or_(sub.c.session_id > sid, and_(sub.c.session_id == sid, sub.c.message_id > mid)),
    )
    later = or_(sub.c.recorded_at < at, same_time)
    return or_(sub.c.score < score, and_(sub.c.score == score, later))


def _candidates(
    conn: Connection,
    query: SearchQuery,
    owner: str | None,
    sid: str | None,
    horizon: datetime,
) -> tuple[Select[Any], bool]:
    source, score, condition, checked = _ENGINES.get(conn.dialect.name, _mysql)(conn, query)
    inner = select(
        cast(score, Double).label("score"),
        _m.recorded_at,
        _m.session_id,
        _m.message_id,
        _m.role,
        _m.search_text,
    ).where(condition, _m.recorded_at <= horizon)
    if owner is not None:
        source = source.join(sessions_table, sessions_table.c.session_id == _m.session_id)
        inner = inner.where(sessions_table.c.owner == owner)
    if sid is not None:
        inner = inner.where(_m.session_id == sid)
    return inner.select_from(source), checked


def _scanned(
    conn: Connection, query: SearchQuery, owner: str | None, sid: str | None, horizon: datetime
) -> list[Candidate] | None:
    """The candidates of a small owner or session, read and scored in Python; ``None``
    when the index is the better way (PostgreSQL, no filter, or too many messages)."""
    if conn.dialect.name == "postgresql" or (owner is None and sid is None):
        return None
    held = select(func.coalesce(func.sum(sessions_table.c.message_count), 0))
    if owner is not None:
        held = held.where(sessions_table.c.owner == owner)
    if sid is not None:
        held = held.where(sessions_table.c.session_id == sid)
    if int(conn.execute(held).scalar_one()) > SCAN_LIMIT:
        return None
    rows = select(_m.recorded_at, _m.session_id, _m.message_id, _m.role, _m.search_text).where(
        _m.search_text.is_not(None), _m.recorded_at <= horizon
    )
    if owner is not None:
        rows = rows.join(sessions_table, sessions_table.c.session_id == _m.session_id).where(
            sessions_table.c.owner == owner
        )
    if sid is not None:
        rows = rows.where(_m.session_id == sid)
    return [
        Candidate(score_of(query, row[4]), *row)
        for row in conn.execute(rows)
        if matches(query, row[4])
    ]


def search_page(
    conn: Connection,
    query: SearchQuery,
    owner: str | None,
    sid: str | None,
    state: WalkState,
    limit: int,
    markers: tuple[str, str],
) -> SearchPage:
    """The next page of hits of ``query`` in the walk ``state`` (updated in place).

    ``owner`` limits the search to that owner's sessions (an owned view passes its own),
    ``sid`` to one session. On SQLite, :class:`~sqlmemory.storage.sql.search_lag.
    IndexBehind` when it would read an index that rows wait for (``state`` untouched):
    :func:`indexing_search_page` is then the way.
    """
    scanned = _scanned(conn, query, owner, sid, state.horizon)
    if scanned is not None:
        return collect(query, state, limit, markers, fetch_sorted(scanned))
    if conn.dialect.name == "sqlite" and index_is_behind(conn):
        raise IndexBehind
    candidates, checked = _candidates(conn, query, owner, sid, state.horizon)
    sub = candidates.subquery("candidates")
    order = (sub.c.score.desc(), sub.c.recorded_at.desc(), sub.c.session_id, sub.c.message_id)

    def fetch(after: Key | None, n: int) -> list[Candidate]:
        page = select(sub).where(true() if after is None else _after(sub, after))
        rows = conn.execute(page.order_by(*order).limit(n)).all()
        return [Candidate(float(r[0]), *r[1:]) for r in rows]

    # ts_rank reads the row alone; bm25 and InnoDB's relevance read the whole index.
    stable = conn.dialect.name == "postgresql"
    return collect(query, state, limit, markers, fetch, stable, checked)


def indexing_search_page(conn: Connection, *call: Any) -> SearchPage:
    """:func:`search_page` of ``call`` once SQLite's index holds every row (in a write
    transaction)."""
    catch_up(conn)
    return search_page(conn, *call)
