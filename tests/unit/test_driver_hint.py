"""A URL whose driver is not installed names the extra that installs it."""

from __future__ import annotations

import sys

import pytest

from sqlmemory import SqlStorage


@pytest.mark.parametrize(
    ("url", "module", "extra"),
    [
        ("postgresql+psycopg2://u@127.0.0.1/db", "psycopg2", "postgres"),
        ("postgresql+psycopg://u@127.0.0.1/db", "psycopg", "postgres"),
        ("mysql+pymysql://u@127.0.0.1/db", "pymysql", "mysql"),
    ],
)
def test_from_url_names_the_extra_for_a_missing_driver(
    url: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now fails
    with pytest.raises(ModuleNotFoundError, match=rf"pip install 'sqlmemory\[{extra}\]'"):
        SqlStorage.from_url(url)
