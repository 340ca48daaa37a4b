"""The JSON Schema of the wire form (docs/contract/messages.md, the wire form).

Every ``to_dict()`` output validates against ``MESSAGE_JSON_SCHEMA``, version 1
documents and minimal client payloads too; structural faults that ``from_dict`` refuses
are refused by the schema as well; the schema embeds anywhere (no ``$ref``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlmemory import InvalidMessageError, Message
from sqlmemory.wire import MESSAGE_JSON_SCHEMA, message_json_schema
from tests.support.cases import every_block_kind, fidelity_messages, tool_history
from tests.support.lossless import every_new_field
from tests.support.strategies import messages

VALIDATOR = jsonschema.Draft202012Validator(
    MESSAGE_JSON_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)


def errors(document: Any) -> list[str]:
    return [e.message for e in VALIDATOR.iter_errors(document)]


def corpus() -> list[Message]:
    return [*every_block_kind(), *fidelity_messages(), *tool_history(), *every_new_field()]


def test_the_schema_is_a_valid_draft_2020_12_schema_without_references() -> None:
    jsonschema.Draft202012Validator.check_schema(MESSAGE_JSON_SCHEMA)
    assert "$ref" not in json.dumps(MESSAGE_JSON_SCHEMA)
    assert "$defs" not in json.dumps(MESSAGE_JSON_SCHEMA)


@pytest.mark.parametrize("message", corpus(), ids=lambda m: m.id[:30])
def test_every_to_dict_output_validates(message: Message) -> None:
    document = json.loads(json.dumps(message.to_dict()))
    assert errors(document) == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(), max_size=3))
def test_any_message_validates(history: list[Message]) -> None:
    for message in history:
        assert errors(json.loads(json.dumps(message.to_dict()))) == []


def test_version_1_documents_and_minimal_payloads_validate() -> None:
    v1 = {
        "v": 1,
        "id": "a1",
        "role": "assistant",
        "content": [
            {"kind": "thinking", "thinking": "hm", "signature": None},
            {"kind": "document", "media_type": "text/plain", "data": "eA==", "title": None},
        ],
        "tool_calls": [{"id": "c1", "name": "f", "arguments": {"b": 1, "a": 2}}],
        "tool_call_id": None,
        "metadata": {},
        "recorded_at": "2024-02-29T23:59:58.123456+00:00",
    }
    assert errors(v1) == []
    message = Message.from_dict(v1)
    assert message.tool_calls[0].arguments == {"b": 1, "a": 2}
    assert [b.kind for b in message.content] == ["thinking", "document", "tool_call"]
    minimal = {"role": "user", "content": [{"kind": "text", "text": "hi"}]}
    assert errors(minimal) == []
    assert Message.from_dict(minimal).text_content() == "hi"


Mutation = Callable[[dict[str, Any]], None]


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _drop(path: tuple[Any, ...]) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


# Indices into the content of every_new_field()'s "references" and "interleaved" messages.
STRUCTURAL: dict[str, tuple[str, Mutation]] = {
    "no role": ("interleaved", _drop(("role",))),
    "unknown role": ("interleaved", _set(("role",), "robot")),
    "content an object": ("interleaved", _set(("content",), {})),
    "unknown field": ("interleaved", _set(("tools",), [])),
    "unknown version": ("interleaved", _set(("v",), 3)),
    "unknown block kind": ("interleaved", _set(("content", 0, "kind"), "video")),
    "unknown block field": ("interleaved", _set(("content", 2, "cache_control"), {})),
    "text not a string": ("interleaved", _set(("content", 2, "text"), 1)),
    "tool call without id": ("interleaved", _drop(("content", 3, "id"))),
    "arguments a list": ("interleaved", _set(("content", 3, "arguments"), [1])),
    "opaque payload a string": ("interleaved", _set(("content", 6, "payload"), "x")),
    "extras a list": ("interleaved", _set(("extras",), [1])),
    "image with two sources": ("references", _set(("content", 1, "file_id"), "file-1")),
    "image without a source": ("references", _drop(("content", 2, "file_id"))),
    "image bytes without a media type": ("references", _drop(("content", 4, "media_type"))),
    "image url of another scheme": ("references", _set(("content", 1, "url"), "ftp://x")),
    "image detail unknown": ("references", _set(("content", 1, "detail"), "max")),
    "image width zero": ("references", _set(("content", 5, "width"), 0)),
    "image width a bool": ("references", _set(("content", 5, "width"), True)),
    "document media type": ("references", _set(("content", 7, "media_type"), "text/html")),
    "is_error a string": ("result-2-empty", _set(("is_error",), "yes")),
    "id empty": ("interleaved", _set(("id",), "")),
}


@pytest.mark.parametrize("name", STRUCTURAL)
def test_structural_faults_are_refused_by_the_schema_and_by_from_dict(name: str) -> None:
    message_id, mutate = STRUCTURAL[name]
    (message,) = [m for m in every_new_field() if m.id == message_id]
    document = json.loads(json.dumps(message.to_dict()))
    assert errors(document) == []
    mutate(document)
    assert errors(document) != []
    with pytest.raises(InvalidMessageError):
        Message.from_dict(document)


def test_message_json_schema_is_a_copy_the_caller_may_change() -> None:
    before = copy.deepcopy(MESSAGE_JSON_SCHEMA)
    mine = message_json_schema()
    assert mine == MESSAGE_JSON_SCHEMA
    mine["properties"]["content"]["items"]["oneOf"].clear()
    mine["properties"]["extras"]["anyOf"].append({"type": "string"})
    assert before == MESSAGE_JSON_SCHEMA
    assert message_json_schema() == before
