"""The reliability suite: storms, faults and hostile input (``docs/contract/persistence.md``).

Small by default, so CI runs it on every backend; ``SQLMEMORY_SOAK=N`` makes every storm
and model run N times longer. The run ends with the figures of :mod:`.figures`, printed
by ``tests/conftest.py`` (which adds up those of every pytest-xdist worker).
"""

from __future__ import annotations

from tests.contract.conftest import subject

__all__ = ["subject"]
