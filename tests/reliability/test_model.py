"""A model-based test: random operations from several workers (two sync storages on
separate engines, one async) against a plain list; the stored history must match it.

Concurrent appends of several workers may land in any order, but each batch whole:
the model takes the order the database chose, after checking it is one of the allowed
ones; a ``prune`` racing them deletes the older history whole or not at all, never a
batch appended after its cutoff. ``compact``'s summarizer may itself have another worker
write meanwhile: a change of the messages must end in ``ConflictError`` with the
database as that write left it, anything else (a title, a no-op append or save) in the
summary. Every other operation is compared with what the list says it must do, and the
session's record (title, metadata, message count) with the model's.
"""

from __future__ import annotations

import itertools
import threading
from datetime import datetime, timedelta, timezone
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from sqlmemory import ConflictError, FixedWindow, Message, SqlStorage, ToolCall
from sqlmemory.policy import RecentWindow
from sqlmemory.policy.groups import evict_start
from sqlmemory.storage.compaction import COMPACTION_KEY, plan_compaction
from tests.reliability.figures import FIGURES
from tests.reliability.workers import TIMEOUT, BlockingAsync, scale

SID = "model"
Record = tuple[str | None, dict[str, Any]]
"""The model of the session's record: its title and metadata (``None``: no record)."""
MEDDLES = ("none", "append", "pop", "clear", "title", "same append", "same save")
"""What another worker does while ``compact``'s summarizer runs."""


def essence(messages: list[Message]) -> list[tuple[str, str, str]]:
    return [(m.id, m.role.value, m.text_content()) for m in messages]


def test_several_workers_agree_with_a_list_model(engine: sa.Engine, db_url: str) -> None:
    workers: list[Any] = [
        SqlStorage(engine),
        SqlStorage.from_url(db_url),
        BlockingAsync(db_url),
    ]
    counter = itertools.count()

    def fresh_batch(size: int, with_call: bool) -> list[Message]:
        n = next(counter)
        batch = [Message.user(f"u{n}.{k}", id=f"m{n}.{k}") for k in range(size)]
        if with_call:
            call = ToolCall(f"c{n}", "look", {"n": n})
            batch += [
                Message.assistant(tool_calls=[call], id=f"m{n}.call"),
                Message.tool(f"c{n}", f"r{n}", id=f"m{n}.result"),
            ]
        return batch

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            workers[0].clear(SID)
            self.model: list[Message] = []
            self.record: Record | None = None

        def written(self) -> None:
            """Messages were stored: the session has a record, a new one if it had none."""
            if self.record is None:
                self.record = (None, {})

        def emptied(self) -> None:
            """The last message went: the session and its record are deleted."""
            self.model, self.record = [], None

        @rule(
            sizes=st.lists(st.integers(1, 3), min_size=1, max_size=len(workers)),
            calls=st.booleans(),
            prune=st.booleans(),
        )
        def concurrent_appends(self, sizes: list[int], calls: bool, prune: bool) -> None:
            batches = [fresh_batch(size, calls and i == 0) for i, size in enumerate(sizes)]
            cutoff = datetime.now(timezone.utc)  # before every append: they all survive
            pruned: list[int] = []
            barrier = threading.Barrier(len(batches) + prune, timeout=TIMEOUT)
            errors: list[BaseException] = []

            def run(index: int) -> None:
                try:
                    barrier.wait()
                    if index == len(batches):
                        pruned.append(workers[0].prune(cutoff))
                    else:
                        workers[index].append(SID, *batches[index])
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=run, args=(i,)) for i in range(len(batches) + prune)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(TIMEOUT)
            assert errors == []
            FIGURES["operations"] += len(batches) + prune
            loaded = workers[0].load(SID)
            before = self.record
            if prune and essence(loaded[: len(self.model)]) != essence(self.model):
                # The prune came first: the old history went whole, with its record.
                assert pruned == [1], pruned
                self.model, self.record = [], None
            elif prune and self.model:
                assert pruned == [0], pruned
            assert essence(loaded[: len(self.model)]) == essence(self.model)
            tail, landed = loaded[len(self.model) :], []
            by_first = {b[0].id: b for b in batches}
            while tail:
                found = by_first.pop(tail[0].id)  # a batch starts here, whole
                assert essence(tail[: len(found)]) == essence(found)
                landed += found
                tail = tail[len(found) :]
            assert by_first == {}, "a batch was lost"
            self.model += landed
            if prune and not self.model[: -len(landed)] and before is not None:
                # Only a record to prune: whether it went shows in the record.
                info = workers[0].session_info(SID)
                assert info is not None
                kept = (info.title, dict(info.metadata)) == before
                if before != (None, {}):  # else a new record looks like the old one
                    assert pruned == [0 if kept else 1], (pruned, info, before)
                self.record = before if kept else None
            self.written()

        @rule(data=st.data(), worker=st.integers(0, len(workers) - 1))
        def save(self, data: st.DataObject, worker: int) -> None:
            keep = data.draw(st.integers(0, len(self.model)))
            extra = fresh_batch(data.draw(st.integers(0, 2)), data.draw(st.booleans()))
            history = self.model[:keep] + extra
            workers[worker].save(SID, history)
            self.model = history
            if history:
                self.written()
            else:
                self.emptied()
            FIGURES["operations"] += 1

        @rule(keep=st.integers(0, 8), worker=st.integers(0, len(workers) - 1))
        def evict(self, keep: int, worker: int) -> None:
            cut = evict_start([m.role for m in self.model], keep)
            assert workers[worker].evict(SID, keep) == cut
            if self.model and cut == len(self.model):
                self.emptied()
            self.model = self.model[cut:]
            FIGURES["operations"] += 1

        @rule(worker=st.integers(0, len(workers) - 1))
        def pop(self, worker: int) -> None:
            popped = workers[worker].pop(SID)
            if not self.model:
                assert popped is None
            else:
                assert popped is not None and popped.id == self.model.pop().id
                if not self.model:
                    self.emptied()
            FIGURES["operations"] += 1

        @rule(worker=st.integers(0, len(workers) - 1))
        def clear(self, worker: int) -> None:
            assert workers[worker].clear(SID) == len(self.model)
            self.emptied()
            FIGURES["operations"] += 1

        @rule(
            keep=st.integers(1, 4),
            worker=st.integers(0, len(workers) - 1),
            meddle=st.sampled_from(MEDDLES),
        )
        def compact(self, keep: int, worker: int, meddle: str) -> None:
            plan = plan_compaction(self.model, FixedWindow(keep))
            n = next(counter)
            summary = Message.user(f"summary {n}", id=f"s{n}")
            extra = fresh_batch(1, False)
            other = workers[(worker + 1) % len(workers)]  # never the compacting one
            summarized: list[list[str]] = []

            def summarize(older: list[Message]) -> Message:
                summarized.append([m.id for m in older])
                if meddle == "append":
                    other.append(SID, *extra)
                elif meddle == "pop":
                    other.pop(SID)
                elif meddle == "clear":
                    other.clear(SID)
                elif meddle == "title":
                    other.update_session(SID, title=f"during {n}")
                elif meddle == "same append":
                    other.append(SID, other.load(SID)[-1])
                elif meddle == "same save":
                    other.save(SID, other.load(SID))
                return summary

            changes = meddle in ("append", "pop", "clear")
            try:
                replaced = workers[worker].compact(SID, summarize, keep=FixedWindow(keep))
            except ConflictError:
                assert plan.replaced and changes, (plan, meddle)
                replaced = -1
            FIGURES["operations"] += 1
            if not plan.replaced:
                assert replaced == 0 and summarized == []
                return
            assert summarized == [[m.id for m in self.model[plan.head : plan.cut]]]
            FIGURES["operations"] += meddle != "none"
            if changes:
                # The write that landed meanwhile is all the database holds: nothing of
                # the compaction.
                assert replaced == -1, meddle
                FIGURES["compact conflicts"] += 1
                if meddle == "append":
                    self.model += extra
                elif meddle == "pop":
                    self.model.pop()
                    if not self.model:
                        self.emptied()
                else:
                    self.emptied()
                return
            assert replaced == plan.replaced
            if meddle == "title":
                self.record = (f"during {n}", self.record[1] if self.record else {})
            stored = workers[0].load(SID)[plan.head]
            assert stored.id == summary.id and COMPACTION_KEY in stored.metadata
            self.model = [*self.model[: plan.head], stored, *self.model[plan.cut :]]

        @rule(
            which=st.sampled_from(["title", "metadata", "both"]),
            title=st.sampled_from([None, "", "Paris", "Ünïcode ✓"]),
            metadata=st.sampled_from([None, {}, {"a": 1}, {"z": [1, "x"], "a": None}]),
            worker=st.integers(0, len(workers) - 1),
        )
        def update_session(
            self, which: str, title: str | None, metadata: dict[str, Any] | None, worker: int
        ) -> None:
            old_title, old_metadata = self.record or (None, {})
            if which == "title":
                workers[worker].update_session(SID, title=title)
                self.record = (title, old_metadata)
            elif which == "metadata":
                workers[worker].update_session(SID, metadata=metadata)
                self.record = (old_title, dict(metadata or {}))
            else:
                workers[worker].update_session(SID, title=title, metadata=metadata)
                self.record = (title, dict(metadata or {}))
            FIGURES["operations"] += 1

        @rule(everything=st.booleans(), worker=st.integers(0, len(workers) - 1))
        def prune(self, everything: bool, worker: int) -> None:
            # A cutoff in the future deletes every session; a day back, none of these.
            older_than = (
                datetime.now(timezone.utc) + timedelta(seconds=1)
                if everything
                else timedelta(days=1)
            )
            deleted = workers[worker].prune(older_than)
            assert deleted == (everything and self.record is not None)
            if everything:
                self.emptied()
            FIGURES["operations"] += 1

        @rule(n=st.integers(0, 10), worker=st.integers(0, len(workers) - 1))
        def recent(self, n: int, worker: int) -> None:
            expected = essence(RecentWindow(n).apply(self.model))
            assert essence(workers[worker].recent(SID, n)) == expected
            FIGURES["operations"] += 1

        @invariant()
        def history_matches(self) -> None:
            assert essence(workers[1].load(SID)) == essence(self.model)
            assert workers[2].count(SID) == len(self.model)
            info = workers[2].session_info(SID)
            if self.record is None:
                assert info is None
            else:
                assert info is not None and info.message_count == len(self.model)
                assert (info.title, dict(info.metadata)) == self.record
            FIGURES["histories checked"] += 1

    try:
        run_state_machine_as_test(
            Machine,
            settings=settings(
                max_examples=6 * scale(),
                stateful_step_count=10,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
            ),
        )
    finally:
        workers[1].close()
        workers[2].close()
