"""Durations on the command line: ``30d``, ``12h``, ``1w2d``, ``90m``, ``45s``.

For ``sqlmemory prune --older-than 30d``: a number followed by a unit, ``s`` (seconds),
``m`` (minutes), ``h`` (hours), ``d`` (days) or ``w`` (weeks), possibly several
(``1d12h``), largest unit first.

Examples:
    >>> parse_duration("30d")
    datetime.timedelta(days=30)
    >>> parse_duration("1d12h")
    datetime.timedelta(days=1, seconds=43200)
    >>> parse_duration("30 days")
    Traceback (most recent call last):
    ...
    ValueError: '30 days' is not a duration: a number and a unit, as 30d, 12h, 1w2d, 90m or 45s
"""

from __future__ import annotations

import re
from datetime import timedelta

import click

__all__ = ["duration_callback", "parse_duration"]

_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
_PART = re.compile(r"(\d+)([wdhms])")
_WHOLE = re.compile(r"(?:\d+[wdhms])+")


def parse_duration(text: str) -> timedelta:
    """The ``timedelta`` that ``text`` writes (see the module's examples).

    Raises:
        ValueError: ``text`` is no duration, repeats a unit, has units out of order, or
            is longer than ``timedelta`` can hold.
    """
    compact = text.strip().lower()
    if not _WHOLE.fullmatch(compact):
        raise ValueError(
            f"{text!r} is not a duration: a number and a unit, as 30d, 12h, 1w2d, 90m or 45s"
        )
    parts = _PART.findall(compact)
    units = [unit for _, unit in parts]
    order = list(_UNITS)
    if units != sorted(set(units), key=order.index):
        raise ValueError(f"{text!r}: give each unit once, the largest first (as 1w2d)")
    try:
        return timedelta(**{_UNITS[unit]: int(number) for number, unit in parts})
    except (OverflowError, ValueError):  # past timedelta's range, or a 5,000-digit number
        raise ValueError(f"{text!r} is longer than a duration can be") from None


def duration_callback(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> timedelta | None:
    """A click option callback reading :func:`parse_duration`'s forms (``None`` stays).

    Examples:
        >>> import click
        >>> @click.command()
        ... @click.option("--older-than", callback=duration_callback, metavar="DURATION")
        ... def prune(older_than): print(older_than)
        >>> prune(["--older-than", "2w"], standalone_mode=False)
        14 days, 0:00:00
    """
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
