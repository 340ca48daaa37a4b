"""The Python examples of the README and of every docs page run as written, twice.

A reader runs a quickstart, then runs it again: each example must work both times in the
same directory (the second run finds the database the first one left). A block that needs
a context of its own (an Alembic ``env.py``, a web server) is marked with an HTML comment
on the line before its fence, ``<!-- not run: why -->``; it is still compiled.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(
    r"(?:<!-- not run: (?P<why>[^>]+?) -->\n)?```python\n(?P<code>.*?)```", re.DOTALL
)


def _blocks() -> list[tuple[str, str, str | None]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            # Padded with the lines above it, so a failure points at the page's own line.
            code = "\n" * text.count("\n", 0, match.start("code")) + match.group("code")
            found.append((str(page.relative_to(ROOT)), code, match.group("why")))
    return found


BLOCKS = _blocks()


def test_the_readme_and_the_quickstart_have_examples() -> None:
    pages = {page for page, _, why in BLOCKS if why is None}
    assert {"README.md", "docs/quickstart.md"} <= pages


@pytest.mark.parametrize(
    ("page", "source", "why"),
    BLOCKS,
    ids=[f"{page}-{i}" for i, (page, _, _) in enumerate(BLOCKS)],
)
def test_example_runs_twice(
    page: str, source: str, why: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = compile(source, str(ROOT / page), "exec")
    if why is not None:
        return  # compiled above: no syntax error in a block shown but not run
    monkeypatch.chdir(tmp_path)  # the examples create their SQLite files here
    monkeypatch.delenv("SQLMEMORY_URL", raising=False)
    for _ in range(2):
        namespace: dict[str, object] = {"__name__": "docs_example"}
        exec(code, namespace)  # noqa: S102 - the project's own documentation
        window = namespace.get("window")
        if window is not None:
            assert isinstance(window, list) and window, "the example's window is empty"
