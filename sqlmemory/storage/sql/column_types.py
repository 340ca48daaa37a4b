"""Column types that behave the same on SQLite, PostgreSQL and MySQL/MariaDB."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import DateTime, Dialect, LargeBinary, String, Text
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = ["Blob", "Key", "UTCDateTime", "Utf8Text"]

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
        # datetime.fromisoformat parses in C; SQLAlchemy's generic parser, then the zone,
        # cost several times more per row, and full reads parse one per message.
        # Parsing the zone with the rest is several times faster than replace(tzinfo=).
        parse = datetime.fromisoformat

        def process(value: str | None) -> datetime | None:
            return None if value is None else parse(value + "+00:00")

        return process


_MYSQL = ("mysql", "mariadb")


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


class Utf8Text(_OnlyFor):
    """Any Python ``str`` that encodes to UTF-8, NUL and 4-byte characters included.

    PostgreSQL ``text`` cannot hold NUL, so there the UTF-8 bytes go into ``bytea``;
    MySQL/MariaDB get ``LONGTEXT`` in utf8mb4 with a binary collation.
    """

    impl = Text
    cache_ok = True
    converting_dialects = ("postgresql",)

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(postgresql.BYTEA())
        if dialect.name in ("mysql", "mariadb"):
            longtext = mysql.LONGTEXT(charset="utf8mb4", collation="utf8mb4_bin")
            return dialect.type_descriptor(longtext)
        return dialect.type_descriptor(Text())

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if value is not None and dialect.name == "postgresql":
            return value.encode("utf-8")
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is not None and dialect.name == "postgresql":
            return bytes(value).decode("utf-8")
        return value  # type: ignore[no-any-return]


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


Blob = LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")
"""Image and document bytes (``LONGBLOB`` on MySQL/MariaDB)."""
