"""``subject``: each contract test runs once on every storage of :data:`SUBJECTS`.

``memory`` needs no database and runs once; ``<backend>-sync`` and ``<backend>-async``
run on clean tables of each backend, skipped (or failed, when required) like the
integration tests when the backend cannot be reached.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.storages import SUBJECTS, Databases, Subject, backend_param, open_subject


@pytest.fixture(params=[backend_param(name, name.split("-")[0]) for name in SUBJECTS])
def subject(request: pytest.FixtureRequest) -> Iterator[Subject]:
    """The storage under test, with what the test may inspect of what it stored."""
    name = str(request.param)
    databases: Databases | None = None if name == "memory" else request.getfixturevalue("databases")
    with open_subject(name, databases) as found:
        yield found


@pytest.fixture
def storage(subject: Subject) -> Any:
    """``subject.storage``: the storage under test, for tests that inspect nothing else."""
    return subject.storage
