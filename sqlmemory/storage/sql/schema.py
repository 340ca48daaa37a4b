"""The sqlmemory tables: ORM rows in SQLAlchemy 2.0 declarative style, and their Core tables.

Migrations (``migrations/``) are generated from and checked against these models. The SQL
functions use the Core tables (``sessions_table`` and friends) directly.

Every table's primary key starts with ``session_id`` and every query filters by it, so
the schema distributes by session (Citus, PostgreSQL partitioning) without change.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from sqlmemory.storage.sql.column_types import (
    Blob,
    Key,
    SearchText,
    UTCDateTime,
    Utf8Text,
    utc_text,
)
from sqlmemory.storage.sql.usage_rows import usage_text

__all__ = [
    "MESSAGE_COLUMNS",
    "Base",
    "BlobRow",
    "BlockRow",
    "MessageRow",
    "SessionRow",
    "blobs_table",
    "blocks_table",
    "messages_table",
    "sessions_table",
]

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

BLOB_NOT_NULL = "blob_sha256 IS NOT NULL"
"""The predicate of the partial blob index of ``sqlmemory_blocks`` on PostgreSQL."""

HAS_USAGE = "usage_input_tokens IS NOT NULL"
"""The predicate of the partial usage index of ``sqlmemory_messages`` (PostgreSQL,
SQLite): the message carries a usage."""
USAGE_INDEX = "ix_sqlmemory_messages_usage"
"""The index the usage totals read (``usage_queries.py``)."""

# InnoDB for transactions and foreign keys; utf8mb4 so 4-byte characters fit.
MYSQL_TABLE_ARGS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
}


class Base(DeclarativeBase):
    """Declarative base of sqlmemory's tables, with a constraint naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class SessionRow(Base):
    """A session's record; its row is the per-session lock under which ``seq`` is allocated."""

    __tablename__ = "sqlmemory_sessions"
    __table_args__ = (
        # list_sessions pages by (updated_at, session_id), newest first: a page is an
        # ordered range scan of this index, however deep it is.
        Index(None, "updated_at", "session_id"),
        # ... and one owner's pages (and erase_owner's batches) scan this one's range of
        # that owner, in the same order.
        Index(None, "owner", "updated_at", "session_id"),
        # branches(session_id): the sessions forked from one, oldest first.
        Index(None, "parent_id", "created_at", "session_id"),
        MYSQL_TABLE_ARGS,
    )

    session_id: Mapped[str] = mapped_column(Key, primary_key=True)
    next_seq: Mapped[int] = mapped_column(BigInteger, default=1)
    """The ``seq`` the next appended message gets."""
    last_recorded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    """The latest ``recorded_at`` stored, so assigned times never go backwards."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    history_digest: Mapped[str | None] = mapped_column(String(64))
    """Hash chain over the (id, digest) of every stored message, as the last ``save`` left
    them; any other write clears it. Lets a save of a grown history skip reading it."""
    history_len: Mapped[int | None] = mapped_column(BigInteger)
    """How many messages ``history_digest`` covers."""
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    """Wall-clock time of the last write that changed the session; never decreases."""
    message_count: Mapped[int] = mapped_column(BigInteger)
    """How many messages the session holds, kept by every write."""
    title: Mapped[str | None] = mapped_column(Utf8Text)
    """The caller's title (``update_session``)."""
    metadata_json: Mapped[str | None] = mapped_column(Utf8Text)
    """The caller's session metadata as JSON text (key order kept); NULL when empty."""
    text_base64: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Whether the row's text columns hold the base64 of their UTF-8 bytes: on PostgreSQL,
    for a row whose text holds NUL (``base64_text.py``)."""
    owner: Mapped[str | None] = mapped_column(Key)
    """Whose session it is (``docs/many-users.md``); NULL: nobody's. Owned views check it
    under the session's lock, in the write's own transaction."""
    parent_id: Mapped[str | None] = mapped_column(Key)
    """The session this one was forked from (``fork``); a plain id, no foreign key, so it
    outlives the parent's deletion. NULL: not a fork."""
    forked_at: Mapped[str | None] = mapped_column(Key)
    """The id of the parent's message the fork ends at; NULL for a whole copy."""


class BlobRow(Base):
    """Image or document bytes, stored once per session and content hash."""

    __tablename__ = "sqlmemory_blobs"
    __table_args__ = (MYSQL_TABLE_ARGS,)

    session_id: Mapped[str] = mapped_column(
        Key, ForeignKey("sqlmemory_sessions.session_id", ondelete="CASCADE"), primary_key=True
    )
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    data: Mapped[bytes] = mapped_column(Blob)
    size: Mapped[int] = mapped_column(BigInteger)
    width: Mapped[int | None] = mapped_column(Integer)
    """Image width read from the header when stored, so estimates never need the bytes."""
    height: Mapped[int | None] = mapped_column(Integer)


class MessageRow(Base):
    """One message; ``seq`` is its place in the session (append order)."""

    __tablename__ = "sqlmemory_messages"
    __table_args__ = (
        UniqueConstraint("session_id", "message_id"),
        # The usage totals of a session, or of each session of an owner, over a time
        # range read this range of the session's messages that carry usage. Partial
        # where the backend allows it: messages without usage (most) are not in it.
        Index(
            USAGE_INDEX,
            "session_id",
            "recorded_at",
            postgresql_where=text(HAS_USAGE),
            sqlite_where=text(HAS_USAGE),
        ),
        MYSQL_TABLE_ARGS,
    )

    session_id: Mapped[str] = mapped_column(
        Key, ForeignKey("sqlmemory_sessions.session_id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    message_id: Mapped[str] = mapped_column(Key)
    role: Mapped[str] = mapped_column(String(16))
    tool_call_id: Mapped[str | None] = mapped_column(Key)
    text: Mapped[str | None] = mapped_column(Utf8Text)
    """The first content block, when it is a text block without extras (the common case:
    a message of one text needs no block row); the other blocks are rows."""
    n_blocks: Mapped[int] = mapped_column(Integer)
    """How many rows the message has in ``sqlmemory_blocks``."""
    call_ids: Mapped[str | None] = mapped_column(Utf8Text)
    """JSON list of the ids of the calls the message makes, so windows are found from
    message rows alone, without reading blocks."""
    metadata_json: Mapped[str | None] = mapped_column(Utf8Text)
    """The caller's metadata as JSON text (key order kept); NULL when empty."""
    extras_json: Mapped[str | None] = mapped_column(Utf8Text)
    """The provider's extras as JSON text (key order kept); NULL when empty."""
    is_error: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """A tool result that reports a failure."""
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)
    digest: Mapped[str] = mapped_column(String(64))
    """SHA-256 of the message's content: idempotent appends and incremental saves."""
    tokens: Mapped[int] = mapped_column(Integer)
    """The default token estimate, so token windows are found without reading content."""
    text_base64: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Whether the row's text columns hold the base64 of their UTF-8 bytes: on PostgreSQL,
    for a row whose text holds NUL (``base64_text.py``)."""
    usage_input_tokens: Mapped[int | None] = mapped_column(BigInteger)
    """The message's ``Usage`` (``usage_rows.py``): NULL here and in the five below when
    it has none."""
    usage_output_tokens: Mapped[int | None] = mapped_column(BigInteger)
    usage_cache_read_tokens: Mapped[int | None] = mapped_column(BigInteger)
    usage_cache_write_tokens: Mapped[int | None] = mapped_column(BigInteger)
    usage_reasoning_tokens: Mapped[int | None] = mapped_column(BigInteger)
    usage_model: Mapped[str | None] = mapped_column(Key)
    search_text: Mapped[str | None] = mapped_column(SearchText)
    """What search sees of the message (``search_rules.visible_text``), NUL as a space;
    NULL when it shows nothing. Each backend indexes it (``sql/search_index.py``)."""


class BlockRow(Base):
    """One content block of a message; image and document bytes live in a blob.

    The columns a block uses depend on its ``kind`` (``docs/contract/persistence.md``):
    a tool call keeps its id in ``call_id``, its name in ``name``, its ``arguments_text``
    in ``text`` and its arguments in ``value_json``; an opaque item its provider in
    ``name`` and its payload in ``value_json``.
    """

    __tablename__ = "sqlmemory_blocks"
    __table_args__ = (
        ForeignKeyConstraint(
            ["session_id", "seq"],
            ["sqlmemory_messages.session_id", "sqlmemory_messages.seq"],
            ondelete="CASCADE",
        ),
        # Composite: a block can only ever reference bytes of its own session.
        ForeignKeyConstraint(
            ["session_id", "blob_sha256"],
            ["sqlmemory_blobs.session_id", "sqlmemory_blobs.sha256"],
        ),
        # Finds the blocks that still reference a blob when unreferenced blobs are swept.
        # Partial on PostgreSQL: the blocks without bytes (nearly all) are not in it, and
        # the planner of a database without statistics yet cannot pick it to probe the
        # blocks of a message (the session's rows of it, filtered by seq) instead of the
        # primary key. MySQL/MariaDB have no partial indexes.
        Index(None, "session_id", "blob_sha256", postgresql_where=text(BLOB_NOT_NULL)),
        MYSQL_TABLE_ARGS,
    )

    session_id: Mapped[str] = mapped_column(Key, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    """The block's index in the message's content."""
    kind: Mapped[str] = mapped_column(String(32))
    text: Mapped[str | None] = mapped_column(Utf8Text)
    """Text of a text block, reasoning of a thinking block, data of a redacted thinking
    block, ``arguments_text`` of a tool call."""
    signature: Mapped[str | None] = mapped_column(Utf8Text)
    media_type: Mapped[str | None] = mapped_column(String(100))
    url: Mapped[str | None] = mapped_column(Utf8Text)
    file_id: Mapped[str | None] = mapped_column(Utf8Text)
    title: Mapped[str | None] = mapped_column(Utf8Text)
    detail: Mapped[str | None] = mapped_column(String(16))
    width: Mapped[int | None] = mapped_column(Integer)
    """An image's width: from its header, or as the caller gave it for a reference."""
    height: Mapped[int | None] = mapped_column(Integer)
    blob_sha256: Mapped[str | None] = mapped_column(String(64))
    call_id: Mapped[str | None] = mapped_column(Key)
    """A tool call's id; the ``call_id`` of an opaque item."""
    name: Mapped[str | None] = mapped_column(Utf8Text)
    """A tool call's name; an opaque item's provider."""
    value_json: Mapped[str | None] = mapped_column(Utf8Text)
    """A tool call's arguments (NULL when ``text`` is exactly their compact JSON; ``null``
    when they are ``None``); an opaque item's payload."""
    extras_json: Mapped[str | None] = mapped_column(Utf8Text)
    """The block's extras as JSON text; NULL when empty."""
    text_base64: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Whether the row's text columns hold the base64 of their UTF-8 bytes: on PostgreSQL,
    for a row whose text holds NUL (``base64_text.py``)."""


sessions_table = cast(Table, SessionRow.__table__)
"""``sqlmemory_sessions``: one row per session, its lock and seq counter."""
messages_table = cast(Table, MessageRow.__table__)
"""``sqlmemory_messages``: one row per message."""
blocks_table = cast(Table, BlockRow.__table__)
"""``sqlmemory_blocks``: the content blocks of messages that are not one plain text."""
blobs_table = cast(Table, BlobRow.__table__)
"""``sqlmemory_blobs``: image and document bytes, once per session and hash."""

MESSAGE_COLUMNS = (
    messages_table.c.seq,
    messages_table.c.message_id,
    messages_table.c.role,
    messages_table.c.tool_call_id,
    messages_table.c.text,
    messages_table.c.n_blocks,
    messages_table.c.call_ids,
    messages_table.c.metadata_json,
    messages_table.c.extras_json,
    messages_table.c.is_error,
    utc_text(messages_table.c.recorded_at).label("recorded_at"),
    messages_table.c.tokens,
    messages_table.c.digest,
    messages_table.c.text_base64,
    usage_text(messages_table).label("usage"),
)
"""The message columns every read selects; ``recorded_at`` as text (:class:`utc_text`), the
six usage columns as one text (:func:`~sqlmemory.storage.sql.usage_rows.usage_text`)."""
