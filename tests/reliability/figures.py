"""The figures a reliability run reports: operations run, faults injected, bad inputs tried.

Tests add to :data:`FIGURES`; ``conftest.py`` prints it at the end of the run, so a soak
(``SQLMEMORY_SOAK=N``) ends with the numbers its report quotes.
"""

from __future__ import annotations

from collections import Counter

FIGURES: Counter[str] = Counter()
"""``operations`` (writes and reads that ran and were checked), ``faults`` (connections
killed, writers SIGKILLed, racing upgrades), ``bad inputs`` (hostile calls refused),
``histories checked`` (sessions whose stored history was verified whole)."""
