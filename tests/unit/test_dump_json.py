"""``dump_json`` (``sqlmemory/types/_json.py``) writes what ``json.dumps`` with its
options writes, through the C encoder it makes once, for any JSON value, frozen or not;
and refuses what ``json.dumps`` refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given

from sqlmemory import Message, ToolCall
from sqlmemory.types import _json, canonical_json
from sqlmemory.types._json import dump_json, freeze_json
from sqlmemory.types._message_content import sha_reference
from tests.support.strategies import json_values, messages


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


@given(value=json_values)
def test_any_json_value_is_written_as_json_dumps_writes_it(value: Any) -> None:
    assert dump_json(value) == dumps(value)
    assert dump_json(freeze_json(value, "value")) == dumps(value)


@given(message=messages())
def test_a_canonical_form_is_the_wire_form_as_json_dumps_writes_it(message: Message) -> None:
    assert canonical_json(message) == dumps(message._wire(sha_reference))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), [float("-inf")]])
def test_out_of_range_floats_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="JSON"):
        dump_json(bad)


def test_values_that_are_no_json_are_refused() -> None:
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        dump_json({"a": {1, 2}})


def test_without_the_c_encoder_json_dumps_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    call = ToolCall("c1", "lookup", {"order": "é1", "n": [1, 2.5, None, True]})
    written = dump_json(call.arguments)
    monkeypatch.setattr(_json, "_WRITE", None)
    assert dump_json(call.arguments) == written == dumps(dict(call.arguments))
