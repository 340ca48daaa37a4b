"""bench/formats_convert.py still runs: its history round-trips exactly and both cases print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "formats_convert.py"


def test_quick_run_times_both_converters() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "40", "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    timed = {row[0]: [float(x) for x in row[2:]] for row in rows if row[1:2] == ["@40"]}
    assert set(timed) == {"from_openai_responses", "to_openai_responses"}
    assert all(len(figures) == 4 and min(figures) >= 0 for figures in timed.values())
    # The script itself refuses a history that does not come back exactly; it got one that did.
    assert "not exact" not in done.stdout + done.stderr
