"""Usage totals: the report every storage's ``usage()`` returns, and its argument checks.

Pure Python. The SQL storages have the database add the counts up
(:mod:`~sqlmemory.storage.sql.usage_queries`), ``InMemoryStorage`` adds them in Python
(:mod:`~sqlmemory.storage._memory_usage`); both hand their sums per model to
:func:`report_of`, so the two report alike (``docs/usage.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any

from sqlmemory.types import Usage
from sqlmemory.types.token_usage import TOKEN_FIELDS

__all__ = ["EMPTY_REPORT", "UsageReport", "check_period", "report_of", "total_usage"]


def total_usage(model: str | None, counts: Iterable[int]) -> Usage:
    """A :class:`Usage` holding sums: exact integers, which may pass 2**63-1 (a single
    message's counts cannot), so they are not checked as a message's usage is."""
    usage: Usage = object.__new__(Usage)
    usage.__dict__.update(model=model, **dict(zip(TOKEN_FIELDS, map(int, counts), strict=True)))
    return usage


_NOTHING = Usage()


@dataclass(frozen=True)
class UsageReport:
    """What the messages that carry a usage add up to (``storage.usage()``).

    Examples:
        >>> from sqlmemory import InMemoryStorage, Message, Usage
        >>> storage = InMemoryStorage()
        >>> storage.append(
        ...     "chat-1",
        ...     Message.user("Hi"),
        ...     Message.assistant("Hello!", usage=Usage("gpt-4o", input_tokens=9, output_tokens=3)),
        ... )
        >>> report = storage.usage("chat-1")
        >>> report.messages, report.total.input_tokens, report.by_model["gpt-4o"].output_tokens
        (1, 9, 3)
    """

    total: Usage = _NOTHING
    """Every count added up; ``model`` is ``None``. Exact: a sum may pass 2**63-1."""
    by_model: Mapping[str, Usage] = field(default_factory=lambda: MappingProxyType({}))
    """The counts of each model, by its name, sorted; each ``Usage`` names its model. A
    usage without a model counts in :attr:`total` only."""
    messages: int = 0
    """How many messages carry a usage (an all-zero usage included)."""


EMPTY_REPORT = UsageReport()
"""The report of nothing: no message carries a usage."""


def report_of(groups: Iterable[tuple[Any, ...]]) -> UsageReport:
    """The report of per-model sums: ``(model, messages, *counts)`` rows, counts in the
    order of :data:`~sqlmemory.types.token_usage.TOKEN_FIELDS`, one row per model
    (``None`` among them)."""
    totals = [0] * len(TOKEN_FIELDS)
    messages = 0
    by_model = {}
    for model, count, *counts in groups:
        counts = [int(value) for value in counts]
        messages += int(count)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        if model is not None:
            by_model[model] = total_usage(model, counts)
    if not messages:
        return EMPTY_REPORT
    ordered = MappingProxyType(dict(sorted(by_model.items())))
    return UsageReport(total_usage(None, totals), ordered, messages)


def _bound(value: object, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise TypeError(f"{name} must be a datetime or None, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime")
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01 00:00+05:00 lies before year 1 in UTC
        raise ValueError(f"{name} lies outside the years datetime holds in UTC") from None


def check_period(since: object, until: object) -> tuple[datetime | None, datetime | None]:
    """``since`` and ``until`` in UTC: the messages counted were recorded at or after
    ``since`` and before ``until`` (either ``None``: no bound).

    Raises:
        TypeError: a bound that is not a ``datetime``.
        ValueError: a naive ``datetime``.
    """
    return _bound(since, "since"), _bound(until, "until")
