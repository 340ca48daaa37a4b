"""Worker processes that a test starts and never leaves behind."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.process import BaseProcess


@contextmanager
def running(processes: Sequence[BaseProcess], timeout: float) -> Iterator[None]:
    """Start ``processes``; when the block ends, wait up to ``timeout`` for each, and kill
    any still alive (at once if the block raised)."""
    for process in processes:
        process.start()
    try:
        yield
        for process in processes:
            process.join(timeout)
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
