"""The examples' tests run on every backend with the test suite's database fixtures.

``tests/conftest.py`` finds each backend (docs/contract/backends.md); importing its
fixtures here makes them available to the tests under ``examples/`` too.
"""

from tests.conftest import (  # noqa: F401 - fixtures, found by name
    anyio_backend,
    backend,
    databases,
    db_url,
    engine,
    migrated_engine,
    pytest_configure,
)
