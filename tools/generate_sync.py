"""Write the sync twins of sqlmemory's async classes, so each is written once.

The async modules are the source. unasync drops ``async``/``await`` and renames the
async-only names; the table below renames the project's own names, in code and in
docstrings alike. Run it after editing a source file::

    python tools/generate_sync.py          # rewrite the generated files
    python tools/generate_sync.py --check  # exit 1 if one is out of date (tests run this)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import unasync

ROOT = Path(__file__).resolve().parents[1]

SOURCES = {
    "sqlmemory/storage/base_async.py": "sqlmemory/storage/base.py",
    "sqlmemory/storage/sql/front_async.py": "sqlmemory/storage/sql/front.py",
    "sqlmemory/storage/sql/catalog_async.py": "sqlmemory/storage/sql/catalog.py",
    "sqlmemory/storage/sql/branches_async.py": "sqlmemory/storage/sql/branches_sync.py",
    "sqlmemory/storage/sql/usage_async.py": "sqlmemory/storage/sql/usage.py",
    "sqlmemory/storage/sql/search_async.py": "sqlmemory/storage/sql/search.py",
    "sqlmemory/storage/sql/storage_async.py": "sqlmemory/storage/sql/storage.py",
    "sqlmemory/short_term_async.py": "sqlmemory/short_term.py",
}
"""Async source file -> the sync file generated from it."""

NAMES = {
    "AsyncSqlStorage": "SqlStorage",
    "AsyncSqlFront": "SqlFront",
    "AsyncSqlCatalog": "SqlCatalog",
    "AsyncSqlBranches": "SqlBranches",
    "AsyncSqlUsage": "SqlUsage",
    "AsyncSqlSearch": "SqlSearch",
    "AsyncSessionView": "SessionView",
    "AsyncStorage": "Storage",
    "AsyncShortTermMemory": "ShortTermMemory",
    "AsyncSummarizer": "Summarizer",
    "AsyncEngine": "Engine",
    "AsyncConnection": "Connection",
    "base_async": "base",
    "storage_async": "storage",
    "front_async": "front",
    "catalog_async": "catalog",
    "branches_async": "branches_sync",
    "usage_async": "usage",
    "search_async": "search",
    "short_term_async": "short_term",
    "_io_async": "_io",
}
"""Names renamed everywhere: code, comments and docstrings."""

TEXT = [
    ("from sqlalchemy.ext.asyncio import", "from sqlalchemy import"),
    ("sqlite+aiosqlite://", "sqlite://"),
    (">>> await ", ">>> "),
]
"""Literal rewrites of what is not a name (imports, docstring examples)."""

_WORD = re.compile(r"\b(" + "|".join(map(re.escape, NAMES)) + r")\b")


_DOCSTRING = re.compile(r'\A"""(.*?)\n\n.*?"""\n', re.DOTALL)


def _with_generated_docstring(text: str, source: str) -> str:
    """Keep the summary line of the module docstring and say where the code comes from."""
    summary = _DOCSTRING.match(text)
    if summary is None:
        raise SystemExit(f"{source}: the module docstring needs a summary and a body")
    note = (
        f"Generated from ``{source}``\n"
        "by ``tools/generate_sync.py``: edit that file, never this one."
    )
    return f'"""{summary.group(1)}\n\n{note}\n"""\n' + text[summary.end() :]


def _ruff(text: str, target: str) -> str:
    """``text`` with its imports sorted and formatted as ruff does for the project."""
    ruff = [sys.executable, "-m", "ruff"]
    for args in (["check", "--fix-only", "--select", "I", "--quiet"], ["format", "--quiet"]):
        text = subprocess.run(  # noqa: S603 - our own interpreter, fixed arguments
            [*ruff, *args, "--stdin-filename", target, "-"],
            input=text,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
    return text


def generate(source: str, target: str) -> str:
    """The sync module generated from the async module at ``source`` (repo-relative)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "_async", "module.py")
        src.parent.mkdir()
        src.write_text((ROOT / source).read_text(encoding="utf-8"), encoding="utf-8")
        unasync.unasync_files([str(src)], [unasync.Rule("/_async/", "/_sync/", NAMES)])
        text = Path(tmp, "_sync", "module.py").read_text(encoding="utf-8")
    text = _WORD.sub(lambda m: NAMES[m.group(1)], text)
    for old, new in TEXT:
        text = text.replace(old, new)
    return _ruff(_with_generated_docstring(text, source), target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    stale = []
    for source, target in SOURCES.items():
        text = generate(source, target)
        path = ROOT / target
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(target)
        if not args.check:
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"out of date (run python tools/generate_sync.py): {', '.join(stale)}")
        return 1
    for target in stale:
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
