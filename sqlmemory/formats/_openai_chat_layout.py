"""How a Chat Completions object's keys come back exactly: verbatim fields and key order.

The converter reads some keys of an object into the model (a message's ``content``, a tool
call's ``function.arguments``) and keeps every other key verbatim. What it keeps of one
object is its *layout*, stored in the ``openai_chat`` part of the block's or message's
``extras``:

- ``fields``: the keys the model does not hold, with their values, in their order;
- ``keys``: the order of every key, only when it differs from the default order (the
  converter's order of the keys it reads, then ``fields``).

Pure Python; no SDK.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, TypeGuard

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import where
from sqlmemory.types._json import freeze_json, thaw_json

__all__ = ["arrange", "checked_json", "layout", "plain_object"]


def checked_json(value: Any, index: int, field: str) -> Any:
    """``value`` frozen as JSON, or :class:`ConversionError` naming ``field`` of item ``index``."""
    try:
        return freeze_json(value, field)
    except InvalidMessageError as exc:
        raise ConversionError(f"{where(index)}: {exc}") from None
    except RecursionError:
        raise ConversionError(f"{where(index, field)}: nested too deeply") from None


def plain_object(value: Any, index: int, field: str) -> Mapping[str, Any]:
    """A nested object of an item as a mapping: a mapping as is, an SDK object dumped."""
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        dumped = dump(mode="json", exclude_unset=True)
        if isinstance(dumped, Mapping):
            return dumped
    raise ConversionError(f"{where(index, field)}: expected an object, got {type(value).__name__}")


def layout(
    item: Mapping[str, Any],
    read: Collection[str],
    order: Sequence[str],
    index: int,
    field: str,
) -> dict[str, Any]:
    """The layout of ``item``: what :func:`arrange` needs besides the ``read`` keys.

    Args:
        item: the provider's object.
        read: the keys of ``item`` the converter holds in the model.
        order: the default order of the keys the converter writes.
        index: the item's index, for errors.
        field: where ``item`` sits in the item, for errors (``content[0]``).
    """
    fields = {key: value for key, value in item.items() if key not in read}
    out: dict[str, Any] = {}
    if fields:
        prefix = f"{field}." if field else ""
        out["fields"] = {
            key: checked_json(value, index, f"{prefix}{key}") for key, value in fields.items()
        }
    default = [key for key in order if key in read and key in item]
    default += list(fields)
    keys = list(item)
    if keys != default:
        out["keys"] = keys
    return out


def arrange(
    values: Mapping[str, Any], saved: Mapping[str, Any], order: Sequence[str]
) -> dict[str, Any]:
    """The provider's object: ``values`` in ``order``, then the saved ``fields``, in the saved
    key order when it names exactly these keys."""
    out = {key: values[key] for key in order if key in values}
    if not isinstance(saved, Mapping):  # extras written by hand: nothing saved to use
        return out
    fields = saved.get("fields")
    if isinstance(fields, Mapping):
        for key, value in fields.items():
            if key not in out:
                out[key] = thaw_json(value)
    keys = saved.get("keys")
    if _names(keys) and len(keys) == len(out) and set(keys) == set(out):
        return {key: out[key] for key in keys}
    return out


def _names(keys: Any) -> TypeGuard[Sequence[str]]:
    """Whether a saved key order is a list of strings (not a hand-written stand-in)."""
    return isinstance(keys, Sequence) and all(isinstance(key, str) for key in keys)
