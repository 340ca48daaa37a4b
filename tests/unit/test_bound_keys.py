"""A bare insert on SQLite leaves out the keys ``None`` in every row
(``sqlmemory/storage/sql/driver_sql.py``, ``bound_keys``), and what it stores is what
every key bound would store."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from sqlmemory.storage.sql.driver_sql import bound_keys, is_watched, run_statement
from sqlmemory.storage.sql.engine import configure_engine

KEYS = ("a", "b", "c", "d")
values = st.none() | st.integers(-5, 5) | st.text(max_size=3)
rows = st.lists(st.fixed_dictionaries({key: values for key in KEYS}), min_size=1, max_size=6)

TABLE = sa.Table(
    "t",
    sa.MetaData(),
    sa.Column("n", sa.Integer, primary_key=True, autoincrement=False),
    *(sa.Column(key, sa.JSON) for key in KEYS),
)


@given(rows)
def test_the_keys_bound_are_those_not_none_in_every_row(batch: list[dict[str, Any]]) -> None:
    kept = bound_keys(batch)
    assert kept == tuple(k for k in batch[0] if any(row[k] is not None for row in batch))


@given(rows)
def test_a_bare_insert_stores_what_binding_every_key_stores(batch: list[dict[str, Any]]) -> None:
    engine = sa.create_engine("sqlite://")
    configure_engine(engine)  # the driver's cursor, as the storage runs it
    TABLE.create(engine)
    numbered = [{"n": n, **row} for n, row in enumerate(batch)]
    sent: list[str] = []
    with engine.begin() as conn:
        assert not is_watched(conn)
        dbapi = conn.connection.dbapi_connection
        assert dbapi is not None
        dbapi.set_trace_callback(sent.append)
        run_statement(conn, sa.insert(TABLE), numbered, bare_insert=True)
        dbapi.set_trace_callback(None)
        stored = conn.execute(sa.select(TABLE).order_by(TABLE.c.n)).mappings().all()
    assert [dict(row) for row in stored] == numbered
    (columns,) = {sql[sql.index("(") + 1 : sql.index(")")] for sql in sent}
    assert set(columns.split(", ")) == set(bound_keys(numbered))
