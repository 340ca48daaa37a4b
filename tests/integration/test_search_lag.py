"""A write is found by the next search, and SQLite's index, kept by the searches
(revision 0009, ``storage/sql/search_lag.py``), stays exactly the stored rows.

On SQLite a write no longer indexes its rows: the first search that reads the index
brings it up to date in its own write transaction. A stateful model writes, deletes,
forks and searches at random; after every step a catch-up (rolled back) must leave an
index that FTS5's own ``integrity-check`` finds equal to the message rows, and every
search finds exactly the stored messages the rules match. Examples pin the ``rowid``
taken again after a pop, an edited ``search_text`` and the migration both ways; real
processes append while another searches, on every backend.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from sqlmemory import Message, SqlStorage, migrate
from sqlmemory.storage.search_rules import matches, parse_query, visible_text
from sqlmemory.storage.sql.search_lag import CATCH_UP
from tests.support.processes import running
from tests.support.writers import BATCH_SIZE, WRITER_BATCHES, process_writer, writer_batch

SESSIONS = ("a", "b", "c")
WORDS = ("alpha", "bravo", "charlie", "delta")
TIMEOUT = 180
WORD = "batch"
"""A word of every message the writers append (``writer_batch``)."""


def index_state(path: Path) -> tuple[int, int]:
    """``indexed_upto`` and the largest message ``rowid`` (0 when none)."""
    with sqlite3.connect(path) as conn:
        upto = conn.execute("SELECT indexed_upto FROM sqlmemory_search_state").fetchone()[0]
        top = conn.execute("SELECT coalesce(max(rowid), 0) FROM sqlmemory_messages").fetchone()
    return int(upto), int(top[0])


def check_index(path: Path, *, catch_up: bool = True) -> None:
    """FTS5's ``integrity-check`` against the message rows (it fails on any row missing
    from the index, or indexed with another text), after a catch-up that is rolled back."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        if catch_up:
            for statement in CATCH_UP:
                conn.execute(str(statement))
        conn.execute(
            "INSERT INTO sqlmemory_search(sqlmemory_search, rank) VALUES ('integrity-check', 1)"
        )
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def sqlite_storage(path: Path) -> SqlStorage:
    engine = sa.create_engine(f"sqlite:///{path}")
    migrate.upgrade(engine)
    return SqlStorage(engine)


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


class SearchIndexModel(RuleBasedStateMachine):
    """Writes and searches at random on SQLite, against the stored messages themselves."""

    @initialize(path=st.uuids())
    def start(self, path: object) -> None:
        self.path = Path(f"/tmp/sqlmemory-lag-{path}.db")
        self.storage = sqlite_storage(self.path)
        self.forks = 0

    def teardown(self) -> None:
        if hasattr(self, "storage"):
            self.storage.engine.dispose()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def stored(self) -> list[Message]:
        return [m for sid in self.storage.sessions() for m in self.storage.load(sid)]

    @rule(sid=st.sampled_from(SESSIONS), batch=st.lists(texts, min_size=1, max_size=3))
    def append(self, sid: str, batch: list[str]) -> None:
        self.storage.append(sid, *[Message.user(text) for text in batch])

    @rule(sid=st.sampled_from(SESSIONS))
    def pop(self, sid: str) -> None:
        self.storage.pop(sid)

    @rule(sid=st.sampled_from(SESSIONS), keep=st.integers(0, 3))
    def evict(self, sid: str, keep: int) -> None:
        self.storage.evict(sid, keep)

    @rule(sid=st.sampled_from(SESSIONS), keep=st.integers(0, 3), text=texts)
    def save(self, sid: str, keep: int, text: str) -> None:
        self.storage.save(sid, [*self.storage.load(sid)[:keep], Message.user(text)])

    @rule(sid=st.sampled_from(SESSIONS))
    def clear(self, sid: str) -> None:
        self.storage.clear(sid)

    @rule(sid=st.sampled_from(SESSIONS))
    def fork(self, sid: str) -> None:
        if self.storage.count(sid):
            self.forks += 1
            self.storage.fork(sid, f"fork{self.forks}")

    @rule(text=texts)
    def erase_an_owner(self, text: str) -> None:
        self.storage.owned_by("owner").append("owned", Message.user(text))
        self.storage.erase_owner("owner")

    @rule(query=st.sampled_from([*WORDS, "alpha bravo", "del"]))
    def search(self, query: str) -> None:
        parsed = parse_query(query)
        expected = {m.id for m in self.stored() if matches(parsed, visible_text(m))}
        assert {h.message_id for h in self.storage.search(query, limit=1000).hits} == expected
        upto, top = index_state(self.path)
        assert upto == top  # the search brought the index up to date
        check_index(self.path, catch_up=False)

    @invariant()
    def the_index_is_the_rows_once_caught_up(self) -> None:
        if hasattr(self, "storage"):
            upto, top = index_state(self.path)
            assert upto <= top  # a rowid taken again is above it: not counted as indexed
            check_index(self.path)


TestSearchIndexModel = SearchIndexModel.TestCase
TestSearchIndexModel.settings = settings(
    max_examples=25,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_a_rowid_freed_at_the_top_and_taken_again_is_indexed_by_the_next_search(
    tmp_path: Path,
) -> None:
    path = tmp_path / "reuse.db"
    storage = sqlite_storage(path)
    storage.append("s", *[Message.user(f"common word{i}", id=f"m{i}") for i in range(4)])
    assert len(storage.search("common").hits) == 4
    assert index_state(path) == (4, 4)
    storage.pop("s")
    storage.pop("s")
    assert index_state(path) == (2, 2)
    storage.append("s", Message.user("fresh zebra", id="n2"), Message.user("common", id="n3"))
    assert index_state(path) == (2, 4)  # rowids 3 and 4 again, not indexed
    assert [h.message_id for h in storage.search("zebra").hits] == ["n2"]
    assert {h.message_id for h in storage.search("common").hits} == {"m0", "m1", "n3"}
    assert storage.search("word3").hits == []
    check_index(path, catch_up=False)


def test_an_edited_search_text_is_indexed_again_whether_indexed_yet_or_not(
    tmp_path: Path,
) -> None:
    path = tmp_path / "edit.db"
    storage = sqlite_storage(path)
    storage.append("s", Message.user("old words", id="indexed"))
    assert len(storage.search("old").hits) == 1
    storage.append("s", Message.user("old words", id="waiting"))
    with storage.engine.begin() as conn:
        conn.execute(sa.text("UPDATE sqlmemory_messages SET search_text = 'new text'"))
    check_index(path)
    assert {h.message_id for h in storage.search("new").hits} == {"indexed", "waiting"}
    assert storage.search("old").hits == []


def test_the_migration_keeps_every_message_found_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "migrate.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    migrate.upgrade(engine, "0008")
    with engine.begin() as conn:  # a row 0008's trigger indexes as it is written
        conn.execute(
            sa.text(
                "INSERT INTO sqlmemory_sessions (session_id, next_seq, created_at, updated_at, "
                "message_count) VALUES ('s', 1, '2026-01-01', '2026-01-01', 1)"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO sqlmemory_messages (session_id, seq, message_id, role, n_blocks, "
                "recorded_at, digest, tokens, search_text) VALUES ('s', 0, 'before', 'user', 0, "
                "'2026-01-01', 'd', 1, 'written under zero zero zero eight')"
            )
        )
    migrate.upgrade(engine)
    assert index_state(path) == (1, 1)
    check_index(path, catch_up=False)
    storage = SqlStorage(engine)
    storage.append("s", Message.user("written under nine", id="after"))
    assert index_state(path) == (1, 2)
    migrate.downgrade(engine, "0008")  # indexes what waits, then 0008's triggers again
    check_index(path, catch_up=False)
    with sqlite3.connect(path) as conn:
        found = conn.execute(
            "SELECT m.message_id FROM sqlmemory_search JOIN sqlmemory_messages AS m "
            "ON m.rowid = sqlmemory_search.rowid WHERE sqlmemory_search MATCH 'written' "
            "ORDER BY m.message_id"
        ).fetchall()
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert found == [("after",), ("before",)]
    assert "sqlmemory_search_state" not in tables and "sqlmemory_search_insert" in tables
    migrate.upgrade(engine)
    assert index_state(path) == (2, 2)
    assert {h.message_id for h in storage.search("written").hits} == {"before", "after"}
    engine.dispose()


def test_a_search_racing_appends_finds_every_message_committed_before_it(
    engine: sa.Engine, db_url: str
) -> None:
    storage = SqlStorage(engine)
    writers = ["w0", "w1"]
    context = multiprocessing.get_context("spawn")
    ready, done, go = context.Queue(), context.Queue(), context.Event()
    processes = [
        context.Process(target=process_writer, args=(db_url, w, w, ready, go, done), daemon=True)
        for w in writers
    ]

    def stored() -> set[str]:
        return {m.id for w in writers for m in storage.load(w)}

    searches = 0
    with running(processes, TIMEOUT):
        for _ in processes:
            report = ready.get(timeout=TIMEOUT)
            assert report[0] == "ready", report
        go.set()
        finished = 0
        while finished < len(processes):
            before = stored()
            found = {h.message_id for h in storage.search(WORD, limit=1000).hits}
            assert before <= found <= stored()
            searches += 1
            while not done.empty():
                report = done.get()
                assert report[0] == "done", report
                finished += 1
    assert [p.exitcode for p in processes] == [0] * len(processes)
    assert searches > 1
    everything = {m.id for w in writers for b in range(WRITER_BATCHES) for m in writer_batch(w, b)}
    assert len(everything) == len(writers) * WRITER_BATCHES * BATCH_SIZE
    assert {h.message_id for h in storage.search(WORD, limit=1000).hits} == everything
    if engine.dialect.name == "sqlite":
        check_index(Path(str(engine.url.database)), catch_up=False)
