"""The Python examples of the window pages run as written (docs/contract/windows.md,
docs/choosing-a-window.md), offline: ``tiktoken.get_encoding`` hands out a small encoding
built here instead of downloading one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tiktoken

from sqlmemory.policy._encodings import load_encoding
from tests.support.windows import tiny_encoding

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ["contract/windows.md", "choosing-a-window.md"]
BLOCKS = [
    (page, index, block)
    for page in PAGES
    for index, block in enumerate(
        re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.DOTALL)
    )
]


def test_the_window_pages_have_examples() -> None:
    assert {page for page, _, _ in BLOCKS} == set(PAGES)


@pytest.mark.parametrize(
    ("page", "index", "source"), BLOCKS, ids=[f"{p}#{i}" for p, i, _ in BLOCKS]
)
def test_example_runs(page: str, index: int, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: tiny_encoding())
    load_encoding.cache_clear()
    try:
        exec(compile(source, f"docs/{page} block {index}", "exec"), {"__name__": "docs"})  # noqa: S102
    finally:
        load_encoding.cache_clear()
