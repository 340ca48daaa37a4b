"""``python -m sqlmemory``: the ``sqlmemory`` command."""

from sqlmemory.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
