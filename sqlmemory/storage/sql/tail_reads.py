"""The windowed tail read: a policy's window from pages of the newest messages.

:func:`read_tail` reads pages of the newest rows, each twice the size of the one before,
until the policy decides, so a window costs O(log w) statements whatever the history's
length; the block rows of a page come with it, and a policy with ``keep_system`` gets the
head of the history (its leading instructions) from the same first statement. It builds
messages with :func:`~sqlmemory.storage.sql.reads.build_messages`, reading blob bytes
only for the messages chosen.

Both front doors run it: the sync storage inside ``engine.begin()``, the async one
through ``AsyncConnection.run_sync``. It never commits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from sqlalchemy import (
    CompoundSelect,
    Connection,
    Executable,
    Integer,
    Select,
    and_,
    bindparam,
    literal_column,
    select,
    true,
    union_all,
)

from sqlmemory.policy import TailPolicy
from sqlmemory.policy.groups import HEAD_ROLES, Entry, Item
from sqlmemory.storage.sql.codec import (
    DIGEST,
    MESSAGE_FIELDS,
    N_BLOCKS,
    RECORDED_AT,
    ROLE,
    SEQ,
    TOKENS,
    entry_of,
)
from sqlmemory.storage.sql.driver_sql import read_snapshot
from sqlmemory.storage.sql.first_pages import FirstPages
from sqlmemory.storage.sql.reads import (
    ENTRIES,
    BlockRows,
    Row,
    build_messages,
    fetch_rows,
    owner_params,
    page_statements,
    scoped,
)
from sqlmemory.storage.sql.schema import MESSAGE_COLUMNS, blocks_table, messages_table
from sqlmemory.types import Message

__all__ = ["DEFAULT_PAGE", "read_tail", "split_rows", "with_blocks"]

DEFAULT_PAGE = 64
"""Messages read by the first page of a tail read, for policies that give no hint."""
HEAD_PAGE = 4
"""Messages read from the start of a session to find its head (its leading instructions)
for a policy with ``keep_system``; a longer head is read in pages twice the size."""
# A head-and-newest row is a message row (see reads.Row) with its in_head flag after it.
IN_HEAD = len(MESSAGE_FIELDS)
HEAD_ROLE_NAMES = frozenset(role.value for role in HEAD_ROLES)
BLOCK_COLUMNS = tuple(c for c in blocks_table.c if c.name != "session_id")
"""The block columns a page read joins to its message rows (``position`` is NULL on
the one row of a message without block rows)."""
BLOCK_NAMES = tuple(c.name for c in BLOCK_COLUMNS)
MAX_PAGE = 2**31 - 1
"""The largest page bound into ``LIMIT`` (PostgreSQL binds it as a 32-bit integer); a
policy asking for more (``recent(10**30)``) reads pages of this size until it is done."""
FIRST_PAGES = FirstPages()
"""The spans of the windows read last, on SQLite's own driver (``first_pages.py``)."""


@functools.cache
def _head_statements(dialect: str, owned: bool) -> tuple[Executable, Executable]:
    """Oldest-first pages of a session's head: the first one beside the newest page (one
    statement, so a window that pins the head still costs one round trip), and the one
    after a seq, for heads longer than a page.

    Both are ordered scans of the ``(session_id, seq)`` key that stop after ``LIMIT``
    rows, whatever the history's length. (A statement bounded by "the seq of the first
    message that is not an instruction" reads the whole session on MariaDB, which does
    not turn that subquery into a range.) With ``owned``, limited to ``:owner``'s session.
    """
    by_seq = messages_table.c.seq
    oldest = scoped(
        select(*MESSAGE_COLUMNS)
        .where(messages_table.c.session_id == bindparam("sid"))
        .order_by(by_seq)
        .limit(bindparam("head_page", type_=Integer)),
        owned,
    )
    newest, _ = page_statements(owned)
    head = oldest.add_columns(literal_column("1", Integer).label("in_head"))
    tail = newest.add_columns(literal_column("0", Integer).label("in_head"))
    if dialect == "sqlite":
        # SQLite takes no parenthesised SELECT in a UNION: each half is a subquery. The
        # others get the parentheses, which MariaDB runs without temporary tables (the
        # subqueries' cost it twice the newest page alone).
        both = union_all(select(head.subquery()), select(tail.subquery()))
    else:
        both = union_all(head, tail)
    return both, oldest.where(by_seq > bindparam("after"))


@functools.cache
def with_blocks(statement: Select[Any] | CompoundSelect[Any], dialect: str) -> Select[Any]:
    """``statement`` (a page of message rows) with the block rows of its messages: each
    message row once per block row (once, its block columns NULL, if it has none), by
    seq and position. One statement is one snapshot, so a page read in autocommit needs
    no second statement for its tool calls or output texts.

    On PostgreSQL the block rows come from a ``LATERAL`` subquery, one probe of the
    blocks' ``(session_id, seq)`` key per message of the page: joined plainly (or
    through a subquery it may flatten), the planner merges or hashes every block row of
    the session, so a window of a tool-calling agent cost more the longer its history.
    SQLite and MySQL/MariaDB probe the key per row of a plain join already.
    """
    page = statement.subquery("page")
    blocks = blocks_table.c
    on = (page.c.n_blocks > 0, blocks.session_id == bindparam("sid"), blocks.seq == page.c.seq)
    joined: Any = blocks_table
    condition: Any = and_(*on)
    if dialect == "postgresql":
        # OFFSET keeps the planner from pulling the subquery up into a plain join.
        joined = select(*BLOCK_COLUMNS).where(*on).offset(0).lateral("found")
        condition = true()
    return (
        select(page, *(joined.c[c.name] for c in BLOCK_COLUMNS))
        .outerjoin(joined, condition)
        # A message in both the head and the newest page comes twice, each copy whole.
        .order_by(page.c.seq.desc(), *page.c[IN_HEAD:], joined.c.position)
    )


def split_rows(joined: Sequence[Row], width: int, blocks: BlockRows) -> list[Row]:
    """The message rows of a :func:`with_blocks` read, newest first (a message read twice,
    in the head and in the newest page, once for each), its block rows put in ``blocks``.

    A message row keeps the block columns of its first row after its ``width`` fields:
    the codec reads those fields by position only.
    """
    rows: list[Row] = []
    last: Any = None
    position = width + 1
    found: list[Mapping[str, Any]] = []
    seq: Any = None
    for r in joined:
        if r[position] is None:  # a message without block rows: its only row
            rows.append(r)
            last = None
            continue
        key = (r[SEQ], r[width - 1])
        if key != last:
            last = key
            rows.append(r)
            found = []
            seq = r[SEQ]
            if seq not in blocks:
                blocks[seq] = found
        if blocks[seq] is found:
            found.append(dict(zip(BLOCK_NAMES, r[width:], strict=True)))
    return rows


ENTRY_SIZE = 350
"""The estimated bytes of an entry and its key in :data:`~.reads.ENTRIES`."""


def _entry(row: Row) -> Entry:
    key = (row[DIGEST], row[RECORDED_AT], row[TOKENS])
    found = ENTRIES.get(key)
    if found is None:
        found = entry_of(row)
        ENTRIES.put(key, found, ENTRY_SIZE)
    return found


def _joins_blocks(conn: Connection) -> bool:
    """Whether a page read brings its block rows: on a server, where a statement is a
    round trip, and through ``aiosqlite``, where each call into SQLite is a hand-off to
    its thread (the page's ``SELECT`` three, ``BEGIN`` and ``COMMIT`` one each). SQLite's
    own driver reads them apart, and only for the messages it builds, in one snapshot
    with the page (:func:`read_tail`): two plain statements cost it less than one that
    joins them."""
    return conn.dialect.name != "sqlite" or conn.dialect.is_async


def _older_page(
    conn: Connection,
    sid: str,
    page: int,
    before: Row | None,
    blocks: BlockRows,
    owner: str | None,
) -> list[Row]:
    """The ``page`` messages before ``before`` (the newest if ``None``), oldest first;
    their block rows, where :func:`_joins_blocks`, are read by the same statement and
    put in ``blocks``. Only of ``owner``'s session, when given."""
    first_page, older_page = page_statements(owner is not None)
    statement = first_page if before is None else older_page
    params = owner_params(sid, owner, page=page)
    if before is not None:
        params["before"] = before[SEQ]
    if not _joins_blocks(conn):
        return fetch_rows(conn, statement, params)[::-1]
    joined = fetch_rows(conn, with_blocks(statement, conn.dialect.name), params)
    chunk = split_rows(joined, len(MESSAGE_FIELDS), blocks)
    chunk.reverse()
    return chunk


def _head_length(rows: Sequence[Row]) -> int:
    length = 0
    while length < len(rows) and rows[length][ROLE] in HEAD_ROLE_NAMES:
        length += 1
    return length


class _NeedsTransaction(Exception):
    """A one-statement read found that it needs another statement."""


@dataclass
class _Tail:
    """What a tail read has found so far, oldest first."""

    conn: Connection
    sid: str
    policy: TailPolicy
    one_statement: bool
    page: int
    """The size of the page read last."""
    owner: str | None = None
    """The owner the session must have (an owned view's read); ``None``: any."""
    head: list[Row] = field(default_factory=list)
    """The leading instructions, read apart for a policy with ``keep_system``."""
    rows: list[Row] = field(default_factory=list)
    """The rows of the tail, after the head."""
    items: list[Any] = field(default_factory=list)
    """What the policy reads of each row: entries, or messages if it needs content."""
    blocks: BlockRows = field(default_factory=dict)
    """The block rows read with the pages, by seq."""

    def items_of(self, rows: list[Row]) -> list[Any]:
        if not self.policy.needs_content:
            return [_entry(r) for r in rows]
        return self.messages(rows)

    def add_older(self, older: list[Row]) -> bool:
        """Put ``older`` (a page, oldest first) before the rows; True at the history's start."""
        at_start = len(older) < self.page
        if self.head:
            # A short history's newest page reaches back into the head: those rows are
            # the head's, not the tail's.
            boundary = self.head[-1][SEQ]
            after_head = [r for r in older if r[SEQ] > boundary]
            at_start = at_start or len(after_head) < len(older)
            older = after_head
        self.rows = older + self.rows
        self.items = self.items_of(older) + self.items
        return at_start

    def read_older(self) -> list[Row]:
        if self.one_statement:
            raise _NeedsTransaction
        self.page = min(self.page * 2, MAX_PAGE)
        return _older_page(self.conn, self.sid, self.page, self.rows[0], self.blocks, self.owner)

    def read_head_and_newest(self) -> list[Row]:
        """Read the head into :attr:`head` and return the newest page, in one statement
        unless the head is longer than :data:`HEAD_PAGE` messages."""
        both, after = _head_statements(self.conn.dialect.name, self.owner is not None)
        params = owner_params(self.sid, self.owner, page=self.page, head_page=HEAD_PAGE)
        if _joins_blocks(self.conn):
            joined = fetch_rows(self.conn, with_blocks(both, self.conn.dialect.name), params)
            rows = split_rows(joined, IN_HEAD + 1, self.blocks)
        else:
            rows = fetch_rows(self.conn, both, params)
        head_page: list[Row] = sorted((r for r in rows if r[IN_HEAD]), key=lambda r: r[SEQ])
        newest: list[Row] = sorted((r for r in rows if not r[IN_HEAD]), key=lambda r: r[SEQ])
        size = HEAD_PAGE
        while True:
            length = _head_length(head_page)
            self.head += head_page[:length]
            if length < size:
                return newest
            if self.one_statement:
                raise _NeedsTransaction
            size = min(size * 2, MAX_PAGE)
            params = owner_params(self.sid, self.owner, head_page=size, after=self.head[-1][SEQ])
            head_page = fetch_rows(self.conn, after, params)

    def messages(self, rows: list[Row]) -> list[Message]:
        if not self.one_statement:
            return build_messages(self.conn, self.sid, rows, self.blocks)
        if any(r[N_BLOCKS] and r[SEQ] not in self.blocks for r in rows):
            raise _NeedsTransaction  # block rows not read with the page (a long head's)
        # Blob bytes come from a second statement, outside a transaction too: a blob is
        # keyed by its content's hash, so bytes found are the ones the page's rows point
        # at. Only a blob gone meanwhile (its messages deleted) sends the read to a
        # snapshot transaction.
        messages = build_messages(self.conn, self.sid, rows, self.blocks, missing_ok=True)
        if messages is None:
            raise _NeedsTransaction
        return messages


def read_tail(
    conn: Connection,
    sid: str,
    policy: TailPolicy,
    *,
    one_statement: bool = False,
    owner: str | None = None,
) -> list[Message] | None:
    """The policy's window, reading pages of the newest messages until it is decided.

    Pages double in size, so a window over w messages costs O(log w) queries whatever
    the history's length; blocks and blob bytes are read only for the messages chosen.
    A policy with ``keep_system`` gets the head of the history (its leading
    instructions) from the same first statement. With ``one_statement``, returns
    ``None`` instead of running a second statement (the caller then reads again inside
    a snapshot transaction); on SQLite's own driver, where a statement is no round trip,
    it reads in a snapshot of its own instead (:func:`~.driver_sql.read_snapshot`). With
    ``owner``, a session that is not theirs reads as empty: the check is part of every
    statement that reads its rows.
    """
    if one_statement and not _joins_blocks(conn):
        with read_snapshot(conn):
            return read_tail(conn, sid, policy, owner=owner)
    hint = min(max(int(getattr(policy, "page_hint", DEFAULT_PAGE)), 1), MAX_PAGE)
    learning = not _joins_blocks(conn)  # SQLite's own driver (first_pages.py)
    page = min(FIRST_PAGES.first(sid, hint), MAX_PAGE) if learning else hint
    tail = _Tail(conn, sid, policy, one_statement, page, owner)
    try:
        if not getattr(policy, "keep_system", False):
            newest = _older_page(conn, sid, tail.page, None, tail.blocks, owner)
            chosen = _decide(tail, newest, policy.select)
            head: list[Any] = []
        else:
            pinning = cast(_PinningPolicy, policy)
            newest = tail.read_head_and_newest()
            head = tail.items_of(tail.head)
            chosen = _decide(
                tail, newest, lambda items, done: pinning.select(items, done, head=head)
            )
        if learning:
            FIRST_PAGES.learn(sid, hint, len(tail.rows) - min(chosen, default=len(tail.rows)))
        return _window(tail, chosen, head)
    except _NeedsTransaction:
        return None


def _decide(
    tail: _Tail, newest: list[Row], select: Callable[[list[Any], bool], list[int] | None]
) -> list[int]:
    """Read older pages until ``select`` decides; its indices into the tail's items."""
    older = newest
    while True:
        at_start = tail.add_older(older)
        chosen = select(tail.items, at_start)
        if chosen is not None:
            return chosen
        if at_start:
            raise TypeError(f"{tail.policy!r}.select() returned None for a whole history")
        older = tail.read_older()


def _window(tail: _Tail, chosen: list[int], head: list[Any]) -> list[Message]:
    if tail.policy.needs_content:
        return [*head, *(tail.items[i] for i in chosen)]
    picked = [tail.rows[i] for i in chosen]
    return [*tail.messages(tail.head), *tail.messages(picked)]


class _PinningPolicy(TailPolicy, Protocol):
    """A tail policy with a true ``keep_system``: its ``select`` takes the head too."""

    def select(
        self, tail: Sequence[Item], complete: bool, *, head: Sequence[Item] = ()
    ) -> list[int] | None: ...
