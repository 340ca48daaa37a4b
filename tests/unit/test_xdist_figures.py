"""Figures counted by tests add up across pytest-xdist workers (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from tests import conftest
from tests.reliability.figures import FIGURES


@pytest.fixture
def figures() -> Iterator[None]:
    """FIGURES emptied for the test, and given back its counts afterwards."""
    saved = FIGURES.copy()
    FIGURES.clear()
    try:
        yield
    finally:
        FIGURES.clear()
        FIGURES.update(saved)


def test_the_controller_adds_up_each_workers_figures(figures: None) -> None:
    FIGURES["operations"] = 2
    first = SimpleNamespace(workeroutput={conftest.FIGURES_KEY: {"operations": 3, "faults": 1}})
    second = SimpleNamespace(workeroutput={conftest.FIGURES_KEY: {"operations": 4}})
    crashed = SimpleNamespace()  # a worker that died hands nothing back
    for node in (first, second, crashed):
        conftest.pytest_testnodedown(node, None)
    assert FIGURES == {"operations": 9, "faults": 1}


def test_a_worker_hands_its_figures_to_the_controller(figures: None) -> None:
    FIGURES["histories checked"] = 7
    worker = SimpleNamespace(config=SimpleNamespace(workeroutput={}))
    conftest.pytest_sessionfinish(worker)  # type: ignore[arg-type]
    assert worker.config.workeroutput == {conftest.FIGURES_KEY: {"histories checked": 7}}

    controller = SimpleNamespace(config=SimpleNamespace())  # no workeroutput: not a worker
    conftest.pytest_sessionfinish(controller)  # type: ignore[arg-type]
    assert not hasattr(controller.config, "workeroutput")
