"""Shells: what of a provider object a block cannot hold, kept so it comes back exactly.

A converter reads a provider object (an item, a content part) into a block and a *shell*:
the object's fields whose value the block does not give back, in their order. Writing
merges the fields rendered from the block into the shell. When the usual order of the
fields (the provider's SDK order, or a hand-written one that puts ``type`` and the
rendered fields first) does not reproduce the object's own key order, the shell keeps
that order under :data:`ORDER`, so ``merge(split(obj)) == obj`` key order included.

Provider fields never start with ``_`` (converters refuse objects holding such keys), so
the one key a shell adds cannot clash with a field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlmemory.types._json import (
    MAX_JSON_DEPTH,
    MAX_JSON_INT,
    MIN_JSON_INT,
    FrozenDict,
    FrozenList,
    thaw_json,
)

__all__ = ["ORDER", "merge", "same", "split"]

ORDER = "_order"
"""The shell key holding the object's key order when the usual orders do not give it."""


def same(left: Any, right: Any) -> bool:
    """Whether two JSON values are equal as JSON text (``1``, ``1.0`` and ``True`` differ)."""
    answer = _same(left, right, 0)
    if answer is not None:
        return answer
    try:
        return json.dumps(left, ensure_ascii=False) == json.dumps(right, ensure_ascii=False)
    except (TypeError, ValueError):
        return False


# What JSON text a value of each plain type starts as: values of two different sorts never
# give the same text. Floats, subclasses and other types are left to ``json.dumps``.
_SORTS = {
    str: "string",
    int: "number",
    bool: "bool",
    type(None): "null",
    dict: "object",
    FrozenDict: "object",
    list: "array",
    tuple: "array",
    FrozenList: "array",
}
_DEEPEST = 2 * MAX_JSON_DEPTH


def _same(left: Any, right: Any, depth: int) -> bool | None:
    """:func:`same` for plain values without writing them out; ``None`` when unsure.

    ``False`` is sure even where ``json.dumps`` would fail (then :func:`same` is ``False``
    too); ``True`` only for values ``json.dumps`` writes (no float, no subclass, no cycle).
    """
    kind, other_kind = type(left), type(right)
    if kind is str and other_kind is str:
        return bool(left == right)
    sort = _SORTS.get(kind)
    other = _SORTS.get(other_kind)
    if sort is None or other is None or depth > _DEEPEST:
        return None
    if sort != other:
        return False
    if sort == "number":
        if not (MIN_JSON_INT <= left <= MAX_JSON_INT and MIN_JSON_INT <= right <= MAX_JSON_INT):
            return None  # huge integers: json.dumps may refuse them
        return bool(left == right)
    if sort == "object":
        return _same_objects(left, right, depth)
    if sort == "array":
        return _same_arrays(left, right, depth)
    return bool(left == right)  # strings, booleans, nulls


def _same_objects(left: Mapping[Any, Any], right: Mapping[Any, Any], depth: int) -> bool | None:
    if len(left) != len(right):
        return False
    unsure = False
    for (lkey, lvalue), (rkey, rvalue) in zip(left.items(), right.items(), strict=True):
        if type(lkey) is not str or type(rkey) is not str:
            return None
        if lkey != rkey:
            return False
        if type(lvalue) is str and type(rvalue) is str:
            if lvalue != rvalue:
                return False
            continue
        answer = _same(lvalue, rvalue, depth + 1)
        if answer is False:
            return False
        unsure = unsure or answer is None
    return None if unsure else True


def _same_arrays(left: Sequence[Any], right: Sequence[Any], depth: int) -> bool | None:
    if len(left) != len(right):
        return False
    unsure = False
    for lvalue, rvalue in zip(left, right, strict=True):
        answer = _same(lvalue, rvalue, depth + 1)
        if answer is False:
            return False
        unsure = unsure or answer is None
    return None if unsure else True


def _sequence(shell: Mapping[str, Any], rendered: Mapping[str, Any], sdk: Sequence[str]) -> Any:
    first = next(iter(shell), None)
    if first is None or first == "type":
        # Hand-written: the type first, then the fields the block gives, then the rest.
        return (("type",) if first == "type" else ()) + tuple(rendered)
    return sdk


def _thaw(value: Any) -> Any:
    return value if type(value) is str else thaw_json(value)


def _recorded(shell: Mapping[str, Any]) -> Sequence[Any] | None:
    order = shell.get(ORDER)
    if order is None:
        return None
    kind = type(order)
    if kind is list or kind is FrozenList:
        return order  # type: ignore[no-any-return]
    return order if isinstance(order, Sequence) and not isinstance(order, str) else None


def merge(
    shell: Mapping[str, Any], rendered: Mapping[str, Any], sdk: Sequence[str]
) -> dict[str, Any]:
    """The provider object: the ``rendered`` fields merged into ``shell`` (which wins).

    Examples:
        >>> merge({"id": "fc_1"}, {"type": "function_call", "name": "f"}, ("name", "type", "id"))
        {'name': 'f', 'type': 'function_call', 'id': 'fc_1'}
        >>> merge({"type": "input_text"}, {"text": "hi"}, ("text", "type"))
        {'type': 'input_text', 'text': 'hi'}
    """
    if not shell:
        return dict(rendered)
    order = _recorded(shell)
    if order is not None:
        return _in_order(shell, rendered, order)
    out: dict[str, Any] = {}
    for key in _sequence(shell, rendered, sdk):
        if key in shell:
            out[key] = _thaw(shell[key])
        elif key in rendered:
            out[key] = rendered[key]
    if len(out) < len(shell) + len(rendered):
        for key, value in shell.items():
            if key not in out and key != ORDER:
                out[key] = _thaw(value)
        for key, value in rendered.items():
            if key not in out:
                out[key] = value
    return out


def _in_order(
    shell: Mapping[str, Any], rendered: Mapping[str, Any], order: Sequence[Any]
) -> dict[str, Any]:
    """The object in the key order the shell recorded."""
    out: dict[str, Any] = {}
    for key in order:
        if type(key) is not str and not isinstance(key, str):
            continue
        if key in shell:
            if key != ORDER:
                out[key] = _thaw(shell[key])
        elif key in rendered:
            out[key] = rendered[key]
    return out


def split(
    original: Mapping[str, Any],
    rendered: Mapping[str, Any],
    sdk: Sequence[str],
    keep: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The shell of ``original``: its fields that ``rendered`` does not give back.

    Fields named in ``keep`` stay in the shell even when ``rendered`` has them.

    Examples:
        >>> item = {"type": "function_call", "id": "fc_1", "name": "f"}
        >>> split(item, {"type": "function_call", "name": "f"}, ())
        {'id': 'fc_1', '_order': ['type', 'id', 'name']}
    """
    shell: dict[str, Any] = {}
    for key, value in original.items():
        if key in rendered and key not in keep:
            other = rendered[key]
            if type(value) is str and type(other) is str:
                if value == other:
                    continue
            elif same(value, other):
                continue
        shell[key] = value
    keys = list(original)
    if _keys(shell, rendered, sdk) != keys:
        shell[ORDER] = keys
    return shell


def _keys(shell: Mapping[str, Any], rendered: Mapping[str, Any], sdk: Sequence[str]) -> list[Any]:
    """``list(merge(shell, rendered, sdk))``, without the values."""
    if not shell:
        return list(rendered)
    if ORDER in shell:
        return list(merge(shell, rendered, sdk))
    out = dict.fromkeys(
        key for key in _sequence(shell, rendered, sdk) if key in shell or key in rendered
    )
    for key in shell:
        out.setdefault(key)
    for key in rendered:
        out.setdefault(key)
    return list(out)
