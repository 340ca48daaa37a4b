"""A model-based test: random operations from several workers (two sync storages on
separate engines, one async) against a plain list; the stored history must match it.

Concurrent appends of several workers may land in any order, but each batch whole:
the model takes the order the database chose, after checking it is one of the allowed
ones. Every other operation is compared with what the list says it must do.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from sqlmemory import Message, SqlStorage, ToolCall
from sqlmemory.policy import RecentWindow
from sqlmemory.policy.groups import evict_start
from tests.reliability.figures import FIGURES
from tests.reliability.workers import TIMEOUT, BlockingAsync, scale

SID = "model"


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

        @rule(
            sizes=st.lists(st.integers(1, 3), min_size=1, max_size=len(workers)),
            calls=st.booleans(),
        )
        def concurrent_appends(self, sizes: list[int], calls: bool) -> None:
            batches = [fresh_batch(size, calls and i == 0) for i, size in enumerate(sizes)]
            barrier = threading.Barrier(len(batches), timeout=TIMEOUT)
            errors: list[BaseException] = []

            def run(index: int) -> None:
                try:
                    barrier.wait()
                    workers[index].append(SID, *batches[index])
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=run, args=(i,)) for i in range(len(batches))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(TIMEOUT)
            assert errors == []
            FIGURES["operations"] += len(batches)
            loaded = workers[0].load(SID)
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

        @rule(data=st.data(), worker=st.integers(0, len(workers) - 1))
        def save(self, data: st.DataObject, worker: int) -> None:
            keep = data.draw(st.integers(0, len(self.model)))
            extra = fresh_batch(data.draw(st.integers(0, 2)), data.draw(st.booleans()))
            history = self.model[:keep] + extra
            workers[worker].save(SID, history)
            self.model = history
            FIGURES["operations"] += 1

        @rule(keep=st.integers(0, 8), worker=st.integers(0, len(workers) - 1))
        def evict(self, keep: int, worker: int) -> None:
            cut = evict_start([m.role for m in self.model], keep)
            assert workers[worker].evict(SID, keep) == cut
            self.model = self.model[cut:]
            FIGURES["operations"] += 1

        @rule(worker=st.integers(0, len(workers) - 1))
        def pop(self, worker: int) -> None:
            popped = workers[worker].pop(SID)
            if not self.model:
                assert popped is None
            else:
                assert popped is not None and popped.id == self.model.pop().id
            FIGURES["operations"] += 1

        @rule(worker=st.integers(0, len(workers) - 1))
        def clear(self, worker: int) -> None:
            assert workers[worker].clear(SID) == len(self.model)
            self.model = []
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
