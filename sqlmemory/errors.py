"""The exception tree of sqlmemory, and the one place that translates database errors.

Every error raised by the library derives from :class:`SqlMemoryError`. Errors caused by
bad input also derive from :class:`ValueError`, so ``except ValueError`` keeps working for
callers that do not know this library.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "BlobTooLargeError",
    "ConflictError",
    "ConversionError",
    "DuplicateMessageError",
    "InvalidMessageError",
    "InvalidSessionIdError",
    "MessageNotFoundError",
    "SchemaError",
    "SessionNotFoundError",
    "SessionOwnerError",
    "SqlMemoryError",
    "StorageError",
    "is_transient",
    "missing_driver_message",
    "translate_db_errors",
]

# Deadlock and serialization failures: the database rolled the transaction back and
# running it again is the documented remedy (PostgreSQL SQLSTATE; MySQL error numbers).
_TRANSIENT_SQLSTATES = frozenset({"40001", "40P01"})
_TRANSIENT_MYSQL_ERRORS = frozenset({1205, 1213})


class SqlMemoryError(Exception):
    """Root of every error raised by sqlmemory.

    Examples:
        >>> issubclass(StorageError, SqlMemoryError) and issubclass(InvalidMessageError, ValueError)
        True
    """


class InvalidMessageError(SqlMemoryError, ValueError):
    """A message, block or tool call is malformed; nothing was written.

    Examples:
        >>> from sqlmemory import Message
        >>> Message.user("")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.InvalidMessageError: a user message needs content or tool calls
    """


class InvalidSessionIdError(SqlMemoryError, ValueError):
    """A session id is empty, too long, padded with whitespace or holds control characters.

    Examples:
        >>> from sqlmemory import InMemoryStorage
        >>> InMemoryStorage().count(" padded ")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.InvalidSessionIdError: session id has leading or trailing whitespace
    """


class BlobTooLargeError(SqlMemoryError, ValueError):
    """Image or document bytes exceed the storage's configured limit.

    Examples:
        >>> from sqlmemory import DocumentBlock, InMemoryStorage, Message
        >>> storage = InMemoryStorage(max_blob_bytes=4)
        >>> storage.append("s", Message.user([DocumentBlock(b"12345", "text/plain")]))
        Traceback (most recent call last):
        ...
        sqlmemory.errors.BlobTooLargeError: document of 5 bytes exceeds the limit of 4 bytes
    """


class DuplicateMessageError(SqlMemoryError, ValueError):
    """A message id is already stored in the session with different content.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("s", Message.user("hi", id="m1"))
        >>> storage.append("s", Message.user("hi", id="m1"))  # a retry: a no-op
        >>> storage.append("s", Message.user("bye", id="m1"))
        Traceback (most recent call last):
        ...
        sqlmemory.errors.DuplicateMessageError: message id 'm1' is stored with different content
    """


class ConversionError(SqlMemoryError, ValueError):
    """A provider item that a converter of :mod:`sqlmemory.formats` cannot read.

    The message names the item's index in the list given and the field at fault; nothing
    is returned, so nothing half-converted can be stored.

    Examples:
        >>> raise ConversionError("item 2: content[0].type: 'video' is not a content part")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.ConversionError: item 2: content[0].type: 'video' is not a content part
    """


class SessionNotFoundError(SqlMemoryError, ValueError):
    """A session that must exist does not (through an owned view: is not the owner's).

    ``fork`` raises it for an absent source; nothing was written. ``session_id`` names it.

    Examples:
        >>> from sqlmemory import InMemoryStorage
        >>> InMemoryStorage().fork("no-such-chat", "copy")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.SessionNotFoundError: session 'no-such-chat' does not exist; ...
    """

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class MessageNotFoundError(SqlMemoryError, ValueError):
    """A message id that is not a message of the session.

    ``fork(..., at=...)`` raises it when ``at`` names no message of the source; nothing
    was written. ``session_id`` and ``message_id`` name them.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("chat-1", Message.user("Hi", id="m1"))
        >>> storage.fork("chat-1", "copy", at="m9")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.MessageNotFoundError: message 'm9' is not a message of session 'chat-1'...
    """

    def __init__(self, message: str, session_id: str, message_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.message_id = message_id


class StorageError(SqlMemoryError):
    """The database failed; the original driver error is the ``__cause__``.

    Examples:
        >>> try:
        ...     raise StorageError("load failed") from OSError("connection reset")
        ... except SqlMemoryError as exc:
        ...     print(type(exc.__cause__).__name__)
        OSError
    """


class SchemaError(StorageError):
    """The database schema is missing or not at the head revision of the shipped migrations.

    The message names the command that fixes it (``sqlmemory migrate --url ...``).

    Examples:
        >>> issubclass(SchemaError, StorageError)
        True
    """


class ConflictError(StorageError):
    """``compact`` lost a race (the session changed while the summarizer ran), or ``fork``
    was given a new session id that is taken.

    Nothing was written; a summary is discarded. Compacting again works on the session
    as it is now; forking again needs a free id.

    Examples:
        >>> from sqlmemory import FixedWindow, InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.append("s", Message.user("old"), Message.user("new"))
        >>> def racing_summary(older):
        ...     storage.append("s", Message.user("meanwhile"))
        ...     return Message.user("summary")
        >>> storage.compact("s", racing_summary, keep=FixedWindow(1))
        Traceback (most recent call last):
        ...
        sqlmemory.errors.ConflictError: session 's' changed while compacting; nothing was written
    """


class SessionOwnerError(StorageError):
    """A write through an owned view meets a session it may not change.

    The session belongs to another owner, or to none: through the view of ``owner`` it
    does not exist, and a write that would create or change it writes nothing
    (``docs/many-users.md``). The check runs under the session's lock, inside the write's
    own transaction.

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message
        >>> storage = InMemoryStorage()
        >>> storage.owned_by("ann").append("c1", Message.user("Hi"))
        >>> storage.owned_by("bob").append("c1", Message.user("Hello"))
        Traceback (most recent call last):
        ...
        sqlmemory.errors.SessionOwnerError: session 'c1' is not owned by 'bob'; nothing was written
    """


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a deadlock or serialization failure worth running again."""
    orig = getattr(exc, "orig", None)
    if orig is None:
        return False
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if state in _TRANSIENT_SQLSTATES:
        return True
    args: tuple[object, ...] = getattr(orig, "args", ())
    return bool(args) and args[0] in _TRANSIENT_MYSQL_ERRORS


# The extra that installs each optional driver (pyproject.toml, optional-dependencies).
_DRIVER_EXTRAS = {
    "psycopg": "postgres",
    "psycopg_binary": "postgres",
    "asyncpg": "postgres",
    "pymysql": "mysql",
    "aiomysql": "mysql",
    "aiosqlite": "async",
    "greenlet": "async",
}

# Drivers SQLAlchemy picks for a URL without one, which sqlmemory does not install.
_OTHER_DRIVERS = {
    "psycopg2": ("postgresql+psycopg", "postgres"),
    "MySQLdb": ("mysql+pymysql", "mysql"),
}


def missing_driver_message(exc: ModuleNotFoundError) -> str:
    """One line naming the missing driver and the ``pip install`` that brings it."""
    module = (exc.name or "").split(".")[0]
    if module in _OTHER_DRIVERS:
        scheme, extra = _OTHER_DRIVERS[module]
        return (
            f"the database driver {module!r} is not installed; sqlmemory uses {scheme}:// "
            f"URLs: pip install 'sqlmemory[{extra}]'"
        )
    needed_by = _DRIVER_EXTRAS.get(module)
    if needed_by is None:
        return f"a required module is not installed: {exc}"
    return f"the database driver {module!r} is not installed: pip install 'sqlmemory[{needed_by}]'"


@contextmanager
def translate_db_errors(action: str) -> Iterator[None]:
    """Re-raise SQLAlchemy errors raised inside the block as :class:`StorageError`.

    Errors of this library pass through unchanged, so validation errors raised inside a
    transaction keep their type.
    """
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except SqlMemoryError:
        raise
    except SQLAlchemyError as exc:
        raise StorageError(f"{action} failed: {exc.__class__.__name__}: {exc}") from exc
