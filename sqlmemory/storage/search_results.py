"""What a search returns (:class:`SearchHit`, :class:`SearchPage`), its cursor, and the
walk every storage pages with. Pure Python (``docs/search.md``).

Hits are ordered by score (higher first), then newest ``recorded_at``, then
``(session_id, message_id)``. The cursor is opaque (base64url JSON) and holds:

- the *horizon*, the time the walk started: messages recorded after it are never part
  of the walk, so writes made while a user pages never show up in it;
- the sort key of the last hit shown, and a short hash of every hit shown;
- a fingerprint of the query and its filters: a cursor is refused by another search.

Where the rank depends on the message and the query alone (PostgreSQL's ``ts_rank``,
the in-memory score), the rank of a message never changes during a walk, so the next
page starts right after the last hit's key (keyset paging). Where it uses statistics of
the whole index (SQLite's ``bm25``, InnoDB's relevance), a write anywhere between two
pages moves every score, so a key says nothing about rows not shown yet: there the next
page is the best hits *not shown yet*, found again from the top and skipping the hashes
the cursor holds. Either way no hit appears twice and none is skipped; the second way
costs reading the hits shown before, again, on each page (a few hundred rows for a
user paging through ten pages of twenty).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.owners import NOBODY, check_owner_filter, owner_filter
from sqlmemory.storage.search_rules import (
    SearchQuery,
    check_markers,
    matches,
    parse_query,
    snippet,
)
from sqlmemory.types import Role, utc_now

__all__ = [
    "Candidate",
    "SearchCall",
    "SearchHit",
    "SearchPage",
    "WalkState",
    "check_limit",
    "check_search",
    "collect",
    "fetch_sorted",
    "finds_nothing",
    "sort_key",
    "start_walk",
]

MAX_LIMIT = 1000
"""The most hits a page may hold."""
_HASH_BYTES = 6
_HASH_CHARS = 8  # base64 of 6 bytes


@dataclass(frozen=True)
class SearchHit:
    """One message that matches a search.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("trip", Message.user("Book a train to Zürich"))
        >>> hit = storage.search("zurich").hits[0]
        >>> hit.session_id, hit.role.value, hit.snippet
        ('trip', 'user', 'Book a train to **Zürich**')
    """

    session_id: str
    message_id: str
    role: Role
    recorded_at: datetime
    snippet: str
    """At most 200 characters of the message's visible text around the first match, the
    matched words between the search's markers."""
    score: float
    """The engine's rank (higher is better); comparable within one search only."""


@dataclass(frozen=True)
class SearchPage:
    """A page of search hits, best first, and the cursor of the next page.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("a", Message.user("red apple"), Message.user("green apple"))
        >>> page = storage.search("apple", limit=1)
        >>> len(page.hits), page.next_cursor is not None
        (1, True)
        >>> rest = storage.search("apple", limit=1, cursor=page.next_cursor)
        >>> len(rest.hits), rest.next_cursor
        (1, None)
    """

    hits: list[SearchHit]
    next_cursor: str | None
    """Pass it as ``cursor`` (with the same query and filters) for the next page;
    ``None`` on the last page."""


class Candidate(NamedTuple):
    """A message an engine found, before the rules check it."""

    score: float
    recorded_at: datetime
    session_id: str
    message_id: str
    role: str
    text: str | None

    @property
    def key(self) -> tuple[float, datetime, str, str]:
        return (self.score, self.recorded_at, self.session_id, self.message_id)


Key = tuple[float, datetime, str, str]


@dataclass
class WalkState:
    """Where a walk of pages stands: decoded from a cursor, or new."""

    fingerprint: str
    horizon: datetime
    after: Key | None = None
    seen: set[str] = field(default_factory=set)


def check_limit(limit: object) -> int:
    """``limit`` if it is an int from 1 to 1000, else raise (TypeError, ValueError)."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be from 1 to {MAX_LIMIT}, not {limit}")
    return limit


def _hash(session_id: str, message_id: str) -> str:
    data = f"{session_id}\x1f{message_id}".encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(data, digest_size=_HASH_BYTES).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")


def _fingerprint(query: SearchQuery, owner: str | None, session_id: str | None) -> str:
    data = json.dumps([query.text, owner, session_id]).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=9).hexdigest()


def _encode(state: WalkState) -> str:
    assert state.after is not None  # noqa: S101 - a next page follows a hit
    score, at, sid, mid = state.after
    body = {
        "f": state.fingerprint,
        "h": state.horizon.isoformat(),
        "k": [score, at.isoformat(), sid, mid],
        "s": "".join(sorted(state.seen)),
    }
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _time(value: object) -> datetime:
    if not isinstance(value, str):
        raise ValueError
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError
    return parsed


def _decode(cursor: str, fingerprint: str) -> WalkState:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        body = json.loads(raw)
        score, at, sid, mid = body["k"]
        seen = body["s"]
        valid = (
            isinstance(score, float | int)
            and not isinstance(score, bool)
            and isinstance(sid, str)
            and isinstance(mid, str)
            and isinstance(seen, str)
            and len(seen) % _HASH_CHARS == 0
        )
        if not valid or body["f"] != fingerprint:
            raise ValueError
        chunks = {seen[i : i + _HASH_CHARS] for i in range(0, len(seen), _HASH_CHARS)}
        return WalkState(fingerprint, _time(body["h"]), (float(score), _time(at), sid, mid), chunks)
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise ValueError("cursor is not one that this search returned") from None


def start_walk(
    query: SearchQuery,
    owner: str | None,
    session_id: str | None,
    cursor: object,
    now: datetime,
) -> WalkState:
    """The walk a cursor continues, or a new one whose horizon is ``now``.

    Raises:
        TypeError: ``cursor`` is neither ``None`` nor a ``str``.
        ValueError: it is not a cursor of this search (the same query and filters).
    """
    fingerprint = _fingerprint(query, owner, session_id)
    if cursor is None:
        return WalkState(fingerprint, now)
    if not isinstance(cursor, str):
        raise TypeError(f"cursor must be a str or None, not {type(cursor).__name__}")
    return _decode(cursor, fingerprint)


class SearchCall(NamedTuple):
    """A ``search`` call's arguments, checked, with the walk its cursor continues."""

    query: SearchQuery
    owner: str | None
    """The owner whose sessions are searched (:data:`~sqlmemory.storage.owners.NOBODY`
    when a view's owner and ``owner=`` disagree), or ``None`` for every session."""
    session_id: str | None
    state: WalkState
    limit: int
    markers: tuple[str, str]


def check_search(
    query: object,
    view_owner: str | None,
    owner: object,
    session_id: object,
    limit: object,
    cursor: object,
    markers: object,
) -> SearchCall:
    """Every storage's checks of ``search``'s arguments, before any I/O.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: a query without a word or too long, a bad limit, session id,
            owner or cursor.
    """
    parsed = parse_query(query)
    wanted = owner_filter(view_owner, check_owner_filter(owner))
    sid = None if session_id is None else check_session_id(session_id)
    checked_limit = check_limit(limit)
    checked_markers = check_markers(markers)
    state = start_walk(parsed, wanted, sid, cursor, utc_now())
    return SearchCall(parsed, wanted, sid, state, checked_limit, checked_markers)


def finds_nothing(call: SearchCall) -> bool:
    """Whether the call is an owned view's search of another owner: no hit, no I/O."""
    return call.owner == NOBODY


Fetch = Callable[[Key | None, int], Sequence[Candidate]]
"""``fetch(after, n)``: at most ``n`` candidates after the key ``after``, in order."""


def fetch_sorted(candidates: Sequence[Candidate]) -> Fetch:
    """A :data:`Fetch` over candidates found whole in Python (their score the rules'):
    sorted once, each page after its key."""
    ordered = sorted(candidates, key=lambda c: sort_key(c.key))
    keys = [sort_key(c.key) for c in ordered]

    def fetch(after: Key | None, n: int) -> Sequence[Candidate]:
        start = 0 if after is None else bisect.bisect_right(keys, sort_key(after))
        return ordered[start : start + n]

    return fetch


def collect(
    query: SearchQuery,
    state: WalkState,
    limit: int,
    markers: tuple[str, str],
    fetch: Fetch,
    stable: bool = True,
    checked: bool = True,
) -> SearchPage:
    """The next page of the walk: candidates fetched in batches, checked against the
    rules, those shown already skipped, until ``limit`` hits and one more are found.

    ``stable``: the rank of a message depends on it and the query alone, so the page
    starts after the cursor's key; otherwise it starts from the top (see the module).
    ``checked``: each candidate must match the rules (all but a stemming PostgreSQL
    configuration's, whose other forms of a word are what it is chosen for).
    """
    found: list[Candidate] = []
    after = state.after if stable else None
    batch = max(2 * limit + 8, 32) + (0 if stable else len(state.seen))
    while len(found) <= limit:
        candidates = fetch(after, batch)
        for candidate in candidates:
            after = candidate.key
            if _hash(candidate.session_id, candidate.message_id) in state.seen:
                continue
            if not checked or matches(query, candidate.text):
                found.append(candidate)
                if len(found) > limit:
                    break
        if len(candidates) < batch:
            break
    shown = found[:limit]
    hits = [_hit(query, candidate, markers) for candidate in shown]
    if len(found) <= limit:
        return SearchPage(hits, None)
    state.after = shown[-1].key
    state.seen.update(_hash(c.session_id, c.message_id) for c in shown)
    return SearchPage(hits, _encode(state))


def _hit(query: SearchQuery, candidate: Candidate, markers: tuple[str, str]) -> SearchHit:
    return SearchHit(
        session_id=candidate.session_id,
        message_id=candidate.message_id,
        role=Role(candidate.role),
        recorded_at=candidate.recorded_at,
        snippet=snippet(query, candidate.text or "", markers),
        score=candidate.score,
    )


def sort_key(key: Key) -> tuple[Any, ...]:
    """The order of hits as a Python sort key: score and time descending, ids ascending."""
    score, at, session_id, message_id = key
    return (-score, -at.timestamp(), session_id, message_id)
