"""``Usage`` and ``Message.usage`` (docs/usage.md): checked when made, frozen, part of the
wire form and of the canonical form only when present."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import jsonschema
import pytest

from sqlmemory import InvalidMessageError, Message, Usage
from sqlmemory.types import canonical_json
from sqlmemory.types.token_usage import MAX_TOKENS, TOKEN_FIELDS
from sqlmemory.wire import MESSAGE_JSON_SCHEMA


class Small(enum.IntEnum):
    TEN = 10


def test_defaults_and_bounds() -> None:
    assert Usage() == Usage(None, 0, 0, 0, 0, 0)
    top = Usage("m", *[MAX_TOKENS] * 5)
    assert all(getattr(top, name) == MAX_TOKENS for name in TOKEN_FIELDS)
    assert type(Usage(input_tokens=Small.TEN).input_tokens) is int


@pytest.mark.parametrize(
    "bad",
    [
        {"input_tokens": -1},
        {"output_tokens": MAX_TOKENS + 1},
        {"cache_read_tokens": True},
        {"cache_write_tokens": 1.0},
        {"reasoning_tokens": "3"},
        {"input_tokens": None},
        {"model": ""},
        {"model": "x" * 256},
        {"model": "gpt\x00"},
        {"model": 4},
    ],
)
def test_bad_values_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidMessageError, match="Usage"):
        Usage(**bad)


def test_a_usage_is_frozen_and_adds_up() -> None:
    usage = Usage("m", 1, 2, 3, 4, 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        usage.input_tokens = 9  # type: ignore[misc]
    assert usage + usage == Usage("m", 2, 4, 6, 8, 10)
    assert (usage + Usage("n", 1)).model is None


@pytest.mark.parametrize("build", ["user", "system", "developer", "assistant"])
def test_every_typed_constructor_takes_usage(build: str) -> None:
    usage = Usage("m", 7)
    assert getattr(Message, build)("hi", usage=usage).usage == usage
    assert Message.tool("c1", "42", usage=usage).usage == usage
    assert Message("assistant", "hi", usage=usage).usage == usage


def test_message_usage_must_be_a_usage() -> None:
    for bad in ({"input_tokens": 1}, 5, "m"):
        with pytest.raises(InvalidMessageError, match=r"Message\.usage"):
            Message.assistant("hi", usage=bad)  # type: ignore[arg-type]


def test_the_wire_form_carries_usage_only_when_present() -> None:
    plain = Message.assistant("hi", id="m1")
    assert "usage" not in plain.to_dict()
    assert canonical_json(plain) == (
        '{"v":2,"id":"m1","role":"assistant","content":[{"kind":"text","text":"hi"}],'
        '"tool_call_id":null,"is_error":false,"metadata":{},"extras":{}}'
    )
    costly = Message.assistant("hi", id="m1", usage=Usage("m", 3))
    data = costly.to_dict()
    assert data["usage"] == {"model": "m", "input_tokens": 3, **dict.fromkeys(TOKEN_FIELDS[1:], 0)}
    assert Message.from_dict(data) == costly
    assert canonical_json(costly) != canonical_json(plain) and costly != plain
    jsonschema.validate(data, MESSAGE_JSON_SCHEMA)
    assert Message.from_dict({**plain.to_dict(), "usage": None}) == plain


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        ("many", "message.usage"),
        ({"tokens": 1}, "message.usage"),
        ({"input_tokens": -1}, "Usage.input_tokens"),
        ({"output_tokens": True}, "Usage.output_tokens"),
        ({"model": 5}, "message.usage.model"),
    ],
)
def test_a_bad_wire_usage_is_refused_naming_it(usage: object, field: str) -> None:
    data = {**Message.assistant("hi").to_dict(), "usage": usage}
    with pytest.raises(InvalidMessageError, match=field.replace(".", r"\.")):
        Message.from_dict(data)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, MESSAGE_JSON_SCHEMA)
