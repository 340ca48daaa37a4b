"""sqlmemory's tables on PostgreSQL hash-partitioned by ``session_id``: the scale-out proof.

PostgreSQL requires every primary key and unique constraint of a partitioned table to
include the partition key, and a foreign key between partitioned tables to reach a key
that does. So creating sqlmemory's schema with every table partitioned by
``HASH (session_id)`` checks that every key carries the distribution column, and running
the storage contract suite on it (the ``postgresql-partitioned-sync`` subject of
``tests/support/storages.py``) checks that every statement works there, as it would on
Citus distributed tables (docs/production.md, scaling out).

The schema lives in a database of its own beside the suite's PostgreSQL database
(``<name>_partitioned``), created on first use. It is the models' schema
(``sqlmemory.storage.sql.schema``) with ``PARTITION BY HASH (session_id)`` on every table
and :data:`PARTITIONS` partitions each, stamped at the head revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import make_url

__all__ = ["PARTITIONS", "create_partitioned_schema", "partitioned_url"]

PARTITIONS = 4
"""Hash partitions of each table."""


def partitioned_url(postgres_url: str) -> str:
    """The URL of the partitioned schema's database, created if it does not exist."""
    url = make_url(postgres_url)
    name = f"{url.database}_partitioned"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            exists = conn.scalar(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}
            )
            if not exists:
                conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    finally:
        admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def partitioned_metadata() -> sa.MetaData:
    """sqlmemory's tables, each partitioned by ``HASH (session_id)``."""
    from sqlmemory.storage.sql.schema import Base

    metadata = sa.MetaData(naming_convention=Base.metadata.naming_convention)
    for table in Base.metadata.sorted_tables:
        copy = table.to_metadata(metadata)
        copy.dialect_options["postgresql"]["partition_by"] = "HASH (session_id)"
    return metadata


def create_partitioned_schema(engine: sa.Engine) -> list[str]:
    """Create the partitioned tables and their partitions, stamped at head; the names of
    the partitioned tables, parents first.

    The partitions are named ``part_<table>_<n>``: outside the ``sqlmemory_`` prefix, so
    that the suite's table discovery sees (and empties) the parents only.
    """
    from sqlmemory import migrate
    from sqlmemory._tables import VERSION_TABLE

    metadata = partitioned_metadata()
    with engine.begin() as conn:
        metadata.create_all(conn)
        for table in metadata.sorted_tables:
            for n in range(PARTITIONS):
                conn.exec_driver_sql(
                    f"CREATE TABLE part_{table.name}_{n} PARTITION OF {table.name} "
                    f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {n})"
                )
        from sqlmemory.storage.sql.search_index import create_search_index

        create_search_index(conn)
        version = sa.Table(
            VERSION_TABLE,
            sa.MetaData(),
            sa.Column("version_num", sa.String(32), primary_key=True),
        )
        version.create(conn)
        conn.execute(version.insert().values(version_num=migrate.head()))
    return [t.name for t in metadata.sorted_tables]


def partitioned_tables(engine: sa.Engine) -> set[str]:
    """The names of the partitioned tables of the database (``relkind = 'p'``)."""
    with engine.connect() as conn:
        return set(conn.scalars(sa.text("SELECT relname FROM pg_class WHERE relkind = 'p'")))
