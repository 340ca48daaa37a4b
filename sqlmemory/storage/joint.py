"""Joint writes: several sessions' records, and one's messages, changed in one transaction.

``update_together(changes)`` is the storage primitive behind an adapter whose one logical
write spans several sessions: Google ADK's ``append_event`` stores an event in its session
and, in the same transaction, merges the event's state delta into the session's state, the
user's and the app's (each kept in the metadata of a record of its own). Each
:class:`RecordChange` names one session; the storage locks every named session (in sorted
id order, so two joint writes never wait on each other in a cycle), calls each change's
``metadata`` function with the record as locked (the check and the update both see what
no other writer can change until the commit), appends the change's messages and stores
the metadata it returned. Anything raised, by a check here or by a ``metadata`` function,
rolls back the whole call.

``read_together(session_id, policy, records=...)`` is its read: one session's messages
(``policy``'s window, read from the tail of the history) and the records of several
sessions, from one snapshot, in one transaction (ADK's ``get_session``: the events, and
the session's, the user's and the app's state).

This module holds what every storage shares: the change, its checks (before any I/O),
the check of what a ``metadata`` function returns, and what a joint read returns. Pure
Python: no SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlmemory.storage.checks import check_messages, check_session_id
from sqlmemory.storage.owners import check_owner, refuse
from sqlmemory.storage.records import SessionInfo, check_metadata
from sqlmemory.types import FrozenDict, Message

__all__ = [
    "JointRead",
    "MetadataUpdate",
    "RecordChange",
    "Splice",
    "SplicePlan",
    "check_changes",
    "check_read",
    "new_metadata",
    "splice_of",
]

MetadataUpdate = Callable[[SessionInfo | None], Mapping[str, Any] | None]
"""Given the session's record as locked (``None``: it does not exist, or is not the
change's owner's), the session's new metadata, or ``None`` to leave it as it is."""


@dataclass(frozen=True)
class RecordChange:
    """One session's part of an ``update_together`` call.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> def count(info):
        ...     seen = info.metadata.get("seen", 0) if info is not None else 0
        ...     return {"seen": seen + 1}
        >>> storage.update_together([
        ...     RecordChange("chat-1", [Message.user("Hi")], metadata=count),
        ...     RecordChange("totals", metadata=count),
        ... ])
        >>> storage.session_info("totals").metadata == {"seen": 1}, storage.count("chat-1")
        (True, 1)

    Attributes:
        session_id: the session.
        messages: appended at the end of the session, as ``append`` does (a message
            whose id is stored with the same content is skipped).
        metadata: called under the session's lock with its record (``None`` when the
            session does not exist); returns the new metadata, or ``None`` to keep the
            stored one. It must not do I/O, and may be called more than once (a
            transaction retried after a deadlock): let it compute, and raise to refuse.
        create: when false, the session must exist already: when it does not, only
            ``metadata(None)`` is called (to raise, say) and nothing of this change is
            written. When true (the default), a missing session is created, its record
            first (``metadata`` then sees that new, empty record).
        owner: the owner the session must have, or gets when created. Through an owned
            view only the view's own owner may be given (``None`` means it); on an
            unscoped storage, ``None`` checks nothing and creates the session unowned.
    """

    session_id: str
    messages: Sequence[Message] = ()
    metadata: MetadataUpdate | None = None
    create: bool = True
    owner: str | None = None


@dataclass(frozen=True)
class CheckedChange:
    """A :class:`RecordChange` once checked: its messages validated, its owner decided."""

    session_id: str
    messages: list[Message]
    metadata: MetadataUpdate | None
    create: bool
    owner: str | None
    encoded: list[Any] = field(default_factory=list)
    """What a storage made of ``messages`` (SQL rows), filled in by the storage."""


def check_changes(changes: object, max_blob_bytes: int, scope: str | None) -> list[CheckedChange]:
    """The changes of one ``update_together`` call, checked, in sorted session id order
    (the order every storage locks them in).

    Raises:
        TypeError: ``changes`` is not a sequence of :class:`RecordChange`, a ``metadata``
            that is not callable, a ``create`` that is not a ``bool``.
        InvalidSessionIdError: a bad session id or owner.
        ValueError: one session is named twice.
        InvalidMessageError, BlobTooLargeError, DuplicateMessageError: bad messages.
        SessionOwnerError: through an owned view, an owner other than the view's.
    """
    if not isinstance(changes, Sequence) or isinstance(changes, (str, bytes)):
        raise TypeError(f"changes must be a sequence of RecordChange, not {type(changes).__name__}")
    checked: dict[str, CheckedChange] = {}
    for change in changes:
        if not isinstance(change, RecordChange):
            raise TypeError(f"changes must hold RecordChange values, not {type(change).__name__}")
        sid = check_session_id(change.session_id)
        if sid in checked:
            raise ValueError(f"session {sid!r} is named twice")
        if change.metadata is not None and not callable(change.metadata):
            raise TypeError("RecordChange.metadata must be callable or None")
        if not isinstance(change.create, bool):
            kind = type(change.create).__name__
            raise TypeError(f"RecordChange.create must be a bool, not {kind}")
        owner = scope if change.owner is None else check_owner(change.owner)
        if scope is not None and owner != scope:
            raise refuse(sid, scope)
        if isinstance(change.messages, (str, bytes)) or not isinstance(change.messages, Sequence):
            raise TypeError("RecordChange.messages must be a sequence of Message")
        messages = check_messages(change.messages, max_blob_bytes)
        checked[sid] = CheckedChange(sid, messages, change.metadata, change.create, owner)
    return [checked[sid] for sid in sorted(checked)]


def new_metadata(change: CheckedChange, info: SessionInfo | None) -> FrozenDict | None:
    """What ``change.metadata`` returns for ``info``, checked as ``update_session``
    checks metadata; ``None`` when there is no function or it keeps the stored one.

    Raises:
        TypeError, ValueError: the function returned metadata that cannot be stored;
            whatever the function raised, as it raised it.
    """
    if change.metadata is None:
        return None
    result = change.metadata(info)
    return None if result is None else check_metadata(result)


@dataclass(frozen=True)
class JointRead:
    """What ``read_together`` read, from one snapshot of the database.

    Examples:
        >>> from sqlmemory import FixedWindow, InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("chat-1", Message.user("Hi"), Message.assistant("Hello."))
        >>> read = storage.read_together("chat-1", FixedWindow(1), records=["totals"])
        >>> [m.text_content() for m in read.messages], read.records["totals"]
        (['Hello.'], None)
        >>> read.records["chat-1"].message_count
        2

    Attributes:
        messages: the session's messages (``policy``'s window of them), oldest first;
            ``[]`` when the session does not exist (for this storage's owner).
        records: the record of the session and of each id in ``records``, by id;
            ``None`` for one that does not exist (or is another owner's).
    """

    messages: list[Message]
    records: dict[str, SessionInfo | None]


def check_read(session_id: object, records: object) -> tuple[str, list[str]]:
    """The session id and the sorted ids of every record a ``read_together`` reads
    (the session's own among them), checked before any I/O.

    Raises:
        InvalidSessionIdError: a bad id (``TypeError`` for one that is no ``str``).
        TypeError: ``records`` is not a sequence of ids.
    """
    sid = check_session_id(session_id)
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        raise TypeError(f"records must be a sequence of session ids, not {type(records).__name__}")
    return sid, sorted({sid, *(check_session_id(r) for r in records)})


@dataclass(frozen=True)
class Splice:
    """What a storage's private ``_splice`` does to one session, decided under its lock.

    The primitive behind an adapter whose store works by list position (LlamaIndex's
    ``delete_message(key, idx)``) or keeps a state on the oldest messages (the archive of
    LlamaIndex's ``Memory``): the plan sees the session's record as locked, so the
    positions it names are those of the history no other writer changes before the
    commit. The messages ``[start:stop]`` are returned (and deleted when ``delete``),
    then the call's messages are appended and ``metadata`` stored, all in one transaction.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("chat-1", Message.user("a"), Message.user("b"), Message.user("c"))
        >>> taken = storage._splice("chat-1", lambda info: Splice(1, 2, delete=True))
        >>> [m.text_content() for m in taken], storage.count("chat-1")
        (['b'], 2)

    Attributes:
        start: the position of the first message taken (clamped to the history).
        stop: the position after the last one taken (clamped to the history).
        delete: delete the taken messages (else they are only read).
        metadata: the session's new metadata; ``None`` keeps the stored one.
    """

    start: int = 0
    stop: int = 0
    delete: bool = False
    metadata: Mapping[str, Any] | None = None


SplicePlan = Callable[[SessionInfo | None], Splice]
"""Given the session's record as locked (``None``: it does not exist, or is not the
view's owner's), what ``_splice`` does. It must not do I/O and may run more than once."""


def splice_of(plan: SplicePlan, info: SessionInfo | None) -> tuple[int, int, Splice]:
    """The span ``plan`` names for ``info``, clamped to its history, and the plan's result.

    Raises:
        TypeError: the plan returned something other than a :class:`Splice`.
    """
    span = plan(info)
    if not isinstance(span, Splice):
        raise TypeError(f"a splice plan must return a Splice, not {type(span).__name__}")
    count = 0 if info is None else info.message_count
    start = min(max(span.start, 0), count)
    return start, min(max(span.stop, start), count), span
