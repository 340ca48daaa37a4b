"""What the test directories share, in one place.

- ``cases``: messages, histories with their expected windows and evictions, images and
  documents, bad-input tables, comparison helpers.
- ``backends``: where the tests find each database (docs/contract/backends.md).
- ``storages``: the run's databases, the blocking adapter over ``AsyncSqlStorage``, and
  the contract suite's ``Subject``; the fixtures in ``tests/conftest.py`` use them.
- ``tables``: reading sqlmemory's tables directly, to check what a storage wrote.
- ``windows``: the window checker (``window_problems`` / ``window_is_valid``), malformed
  histories, random window policies, and the Hypothesis profiles of the window properties.
- ``writers``: concurrent writers; it and ``cases`` import no test framework, so that a
  spawned child process imports only them and sqlmemory.
"""
