"""``plan_save``: how save decides between appending, replacing from a difference, clearing.

A pure function (docs/contract/persistence.md, save writes only from the first difference):
these cases need no database.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlmemory import Message
from sqlmemory.storage.sql.codec import digest_of
from sqlmemory.storage.sql.history_chain import history_digest
from sqlmemory.storage.sql.save_plan import SavePlan, SessionLock, StoredMessage, plan_save

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
HISTORY = [Message.user(f"m{i}", id=f"m{i}") for i in range(5)]


def lock(chain: tuple[str, int] | None = None) -> SessionLock:
    digest, length = chain if chain is not None else (None, None)
    return SessionLock(first_seq=10, stamp=NOW, history_digest=digest, history_len=length)


def stored(messages: list[Message]) -> list[StoredMessage]:
    return [StoredMessage(i + 1, m.id, digest_of(m), NOW) for i, m in enumerate(messages)]


def test_an_empty_history_clears() -> None:
    assert plan_save([], lock(), None) == SavePlan(keep=0, clear=True)


def test_a_matching_chain_keeps_the_prefix_without_the_stored_rows() -> None:
    chain = (history_digest(HISTORY, 3), 3)
    assert plan_save(HISTORY, lock(chain), None) == SavePlan(keep=3)


def test_a_chain_that_does_not_match_asks_for_the_stored_rows() -> None:
    chain = (history_digest(HISTORY[1:], 3), 3)
    assert plan_save(HISTORY, lock(chain), None) is None
    assert plan_save(HISTORY, lock(), None) is None


def test_a_grown_history_appends_after_the_stored_rows() -> None:
    assert plan_save(HISTORY, lock(), stored(HISTORY[:2])) == SavePlan(keep=2)


def test_a_changed_message_replaces_from_its_seq() -> None:
    edited = [*HISTORY[:2], Message.user("changed", id="m2"), *HISTORY[3:]]
    plan = plan_save(edited, lock(), stored(HISTORY))
    assert plan == SavePlan(keep=2, delete_from_seq=3)


def test_a_shorter_history_deletes_the_rest() -> None:
    assert plan_save(HISTORY[:2], lock(), stored(HISTORY)) == SavePlan(keep=2, delete_from_seq=3)


def test_an_imported_recorded_at_that_differs_is_a_difference() -> None:
    later = HISTORY[1].with_recorded_at(datetime(2030, 1, 1, tzinfo=timezone.utc))
    imported = [HISTORY[0], later]
    assert plan_save(imported, lock(), stored(HISTORY[:2])) == SavePlan(keep=1, delete_from_seq=2)
