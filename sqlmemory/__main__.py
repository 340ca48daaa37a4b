"""``python -m sqlmemory``: the ``sqlmemory`` command."""

from sqlmemory.cli import run

if __name__ == "__main__":
    run()
