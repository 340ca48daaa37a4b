"""Strict checks of provider requests against the SDKs' own TypedDicts.

``pydantic.TypeAdapter`` validates field types and required keys of a TypedDict, but it
ignores keys the TypedDict does not define and validates ``Iterable`` fields lazily. A
converter that emits a field the provider does not know builds a request the API refuses,
so :func:`problems` adds a recursive walk that reports every such key, and consumes every
iterable so that nothing goes unchecked.

Examples (in tests)::

    from openai.types.chat import ChatCompletionMessageParam
    assert problems(messages, list[ChatCompletionMessageParam]) == []
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import TypeAdapter, ValidationError
from typing_extensions import is_typeddict

__all__ = ["assert_valid", "problems"]

_SEQUENCES = (
    list,
    tuple,
    collections.abc.Iterable,
    collections.abc.Sequence,
    collections.abc.Collection,
)


_WRAPPERS = ("Required", "NotRequired", "ReadOnly")


@functools.cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


def _validates(value: Any, tp: Any) -> str | None:
    """``None`` when pydantic accepts ``value`` as ``tp`` (iterables consumed), else why."""
    adapter = _adapter(tp)
    try:
        _consume(adapter.validate_python(value))
    except ValidationError as exc:
        return str(exc).replace("\n", " ")
    except (TypeError, ValueError) as exc:  # a lazy validator failing while dumped
        return f"{type(exc).__name__}: {exc}"
    return None


def _consume(validated: Any) -> None:
    """Run the lazy validators pydantic leaves in ``Iterable`` fields, at any depth."""
    if isinstance(validated, (str, bytes)):
        return
    if isinstance(validated, collections.abc.Mapping):
        for item in validated.values():
            _consume(item)
    elif isinstance(validated, collections.abc.Iterable):
        for item in validated:
            _consume(item)


def _unwrap(tp: Any) -> Any:
    """``tp`` without ``Annotated``, ``Required``, ``NotRequired`` and ``ReadOnly``."""
    while True:
        origin = get_origin(tp)
        wrapper = origin is typing.Annotated or getattr(origin, "_name", None) in _WRAPPERS
        if not wrapper:
            return tp
        tp = get_args(tp)[0]


def _extra_keys(value: Any, tp: Any, path: str) -> list[str]:
    tp = _unwrap(tp)
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return []
    if origin in (Union, types.UnionType):
        return _union_extra_keys(value, get_args(tp), path)
    if is_typeddict(tp):
        if not isinstance(value, collections.abc.Mapping):
            return [f"{path}: expected an object for {tp.__name__}"]
        hints = typing.get_type_hints(tp, include_extras=True)
        found = [f"{path}.{key}: not a field of {tp.__name__}" for key in value if key not in hints]
        for key, item in value.items():
            if key in hints:
                found += _extra_keys(item, hints[key], f"{path}.{key}")
        return found
    if origin in _SEQUENCES and not isinstance(value, (str, bytes)):
        args = get_args(tp)
        if not args or not isinstance(value, collections.abc.Iterable):
            return []
        element = args[0]
        return [
            problem
            for index, item in enumerate(value)
            for problem in _extra_keys(item, element, f"{path}[{index}]")
        ]
    if origin in (dict, collections.abc.Mapping) and isinstance(value, collections.abc.Mapping):
        args = get_args(tp)
        if len(args) == 2:
            return [
                problem
                for key, item in value.items()
                for problem in _extra_keys(item, args[1], f"{path}.{key}")
            ]
    return []


def _union_extra_keys(value: Any, alternatives: tuple[Any, ...], path: str) -> list[str]:
    """The fewest extra-key problems among the alternatives pydantic accepts."""
    best: list[str] | None = None
    for alternative in alternatives:
        if _unwrap(alternative) is type(None):
            if value is None:
                return []
            continue
        if get_origin(_unwrap(alternative)) is Literal:
            if value in get_args(_unwrap(alternative)):
                return []
            continue
        if _validates(value, alternative) is not None:
            continue
        found = _extra_keys(value, alternative, path)
        if not found:
            return []
        if best is None or len(found) < len(best):
            best = found
    return best if best is not None else []


def problems(value: Any, tp: Any) -> list[str]:
    """Why ``value`` is not a valid ``tp`` request, as a list (empty when it is).

    Checks field types and required keys with pydantic, then that no object holds a key
    its TypedDict does not define.
    """
    invalid = _validates(value, tp)
    if invalid is not None:
        return [f"$: {invalid}"]
    return _extra_keys(value, tp, "$")


def assert_valid(value: Any, tp: Any) -> None:
    """Fail the test with every problem :func:`problems` finds."""
    found = problems(value, tp)
    assert not found, "\n".join(found)
