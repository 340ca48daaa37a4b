"""Full-text search on every storage (docs/search.md).

One corpus in several languages and scripts is searched on every storage with the same
expected hits where the engines agree, and each backend's documented difference where
they do not (accent folding). Hostile queries raise ``ValueError`` or find only messages
holding their words; a hypothesis property checks that the hits are exactly the messages
the rules match; what a write stores is found at once, what a deleting write removes is
gone at once; forks are searchable; owned views never show another owner's message;
pages walked while writes go on never repeat a hit nor show a later message.
"""

# ruff: noqa: RUF001 - a corpus in Greek and Cyrillic, whose letters look Latin
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import (
    FixedWindow,
    ImageBlock,
    InvalidSessionIdError,
    Message,
    OpaqueBlock,
    SearchHit,
    SearchPage,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.storage.search_rules import matches, parse_query, visible_text
from sqlmemory.storage.sql import search_queries
from tests.support.cases import image_bytes
from tests.support.storages import Subject

CORPUS = {
    "en": "The quick brown fox jumps over the lazy dog",
    "de": "Die Bäckerei in MÜNCHEN öffnet um sieben Uhr, sagt Jürgen",
    "fr": "Le garçon a mangé une crème brûlée à l'hôtel",
    "ru": "Москва — столица России, большой город",
    "el": "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας",
    "ja": "東京 タワー は 高い",
    "zh": "北京 欢迎 你",
    "emoji": "Pizza 🍕 party tonight 🎉",
}
AGREED = {
    "fox": {"en"},
    "FOX dog": {"en"},
    '"brown fox"': {"en"},
    '"fox brown"': set(),
    "qui": {"en"},
    "München": {"de"},
    "münchen": {"de"},
    "bäckerei": {"de"},
    "sieben uhr": {"de"},
    "Москва": {"ru"},
    "москва": {"ru"},
    "гор": {"ru"},
    "Αθήνα": {"el"},
    "ΑΘΉΝΑ": {"el"},
    "東京": {"ja"},
    "東": {"ja"},
    "北京": {"zh"},
    "crème": {"fr"},
    "l'hôtel": {"fr"},
    "pizza tonight": {"emoji"},
    "l": {"en", "fr"},
    "baeckerei": set(),
}
"""Queries every engine answers alike (``l`` is the prefix of ``lazy`` and ``le``)."""
FOLDED = {"munchen": {"de"}, "jurgen": {"de"}, "creme": {"fr"}, "garcon": {"fr"}}
"""Latin accents left out of the query: folded by SQLite's ``remove_diacritics``, InnoDB's
``utf8mb4_unicode_ci`` and the rules, not by PostgreSQL's ``simple`` configuration."""
GREEK_UNACCENTED = {"αθηνα": {"el"}}
"""Greek without its tonos: folded by InnoDB's collation and the rules only."""
NO_ACCENT_FOLDING = ("postgresql",)
NO_GREEK_FOLDING = ("postgresql", "sqlite")

HOSTILE = [
    '"unbalanced',
    'fox"',
    '"',
    "*",
    "fox*",
    "NEAR(fox dog)",
    "fox AND OR NOT dog",
    "-fox",
    "+fox -dog",
    "@fox",
    "fox:*",
    "col:fox",
    "fox\\",
    "\\\\",
    "fox\x00dog",
    "\x00",
    "fox | dog & !cat",
    "fox <-> dog",
    "'fox'",
    "(fox",
    "~fox >dog <cat",
    "%",
    "_",
    "fox%",
    "x" * 10_000,
    "fox " * 2500,
    "ab",
    "a b",
]


def backend_of(subject: Subject) -> str:
    return subject.name.split("-")[0]


def hit_ids(page: SearchPage) -> set[str]:
    return {hit.message_id for hit in page.hits}


def load_corpus(storage: Any, sid: str = "corpus") -> None:
    storage.append(sid, *[Message.user(text, id=key) for key, text in CORPUS.items()])


def test_the_corpus_is_found_alike_where_the_engines_agree(subject: Subject) -> None:
    storage = subject.storage
    load_corpus(storage)
    found = {query: hit_ids(storage.search(query)) for query in AGREED}
    assert found == AGREED


def test_accents_fold_as_each_backend_documents(subject: Subject) -> None:
    storage = subject.storage
    load_corpus(storage)
    backend = backend_of(subject)
    for query, expected in FOLDED.items():
        assert hit_ids(storage.search(query)) == (
            set() if backend in NO_ACCENT_FOLDING else expected
        ), query
    for query, expected in GREEK_UNACCENTED.items():
        assert hit_ids(storage.search(query)) == (
            set() if backend in NO_GREEK_FOLDING else expected
        ), query


def test_a_hit_says_where_it_is_with_a_marked_snippet(storage: Any) -> None:
    storage.append("s", Message.user("hello"), Message.assistant("The Bäckerei in München"))
    message = storage.load("s")[1]
    page = storage.search("münchen", markers=("<b>", "</b>"))
    assert page.next_cursor is None
    [hit] = page.hits
    assert isinstance(hit, SearchHit)
    assert (hit.session_id, hit.message_id, hit.role.value) == ("s", message.id, "assistant")
    assert hit.recorded_at == message.recorded_at
    assert hit.snippet == "The Bäckerei in <b>München</b>"
    assert isinstance(hit.score, float)
    long_text = "filler " * 100 + "needle in the haystack " + "tail " * 100
    storage.append("long", Message.user(long_text))
    [hit] = storage.search("needle").hits
    assert "**needle**" in hit.snippet
    assert len(hit.snippet.replace("**", "")) <= 200
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")


def test_only_visible_text_is_searched(storage: Any) -> None:
    png = image_bytes(8, 8)
    storage.append(
        "s",
        Message.system("secret zebra instructions", id="system"),
        Message.developer("developer zebra rules", id="developer"),
        Message.user([TextBlock("look at this photo"), ImageBlock(png, "image/png")], id="photo"),
        Message.assistant(
            [ThinkingBlock("hidden xylophone thought"), TextBlock("visible answer")],
            tool_calls=[ToolCall("call-1", "weather", {"city": "walrus"})],
            id="calls",
        ),
        Message.tool("call-1", "forecast sunny", id="result"),
        Message.assistant([OpaqueBlock("openai", {"narwhal": "narwhal"})], id="opaque"),
    )
    for hidden in ("zebra", "xylophone", "walrus", "narwhal", "weather", "png"):
        assert storage.search(hidden).hits == [], hidden
    assert hit_ids(storage.search("photo")) == {"photo"}
    assert hit_ids(storage.search("visible answer")) == {"calls"}
    assert hit_ids(storage.search("forecast")) == {"result"}


def test_a_huge_message_is_stored_and_searched_in_its_first_100000_characters(
    storage: Any,
) -> None:
    words = [f"w{i}x{i * 7919 % 100_003}" for i in range(60_000)]  # 1.1 MB of distinct words
    storage.append("big", Message.tool("call", " ".join(words), id="big"))
    assert storage.load("big")[0].text_content() == " ".join(words)
    assert hit_ids(storage.search(words[10])) == {"big"}
    assert storage.search(words[-10]).hits == []  # past the first 100,000 characters


def test_hostile_queries_raise_value_error_or_find_only_their_words(storage: Any) -> None:
    storage.append(
        "s",
        *[Message.user(text, id=key) for key, text in CORPUS.items()],
        Message.user("fox and dog: a fox\\dog (cat) 100% ab_cd", id="symbols"),
    )
    texts = {m.id: visible_text(m) for m in storage.load("s")}
    answered = 0
    for query in HOSTILE:
        try:
            parsed = parse_query(query)
        except ValueError:
            with pytest.raises(ValueError):
                storage.search(query)
            continue
        hits = storage.search(query).hits
        assert all(matches(parsed, texts[hit.message_id]) for hit in hits), query
        answered += bool(hits)
    assert answered >= 10  # most of them are words, found as words


def test_blank_and_bad_arguments_raise(storage: Any) -> None:
    storage.append("s", Message.user("fox"))
    for blank in ("", "   ", '""', "🍕 🎉", "--- ***"):
        with pytest.raises(ValueError, match="no word"):
            storage.search(blank)
    with pytest.raises(TypeError):
        storage.search(None)
    for limit in (0, 1001, -1):
        with pytest.raises(ValueError):
            storage.search("fox", limit=limit)
    with pytest.raises(TypeError):
        storage.search("fox", limit=True)
    with pytest.raises(InvalidSessionIdError):
        storage.search("fox", session_id="")
    for cursor in ("nonsense", "e30", "eyJrIjpbXX0"):
        with pytest.raises(ValueError, match="cursor"):
            storage.search("fox", cursor=cursor)
    with pytest.raises(TypeError):
        storage.search("fox", markers="**")


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(["alpha", "bravo", "charlie", "delta", "echo", "ab"]), max_size=6),
        min_size=1,
        max_size=8,
    ),
    query=st.lists(
        st.sampled_from(["alpha", "bravo", "cha", "delta", "ec", "a", '"alpha bravo"', "ab"]),
        min_size=1,
        max_size=3,
    ),
)
def test_hits_are_exactly_the_messages_the_rules_match(
    storage: Any, texts: list[list[str]], query: list[str]
) -> None:
    storage.clear("p")
    messages = [Message.user(" ".join(words) or "-", id=f"m{i}") for i, words in enumerate(texts)]
    storage.append("p", *messages)
    text = " ".join(query)
    parsed = parse_query(text)
    expected = {m.id for m in messages if matches(parsed, visible_text(m))}
    assert hit_ids(storage.search(text, limit=100)) == expected


def test_a_write_is_found_at_once_and_a_deleting_write_removes_at_once(storage: Any) -> None:
    storage.append("s", *[Message.user(f"word{i} common", id=f"m{i}") for i in range(6)])
    assert len(storage.search("common").hits) == 6
    assert storage.evict("s", 4) == 2
    assert storage.search("word0").hits == storage.search("word1").hits == []
    popped = storage.pop("s")
    assert popped is not None and popped.id == "m5"
    assert storage.search("word5").hits == []
    storage.save("s", [*storage.load("s")[:1], Message.user("replacement text", id="r")])
    assert hit_ids(storage.search("common")) == {"m2"}
    assert hit_ids(storage.search("replacement")) == {"r"}

    def summarize(older: list[Message]) -> Message:
        return Message.user("summary of things", id="summary")

    assert storage.compact("s", summarize, keep=FixedWindow(1)) == 1
    assert storage.search("common").hits == []
    assert hit_ids(storage.search("summary")) == {"summary"}
    assert storage.clear("s") == 2
    assert storage.search("replacement").hits == storage.search("summary").hits == []

    storage.owned_by("alice").append("old", Message.user("pruned words"))
    assert storage.prune(timedelta(0)) == 1
    assert storage.search("pruned").hits == []
    storage.owned_by("alice").append("a", Message.user("erased words"))
    assert storage.erase_owner("alice") == 1
    assert storage.search("erased").hits == []


def test_forks_are_searchable_as_copies(storage: Any) -> None:
    storage.append("s", Message.user("first umbrella"), Message.user("second umbrella"))
    first = storage.load("s")[0]
    storage.fork("s", "whole")
    storage.fork("s", "part", at=first.id)
    assert {(h.session_id, h.message_id) for h in storage.search("umbrella").hits} == {
        (sid, m.id) for sid in ("s", "whole") for m in storage.load("s")
    } | {("part", first.id)}
    assert hit_ids(storage.search("second", session_id="part")) == set()
    storage.clear("s")
    assert {h.session_id for h in storage.search("umbrella").hits} == {"whole", "part"}


@pytest.mark.parametrize("scan_limit", [20_000, 0], ids=["scanned", "indexed"])
def test_owners_and_sessions_filter_and_owned_views_see_only_their_own(
    storage: Any, scan_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite and MySQL read a small owner's messages; with no limit, through the index.
    monkeypatch.setattr(search_queries, "SCAN_LIMIT", scan_limit)
    alice, bob = storage.owned_by("alice"), storage.owned_by("bob")
    alice.append("a1", Message.user("shared secret one", id="a1"))
    alice.append("a2", Message.user("shared secret two", id="a2"))
    bob.append("b1", Message.user("shared secret three", id="b1"))
    storage.append("nobody", Message.user("shared secret four", id="n1"))
    assert hit_ids(storage.search("shared")) == {"a1", "a2", "b1", "n1"}
    assert hit_ids(storage.search("shared", owner="bob")) == {"b1"}
    assert hit_ids(storage.search("shared", session_id="a2")) == {"a2"}
    assert hit_ids(alice.search("shared")) == {"a1", "a2"}
    assert hit_ids(alice.search("shared", owner="alice")) == {"a1", "a2"}
    assert alice.search("shared", owner="bob").hits == []
    assert alice.search("shared", session_id="b1").hits == []
    assert alice.search("shared", session_id="nobody").hits == []
    assert hit_ids(bob.search("secret")) == {"b1"}


@pytest.mark.parametrize("scope", [{}, {"session_id": "s"}], ids=["everything", "one session"])
def test_pages_walk_every_hit_once_while_writes_go_on(storage: Any, scope: dict[str, str]) -> None:
    words = ["ping " * (1 + i % 4) + f"filler{i} " * (i % 3) for i in range(23)]
    storage.append("s", *[Message.user(text, id=f"m{i:02}") for i, text in enumerate(words)])
    seen: list[str] = []
    page = storage.search("ping", limit=5, **scope)
    pages = 1
    while True:
        seen += [hit.message_id for hit in page.hits]
        assert [hit.score for hit in page.hits] == sorted(
            (hit.score for hit in page.hits), reverse=True
        )
        if page.next_cursor is None:
            break
        storage.append("s", Message.user(f"ping later {pages}", id=f"later{pages}"))
        storage.append("other", Message.user("ping ping elsewhere"))
        storage.pop("other")
        page = storage.search("ping", limit=5, cursor=page.next_cursor, **scope)
        pages += 1
    assert len(seen) == len(set(seen))
    assert set(seen) == {f"m{i:02}" for i in range(23)}
    assert pages == 5
    fresh = hit_ids(storage.search("ping", limit=100, **scope))
    assert {f"later{n}" for n in range(1, 5)} <= fresh
    with pytest.raises(ValueError, match="cursor"):
        storage.search("pong", cursor=storage.search("ping", limit=1).next_cursor)
