"""On SQLite a ``UTCDateTime`` is bound as its text in one step
(``sqlmemory/storage/sql/column_types.py``): the text SQLAlchemy's own ``DATETIME`` makes of
the UTC wall time, for any aware datetime, whatever was bound before it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite

from sqlmemory.storage.sql.column_types import UTCDateTime
from tests.support.strategies import ZONES

DIALECT = sqlite.dialect()
SQLALCHEMY_TEXT = sqlite.DATETIME().bind_processor(DIALECT)
aware = st.datetimes(
    min_value=datetime(2, 1, 1),  # noqa: DTZ001 - bounds; the zone comes from ``timezones``
    max_value=datetime(9997, 12, 31),  # noqa: DTZ001
    timezones=st.sampled_from(ZONES),
)


def expected(value: datetime) -> str:
    text: str = SQLALCHEMY_TEXT(value.astimezone(timezone.utc).replace(tzinfo=None))
    return text


@given(st.lists(aware, min_size=1, max_size=8), st.data())
def test_each_value_is_bound_as_sqlalchemys_text(
    values: list[datetime], data: st.DataObject
) -> None:
    process = UTCDateTime().bind_processor(DIALECT)
    order = data.draw(st.lists(st.sampled_from(range(len(values))), min_size=1, max_size=20))
    for i in order:  # the same objects again and again, others in between
        assert process(values[i]) == expected(values[i])
    assert process(None) is None


def test_a_naive_datetime_is_refused_even_after_an_aware_one() -> None:
    process = UTCDateTime().bind_processor(DIALECT)
    process(datetime(2026, 1, 1, tzinfo=timezone.utc))
    with pytest.raises(ValueError, match="naive"):
        process(datetime(2026, 1, 1))  # noqa: DTZ001 - naive on purpose
