"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
TEXT = README.read_text(encoding="utf-8")
# Each block padded with the lines above it, so a failure points at the README's own line.
BLOCKS = [
    "\n" * TEXT.count("\n", 0, match.start(1)) + match.group(1)
    for match in re.finditer(r"```python\n(.*?)```", TEXT, re.DOTALL)
]


def test_the_readme_has_python_examples() -> None:
    assert BLOCKS, "README.md shows no Python example"


@pytest.mark.parametrize("source", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the examples create their SQLite files here
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(source, str(README), "exec"), namespace)  # noqa: S102 - our own README
    window = namespace.get("window")
    if window is not None:
        assert isinstance(window, list) and window, "the example's window is empty"
