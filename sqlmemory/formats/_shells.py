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

from sqlmemory.types._json import thaw_json

__all__ = ["ORDER", "merge", "same", "split"]

ORDER = "_order"
"""The shell key holding the object's key order when the usual orders do not give it."""


def same(left: Any, right: Any) -> bool:
    """Whether two JSON values are equal as JSON text (``1``, ``1.0`` and ``True`` differ)."""
    try:
        return json.dumps(left, ensure_ascii=False) == json.dumps(right, ensure_ascii=False)
    except (TypeError, ValueError):
        return False


def _sequence(shell: Mapping[str, Any], rendered: Mapping[str, Any], sdk: Sequence[str]) -> Any:
    first = next(iter(shell), None)
    if first is None or first == "type":
        # Hand-written: the type first, then the fields the block gives, then the rest.
        return (("type",) if first == "type" else ()) + tuple(rendered)
    return sdk


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
    order = shell.get(ORDER)
    if isinstance(order, Sequence) and not isinstance(order, str):
        return _in_order(shell, rendered, order)
    out: dict[str, Any] = {}
    for key in _sequence(shell, rendered, sdk):
        if key in shell:
            out[key] = thaw_json(shell[key])
        elif key in rendered:
            out[key] = rendered[key]
    for key, value in shell.items():
        if key not in out and key != ORDER:
            out[key] = thaw_json(value)
    for key, value in rendered.items():
        out.setdefault(key, value)
    return out


def _in_order(
    shell: Mapping[str, Any], rendered: Mapping[str, Any], order: Sequence[Any]
) -> dict[str, Any]:
    """The object in the key order the shell recorded."""
    return {
        key: thaw_json(shell[key]) if key in shell else rendered[key]
        for key in order
        if isinstance(key, str) and key != ORDER and (key in shell or key in rendered)
    }


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
    shell = {
        key: value
        for key, value in original.items()
        if key in keep or key not in rendered or not same(value, rendered[key])
    }
    if list(merge(shell, rendered, sdk)) != list(original):
        shell[ORDER] = list(original)
    return shell
