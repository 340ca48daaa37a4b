"""``InMemoryStorage.usage``: the usage totals, added up in Python under the store's lock.

The same filters and the same report as the SQL storages (``docs/usage.md``), so the
contract suite holds both to one answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from sqlmemory.storage._memory_records import MemoryRecords
from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.owners import NOBODY, check_owner_filter, owner_filter
from sqlmemory.storage.usage_report import EMPTY_REPORT, UsageReport, check_period, report_of
from sqlmemory.types import Message
from sqlmemory.types.token_usage import TOKEN_FIELDS

__all__ = ["MemoryUsage"]


class MemoryUsage(MemoryRecords):
    """The usage totals of an in-memory store."""

    def usage(
        self,
        session_id: str | None = None,
        *,
        owner: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> UsageReport:
        """What the messages carrying a usage add up to: of one session, of one owner's
        sessions, or of every session, recorded at or after ``since`` and before
        ``until``. Through an owned view only its owner's sessions count.

        Raises:
            TypeError: a bad argument's type.
            ValueError: a naive time, a bad session id or owner.
        """
        sid = None if session_id is None else check_session_id(session_id)
        wanted = owner_filter(self._owner, check_owner_filter(owner))
        start, end = check_period(since, until)
        if wanted == NOBODY:
            return EMPTY_REPORT
        groups: dict[str | None, list[int]] = {}
        with self._lock:
            for message in self._counted(sid, wanted):
                usage = message.usage
                at = message.recorded_at
                if usage is None or at is None:
                    continue
                if (start is not None and at < start) or (end is not None and at >= end):
                    continue
                sums = groups.setdefault(usage.model, [0] * (len(TOKEN_FIELDS) + 1))
                sums[0] += 1
                for i, name in enumerate(TOKEN_FIELDS, 1):
                    sums[i] += getattr(usage, name)
        return report_of((model, *sums) for model, sums in groups.items())

    def _counted(self, sid: str | None, owner: str | None) -> Iterator[Message]:
        """The messages of the sessions asked for (the lock is held)."""
        for session_id, record in self._records.items():
            if sid is not None and session_id != sid:
                continue
            if owner is not None and record.owner != owner:
                continue
            yield from self._sessions.get(session_id, ())
