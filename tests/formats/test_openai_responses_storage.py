"""The Responses corpus comes back exactly after storage, on every backend (sync and async).

``docs/providers.md``: the exact round trip holds also after the messages went through a
storage.
"""

from __future__ import annotations

import json

import pytest

from sqlmemory import SqlStorage, from_openai_responses, to_openai_responses
from tests.formats.corpus_openai_responses import CASES
from tests.support.storages import BlockingAsyncStorage


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_corpus_round_trips_through_storage(
    storage: SqlStorage | BlockingAsyncStorage, name: str
) -> None:
    items = CASES[name]
    storage.save("responses", from_openai_responses(items))
    loaded = storage.load("responses")
    assert json.dumps(to_openai_responses(loaded)) == json.dumps(items)


def test_one_reply_appended_per_turn_gives_back_the_whole_history(
    storage: SqlStorage | BlockingAsyncStorage,
) -> None:
    history = CASES["function_calling"]
    # A user turn, then the model's output, then the tool results, then the final answer.
    turns = [history[:1], history[1:5], history[5:8], history[8:]]
    for turn in turns:
        storage.append("turns", *from_openai_responses(turn))
    assert to_openai_responses(storage.load("turns")) == history
