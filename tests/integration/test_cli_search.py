"""Search on the command line, on every backend (docs/cli.md, docs/search.md): ``sqlmemory
search`` prints the matching messages best first with their marked snippets, filtered by
owner and session, a page at a time; a query without a word is a usage error."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from sqlmemory import Message, SqlStorage, migrate
from sqlmemory.storage.sql.search_index import search_config
from tests.integration.test_cli import invoke, ok


@pytest.fixture
def talks(engine: sa.Engine) -> SqlStorage:
    """Clean tables: two sessions of alice's and one of bob's, all about trains."""
    storage = SqlStorage(engine)
    alice = storage.owned_by("alice")
    alice.append("a/1", Message.user("Book a train to Zürich"), Message.assistant("Done."))
    alice.append("a/2", Message.user("Is the train\non time?"), Message.system("train rules"))
    storage.owned_by("bob").append("b/1", Message.user("Trains are late again"))
    return storage


def rows(stdout: str) -> list[list[str]]:
    lines = stdout.splitlines()
    assert lines[1].split() == ["session", "recorded", "at", "role", "snippet"]
    return [line.split(maxsplit=4) for line in lines[2:] if not line.startswith("next page")]


def test_search_prints_the_hits_with_marked_snippets(db_url: str, talks: SqlStorage) -> None:
    result = ok("search", "train", "--url", db_url)
    assert result.stdout.splitlines()[0] == "3 hits"
    found = rows(result.stdout)
    assert {row[0] for row in found} == {"a/1", "a/2", "b/1"}
    snippets = {row[0]: row[4] for row in found}
    assert snippets["a/1"] == "Book a **train** to Zürich"
    assert snippets["a/2"] == "Is the **train** on time?"
    assert snippets["b/1"] == "**Trains** are late again"


def test_search_filters_by_owner_and_session(db_url: str, talks: SqlStorage) -> None:
    result = ok("search", '"train to"', "--owner", "alice", "--url", db_url)
    assert [row[0] for row in rows(result.stdout)] == ["a/1"]
    result = ok("search", "train", "--session", "a/2", "--url", db_url)
    assert [row[0] for row in rows(result.stdout)] == ["a/2"]
    assert ok("search", "train", "--owner", "carol", "--url", db_url).stdout == "0 hits\n"


def test_search_pages_with_the_printed_cursor(db_url: str, talks: SqlStorage) -> None:
    first = ok("search", "train", "--limit", "2", "--url", db_url)
    assert first.stdout.splitlines()[0] == "2 hits (more with --cursor below)"
    cursor = first.stdout.splitlines()[-1].removeprefix("next page: --cursor ")
    rest = ok("search", "train", "--limit", "2", "--cursor", cursor, "--url", db_url)
    assert rest.stdout.splitlines()[0] == "1 hit"
    seen = [row[0] for row in rows(first.stdout) + rows(rest.stdout)]
    assert sorted(seen) == ["a/1", "a/2", "b/1"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["   "], "no word"),
        (["🍕"], "no word"),
        (["train", "--limit", "0"], "--limit"),
        (["train", "--cursor", "nonsense"], "cursor"),
        (["train", "--session", ""], "--session"),
        (["train", "--owner", ""], "--owner"),
    ],
    ids=["blank", "emoji", "limit", "cursor", "session", "owner"],
)
def test_bad_arguments_are_usage_errors(
    db_url: str, talks: SqlStorage, args: list[str], message: str
) -> None:
    result = invoke("search", *args, "--url", db_url)
    assert result.exit_code == 2
    assert message in result.stderr


def test_migrate_chooses_the_search_configuration(db_url: str, db: sa.Engine) -> None:
    SqlStorage(db).append("s", Message.user("She trains every day"))
    bad = invoke("migrate", "--search-config", "x'; DROP TABLE y", "--url", db_url)
    assert bad.exit_code == 2 and "--search-config" in bad.stderr
    migrate.downgrade(db, "0007")
    ok("migrate", "--search-config", "english", "--url", db_url)
    postgres = db.dialect.name == "postgresql"
    if postgres:
        with db.connect() as conn:
            assert search_config(conn) == "english"
    hits = ok("search", "trained", "--url", db_url).stdout.splitlines()[0]
    assert hits == ("1 hit" if postgres else "0 hits")  # english stems both to "train"
    migrate.downgrade(db, "0007")
    migrate.upgrade(db)
