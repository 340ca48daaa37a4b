"""Full-text search, the rules every storage shares: the query language, what a message
shows, when it matches, its score and its snippet. Pure Python (``docs/search.md``).

The query is tokenised here, never by an engine: a *word* is a run of letters, digits
and combining marks (Unicode categories ``L``, ``N``, ``M``); everything else
separates words, so no character of the query can be an operator of FTS5, ``tsquery``
or MySQL's boolean mode. Text between double quotes is a phrase (its words in order);
the last word outside quotes, at the end of the query, matches as a prefix (search as
you type). The SQL storages build each engine's query from these words only, and check
every candidate the engine returns against :func:`matches`, so no engine ever returns
more than the words; :class:`~sqlmemory.InMemoryStorage` searches with these rules alone.

Examples:
    >>> query = parse_query('Zürich "train station" tim')
    >>> [(term.words, term.prefix) for term in query.terms]
    [(('zurich',), False), (('train', 'station'), False), (('tim',), True)]
    >>> matches(query, "Timetable: the TRAIN STATION of Zurich")
    True
    >>> snippet(query, "Timetable: the TRAIN STATION of Zurich")
    '**Timetable**: the **TRAIN** **STATION** of **Zurich**'
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from sqlmemory.types import Message, Role, TextBlock

__all__ = [
    "DEFAULT_MARKERS",
    "MAX_QUERY_LENGTH",
    "MAX_QUERY_WORDS",
    "MAX_SEARCH_TEXT",
    "SNIPPET_LENGTH",
    "SearchQuery",
    "Term",
    "check_markers",
    "fold",
    "matches",
    "parse_query",
    "score_of",
    "snippet",
    "visible_text",
    "visible_text_of",
    "words_of",
]

MAX_QUERY_LENGTH = 1000
"""The longest query, in characters; a longer one raises ``ValueError``."""
MAX_QUERY_WORDS = 32
"""The most words a query may hold; more raise ``ValueError``."""
SNIPPET_LENGTH = 200
"""The longest snippet, in characters of the visible text (markers not counted)."""
DEFAULT_MARKERS = ("**", "**")
"""What a snippet puts before and after each matched word."""
MAX_SEARCH_TEXT = 100_000
"""The most characters of a message's visible text that search sees (the first ones):
PostgreSQL refuses a ``tsvector`` over 1 MB, which a longer text of short distinct words
can reach, and a search would not show a match far inside such a text anyway."""
HIDDEN_ROLES = frozenset({Role.SYSTEM.value, Role.DEVELOPER.value})
"""The roles whose messages are instructions, not conversation: never searched."""
_ELLIPSIS = "…"


_MARK_PLANES = (range(0x20000), range(0xE0100, 0xE01F0))
"""Where Unicode has combining marks: the first two planes, and the variation selectors
supplement (checked against the whole range when the Unicode database changes)."""


@functools.cache
def _word_pattern() -> re.Pattern[str]:
    """A run of letters, digits and marks. Python's ``\\w`` leaves combining marks out
    (and takes ``_`` in), so the class adds the marks, found in the Unicode database once,
    as ranges (a class of single characters is matched many times slower)."""
    ranges: list[str] = []
    start = last = -2
    for code in (c for plane in _MARK_PLANES for c in plane):
        if unicodedata.category(chr(code))[0] != "M":
            continue
        if code != last + 1:
            if start >= 0:
                ranges.append(f"\\U{start:08x}-\\U{last:08x}")
            start = code
        last = code
    ranges.append(f"\\U{start:08x}-\\U{last:08x}")
    return re.compile(f"(?:[^\\W_]|[{''.join(ranges)}])+")


_ASCII_WORD = re.compile(r"[^\W_]+")
"""A word of ASCII text, which holds no mark."""


def _words(text: str) -> list[str]:
    return (_ASCII_WORD if text.isascii() else _word_pattern()).findall(text)


_ACCENTS = dict.fromkeys(range(0x300, 0x370))
"""The combining diacritical marks of Latin, Greek and Cyrillic, which folding removes."""


def fold(word: str) -> str:
    """``word`` as the rules compare it: case folded, Latin-script accents removed.

    Examples:
        >>> fold("Straße"), fold("ÉCOLE"), fold("Ελλάδα")
        ('strasse', 'ecole', 'ελλαδα')
    """
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFD", word.casefold())
    return unicodedata.normalize("NFC", decomposed.translate(_ACCENTS))


def _folded_words(text: str) -> list[str]:
    """The words of ``text``, folded: the text folded whole, then cut (the same words as
    cutting first, since folding never makes or removes a separator; many times faster)."""
    return _words(fold(text))


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Each word of ``text``: its start, its end and its folded form."""
    return [(m.start(), m.end(), fold(m.group())) for m in _word_pattern().finditer(text)]


def words_of(text: str) -> list[str]:
    """The words of ``text``, as written.

    Examples:
        >>> words_of('a "NEAR(x, y)" -b* @c:d\\\\e')
        ['a', 'NEAR', 'x', 'y', 'b', 'c', 'd', 'e']
    """
    return _words(text)


@dataclass(frozen=True)
class Term:
    """One part of a query: a word, a phrase (``"..."``), or the last word as a prefix."""

    words: tuple[str, ...]
    """The words, folded (:func:`fold`)."""
    raw: tuple[str, ...]
    """The same words as the query wrote them: what an engine's query is built from."""
    prefix: bool = False
    """The word matches any word that starts with it."""

    @property
    def phrase(self) -> bool:
        """Whether the term is several words that must follow each other."""
        return len(self.words) > 1


@dataclass(frozen=True)
class SearchQuery:
    """A parsed query: every term must match (:func:`parse_query`)."""

    text: str
    """The query as given."""
    terms: tuple[Term, ...]


def parse_query(query: object) -> SearchQuery:
    """Parse a search query into its terms.

    Raises:
        TypeError: ``query`` is not a ``str``.
        ValueError: it holds no word, is longer than :data:`MAX_QUERY_LENGTH` characters
            or holds more than :data:`MAX_QUERY_WORDS` words.

    Examples:
        >>> [t.raw for t in parse_query('say "hello world').terms]
        [('say',), ('hello',), ('world',)]
        >>> parse_query(' "*" AND ')  # doctest: +ELLIPSIS
        SearchQuery(text=' "*" AND ', terms=(Term(words=('and',), raw=('AND',), prefix=True),))
        >>> parse_query("  ")
        Traceback (most recent call last):
        ...
        ValueError: the search query holds no word
    """
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, not {type(query).__name__}")
    if len(query) > MAX_QUERY_LENGTH:
        raise ValueError(f"the search query is longer than {MAX_QUERY_LENGTH} characters")
    parts = query.split('"')
    if len(parts) % 2 == 0:  # an unbalanced quote: the text after it is plain words
        parts[-2:] = [parts[-2] + " " + parts[-1]]
    terms: list[Term] = []
    last_bare = False
    for index, part in enumerate(parts):
        raw = words_of(part)
        if not raw:
            continue
        if index % 2:
            terms.append(Term(tuple(fold(w) for w in raw), tuple(raw)))
            last_bare = False
        else:
            terms.extend(Term((fold(w),), (w,)) for w in raw)
            last_bare = True
    if not terms:
        raise ValueError("the search query holds no word")
    if sum(len(term.words) for term in terms) > MAX_QUERY_WORDS:
        raise ValueError(f"the search query holds more than {MAX_QUERY_WORDS} words")
    if last_bare:
        terms[-1] = Term(terms[-1].words, terms[-1].raw, prefix=True)
    unique = tuple(dict.fromkeys(terms))
    return SearchQuery(query, unique)


def visible_text_of(role: str, texts: Iterable[str | None]) -> str | None:
    """The visible text of a message of ``role`` whose text blocks hold ``texts``, at most
    :data:`MAX_SEARCH_TEXT` characters of it: ``None`` for instructions (system,
    developer) and for a message showing nothing.

    NUL becomes a space (PostgreSQL text cannot hold it; it separates words anyway).

    Examples:
        >>> visible_text_of("user", ["Hello", "world"])
        'Hello\\nworld'
        >>> visible_text_of("system", ["Be brief"]), visible_text_of("user", [" "])
        (None, None)
    """
    if role in HIDDEN_ROLES:
        return None
    joined = "\n".join(text for text in texts if text)
    if not joined.strip():
        return None
    return joined[:MAX_SEARCH_TEXT].replace("\x00", " ")


def visible_text(message: Message) -> str | None:
    """What search sees of ``message``: its text blocks (a tool result's too), never
    thinking, tool calls, opaque items, images or documents; ``None`` when nothing.

    Examples:
        >>> visible_text(Message.user("Where is my parcel?"))
        'Where is my parcel?'
    """
    texts = (block.text for block in message.content if type(block) is TextBlock)
    return visible_text_of(message.role.value, texts)


def _phrase_at(words: list[str], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    first = phrase[0]
    return any(
        words[i] == first and tuple(words[i : i + size]) == phrase
        for i in range(len(words) - size + 1)
    )


def _term_matches(term: Term, words: list[str], present: set[str]) -> bool:
    if term.phrase:
        return _phrase_at(words, term.words)
    word = term.words[0]
    if term.prefix:
        return any(candidate.startswith(word) for candidate in present)
    return word in present


def matches(query: SearchQuery, text: str | None) -> bool:
    """Whether ``text`` holds every term of ``query`` (folded as :func:`fold` folds)."""
    if not text:
        return False
    words = _folded_words(text)
    present = set(words)
    return all(_term_matches(term, words, present) for term in query.terms)


def _marked(query: SearchQuery, word: str) -> bool:
    for term in query.terms:
        if term.prefix and word.startswith(term.words[0]):
            return True
        if word in term.words:
            return True
    return False


def score_of(query: SearchQuery, text: str) -> float:
    """The in-memory storage's rank: the share of the text's words that match, so a
    short message about the words ranks above a long one mentioning them once."""
    words = _folded_words(text)
    hits = sum(1 for word in words if _marked(query, word))
    return round(hits / (len(words) + 1), 9)


def check_markers(markers: object) -> tuple[str, str]:
    """``markers`` if it is a pair of strings, else raise ``TypeError``."""
    if (
        not isinstance(markers, tuple)
        or len(markers) != 2
        or not all(isinstance(m, str) for m in markers)
    ):
        raise TypeError("markers must be a pair of str, such as ('**', '**')")
    return markers[0], markers[1]


def snippet(query: SearchQuery, text: str, markers: tuple[str, str] = DEFAULT_MARKERS) -> str:
    """At most :data:`SNIPPET_LENGTH` characters of ``text`` around its first match,
    whitespace collapsed, each matched word between ``markers``; ``…`` where cut.

    Examples:
        >>> snippet(parse_query("fox"), "The quick brown fox", ("[", "]"))
        'The quick brown [fox]'
    """
    flat = " ".join(text.split())
    spans = [(s, e) for s, e, word in _spans(flat) if _marked(query, word)]
    start, end = 0, len(flat)
    if end > SNIPPET_LENGTH:
        first = spans[0][0] if spans else 0
        start = max(0, min(first - SNIPPET_LENGTH // 4, end - SNIPPET_LENGTH))
        end = start + SNIPPET_LENGTH
    head = _ELLIPSIS if start > 0 else ""
    tail = _ELLIPSIS if end < len(flat) else ""
    inner_start, inner_end = start + len(head), end - len(tail)
    pieces = [head]
    at = inner_start
    for s, e in spans:
        if s < inner_start or e > inner_end:
            continue
        pieces += [flat[at:s], markers[0], flat[s:e], markers[1]]
        at = e
    pieces += [flat[at:inner_end], tail]
    return "".join(pieces)
