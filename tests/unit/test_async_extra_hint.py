"""Without greenlet (no driver extra installed), the async storage names the extra.

SQLAlchemy's own message asks for ``sqlalchemy[asyncio]``, which is not how a sqlmemory
user gets greenlet (docs/contract/backends.md). The extras check
(``tools/check_extras.py``) sees the same in a real install without it.
"""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
sys.modules["greenlet"] = None  # as if not installed
import sqlmemory
try:
    sqlmemory.AsyncSqlStorage
except ImportError as exc:
    print(type(exc).__name__, exc.name, exc, sep="|")
"""


def test_async_storage_without_greenlet_names_the_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    kind, name, message = done.stdout.strip().split("|")
    assert (kind, name) == ("ModuleNotFoundError", "greenlet")
    assert message.startswith("AsyncSqlStorage needs greenlet, which is not installed: ")
    assert "pip install 'sqlmemory[async]'" in message
