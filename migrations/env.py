"""Alembic environment of sqlmemory's migrations.

sqlmemory usually shares its database with a host application that has its own tables
and its own Alembic history. So this environment:

- keeps its version in ``sqlmemory_alembic_version``, never the host's ``alembic_version``;
- compares and touches only tables named ``sqlmemory_*``: ``alembic check`` and
  autogenerate never report (or propose dropping) the host's tables.

A connection given in ``config.attributes["connection"]`` is used as it is, inside the
caller's transaction (Alembic cookbook "Sharing a Connection"); this is how
:mod:`sqlmemory.migrate` and the ``sqlmemory`` command run. Otherwise, as for a developer
running ``alembic`` from the repository root, the URL is ``-x url=...``, else
``$SQLMEMORY_URL``, else ``sqlalchemy.url`` of ``alembic.ini``.
"""

from __future__ import annotations

import os
from logging.config import fileConfig
from typing import TYPE_CHECKING, Any, Literal

import sqlalchemy as sa
from alembic import context
from sqlalchemy.pool import NullPool

from sqlmemory._tables import VERSION_TABLE, only_sqlmemory_name, only_sqlmemory_object
from sqlmemory.storage.sql.schema import Base

if TYPE_CHECKING:
    from alembic.autogenerate.api import AutogenContext

config = context.config

# Only the `alembic` command line reads an ini file; code that runs migrations (the
# library, the host application) keeps its own logging configuration untouched.
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata

_COLUMN_TYPES_MODULE = "sqlmemory.storage.sql.column_types"


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Render sqlmemory's column types as ``column_types.UTCDateTime()`` and so on.

    The default repr of a ``TypeDecorator`` shows its ``impl``'s arguments (for example
    ``UTCDateTime(timezone=True)``), which the decorator does not take. The MySQL variants
    are chosen by each decorator's ``load_dialect_impl``, so the class name is enough.
    ``script.py.mako`` imports the module (``from sqlmemory.storage.sql import column_types``).
    """
    if type_ == "type" and type(obj).__module__ == _COLUMN_TYPES_MODULE:
        return f"column_types.{type(obj).__name__}()"
    return False


def _options(dialect_name: str) -> dict[str, Any]:
    return {
        "target_metadata": target_metadata,
        "version_table": VERSION_TABLE,
        # The complement of sqlmemory.migrate.include_name/include_object, which a host
        # application passes to its own environment: each side sees only its tables.
        "include_name": only_sqlmemory_name,
        "include_object": only_sqlmemory_object,
        "render_item": render_item,
        "compare_type": True,
        # SQLite alters tables by copying them; batch mode does it, and the naming
        # convention on the metadata lets it find the constraints again.
        "render_as_batch": dialect_name == "sqlite",
    }


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("SQLMEMORY_URL")
    if not url:
        url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL: pass -x url=..., set $SQLMEMORY_URL or sqlalchemy.url")
    return url


def run_migrations_offline() -> None:
    """Write the migration SQL for the URL's dialect instead of running it."""
    url = _url()
    context.configure(
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        **_options(sa.engine.make_url(url).get_backend_name()),
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: sa.Connection) -> None:
    context.configure(connection=connection, **_options(connection.dialect.name))
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Run the migrations on the shared connection, or on one of an engine built here."""
    shared = config.attributes.get("connection")
    if shared is not None:
        _run(shared)
        return
    engine = sa.create_engine(_url(), poolclass=NullPool)
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
