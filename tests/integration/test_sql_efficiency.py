"""What the SQL storages send to the database: windows read the tail, saves write the change.

Speed itself is measured by ``bench/bench.py``; these tests pin the *shape* of the work
(statements, rows, bytes), which is what keeps the cost flat as histories grow.
"""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from sqlmemory import FixedWindow, ImageBlock, Message, NoOp, SqlStorage, TokenWindow, ToolCall
from sqlmemory.policy import RecentWindow
from sqlmemory.storage.sql.reads import MESSAGES

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@dataclass
class Recorder:
    """Statements executed on an engine: the SQL text, its parameters, how many rows."""

    statements: list[tuple[str, Any]] = field(default_factory=list)
    rows_per_insert: list[tuple[str, int]] = field(default_factory=list)
    autocommit: list[bool] = field(default_factory=list)
    """PostgreSQL and SQLite: whether each data statement ran outside a transaction."""

    def data_statements(self) -> list[str]:
        """Statements other than transaction control and SQLite's per-connection PRAGMAs."""
        return [
            sql
            for sql, _ in self.statements
            if not sql.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA"))
        ]

    def shape(self) -> list[str]:
        """Each data statement as its verb and the table it reads or writes first."""
        shapes = []
        for sql in self.data_statements():
            verb = sql.lstrip("( ").split()[0].upper()
            table = re.search(r"\b(?:FROM|INTO|UPDATE)\s+(\w+)", sql)
            shapes.append(f"{verb} {table.group(1) if table else '?'}")
        return shapes

    def inserted(self, table: str) -> int:
        return sum(n for name, n in self.rows_per_insert if name == table)

    def touching(self, table: str, verb: str) -> list[tuple[str, Any]]:
        return [
            (sql, params)
            for sql, params in self.statements
            if sql.lstrip("( \n").upper().startswith(verb) and table in sql
        ]


@contextmanager
def recording(engine: sa.Engine) -> Iterator[Recorder]:
    recorder = Recorder()

    def on_cursor(conn: Any, cursor: Any, statement: str, params: Any, ctx: Any, many: Any) -> None:
        recorder.statements.append((statement, params))
        if not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA")):
            dbapi = conn.connection.dbapi_connection
            if conn.dialect.name == "postgresql":
                recorder.autocommit.append(dbapi.autocommit)
            elif conn.dialect.name == "sqlite":
                recorder.autocommit.append(not conn.connection.driver_connection.in_transaction)

    def on_execute(
        conn: Any, clause: Any, multiparams: Any, params: Any, options: Any, result: Any
    ) -> None:
        if isinstance(clause, sa.Insert):
            rows = len(multiparams) if isinstance(multiparams, list) and multiparams else 1
            recorder.rows_per_insert.append((clause.table.name, rows))  # type: ignore[attr-defined]

    sa.event.listen(engine, "before_cursor_execute", on_cursor)
    sa.event.listen(engine, "after_execute", on_execute)
    try:
        yield recorder
    finally:
        sa.event.remove(engine, "before_cursor_execute", on_cursor)
        sa.event.remove(engine, "after_execute", on_execute)


def _png(seed: int) -> bytes:
    rng = random.Random(seed)
    image = Image.new("RGB", (40, 30), tuple(rng.randrange(256) for _ in range(3)))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _param_count(params: Any) -> int:
    if isinstance(params, Mapping):
        return len(params)
    if isinstance(params, Sequence):
        return len(params)
    return 0


ONE_STATEMENT_APPEND = ["WITH sqlmemory_sessions"]
"""PostgreSQL's append (of the unscoped storage): one statement in autocommit, a WITH whose
first part is the session upsert (one_statement_append.py)."""


def _message_rows(params: Any) -> list[Any]:
    """The message rows a one-statement write carries (a JSON array of objects), whether
    its driver's parameters are named (psycopg) or positional (asyncpg)."""
    values = params.values() if isinstance(params, Mapping) else params
    for value in values:
        if isinstance(value, str) and value.startswith("[{"):
            rows = json.loads(value)
            if "message_id" in rows[0]:
                return list(rows)
    return []


def _stored(engine: sa.Engine, table: str, sid: str = "s") -> int:
    with engine.connect() as conn:
        query = f"SELECT COUNT(*) FROM {table} WHERE session_id = :sid"  # noqa: S608
        return int(conn.execute(sa.text(query), {"sid": sid}).scalar_one())


def test_append_one_message_is_one_short_transaction(
    storage: Any, backend: str, engine: sa.Engine
) -> None:
    storage.append("s", Message.user("first"))  # the session row exists from here on
    with recording(storage.sync_engine) as rec:
        storage.append("s", Message.user("second"))
    # The upsert that locks the session and allocates the seq, then the insert (MySQL
    # cannot RETURN from an upsert: the seq comes as the id the server reports for it).
    # PostgreSQL does both in one statement, in autocommit: no BEGIN, no COMMIT.
    expected = {"postgresql": 1}.get(backend, 2)
    assert len(rec.data_statements()) == expected, rec.data_statements()
    if backend == "postgresql":
        assert rec.statements[0][0].lstrip().startswith("WITH lock AS"), rec.statements
        assert rec.autocommit == [True]
    else:
        assert rec.inserted("sqlmemory_messages") == 1
    assert _stored(engine, "sqlmemory_messages") == 2
    assert _stored(engine, "sqlmemory_blocks") == 0  # one text block lives in the message row


def test_append_batch_uses_one_insert_per_table(
    storage: Any, backend: str, engine: sa.Engine
) -> None:
    batch = [Message.user(f"m{i}") for i in range(50)]
    batch.append(Message.user(["with image", ImageBlock(_png(1), "image/png")]))
    assert storage.count("s") == 0  # the schema check, before the recording
    with recording(storage.sync_engine) as rec:
        storage.append("s", *batch)
    if backend == "postgresql":
        assert rec.shape() == ONE_STATEMENT_APPEND
    else:
        inserts = rec.touching("sqlmemory_messages", "INSERT")
        assert len(inserts) == 1, "50 messages must go in one multi-row INSERT"
        assert rec.inserted("sqlmemory_messages") == 51
    assert _stored(engine, "sqlmemory_blocks") == 1  # the leading text stays in its row
    assert _stored(engine, "sqlmemory_blobs") == 1
    assert storage.count("s") == 51
    assert [m.text_content() for m in storage.load("s")] == [m.text_content() for m in batch]


def _one_statement(storage: Any) -> bool:
    """Whether a window read first tries one SELECT outside any transaction: on
    PostgreSQL, and on SQLite through ``aiosqlite`` (each statement a thread hand-off)."""
    dialect = storage.sync_engine.dialect
    return dialect.name == "postgresql" or (dialect.name == "sqlite" and dialect.is_async)


def _apart(storage: Any) -> bool:
    """Whether a window read runs in a snapshot of its own, ``BEGIN`` and ``COMMIT`` sent
    on its connection (no round trips in-process), and reads block rows apart, only for
    the messages it builds (``tail_reads._joins_blocks``): SQLite's own driver."""
    dialect = storage.sync_engine.dialect
    return dialect.name == "sqlite" and not dialect.is_async


def _in_own_snapshot(rec: Recorder) -> bool:
    """Whether every data statement recorded ran between one ``BEGIN`` and ``COMMIT``."""
    verbs = [sql.split()[0].upper() for sql, _ in rec.statements if not sql.startswith("PRAGMA")]
    return verbs[0] == "BEGIN" and verbs[-1] == "COMMIT" and not any(rec.autocommit)


def _lock(backend: str, keep_history: bool = False) -> list[str]:
    """The session upsert that takes the lock and allocates seqs. MySQL/MariaDB cannot
    RETURN from it: an append gets its seqs as the id the server reports for the upsert
    (``session_lock._told``); a save reads the row's history chain in a second
    statement."""
    read = backend == "mysql" and keep_history
    return ["INSERT sqlmemory_sessions", *(["SELECT sqlmemory_sessions"] * read)]


# The statement counts of docs/performance.md ("What a call costs"), asserted whole.


@pytest.mark.parametrize("size", [1, 2, 100])
def test_append_of_text_messages_is_the_lock_and_one_insert(
    storage: Any, backend: str, size: int, engine: sa.Engine
) -> None:
    storage.append("s", Message.user("first"))
    with recording(storage.sync_engine) as rec:
        storage.append("s", *(Message.user(f"m{i}") for i in range(size)))
    if backend == "postgresql":
        assert rec.shape() == ONE_STATEMENT_APPEND
    else:
        assert rec.shape() == [*_lock(backend), "INSERT sqlmemory_messages"]
        assert rec.inserted("sqlmemory_messages") == size
    assert _stored(engine, "sqlmemory_messages") == size + 1


def test_append_of_a_batch_with_images_adds_the_blob_check_and_one_insert_per_table(
    storage: Any, backend: str, engine: sa.Engine
) -> None:
    batch = [Message.user([f"picture {i}", ImageBlock(_png(i % 2), "image/png")]) for i in range(6)]
    storage.append("s", Message.user("first"))
    with recording(storage.sync_engine) as rec:
        storage.append("s", *batch, Message.user("after"))
    if backend == "postgresql":
        # One statement: blobs the session holds already are skipped (ON CONFLICT).
        assert rec.shape() == ONE_STATEMENT_APPEND
    else:
        assert rec.shape() == [
            *_lock(backend),
            "SELECT sqlmemory_blobs",  # which of the batch's blobs the session holds already
            "INSERT sqlmemory_blobs",
            "INSERT sqlmemory_messages",
            "INSERT sqlmemory_blocks",
        ]
    assert _stored(engine, "sqlmemory_blobs") == 2  # two distinct images, each stored once
    assert _stored(engine, "sqlmemory_blocks") == 6
    storage.append("s", Message.user(["again", ImageBlock(_png(0), "image/png")]))
    assert _stored(engine, "sqlmemory_blobs") == 2  # stored already: not again


def _filled(storage: Any, images: bool) -> list[Message]:
    history = [Message.system("be brief")]
    for i in range(300):
        content: Any = f"message {i}"
        if images and i % 50 == 49:
            content = [content, ImageBlock(_png(i), "image/png")]
        history.append(Message.user(content))
        history.append(Message.assistant(f"answer {i}"))
    storage.append("long", *history)
    return history


@pytest.mark.parametrize(
    "read",
    ["FixedWindow", "TokenWindow", "recent", "FixedWindow keep_system", "TokenWindow keep_system"],
)
def test_a_text_window_is_one_select(storage: Any, backend: str, read: str) -> None:
    history = _filled(storage, images=False)
    keep_system = read.endswith("keep_system")
    with recording(storage.sync_engine) as rec:
        if read == "recent":
            window = storage.recent("long", 20)
        elif read.startswith("FixedWindow"):
            window = storage.load("long", FixedWindow(20, keep_system=keep_system))
        else:
            window = storage.load("long", TokenWindow(40, keep_system=keep_system))
    assert 0 < len(window) < 32
    assert window[-1].id == history[-1].id
    assert rec.shape() == ["SELECT sqlmemory_messages"]
    if _one_statement(storage):
        assert rec.autocommit == [True], "a window settled by one SELECT needs no transaction"
    if _apart(storage):
        assert _in_own_snapshot(rec)


def test_a_window_with_images_reads_blocks_and_blobs_once(storage: Any, backend: str) -> None:
    _filled(storage, images=True)
    with recording(storage.sync_engine) as rec:
        window = storage.load("long", FixedWindow(4))
    assert isinstance(window[-2].content[1], ImageBlock)
    # The page's block rows come with its message rows, in one statement (SQLite reads
    # them apart, in the page's snapshot).
    reads = ["SELECT sqlmemory_messages", "SELECT sqlmemory_blobs"]
    if _apart(storage):
        reads.insert(1, "SELECT sqlmemory_blocks")
        assert _in_own_snapshot(rec)
    page_sql = rec.touching("sqlmemory_messages", "SELECT")[0][0]
    joined = r"JOIN (LATERAL \(SELECT .*\sFROM\s)?sqlmemory_blocks"
    assert bool(re.search(joined, page_sql, re.S)) == (not _apart(storage)), page_sql
    assert rec.shape() == reads
    if _one_statement(storage):
        # Both outside a transaction: the bytes are keyed by their content's hash, so the
        # bytes found are the ones the page's rows point at.
        assert rec.autocommit == [True, True]


def test_a_window_whose_blob_went_meanwhile_starts_over_in_a_snapshot(
    storage: Any, engine: sa.Engine, backend: str
) -> None:
    # Between the page and its bytes, another writer clears the session: the read starts
    # over in a snapshot transaction and returns what that snapshot holds.
    history = _filled(storage, images=True)
    writer = SqlStorage(sa.create_engine(engine.url))  # not seen by the recording
    deleted = False

    def clear_first(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        nonlocal deleted
        if not deleted and "FROM sqlmemory_blobs" in statement:
            deleted = True
            writer.clear("long")

    sa.event.listen(storage.sync_engine, "before_cursor_execute", clear_first)
    try:
        with recording(storage.sync_engine) as rec:
            window = storage.load("long", FixedWindow(4))
    finally:
        sa.event.remove(storage.sync_engine, "before_cursor_execute", clear_first)
        writer.engine.dispose()
    assert deleted
    if _one_statement(storage):
        assert window == []  # what the snapshot after the clear holds
        assert rec.shape()[:3] == [
            "SELECT sqlmemory_messages",
            "SELECT sqlmemory_blobs",
            "SELECT sqlmemory_messages",
        ]
        assert rec.autocommit[:3] == [True, True, False]
    else:
        # In a snapshot transaction from the start: it still holds the page's bytes.
        assert [m.id for m in window] == [m.id for m in history[-4:]]


def test_a_window_with_tool_calls_is_one_select(storage: Any, backend: str) -> None:
    history = []
    for i in range(200):
        call = ToolCall(f"c{i}", "lookup", {"q": i})
        history += [
            Message.user(f"question {i}"),
            Message.assistant("let me look", tool_calls=[call]),
            Message.tool(f"c{i}", f"answer {i}"),
        ]
    storage.append("agent", *history)
    with recording(storage.sync_engine) as rec:
        window = storage.load("agent", FixedWindow(2))
    assert window == FixedWindow(2).apply(storage.load("agent"))
    assert isinstance(window[-2].content[1], ToolCall)
    if _apart(storage):
        assert rec.shape() == ["SELECT sqlmemory_messages", "SELECT sqlmemory_blocks"]
        assert _in_own_snapshot(rec)
    else:
        assert rec.shape() == ["SELECT sqlmemory_messages"]
    if _one_statement(storage):
        assert rec.autocommit == [True], "block rows come with the page: no second read"


def _block_rows_examined(engine: sa.Engine, sql: str, params: Any) -> int:
    """How many rows of ``sqlmemory_blocks`` the database touches to run ``sql``, from
    its own plan: PostgreSQL's and MariaDB's measured counts (``EXPLAIN ANALYZE``,
    ``ANALYZE FORMAT=JSON``); SQLite runs a search of the blocks' key once per message
    row (one block row each here) or scans them all."""
    with engine.connect() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            if engine.dialect.name == "sqlite":
                cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
                steps = [row[-1] for row in cursor.fetchall() if "sqlmemory_blocks" in row[-1]]
                assert steps and all(s.startswith("SEARCH") for s in steps), steps
                return 0
            if engine.dialect.name == "postgresql":
                # With the statistics autovacuum gathers on a live database: without
                # them the planner takes a few hundred rows for a table it may scan.
                cursor.execute("ANALYZE sqlmemory_messages, sqlmemory_blocks")
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
                plan = cursor.fetchone()[0]
                rows_key, loops_key = "Actual Rows", "Actual Loops"
            else:
                cursor.execute("ANALYZE FORMAT=JSON " + sql, params)
                plan = json.loads(cursor.fetchone()[0])
                rows_key, loops_key = "r_rows", "r_loops"
        finally:
            cursor.close()
    total = 0
    stack = [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            name = node.get("Relation Name", node.get("table_name"))
            if name == "sqlmemory_blocks" and rows_key in node:
                # Rows an index scan read and a filter dropped were examined too.
                read = node[rows_key] + node.get("Rows Removed by Filter", 0)
                total += round(read * node.get(loops_key, 1))
            stack.extend(node.values())
    return total


def test_a_tool_calling_window_reads_the_block_rows_of_its_page_only(
    storage: Any, engine: sa.Engine
) -> None:
    # A plain join let PostgreSQL's planner merge every block row of the session into
    # the page: the window of a long tool-calling history cost more the longer it was.
    history = []
    for i in range(600):
        call = ToolCall(f"c{i}", "lookup", {"q": i})
        history += [Message.user(f"question {i}"), Message.assistant(tool_calls=[call])]
        history += [Message.tool(f"c{i}", f"answer {i}"), Message.assistant(f"done {i}")]
    storage.append("agent", *history)
    assert storage.recent("agent", 20) == storage.load("agent")[-20:]
    # Both storages send the same statement; the sync one's parameters suit the cursor
    # that asks the database for its plan. The page holds 21 messages, about a quarter
    # of them tool calls with one block row each.
    MESSAGES.clear()  # built again, so their block rows are read
    with recording(engine) as rec:
        SqlStorage(engine).recent("agent", 20)
    # SQLite reads the block rows apart, in the page's snapshot: a range of its key.
    table = "sqlmemory_blocks" if engine.dialect.name == "sqlite" else "sqlmemory_messages"
    ((sql, params),) = rec.touching(table, "SELECT")
    assert _block_rows_examined(engine, sql, params) <= 21


@pytest.mark.parametrize("images", [False, True])
def test_a_full_load_is_one_select_then_blocks_and_blobs_if_any(storage: Any, images: bool) -> None:
    history = _filled(storage, images=images)
    with recording(storage.sync_engine) as rec:
        assert len(storage.load("long")) == len(history)
    reads = ["SELECT sqlmemory_messages"]
    if images:
        reads += ["SELECT sqlmemory_blocks", "SELECT sqlmemory_blobs"]
    assert rec.shape() == reads


@pytest.mark.parametrize("after_append", [False, True])
def test_a_save_of_a_grown_history_is_the_lock_the_insert_and_the_record(
    storage: Any, backend: str, after_append: bool
) -> None:
    storage.save("agent", [Message.user(f"m{i}") for i in range(10)])
    if after_append:
        storage.append("agent", Message.user("appended: the hash chain no longer vouches"))
    grown = [*storage.load("agent"), Message.user("one more"), Message.assistant("sure")]
    with recording(storage.sync_engine) as rec:
        storage.save("agent", grown)
    read = ["SELECT sqlmemory_messages"] if after_append else []
    shape = rec.shape()
    if backend == "postgresql":
        # This storage saved the session last: one statement in autocommit tries the new
        # messages first (one_statement_save.py); it writes nothing if another write came
        # between, as the append did, and the usual save follows.
        assert re.match(r"\s*WITH prior AS\s*\(SELECT", rec.statements[0][0])
        assert rec.autocommit[0] is True
        # What follows the 10 messages this storage saved: with the append, 3.
        assert len(_message_rows(rec.statements[0][1])) == (3 if after_append else 2)
        if not after_append:
            assert rec.shape() == ONE_STATEMENT_APPEND
            assert [m.id for m in storage.load("agent")] == [m.id for m in grown]
            return
        shape = shape[1:]
    assert shape == [
        *_lock(backend, keep_history=True),
        *read,  # the stored ids and digests, read once
        "INSERT sqlmemory_messages",
        "UPDATE sqlmemory_sessions",  # the seqs used and the new hash chain
    ]
    assert rec.inserted("sqlmemory_messages") == 2
    assert [m.id for m in storage.load("agent")] == [m.id for m in grown]


@pytest.mark.parametrize("policy", [FixedWindow(20), TokenWindow(200), RecentWindow(20)])
def test_window_read_touches_only_the_tail(storage: Any, policy: Any) -> None:
    history = [Message.user(f"message {i}") for i in range(3000)]
    for start in range(0, len(history), 1000):
        storage.append("long", *history[start : start + 1000])
    with recording(storage.sync_engine) as rec:
        if isinstance(policy, RecentWindow):
            window = storage.recent("long", policy.n)
        else:
            window = storage.load("long", policy)
    assert window == policy.apply(storage.load("long"))
    reads = rec.touching("sqlmemory_messages", "SELECT")
    assert reads, "the window must come from the database"
    for sql, _ in reads:
        assert "LIMIT" in sql.upper(), f"a window read must be limited: {sql}"
    assert len(reads) <= 2


@pytest.mark.parametrize("head", [1, 6])
@pytest.mark.parametrize(
    "policy",
    [FixedWindow(20, keep_system=True), TokenWindow(200, keep_system=True, start_on="user")],
)
def test_a_window_that_keeps_the_system_prompt_reads_only_the_head_and_the_tail(
    storage: Any, backend: str, policy: Any, head: int
) -> None:
    instructions = [Message.system(f"rule {i}") for i in range(head)]
    history = [*instructions, *(Message.user(f"message {i}") for i in range(3000))]
    for start in range(0, len(history), 1000):
        storage.append("long", *history[start : start + 1000])
    with recording(storage.sync_engine) as rec:
        window = storage.load("long", policy)
    assert window == policy.apply(storage.load("long"))
    assert [m.id for m in window[:head]] == [m.id for m in instructions]
    reads = rec.touching("sqlmemory_messages", "SELECT")
    for sql, _ in reads:
        # every scan of the messages, the head's and the tail's, is limited (PostgreSQL's
        # block probe says LIMIT ALL: an OFFSET keeps it a probe per message)
        limits = sql.upper().count("LIMIT") - sql.upper().count("LIMIT ALL")
        assert limits == sql.count("FROM sqlmemory_messages"), sql
    # The head comes in the statement of the newest page; a head longer than the 4
    # messages read with it takes one more (PostgreSQL and SQLite first try the read as
    # one statement outside a transaction, then run it again in a snapshot transaction).
    if head <= 4:
        assert len(reads) == 1, reads
    else:
        assert len(reads) == (3 if _one_statement(storage) else 2), reads


def test_blob_bytes_are_read_only_for_messages_in_the_window(storage: Any) -> None:
    history = []
    for i in range(30):
        history.append(Message.user([f"picture {i}", ImageBlock(_png(i), "image/png")]))
        history.append(Message.assistant(f"nice picture {i}"))
    storage.append("pics", *history)
    with recording(storage.sync_engine) as rec:
        window = storage.load("pics", FixedWindow(3))
    assert [m.text_content() for m in window] == [
        "nice picture 28",
        "picture 29",
        "nice picture 29",
    ]
    assert window[1].content[1] == history[-2].content[1]
    blob_reads = rec.touching("sqlmemory_blobs", "SELECT")
    assert len(blob_reads) == 1, "bytes come in one query"
    # The session id plus exactly one content hash: the window's only image.
    assert _param_count(blob_reads[0][1]) == 2


def test_resave_of_a_grown_history_writes_only_the_new_messages(storage: Any) -> None:
    history: list[Message] = [Message.system("be brief")]
    history.append(Message.user(["look", ImageBlock(_png(7), "image/png")]))
    for turn in range(30):
        history.append(Message.user(f"question {turn}"))
        history.append(Message.assistant(f"answer {turn}"))
    storage.save("agent", history)
    stored = storage.load("agent")
    grown = [*stored, Message.user("one more"), Message.assistant("sure")]
    with recording(storage.sync_engine) as rec:
        storage.save("agent", grown)
    if rec.shape() == ONE_STATEMENT_APPEND:  # PostgreSQL: one_statement_save.py
        params = rec.statements[0][1]
        assert len(_message_rows(params)) == 2
        values = params.values() if isinstance(params, Mapping) else params
        assert not any(isinstance(v, list) for v in values), "unchanged blobs are not rewritten"
    else:
        assert rec.inserted("sqlmemory_messages") == 2
        assert rec.inserted("sqlmemory_blobs") == 0, "unchanged blobs are never rewritten"
    assert not rec.touching("sqlmemory_messages", "DELETE")
    # The session row's hash chain vouches for the stored prefix: it is not read back.
    assert not rec.touching("sqlmemory_messages", "SELECT")
    assert storage.load("agent") == [*stored, *storage.load("agent")[-2:]]
    assert [m.id for m in storage.load("agent")] == [m.id for m in grown]


def test_resave_from_a_changed_message_rewrites_from_there(storage: Any) -> None:
    history = [Message.user(f"m{i}") for i in range(10)]
    storage.save("edit", history)
    edited = [*history[:6], Message.user("replaced"), *history[7:]]
    with recording(storage.sync_engine) as rec:
        storage.save("edit", edited)
    assert rec.inserted("sqlmemory_messages") == 4  # m6 replaced, m7..m9 after it
    assert [m.text_content() for m in storage.load("edit")] == [m.text_content() for m in edited]


@pytest.mark.parametrize("between", ["append", "evict", "edit", "none"])
def test_resave_after_other_writes_still_stores_exactly_the_given_history(
    storage: Any, between: str
) -> None:
    history = [Message.user(f"m{i}") for i in range(8)]
    storage.save("mixed", history)
    target = [*history, Message.assistant("next")]
    if between == "append":
        storage.append("mixed", Message.user("appended outside the saved history"))
    elif between == "evict":
        assert storage.evict("mixed", 5) == 3
    elif between == "edit":
        target[3] = Message.user("edited in the middle", id=history[3].id)
    storage.save("mixed", target)
    assert [(m.id, m.text_content()) for m in storage.load("mixed")] == [
        (m.id, m.text_content()) for m in target
    ]
    storage.save("mixed", target[:4])  # shrinking is a difference at the end
    assert [m.id for m in storage.load("mixed")] == [m.id for m in target[:4]]


# -- equivalence: a windowed read equals the policy applied to the whole history ----------

CALL_IDS = ["c1", "c2", "c3"]


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Random histories, well-formed or not: parallel calls, missing results, orphans."""
    messages: list[Message] = []
    for _ in range(draw(st.integers(0, 70))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "tool", "system"]))
        text = draw(st.text(alphabet="abc xyz", max_size=30))
        if kind == "call":
            ids = draw(st.lists(st.sampled_from(CALL_IDS), min_size=1, max_size=3, unique=True))
            calls = [ToolCall(i, "lookup", {"q": text}) for i in ids]
            messages.append(Message.assistant(text or None, tool_calls=calls))
        elif kind == "tool":
            messages.append(Message.tool(draw(st.sampled_from(CALL_IDS)), text or "ok"))
        elif kind == "system":
            messages.append(Message.system(text or "sys"))
        else:
            messages.append(Message(kind, text or "x"))
    return messages


def _length_tokenizer(message: Message) -> int:
    return len(message.text_content()) - 3


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=histories(),
    n=st.integers(0, 12),
    budget=st.integers(1, 300),
)
def test_windowed_reads_equal_the_policy_over_the_whole_history(
    storage: Any, history: list[Message], n: int, budget: int
) -> None:
    storage.save("prop", history)
    everything = storage.load("prop")
    assert [m.id for m in everything] == [m.id for m in history]
    for policy in (
        FixedWindow(n),
        TokenWindow(budget),
        TokenWindow(budget, tokenizer=_length_tokenizer),
        NoOp(),
    ):
        assert storage.load("prop", policy) == policy.apply(everything), policy
    assert storage.recent("prop", n) == RecentWindow(n).apply(everything)


def test_a_pop_is_one_statement_on_postgresql(storage: Any, backend: str) -> None:
    storage.append("s", *(Message.user(f"m{i}") for i in range(10)))
    with recording(storage.sync_engine) as rec:
        popped = storage.pop("s")
    assert popped is not None and popped.text_content() == "m9"
    if backend == "postgresql":
        # The two newest rows, the update of the session row that locks it (if its
        # version is the one read) and the DELETE, as one statement in autocommit.
        assert rec.shape() == ["WITH sqlmemory_sessions"]
        assert rec.autocommit == [True]
    elif backend == "mysql":
        # The lock and the two newest rows in one locking read (it reads the newest
        # committed rows once it holds the lock), the DELETE, the session row.
        assert rec.shape() == [
            "SELECT sqlmemory_sessions",
            "DELETE sqlmemory_messages",
            "UPDATE sqlmemory_sessions",
        ]
        assert "FOR UPDATE" in rec.touching("sqlmemory_messages", "SELECT")[0][0]
    else:
        assert rec.shape() == [
            "SELECT sqlmemory_sessions",
            "SELECT sqlmemory_messages",
            "DELETE sqlmemory_messages",
            "UPDATE sqlmemory_sessions",
        ]
    assert [m.text_content() for m in storage.load("s")] == [f"m{i}" for i in range(9)]
