"""``InMemoryStorage.search``: full-text search with the rules of ``search_rules.py``
alone, under the store's lock (``docs/search.md``)."""

from __future__ import annotations

from sqlmemory.storage._memory_records import MemoryRecords
from sqlmemory.storage.search_results import (
    Candidate,
    SearchPage,
    check_search,
    collect,
    fetch_sorted,
    finds_nothing,
)
from sqlmemory.storage.search_rules import (
    DEFAULT_MARKERS,
    SearchQuery,
    matches,
    score_of,
    visible_text,
)

__all__ = ["MemorySearch"]


class MemorySearch(MemoryRecords):
    """Full-text search over an in-memory store."""

    def search(
        self,
        query: str,
        *,
        owner: str | None = None,
        session_id: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        markers: tuple[str, str] = DEFAULT_MARKERS,
    ) -> SearchPage:
        """The messages whose visible text matches ``query``, best first, a page at a
        time. Through an owned view only its owner's sessions are searched.

        Raises:
            TypeError: an argument of the wrong type.
            ValueError: a query without a word or too long, a bad limit, session id,
                owner or cursor.
        """
        call = check_search(query, self._owner, owner, session_id, limit, cursor, markers)
        if finds_nothing(call):
            return SearchPage([], None)
        with self._lock:
            found = self._matching(call.query, call.owner, call.session_id)
        found = [c for c in found if c.recorded_at <= call.state.horizon]
        return collect(call.query, call.state, call.limit, call.markers, fetch_sorted(found))

    def _matching(self, query: SearchQuery, owner: str | None, sid: str | None) -> list[Candidate]:
        """Every message of the sessions asked for that matches (the lock is held)."""
        found = []
        for session_id, record in self._records.items():
            if (sid is not None and session_id != sid) or (
                owner is not None and record.owner != owner
            ):
                continue
            for message in self._sessions.get(session_id, ()):
                text = visible_text(message)
                if text is None or message.recorded_at is None or not matches(query, text):
                    continue
                score = score_of(query, text)
                found.append(
                    Candidate(
                        score, message.recorded_at, session_id, message.id, message.role.value, text
                    )
                )
        return found
