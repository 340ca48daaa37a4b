"""What the test directories share: cases, backends, table readers, storage adapters.

Plain modules that import no test framework at import time (``writers`` is imported by
spawned child processes), except ``storages``, which the fixtures in ``tests/conftest.py``
use.
"""
