"""The checks a message passes when it is built, and the values it gets when given none.

- :func:`check_shape`: what each role may hold (tool calls on assistant messages only, a
  tool message answers one call, only a tool result may be empty or an error);
- :func:`check_time`: ``recorded_at`` is an aware datetime in the years every backend
  holds, made UTC; :func:`utc_now` is the time storages stamp;
- :func:`new_id`: a time-ordered UUID (version 7) as text, the id of a message given none;
- :func:`copy_unchecked`: a copy with fields changed that skips the checks passed already.

Pure Python, no SQLAlchemy; used by :class:`~sqlmemory.types.message.Message`, whose
:class:`~sqlmemory.types.message.Role` is a ``str``: roles are compared by their value here.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from datetime import datetime, timezone
from typing import Any, TypeVar, cast

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._message_content import call_ids
from sqlmemory.types.blocks import TextBlock, check_id
from sqlmemory.types.content import Block

__all__ = [
    "MAX_YEAR",
    "MIN_YEAR",
    "check_shape",
    "check_time",
    "copy_unchecked",
    "new_id",
    "utc_now",
]

T = TypeVar("T")

MIN_YEAR, MAX_YEAR = 1, 9998
"""The years a ``recorded_at`` may fall in (UTC): every backend and ``datetime`` arithmetic
near the edges (time zones, microseconds) stay in range."""


def new_id() -> str:
    """A UUID version 7 (RFC 9562) as text: the Unix time in milliseconds, then 12 bits
    of the millisecond's fraction, then 62 random bits.

    Ids made later sort after earlier ones (the hex digits compare as the numbers do), so
    the rows of one append land side by side in the ``(session_id, message_id)`` index
    instead of in a random page each: on SQLite a commit of 100 messages wrote 155 pages
    of its journal with random ids, 33 with these (``docs/performance.md``). The id tells
    when it was made, to the millisecond, as ``recorded_at`` does.

    Examples:
        >>> import uuid
        >>> uuid.UUID(new_id()).version
        7
    """
    ms, fraction = divmod(time.time_ns(), 1_000_000)
    head = (ms << 16 | 0x7000 | fraction * 4096 // 1_000_000) & _HEAD  # version 7, fraction
    raw = bytearray(head.to_bytes(8, "big") + os.urandom(8))
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 9562 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_HEAD = (1 << 64) - 1
"""Eight bytes: the 48 bits of milliseconds wrap around in the year 10889."""


def check_time(value: object) -> datetime | None:
    """``value`` (a ``recorded_at``) in UTC, or ``None`` for ``None``.

    Examples:
        >>> from datetime import timedelta
        >>> check_time(datetime(2025, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))))
        datetime.datetime(2025, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)

    Raises:
        InvalidMessageError: not a datetime, a naive one, or one outside the years
            :data:`MIN_YEAR` to :data:`MAX_YEAR` in UTC.
    """
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidMessageError("Message.recorded_at must be a datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidMessageError("Message.recorded_at must be timezone-aware")
    try:
        utc = value.astimezone(timezone.utc)
    except OverflowError:  # e.g. 0001-01-01 00:00+05:00 lies before year 1 in UTC
        utc = None
    if utc is None or not MIN_YEAR <= utc.year <= MAX_YEAR:
        raise InvalidMessageError(
            f"Message.recorded_at must lie within the years {MIN_YEAR} to {MAX_YEAR} (UTC), "
            f"not {value.isoformat()}"
        )
    return utc


def _a(role: str) -> str:
    name = str(role)
    return f"an {name}" if name == "assistant" else f"a {name}"


def check_shape(
    role: str, content: tuple[Block, ...], tool_call_id: str | None, is_error: object
) -> None:
    """Check that a message of ``role`` may hold these fields.

    Raises:
        InvalidMessageError: the first rule they break, named.
    """
    ids = call_ids(content)
    if ids and role != "assistant":
        raise InvalidMessageError(f"{_a(role)} message cannot carry tool calls")
    if len(ids) > 1 and len(set(ids)) != len(ids):
        raise InvalidMessageError("tool call ids must be unique within a message")
    if role == "tool":
        if tool_call_id is None:
            raise InvalidMessageError("a tool message needs the tool_call_id it answers")
        check_id(tool_call_id, "Message.tool_call_id")
    elif tool_call_id is not None:
        raise InvalidMessageError(f"{_a(role)} message cannot have a tool_call_id")
    if not isinstance(is_error, bool):
        raise InvalidMessageError("Message.is_error must be a bool")
    if is_error and role != "tool":
        raise InvalidMessageError(f"{_a(role)} message cannot be an error result")
    # A tool result may be empty (providers accept it); any other message says something.
    if role != "tool" and not any(not isinstance(b, TextBlock) or b.text for b in content):
        raise InvalidMessageError(f"{_a(role)} message needs content or tool calls")


def utc_now() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(timezone.utc)


@functools.cache
def _field_names(cls: Any) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(cls))


def copy_unchecked(cls: type[T], message: T, **changes: Any) -> T:
    """A ``cls`` holding the fields of ``message`` (a frozen dataclass), with ``changes``.

    Built with ``object.__new__`` so the already-validated fields are not checked again:
    the caller checks what it changes.
    """
    clone = object.__new__(cls)
    # cast: functools.cache asks for a Hashable, which mypy does not hold a type[T] to be.
    for name in _field_names(cast(Any, cls)):
        object.__setattr__(clone, name, changes.get(name, getattr(message, name)))
    return clone
