"""The reliability suite: storms, faults and hostile input (``docs/contract/persistence.md``).

Small by default, so CI runs it on every backend; ``SQLMEMORY_SOAK=N`` makes every storm
and model run N times longer. The run ends with the figures of :mod:`.figures`.
"""

from __future__ import annotations

import pytest

from tests.contract.conftest import subject
from tests.reliability.figures import FIGURES
from tests.reliability.workers import scale

__all__ = ["subject"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section("sqlmemory reliability figures")
    terminalreporter.write_line(f"soak scale (SQLMEMORY_SOAK): {scale()}")
    for name in sorted(FIGURES):
        terminalreporter.write_line(f"{name}: {FIGURES[name]}")
