"""Durations on the command line (``--older-than 30d``): what they read, what they refuse."""

from __future__ import annotations

from datetime import timedelta

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from sqlmemory.cli.durations import duration_callback, parse_duration

UNITS = {"w": timedelta(weeks=1), "d": timedelta(days=1), "h": timedelta(hours=1)}
UNITS |= {"m": timedelta(minutes=1), "s": timedelta(seconds=1)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("90m", timedelta(minutes=90)),
        ("45s", timedelta(seconds=45)),
        ("2w", timedelta(weeks=2)),
        ("1w2d3h4m5s", timedelta(weeks=1, days=2, hours=3, minutes=4, seconds=5)),
        (" 7D ", timedelta(days=7)),
        ("0s", timedelta(0)),
    ],
)
def test_durations_read(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "is not a duration"),
        ("30", "is not a duration"),
        ("d", "is not a duration"),
        ("30 days", "is not a duration"),
        ("-1d", "is not a duration"),
        ("1.5h", "is not a duration"),
        ("1d1d", "give each unit once"),
        ("1h2d", "the largest first"),
        ("99999999999d", "longer than a duration can be"),
        ("9" * 5000 + "s", "longer than a duration can be"),
    ],
)
def test_bad_durations_are_value_errors(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        parse_duration(text)


@given(st.dictionaries(st.sampled_from(list(UNITS)), st.integers(0, 10_000), min_size=1))
def test_any_written_duration_reads_back(parts: dict[str, int]) -> None:
    ordered = [unit for unit in UNITS if unit in parts]
    text = "".join(f"{parts[unit]}{unit}" for unit in ordered)
    assert parse_duration(text) == sum((parts[u] * UNITS[u] for u in ordered), timedelta())


def test_an_option_with_the_callback_is_a_usage_error_on_bad_input() -> None:
    @click.command()
    @click.option("--older-than", callback=duration_callback, metavar="DURATION")
    def prune(older_than: timedelta | None) -> None:
        click.echo(repr(older_than))

    assert CliRunner().invoke(prune, ["--older-than", "30d"]).output.strip() == (
        "datetime.timedelta(days=30)"
    )
    assert CliRunner().invoke(prune, []).output.strip() == "None"
    refused = CliRunner().invoke(prune, ["--older-than", "soon"])
    assert refused.exit_code == 2
    assert "Invalid value for '--older-than': 'soon' is not a duration" in refused.output
