"""Column types that behave the same on SQLite, PostgreSQL and MySQL/MariaDB."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import DateTime, Dialect, LargeBinary, String, Text
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = ["Blob", "Key", "LegacyUtf8Text", "SearchText", "UTCDateTime", "Utf8Text", "utc_text"]

_ZERO = timedelta(0)
_combine = datetime.combine


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime with microseconds; naive values are refused.

    PostgreSQL keeps ``timestamptz``; MySQL ``DATETIME(6)`` and SQLite text hold the UTC
    wall time, and the zone is put back on read.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("naive datetimes are refused: give a timezone-aware one")
        value = value.astimezone(timezone.utc)
        return value if dialect.name == "postgresql" else value.replace(tzinfo=None)

    def bind_processor(self, dialect: Dialect) -> Any:
        if dialect.name != "sqlite":
            return super().bind_processor(dialect)
        # SQLite stores SQLAlchemy's text form of the UTC wall time, made here in one
        # step; a write binds its stamp several times (the session's record, each row),
        # so the text of the last value is kept (a pair, swapped whole: thread-safe).
        last: tuple[datetime | None, str | None] = (None, None)

        def process(value: datetime | None) -> str | None:
            nonlocal last
            if value is None:
                return None
            seen, text = last
            if value is seen:
                return text
            naive = self.process_bind_param(value, dialect)
            assert naive is not None  # noqa: S101 - a datetime in, a datetime out
            text = naive.isoformat(" ", "microseconds")
            last = (value, text)
            return text

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not None and value.utcoffset() != _ZERO:
            return value.astimezone(timezone.utc)
        # UTC already, or naive UTC wall time: datetime.combine puts the zone on several
        # times faster than replace(tzinfo=) or astimezone(), once per row read.
        return _combine(value, value.time(), timezone.utc)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        if dialect.name != "sqlite":
            return super().result_processor(dialect, coltype)
        # SQLite hands back SQLAlchemy's text form ("YYYY-MM-DD HH:MM:SS.ffffff"), which
        # datetime.fromisoformat parses in C, with the zone, several times faster than
        # SQLAlchemy's generic parser and replace(tzinfo=) (session records; message
        # reads select utc_text and parse it themselves).
        parse = datetime.fromisoformat

        def process(value: str | None) -> datetime | None:
            return None if value is None else parse(value + "+00:00")

        return process


class utc_text(FunctionElement[str]):
    """A :class:`UTCDateTime` column as the text of its UTC time, ``YYYY-MM-DD
    HH:MM:SS.ffffff``: for the reads that build a message per row, where
    ``datetime.fromisoformat`` (one C call) is several times cheaper than the driver's
    datetime and the zone put on it. SQLite stores that text already; PostgreSQL and
    MySQL/MariaDB format it in the query.
    """

    type = String()
    name = "utc_text"
    inherit_cache = True


@compiles(utc_text)
def _utc_text_as_stored(element: utc_text, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.clauses, **kw)


@compiles(utc_text, "postgresql")
def _utc_text_postgresql(element: utc_text, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.clauses, **kw)
    return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"


@compiles(utc_text, "mysql")
@compiles(utc_text, "mariadb")
def _utc_text_mysql(element: utc_text, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.clauses, **kw)
    # pymysql and aiomysql take %-style parameters: a literal % is written twice.
    return f"DATE_FORMAT({column}, '%%Y-%%m-%%d %%H:%%i:%%s.%%f')"


_MYSQL = ("mysql", "mariadb")
_LONGTEXT = mysql.LONGTEXT(charset="utf8mb4", collation="utf8mb4_bin")


class _OnlyFor(TypeDecorator[str]):
    """A decorator whose conversions matter on some dialects and are identities elsewhere.

    Where they are identities no processor is returned at all, so SQLAlchemy does not
    call into Python for every value of every row read or written.
    """

    converting_dialects: tuple[str, ...] = ()

    def bind_processor(self, dialect: Dialect) -> Any:
        if dialect.name in self.converting_dialects:
            return super().bind_processor(dialect)
        return None

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        if dialect.name in self.converting_dialects:
            return super().result_processor(dialect, coltype)
        return None


class LegacyUtf8Text(_OnlyFor):
    """The text type of revisions 0001 to 0003, kept for them: as :data:`Utf8Text`, but on
    PostgreSQL the UTF-8 bytes in ``bytea``, converted in Python on every read and write."""

    impl = Text
    cache_ok = True
    converting_dialects = ("postgresql",)

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(postgresql.BYTEA())
        if dialect.name in _MYSQL:
            return dialect.type_descriptor(_LONGTEXT)
        return dialect.type_descriptor(Text())

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        return None if value is None else value.encode("utf-8")

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else bytes(value).decode("utf-8")


class Key(_OnlyFor):
    """A string key of up to 255 characters compared exactly (case, trailing spaces).

    MySQL/MariaDB collations ignore trailing spaces (PAD SPACE) even when binary, so
    there keys are stored as their UTF-8 bytes in ``VARBINARY``.
    """

    impl = String(255)
    cache_ok = True
    converting_dialects = _MYSQL

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.VARBINARY(1020))
        return dialect.type_descriptor(String(255))

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if value is not None and dialect.name in ("mysql", "mariadb"):
            return value.encode("utf-8")
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).decode("utf-8")
        return value  # type: ignore[no-any-return]


Utf8Text = Text().with_variant(_LONGTEXT, "mysql", "mariadb")
"""Any Python ``str`` that encodes to UTF-8, read and written without conversion.

``text`` on PostgreSQL and SQLite, ``LONGTEXT`` in utf8mb4 with a binary collation on
MySQL/MariaDB. PostgreSQL ``text`` cannot hold NUL: there a row whose text holds one keeps
its text columns in base64 and says so in its ``text_base64`` flag
(:mod:`~sqlmemory.storage.sql.base64_text`); no other value costs a Python call on its way
in or out."""
Blob = LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")
"""Image and document bytes (``LONGBLOB`` on MySQL/MariaDB)."""
SearchText = Text().with_variant(
    mysql.LONGTEXT(charset="utf8mb4", collation="utf8mb4_unicode_ci"), "mysql", "mariadb"
)
"""A message's visible text, for full-text search (``docs/search.md``): as
:data:`Utf8Text`, but on MySQL/MariaDB in a case- and accent-insensitive collation, which
the ``FULLTEXT`` index folds words by."""
