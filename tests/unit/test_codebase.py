"""The shape of the code itself: generated twins in date, small functions, a pure core.

``docs/development.md`` explains each rule: the async classes are the single source of
their sync twins, no function is too branchy to read, and the message model and the
policies never import SQLAlchemy.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from radon.complexity import cc_visit

import sqlmemory

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "sqlmemory"
MAX_COMPLEXITY = 15
MAX_MODULE_LINES = 450
"""The longest a module of ``sqlmemory/`` or ``bench/`` may grow: past it, split it along
its seams (``docs/development.md``, where new work goes)."""
PURE_MODULES = (
    "sqlmemory.types",
    "sqlmemory.policy",
    "sqlmemory.wire",
    "sqlmemory.errors",
    "sqlmemory.formats",
)


def _modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(sqlmemory.__path__, "sqlmemory.")
        if info.name != "sqlmemory.__main__"
    )


def test_generated_sync_code_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "generate_sync.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_function_is_too_complex() -> None:
    too_complex = [
        f"{path.relative_to(ROOT)}:{block.lineno} {block.fullname} ({block.complexity})"
        for path in sorted(PACKAGE.rglob("*.py"))
        for block in cc_visit(path.read_text(encoding="utf-8"))
        if block.complexity > MAX_COMPLEXITY
    ]
    assert not too_complex


def test_no_module_is_too_long() -> None:
    too_long = [
        f"{path.relative_to(ROOT)} ({lines} lines)"
        for folder in (PACKAGE, ROOT / "bench")
        for path in sorted(folder.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not too_long


def test_every_module_name_is_unique() -> None:
    # A name in a traceback or an import then says which file it is. Packages'
    # ``__init__.py`` (and ``__main__.py``) are named by their folder.
    by_name: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if not path.name.startswith("__"):
            by_name.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}


@pytest.mark.parametrize("module", PURE_MODULES)
def test_the_pure_layer_does_not_import_sqlalchemy(module: str) -> None:
    code = (
        f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith('sqlalchemy')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def _imports(path: Path, package: str) -> set[str]:
    """The sqlmemory modules that the file at ``path`` imports, at any depth."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("sqlmemory.")}


def test_the_pure_layer_has_no_import_cycle() -> None:
    modules = {name for name in _modules() if name.startswith(PURE_MODULES)}
    graph: dict[str, set[str]] = {}
    for name in modules:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        package = name if spec.origin.endswith("__init__.py") else name.rpartition(".")[0]
        graph[name] = {m for m in _imports(Path(spec.origin), package) if m in modules}
        # A package's __init__ re-exports its modules: importing them is not a cycle.
        graph[name] -= {m for m in graph[name] if m.startswith(f"{name}.")}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    assert [name for name in sorted(graph) if reaches(name, name, {name})] == []


@pytest.mark.parametrize("module", _modules())
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_every_public_name_has_a_docstring_with_an_example() -> None:
    missing = [
        name
        for name in sqlmemory.__all__
        if not name.startswith("__")
        and (
            inspect.isclass(getattr(sqlmemory, name))
            or inspect.isfunction(getattr(sqlmemory, name))
        )
        and ">>>" not in (getattr(sqlmemory, name).__doc__ or "")
    ]
    assert missing == []


def test_message_constructors_are_typed_so_mypy_catches_a_misspelled_field() -> None:
    from mypy import api

    code = (
        "from sqlmemory import Message\n"
        "Message.user('hi', metadata={'a': 1})\n"
        "Message.tool('c1', 'x', recorded_at=None)\n"
        "Message.user('hi', metdata={'a': 1})\n"
    )
    # Its own configuration: the project's names the files to check, which -c cannot mix with.
    out, _, status = api.run(["--config-file", "", "--strict", "--no-incremental", "-c", code])
    assert status == 1
    assert 'Unexpected keyword argument "metdata"' in out
    assert out.count("error:") == 1, out


ADAPTER_EXTRAS = (
    "langchain",
    "pydantic-ai",
    "openai-agents",
    "adk",
    "agent-framework",
    "llama-index",
)
"""The extras of the framework adapters."""
FRAMEWORKS = ("langchain_core", "pydantic_ai", "agents", "google", "agent_framework", "llama_index")
"""The top-level packages of the frameworks that only ``sqlmemory.integrations`` imports."""


def test_the_core_imports_no_framework() -> None:
    # Every module but the adapters, and the storages that ``import sqlmemory`` loads lazily.
    modules = [name for name in _modules() if not name.startswith("sqlmemory.integrations")]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "import sqlmemory; sqlmemory.SqlStorage, sqlmemory.AsyncSqlStorage\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(FRAMEWORKS)!r}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.partition("==")
        if sep and not line.startswith("#"):
            pins[name.strip()] = version.strip()
    return pins


def test_the_extras_lower_bounds_are_the_lowest_tested_versions() -> None:
    import tomllib  # Python 3.11+: the tests run on the project's own interpreter

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    lowest = _pins(ROOT / "constraints" / "integrations-lowest.txt")
    latest = _pins(ROOT / "constraints" / "integrations.txt")
    bounds = {}
    for extra in ADAPTER_EXTRAS:
        for requirement in extras[extra]:
            name, found, bound = requirement.partition(">=")
            if not found:
                continue  # another extra of sqlmemory
            bounds[name] = bound.split(",")[0]
    # The lowest pins may hold more: a dependency of the day that an old release needs.
    assert bounds == {name: lowest.get(name) for name in bounds}
    assert bounds.keys() == latest.keys()
