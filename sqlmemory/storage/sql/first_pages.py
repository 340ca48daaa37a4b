"""How many rows a window's first page reads on SQLite's own driver, learned per session.

A policy's ``page_hint`` is sized for a server, where a second statement is a second
round trip: ``FixedWindow(n)`` reads ``2n + 2`` rows first, enough for a tool-using
agent's groups. Through ``sqlite3`` a statement is a call into the library and the cost
is per row read: a chat's window is decided by ``n + 1`` rows, and reading twice that
made a window a third dearer than ``SQLiteSession``'s. So once a window of a session has
been read, the next one of the same policy reads first what the last one spanned (plus
two, for a call and its result appended since); the first reads the hint. A wrong guess
costs a statement, never a different window: pages go on, doubling, until the policy
decides, as on every backend.

Process-wide and bounded: forgotten whole once it holds :data:`MAX_SESSIONS` entries.
"""

from __future__ import annotations

__all__ = ["MAX_SESSIONS", "FirstPages"]

MAX_SESSIONS = 4096
MARGIN = 2
"""Rows read beyond the last span: a tool call and its result appended since."""


class FirstPages:
    """The span of the last window read per (session, page hint)."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self.max_sessions = max_sessions
        self._spans: dict[tuple[str, int], int] = {}

    def first(self, sid: str, hint: int) -> int:
        """The first page's size: the last span learned, else the policy's hint."""
        span = self._spans.get((sid, hint))
        return hint if span is None else span + MARGIN

    def learn(self, sid: str, hint: int, span: int) -> None:
        """Record that the window just read spanned the newest ``span`` rows."""
        if len(self._spans) >= self.max_sessions:
            self._spans.clear()
        self._spans[(sid, hint)] = span

    def clear(self) -> None:
        """Forget every span (what a test does when it empties the tables)."""
        self._spans.clear()
