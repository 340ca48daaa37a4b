"""Fixtures shared by every test directory."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run ``@pytest.mark.anyio`` tests and async fixtures on asyncio only."""
    return "asyncio"
