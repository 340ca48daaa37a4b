"""``compact`` on every storage.

docs/compaction.md and docs/contract/storage.md: ``compact(session_id, summarize, *,
keep=FixedWindow(20))`` replaces the messages older than the window ``keep`` selects with
what ``summarize(older)`` returns (a message or a list of them), placed where they were:
after the pinned head, before the kept messages, which stay exactly as stored. The
summarizer runs outside any transaction; if the session changed meanwhile, ``compact``
raises ``ConflictError`` (docs/contract/errors.md) and writes nothing. The summary's
metadata names the range it replaced; the cut never splits a tool group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqlmemory import (
    ConflictError,
    DuplicateMessageError,
    FixedWindow,
    ImageBlock,
    Message,
    Role,
    SqlStorage,
    StorageError,
    TokenWindow,
    ToolCall,
)
from sqlmemory.policy.groups import group_indices
from sqlmemory.storage.compaction import COMPACTION_KEY
from tests.support.cases import ids, image_bytes, texts, tool_history
from tests.support.storages import Subject
from tests.support.tables import snapshot
from tests.support.windows import ON_STORAGES, any_history, window_policies

SID = "compact"


def talk(n: int, prefix: str = "m") -> list[Message]:
    """``n`` messages, user and assistant in turn, whose ids are their texts."""
    return [
        Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"{prefix}{i}", id=f"{prefix}{i}")
        for i in range(n)
    ]


class Summarizer:
    """A fake summarizer: records what it was given and returns one user message."""

    def __init__(self, text: str = "summary", id: str = "summary") -> None:
        self.text = text
        self.id = id
        self.calls: list[list[Message]] = []

    def __call__(self, older: list[Message]) -> Message:
        self.calls.append(list(older))
        return Message.user(f"{self.text} of {len(older)}", id=self.id)


def racer_of(subject: Subject) -> Any:
    """Another writer of the same sessions: a sync storage over the subject's database
    (the async subject calls the summarizer on its event loop, which must not block on
    itself), or the in-memory storage itself."""
    return SqlStorage(subject.engine) if subject.engine is not None else subject.storage


def state_through(subject: Subject, racer: Any) -> object:
    """:meth:`Subject.state`, read through ``racer`` (from inside a summarizer)."""
    histories = {sid: (racer.load(sid), racer.session_info(sid)) for sid in racer.sessions()}
    if subject.engine is None:
        return histories
    with subject.engine.connect() as conn:
        return histories, snapshot(conn)


# --- what compaction keeps and writes ---------------------------------------------------------


def test_compact_replaces_the_older_messages_with_the_summary(storage: Any) -> None:
    storage.append(SID, *talk(10))
    before = storage.load(SID)
    summarize = Summarizer()
    assert storage.compact(SID, summarize, keep=FixedWindow(3)) == 7
    assert summarize.calls == [before[:7]]
    after = storage.load(SID)
    assert after[1:] == before[7:]  # kept exactly, recorded_at included
    summary = after[0]
    assert (summary.id, summary.text_content()) == ("summary", "summary of 7")
    assert summary.recorded_at == before[6].recorded_at  # time order stays seq order
    assert dict(summary.metadata[COMPACTION_KEY]) == {
        "count": 7,
        "first_id": before[0].id,
        "last_id": before[6].id,
        "first_recorded_at": before[0].recorded_at.isoformat(),
        "last_recorded_at": before[6].recorded_at.isoformat(),
    }
    assert storage.count(SID) == 4
    storage.append(SID, Message.user("after", id="after"))
    assert ids(storage.load(SID)) == ["summary", *ids(before[7:]), "after"]


def test_the_default_keep_is_the_newest_twenty_groups(storage: Any) -> None:
    storage.append(SID, *talk(25))
    before = storage.load(SID)
    assert storage.compact(SID, Summarizer()) == 5
    assert storage.load(SID)[1:] == before[5:]


def test_the_summary_keeps_its_own_metadata_and_time_and_may_be_several_messages(
    storage: Any,
) -> None:
    storage.append(SID, *talk(6))
    before = storage.load(SID)
    when = before[0].recorded_at

    def summarize(older: list[Message]) -> list[Message]:
        return [
            Message.system("Summary follows.", id="s1", metadata={"model": "m"}, recorded_at=when),
            Message.assistant("They said hello.", id="s2"),
        ]

    assert storage.compact(SID, summarize, keep=FixedWindow(2)) == 4
    after = storage.load(SID)
    assert ids(after) == ["s1", "s2", *ids(before[4:])]
    assert after[0].metadata["model"] == "m"
    assert after[0].recorded_at == when
    assert after[1].recorded_at == before[3].recorded_at
    assert after[0].metadata[COMPACTION_KEY] == after[1].metadata[COMPACTION_KEY]


def test_nothing_older_than_the_window_calls_no_summarizer(subject: Subject) -> None:
    storage = subject.storage
    summarize = Summarizer()
    assert storage.compact(SID, summarize) == 0  # unknown session
    storage.append(SID, *talk(4))
    before = subject.state()
    assert storage.compact(SID, summarize, keep=FixedWindow(2)) == 2
    compacted = subject.state()
    # Only the summary is older now: summarizing it again would buy nothing.
    assert storage.compact(SID, summarize, keep=FixedWindow(2)) == 0
    assert storage.compact(SID, summarize, keep=FixedWindow(10)) == 0
    assert len(summarize.calls) == 1
    assert subject.state() == compacted != before


def test_a_rolling_summary_takes_the_previous_one_with_the_newer_messages(storage: Any) -> None:
    storage.append(SID, *talk(4))
    storage.compact(SID, Summarizer(id="first"), keep=FixedWindow(2))
    storage.append(SID, *talk(2, "more"))
    summarize = Summarizer(id="second")
    assert storage.compact(SID, summarize, keep=FixedWindow(2)) == 3
    assert ids(summarize.calls[0]) == ["first", *ids(talk(4)[2:])]
    assert ids(storage.load(SID)) == ["second", *ids(talk(2, "more"))]


def test_the_pinned_head_stays_before_the_summary(storage: Any) -> None:
    head = [Message.system("Be brief.", id="sys"), Message.developer("No emoji.", id="dev")]
    storage.append(SID, *head, *talk(6))
    before = storage.load(SID)
    summarize = Summarizer()
    keep = FixedWindow(2, keep_system=True)
    assert storage.compact(SID, summarize, keep=keep) == 4
    assert summarize.calls == [before[2:6]]
    after = storage.load(SID)
    assert ids(after) == ["sys", "dev", "summary", *ids(before[6:])]
    assert after[:2] == before[:2]
    assert storage.load(SID, keep) == [*before[:2], *before[6:]]
    # Without keep_system, the instructions are old messages like any other.
    assert storage.compact(SID, Summarizer(id="all"), keep=FixedWindow(2)) == 3
    assert ids(storage.load(SID)) == ["all", *ids(before[6:])]


def test_the_cut_never_splits_a_tool_group(storage: Any) -> None:
    history = tool_history()  # [u1] [a1 t1 t2] [a2] [u2] [a3 t3] [a4]
    storage.append(SID, *history)
    summarize = Summarizer()
    assert storage.compact(SID, summarize, keep=TokenWindow(1)) == 8  # a4 alone
    assert ids(storage.load(SID)) == ["summary", "a4"]
    storage.save(SID, history)
    assert storage.compact(SID, Summarizer(), keep=FixedWindow(2)) == 6
    assert ids(storage.load(SID)) == ["summary", "a3", "t3", "a4"]
    storage.save(SID, history)
    assert storage.compact(SID, Summarizer(), keep=FixedWindow(4, start_on="user")) == 5
    assert ids(storage.load(SID)) == ["summary", "u2", "a3", "t3", "a4"]


def test_the_turn_being_written_is_kept_whole(storage: Any) -> None:
    # The newest call has no result yet: windows leave it out, compaction must not
    # summarize it away, or its result would arrive as an orphan.
    pending = Message.assistant(tool_calls=[ToolCall("c9", "slow", {})], id="pending")
    storage.append(SID, *talk(4), pending)
    assert storage.compact(SID, Summarizer(), keep=FixedWindow(1)) == 3
    storage.append(SID, Message.tool("c9", "done", id="result"))
    assert ids(storage.load(SID)) == ["summary", "m3", "pending", "result"]
    assert ids(storage.load(SID, FixedWindow(1))) == ["pending", "result"]


def test_compaction_deletes_bytes_only_older_messages_used(subject: Subject) -> None:
    storage = subject.storage
    old = ImageBlock(image_bytes(9, 9, seed=4), "image/png")
    shared = ImageBlock(image_bytes(7, 7, seed=5), "image/png")
    storage.append(
        SID,
        Message.user(["old", old, shared], id="old"),
        Message.assistant("seen", id="seen"),
        Message.user(["again", shared], id="again"),
    )
    assert storage.compact(SID, Summarizer(), keep=FixedWindow(1)) == 2
    assert storage.load(SID)[1].content[1] == shared
    subject.assert_counts(sessions=1, messages=2, blocks=1, blobs=1)


def test_compaction_touches_no_other_session(subject: Subject) -> None:
    storage = subject.storage
    storage.append("other", *tool_history())
    other = storage.load("other")
    storage.append(SID, *talk(5))
    storage.compact(SID, Summarizer(), keep=FixedWindow(1))
    assert storage.load("other") == other
    assert storage.sessions() == sorted([SID, "other"])


def test_the_session_view_compacts(storage: Any) -> None:
    view = storage.session(SID)
    view.append(*talk(5))
    assert view.compact(Summarizer(), keep=FixedWindow(2)) == 3
    assert texts(view.load())[0] == "summary of 3"


# --- bad arguments and bad summaries: nothing written -----------------------------------------


@pytest.mark.parametrize(
    ("summarize", "keep", "error"),
    [
        ("not callable", FixedWindow(1), TypeError),
        (Summarizer(), 3, TypeError),
        (Summarizer(), FixedWindow, TypeError),
        (Summarizer(), None, TypeError),
    ],
    ids=["summarize-not-callable", "keep-a-count", "keep-a-class", "keep-none"],
)
def test_bad_arguments_are_refused_before_anything_is_read(
    subject: Subject, summarize: Any, keep: Any, error: type[Exception]
) -> None:
    subject.storage.append(SID, *talk(4))
    before = subject.state()
    with pytest.raises(error):
        subject.storage.compact(SID, summarize, keep=keep)
    assert subject.state() == before


def test_keep_given_as_a_count_points_to_fixed_window(storage: Any) -> None:
    with pytest.raises(TypeError, match=r"FixedWindow\(3\)"):
        storage.compact(SID, Summarizer(), keep=3)


def _raises(older: list[Message]) -> Message:
    raise RuntimeError("the model is down")


BAD_SUMMARIES: dict[str, tuple[Callable[[list[Message]], Any], type[Exception]]] = {
    "none": (lambda older: None, TypeError),
    "a-string": (lambda older: "summary", TypeError),
    "no-message": (lambda older: [], ValueError),
    "a-list-with-a-string": (lambda older: [Message.user("s"), "t"], TypeError),
    "longer-than-replaced": (lambda older: [Message.user("s")] * 2 + older, ValueError),
    "a-kept-id": (lambda older: Message.user("s", id="m3"), DuplicateMessageError),
    "the-summarizer-fails": (_raises, RuntimeError),
}


@pytest.mark.parametrize("case", sorted(BAD_SUMMARIES))
def test_a_bad_summary_writes_nothing(subject: Subject, case: str) -> None:
    summarize, error = BAD_SUMMARIES[case]
    subject.storage.append(SID, *talk(4))
    before = subject.state()
    with pytest.raises(error):
        subject.storage.compact(SID, summarize, keep=FixedWindow(1))
    assert subject.state() == before


def test_a_summary_may_reuse_the_id_of_a_message_it_replaces(storage: Any) -> None:
    storage.append(SID, *talk(4))
    assert storage.compact(SID, lambda older: Message.user("s", id="m0"), keep=FixedWindow(1))
    assert ids(storage.load(SID)) == ["m0", "m3"]


# --- a writer racing the summarizer -----------------------------------------------------------

RACES: dict[str, Callable[[Any], object]] = {
    "append": lambda s: s.append(SID, Message.user("meanwhile", id="meanwhile")),
    "pop": lambda s: s.pop(SID),
    "evict": lambda s: s.evict(SID, 3),
    "save": lambda s: s.save(SID, [*s.load(SID)[:3], Message.user("edited", id="edited")]),
    "clear": lambda s: s.clear(SID),
    "compact": lambda s: s.compact(SID, Summarizer(id="theirs"), keep=FixedWindow(4)),
}


@pytest.mark.parametrize("race", sorted(RACES))
def test_a_write_while_the_summarizer_runs_is_a_conflict_and_nothing_is_written(
    subject: Subject, race: str
) -> None:
    storage = subject.storage
    storage.append(SID, *talk(6))
    racer = racer_of(subject)
    seen: list[object] = []

    def summarize(older: list[Message]) -> Message:
        RACES[race](racer)
        seen.append(state_through(subject, racer))
        return Message.user("too late", id="late")

    with pytest.raises(ConflictError) as raised:
        storage.compact(SID, summarize, keep=FixedWindow(2))
    assert isinstance(raised.value, StorageError)
    assert subject.state() == seen[0]  # the racer's write, and nothing of the compaction
    assert "late" not in ids(storage.load(SID))
    storage.append(SID, *talk(3, "later"))  # the storage still works, and so does compact
    assert storage.compact(SID, Summarizer(id="again"), keep=FixedWindow(1)) >= 1
    assert ids(storage.load(SID))[0] == "again"


def test_a_save_that_changes_nothing_is_no_conflict(subject: Subject) -> None:
    storage = subject.storage
    storage.append(SID, *talk(4))
    racer = racer_of(subject)

    def summarize(older: list[Message]) -> Message:
        racer.save(SID, racer.load(SID))
        return Message.user("summary", id="summary")

    assert storage.compact(SID, summarize, keep=FixedWindow(1)) == 3


# --- properties -------------------------------------------------------------------------------


@ON_STORAGES
@given(data=st.data(), history=any_history)
def test_compaction_keeps_the_window_and_never_splits_a_group(
    subject: Subject, data: st.DataObject, history: list[Message]
) -> None:
    storage = subject.storage
    storage.save(SID, history)
    before = storage.load(SID)
    keep = data.draw(window_policies(len(history)), label="keep")
    summarize = Summarizer()
    replaced = storage.compact(SID, summarize, keep=keep)
    after = storage.load(SID)
    if replaced == 0:
        assert after == before
        assert summarize.calls == []
        return
    at = ids(after).index("summary")
    older = before[at : at + replaced]
    assert summarize.calls == [older]
    assert after[:at] == before[:at]  # the pinned head
    assert all(m.role in (Role.SYSTEM, Role.DEVELOPER) for m in after[:at])
    assert after[at + 1 :] == before[at + replaced :]  # everything newer, as stored
    meta = after[at].metadata[COMPACTION_KEY]
    assert (meta["count"], meta["first_id"], meta["last_id"]) == (
        replaced,
        older[0].id,
        older[-1].id,
    )
    cut = range(at, at + replaced)
    for group in group_indices(before):
        assert all(i in cut for i in group) or not any(i in cut for i in group), group
    assert at + replaced == len(before) or before[at + replaced].role is not Role.TOOL
    window = [m for m in keep.apply(after) if m.id != "summary"]
    assert window == keep.apply(before), keep
