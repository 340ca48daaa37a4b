"""A failure at any statement of a write leaves the previous state exactly as it was.

Each scenario is run once to count its statements, then once per statement with an error
raised just before that statement reaches the database. After every failure, every row of
every sqlmemory table and every session's ``load`` must equal what they were before the
call, and the storage must still work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from sqlmemory import DocumentBlock, FixedWindow, ImageBlock, Message, SqlStorage, StorageError
from tests.support.cases import PDF_BYTES, image_bytes, timeless
from tests.support.tables import delete_everything, snapshot

SID = "atomic"
OTHER = "bystander"
PNG_OLD = image_bytes(64, 64, seed=11)
PNG_NEW = image_bytes(80, 60, "image/png", seed=12)
IMPORTED = datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
JPEG_NEW = image_bytes(30, 30, "image/jpeg", seed=13)


class InjectedFault(Exception):
    """Raised by the test, not by any database."""


def driver_error(statement: str) -> Exception:
    return sa.exc.OperationalError(statement, None, InjectedFault("injected driver error"))


def plain_error(statement: str) -> Exception:
    return InjectedFault("injected plain error")


class StatementFaults:
    """Counts the statements an engine sends, and raises before the chosen one."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.active = False
        self.fail_at: int | None = None
        self.make_error: Callable[[str], Exception] = driver_error
        self.statements: list[str] = []
        self.raised: Exception | None = None

    def _before(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        # Connection set-up (SQLite PRAGMAs on a pooled connection's first use) depends on
        # pool history, not on the call: leave it out so indices are stable.
        if not self.active or statement.lstrip().upper().startswith("PRAGMA"):
            return
        index = len(self.statements)
        self.statements.append(statement)
        if index == self.fail_at:
            self.raised = self.make_error(statement)
            raise self.raised

    @contextmanager
    def watching(
        self, fail_at: int | None = None, make_error: Callable[[str], Exception] = driver_error
    ) -> Iterator[StatementFaults]:
        self.statements, self.raised = [], None
        self.fail_at, self.make_error = fail_at, make_error
        event.listen(self.engine, "before_cursor_execute", self._before)
        self.active = True
        try:
            yield self
        finally:
            self.active = False
            event.remove(self.engine, "before_cursor_execute", self._before)


def history() -> list[Message]:
    return [
        Message.user("first", id="m1"),
        Message.user(["with a picture", ImageBlock(PNG_OLD, "image/png")], id="m2"),
        Message.assistant("reply", id="m3"),
        Message.user(["a document", DocumentBlock(PDF_BYTES, "application/pdf")], id="m4"),
        Message.assistant("second reply", id="m5"),
    ]


def new_messages() -> list[Message]:
    return [
        Message.user(
            ["new pictures", ImageBlock(PNG_NEW, "image/png"), ImageBlock(PNG_OLD, "image/png")],
            id="n1",
        ),
        Message.assistant("plain", id="n2"),
        Message.user(ImageBlock(JPEG_NEW, "image/jpeg"), id="n3"),
    ]


@dataclass(frozen=True)
class Scenario:
    name: str
    setup: Callable[[SqlStorage], None]
    action: Callable[[SqlStorage], object]


def with_history(storage: SqlStorage) -> None:
    storage.append(SID, *history())


SCENARIOS = [
    Scenario(
        "append-to-a-new-session",
        lambda s: None,
        lambda s: s.append(SID, *new_messages()),
    ),
    Scenario(
        "append-with-images",
        with_history,
        lambda s: s.append(SID, *new_messages()),
    ),
    Scenario(
        "append-retry-plus-new",  # the unique index refuses m5; the append retries
        with_history,
        lambda s: s.append(SID, history()[-1], *new_messages()),
    ),
    Scenario(
        "save-to-a-new-session",
        lambda s: None,
        lambda s: s.save(SID, [*history(), *new_messages()]),
    ),
    Scenario(
        "save-grown",
        with_history,
        lambda s: s.save(SID, [*history(), *new_messages()]),
    ),
    Scenario(
        "save-changed",  # deletes from m3, inserts, sweeps the document's blob
        with_history,
        lambda s: s.save(SID, [*history()[:2], *new_messages()]),
    ),
    Scenario("save-empty", with_history, lambda s: s.save(SID, [])),
    Scenario("evict", with_history, lambda s: s.evict(SID, 2)),
    Scenario("evict-all", with_history, lambda s: s.evict(SID, 0)),
    Scenario("clear", with_history, lambda s: s.clear(SID)),
    Scenario(  # the newest message holds a blob no other message uses: it is swept
        "pop",
        lambda s: s.append(SID, *history(), *new_messages()),
        lambda s: s.pop(SID),
    ),
    Scenario(  # replaces m1..m4 (and the document's blob) with one summary; imported
        "compact",  # times, so the summary's metadata is the same on every run
        lambda s: s.append(SID, *(m.with_recorded_at(IMPORTED) for m in history())),
        lambda s: s.compact(
            SID, lambda older: Message.user("summary", id="summary"), keep=FixedWindow(1)
        ),
    ),
    Scenario(
        "pop-the-last",
        lambda s: s.append(SID, new_messages()[0]),
        lambda s: s.pop(SID),
    ),
]

ERRORS = {"driver-error": driver_error, "plain-error": plain_error}
ONE_STATEMENT_SCENARIOS = ("append-to-a-new-session", "append-with-images", "save-to-a-new-session")


def reset(storage: SqlStorage, engine: sa.Engine, scenario: Scenario) -> None:
    with engine.begin() as conn:
        delete_everything(conn)
    # The database is put back behind the storage's back: what it remembers of its last
    # saves (a hint PostgreSQL's one-statement save checks) goes too, so every run of a
    # scenario sends the same statements.
    storage._saved_lengths.clear()
    storage.append(OTHER, *history())  # shares PNG_OLD with the session under test
    scenario.setup(storage)


def state(storage: SqlStorage, engine: sa.Engine) -> tuple[object, ...]:
    with engine.connect() as conn:
        rows = snapshot(conn)
    return rows, storage.load(SID), storage.load(OTHER)


@pytest.mark.parametrize("error", sorted(ERRORS))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_a_failure_at_any_statement_leaves_the_previous_state(
    storage: SqlStorage, engine: sa.Engine, scenario: Scenario, error: str, backend: str
) -> None:
    faults = StatementFaults(storage.sync_engine)  # type: ignore[attr-defined]
    reset(storage, engine, scenario)
    with faults.watching():
        scenario.action(storage)
    statements = list(faults.statements)
    # PostgreSQL appends new messages, and saves a new session, in one statement
    # (one_statement_append.py, one_statement_save.py).
    one_statement = backend == "postgresql" and scenario.name in ONE_STATEMENT_SCENARIOS
    assert len(statements) >= (1 if one_statement else 2), statements
    expected_after = state(storage, engine)

    for index, statement in enumerate(statements):
        reset(storage, engine, scenario)
        before = state(storage, engine)
        with faults.watching(index, ERRORS[error]), pytest.raises(Exception) as caught:
            scenario.action(storage)
        where = f"statement {index}: {statement.strip()[:80]}"
        assert faults.raised is not None, where
        if error == "driver-error":
            assert isinstance(caught.value, StorageError), where
            assert caught.value.__cause__ is faults.raised, where
        else:
            assert caught.value is faults.raised, where
        assert state(storage, engine) == before, where
        # The storage is not left broken: the same call now succeeds.
        scenario.action(storage)
        after = state(storage, engine)
        assert timeless(after[1]) == timeless(expected_after[1]), where  # type: ignore[arg-type]
        assert after[2] == before[2], where
