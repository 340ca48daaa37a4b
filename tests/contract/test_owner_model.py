"""Owned views against a model, on every storage: a hypothesis state machine.

Three owners write, read, delete and erase through their views, and the operator moves
sessions between them, on a small pool of session ids so that owners keep meeting each
other's sessions. After every step each owner's view must equal a model that holds only
that owner's sessions, and every refused write must have left the model as it was.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from sqlmemory import Message, SessionOwnerError
from tests.support.storages import Subject

OWNERS = ("ann", "ben", "cat")
SIDS = ("s0", "s1", "s2", "s3")
owners = st.sampled_from(OWNERS)
sids = st.sampled_from(SIDS)


def test_each_owners_view_equals_a_model_of_only_their_sessions(subject: Subject) -> None:
    storage = subject.storage
    views = {owner: storage.owned_by(owner) for owner in OWNERS}
    counter = itertools.count()

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            for sid in storage.sessions():
                storage.clear(sid)
            self.owner_of: dict[str, str | None] = {}
            self.texts: dict[str, list[str]] = {}

        def refused(self, owner: str, sid: str) -> bool:
            return sid in self.owner_of and self.owner_of[sid] != owner

        @rule(owner=owners, sid=sids, size=st.integers(1, 3))
        def append(self, owner: str, sid: str, size: int) -> None:
            texts = [f"t{next(counter)}" for _ in range(size)]
            batch = [Message.user(text) for text in texts]
            if self.refused(owner, sid):
                try:
                    views[owner].append(sid, *batch)
                except SessionOwnerError:
                    return
                raise AssertionError(f"{owner} appended to {sid} of {self.owner_of[sid]}")
            views[owner].append(sid, *batch)
            self.owner_of.setdefault(sid, owner)
            self.texts[sid] = self.texts.get(sid, []) + texts

        @rule(sid=sids)
        def append_unowned(self, sid: str) -> None:
            text = f"t{next(counter)}"
            storage.append(sid, Message.user(text))
            self.owner_of.setdefault(sid, None)
            self.texts[sid] = [*self.texts.get(sid, []), text]

        @rule(owner=owners, sid=sids, size=st.integers(0, 2))
        def save(self, owner: str, sid: str, size: int) -> None:
            texts = [f"t{next(counter)}" for _ in range(size)]
            if self.refused(owner, sid):
                try:
                    views[owner].save(sid, [Message.user(text) for text in texts])
                except SessionOwnerError:
                    return
                raise AssertionError(f"{owner} saved over {sid} of {self.owner_of[sid]}")
            views[owner].save(sid, [Message.user(text) for text in texts])
            if texts:
                self.owner_of.setdefault(sid, owner)
                self.texts[sid] = texts
            else:
                self.forget(sid)

        def forget(self, sid: str) -> None:
            self.owner_of.pop(sid, None)
            self.texts.pop(sid, None)

        @rule(owner=owners, sid=sids)
        def pop(self, owner: str, sid: str) -> None:
            popped = views[owner].pop(sid)
            if self.owner_of.get(sid, "") != owner or not self.texts[sid]:
                assert popped is None
                return
            assert popped is not None
            assert popped.text_content() == self.texts[sid].pop()
            if not self.texts[sid]:
                self.forget(sid)

        @rule(owner=owners, sid=sids)
        def clear(self, owner: str, sid: str) -> None:
            deleted = views[owner].clear(sid)
            if self.owner_of.get(sid, "") == owner:
                assert deleted == len(self.texts[sid])
                self.forget(sid)
            else:
                assert deleted == 0

        @rule(owner=owners, sid=sids)
        def evict(self, owner: str, sid: str) -> None:
            deleted = views[owner].evict(sid, 1)
            if self.owner_of.get(sid, "") != owner:
                assert deleted == 0
                return
            assert deleted == max(len(self.texts[sid]) - 1, 0)
            self.texts[sid] = self.texts[sid][-1:]

        @rule(owner=st.none() | owners, sid=sids)
        def transfer(self, owner: str | None, sid: str) -> None:
            storage.update_session(sid, owner=owner)
            if sid in self.owner_of:
                self.owner_of[sid] = owner
            # A record without messages: update_session creates a session of no message.
            else:
                self.owner_of[sid] = owner
                self.texts[sid] = []

        @rule(owner=owners, through_view=st.booleans())
        def erase(self, owner: str, through_view: bool) -> None:
            erased = (views[owner] if through_view else storage).erase_owner(owner)
            theirs = [sid for sid, o in self.owner_of.items() if o == owner]
            assert erased == len(theirs)
            for sid in theirs:
                self.forget(sid)

        @invariant()
        def each_view_holds_only_its_owners_sessions(self) -> None:
            for owner, view in views.items():
                theirs = sorted(sid for sid, o in self.owner_of.items() if o == owner)
                assert view.sessions() == theirs
                assert sorted(i.session_id for i in view.list_sessions().items) == theirs
                for sid in SIDS:
                    texts = self.texts[sid] if sid in theirs else []
                    assert [m.text_content() for m in view.load(sid)] == texts
                    assert view.count(sid) == len(texts)
            assert storage.sessions() == sorted(self.owner_of)
            found: dict[str, Any] = {i.session_id: i.owner for i in storage.list_sessions().items}
            assert found == self.owner_of

    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=8 if subject.sql else 40,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )
