"""The usage totals of an ``AsyncSqlStorage``: what a session, an owner or everything used.

:class:`AsyncSqlUsage` holds ``usage`` (``docs/usage.md``); its SQL, one ``SUM ... GROUP
BY`` statement, is in :mod:`~sqlmemory.storage.sql.usage_queries`.

This file is the single source of :mod:`sqlmemory.storage.sql.usage` (``SqlUsage``):
``tools/generate_sync.py`` writes that file from this one.
"""

from __future__ import annotations

from datetime import datetime

from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.owners import NOBODY, check_owner_filter, owner_filter
from sqlmemory.storage.sql import usage_queries
from sqlmemory.storage.sql.front_async import AsyncSqlFront
from sqlmemory.storage.usage_report import EMPTY_REPORT, UsageReport, check_period, report_of

__all__ = ["AsyncSqlUsage"]


class AsyncSqlUsage(AsyncSqlFront):
    """The usage totals of ``AsyncSqlStorage``."""

    async def usage(
        self,
        session_id: str | None = None,
        *,
        owner: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> UsageReport:
        """What the messages carrying a usage add up to, in total and per model.

        Of one session (``session_id``), of one owner's sessions (``owner``), or of every
        session, counting the messages recorded at or after ``since`` and before
        ``until``. Through an owned view only its owner's sessions count (``owner`` of
        another owner: an empty report). The database adds the counts up in one
        statement over an index; no message is read into Python.

        Examples:
            >>> storage = AsyncSqlStorage.from_url("sqlite+aiosqlite://")  # doctest: +SKIP
            >>> report = await storage.usage(owner="user-42", since=month_start)  # doctest: +SKIP
            >>> report.total.input_tokens, report.messages  # doctest: +SKIP
            (125000, 310)

        Raises:
            TypeError: an argument of the wrong type.
            ValueError: a naive time, a bad session id (``InvalidSessionIdError``) or owner.
        """
        sid = None if session_id is None else check_session_id(session_id)
        wanted = owner_filter(self._owner, check_owner_filter(owner))
        since, until = check_period(since, until)
        if wanted == NOBODY:
            return EMPTY_REPORT
        groups = usage_queries.usage_groups
        return report_of(await self._run("usage", False, groups, sid, wanted, since, until))
