"""Full-text search of an ``AsyncSqlStorage``: the messages matching a query, best first.

:class:`AsyncSqlSearch` holds ``search`` (``docs/search.md``); its SQL is in
:mod:`~sqlmemory.storage.sql.search_queries`, the index in
:mod:`~sqlmemory.storage.sql.search_index`, the rules every storage shares in
:mod:`~sqlmemory.storage.search_rules`.

This file is the single source of :mod:`sqlmemory.storage.sql.search` (``SqlSearch``):
``tools/generate_sync.py`` writes that file from this one.
"""

from __future__ import annotations

from sqlmemory.storage.search_results import SearchPage, check_search, finds_nothing
from sqlmemory.storage.search_rules import DEFAULT_MARKERS
from sqlmemory.storage.sql import search_queries
from sqlmemory.storage.sql.front_async import AsyncSqlFront
from sqlmemory.storage.sql.search_lag import IndexBehind

__all__ = ["AsyncSqlSearch"]


class AsyncSqlSearch(AsyncSqlFront):
    """The full-text search of ``AsyncSqlStorage``."""

    async def search(
        self,
        query: str,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        markers: tuple[str, str] = DEFAULT_MARKERS,
    ) -> SearchPage:
        """The messages whose visible text matches ``query``, best first, a page at a time.

        Every word of ``query`` must match, in any order; ``"quoted phrases"`` match in
        order; the last word matches as a prefix. Searches every session, one owner's
        (``owner``) or one session (``session_id``); through an owned view only its
        owner's sessions (``owner`` of another owner: no hit). The database's full-text
        index finds the candidates (PostgreSQL ``tsvector``, SQLite FTS5, InnoDB
        ``FULLTEXT``), in the order of its rank, then the newest; ``next_cursor`` gives
        the next page.

        Examples:
            >>> storage = AsyncSqlStorage.from_url("sqlite+aiosqlite://")  # doctest: +SKIP
            >>> page = await storage.search("train zurich", owner="user-42")  # doctest: +SKIP
            >>> page.hits[0].snippet  # doctest: +SKIP
            'Book a **train** to **Zürich** on Monday'

        Args:
            query: the words to find.
            owner: search only this owner's sessions.
            session_id: search only this session.
            limit: the most hits on a page, from 1 to 1000.
            cursor: the ``next_cursor`` of the previous page of the same search.
            markers: what the snippets put before and after each matched word.

        Raises:
            TypeError: an argument of the wrong type.
            ValueError: a query without a word (blank) or too long, a bad limit,
                session id (``InvalidSessionIdError``), owner or cursor.
        """
        call = check_search(query, self._owner, owner, session_id, limit, cursor, markers)
        if finds_nothing(call):
            return SearchPage([], None)
        try:
            return await self._run("search", False, search_queries.search_page, *call)
        except IndexBehind:  # SQLite: rows wait for the index, which this search brings up
            return await self._run("search", True, search_queries.indexing_search_page, *call)
