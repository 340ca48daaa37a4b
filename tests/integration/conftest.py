"""Fixtures of the SQL-specific tests.

``db``: an engine on the backend's database for tests that migrate it up and down; it
starts with empty tables at head and is brought back to head after the test, whatever
happened in between, since it is shared with the ``migrated_engine`` fixture.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from sqlmemory import migrate
from sqlmemory.errors import SchemaError
from tests.support.backends import drop_sqlmemory_tables


@pytest.fixture
def db(db_url: str, engine: sa.Engine) -> Iterator[sa.Engine]:
    """An engine on the backend's database, its tables at head and empty (``engine``),
    brought back to head after the test."""
    del engine  # requested for its empty tables: a downgrade refuses what 0001 cannot hold
    engine = sa.create_engine(db_url, poolclass=NullPool)
    try:
        yield engine
    finally:
        try:
            with engine.begin() as conn:
                for name in ("sqlmemory_extra", "host_items", "alembic_version"):
                    sa.Table(name, sa.MetaData()).drop(conn, checkfirst=True)
            try:
                migrate.check(engine)
            except SchemaError:  # a test stopped half way: rebuild from nothing
                drop_sqlmemory_tables(engine)
                migrate.upgrade(engine)
        finally:
            engine.dispose()
