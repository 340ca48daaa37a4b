"""Validation and freezing of the plain values messages hold: text and JSON.

Pure Python: no SQLAlchemy. Frozen JSON uses :class:`FrozenDict` and :class:`FrozenList`,
in the key order it was given, so a message a caller holds can never be changed through it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn, SupportsIndex

from sqlmemory.errors import InvalidMessageError
from sqlmemory.types._fields import shown

__all__ = [
    "EMPTY",
    "MAX_JSON_DEPTH",
    "MAX_JSON_INT",
    "MIN_JSON_INT",
    "FrozenDict",
    "FrozenList",
    "check_str",
    "dump_json",
    "freeze_json",
    "freeze_mapping",
    "freeze_trusted",
    "thaw_json",
]


def check_str(value: object, what: str, *, allow_empty: bool = True) -> str:
    """Return ``value`` if it is a ``str`` that encodes to UTF-8, else raise."""
    if not isinstance(value, str):
        raise InvalidMessageError(f"{what} must be a str, not {type(value).__name__}")
    if not allow_empty and not value:
        raise InvalidMessageError(f"{what} must not be empty")
    if value.isascii():  # O(1) in CPython: ASCII text holds no surrogate
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidMessageError(f"{what} holds a lone surrogate at index {exc.start}") from None
    return value


MAX_JSON_DEPTH = 64
"""How deeply JSON values (metadata, extras, tool arguments, payloads) may nest."""
MIN_JSON_INT = -(2**63)
MAX_JSON_INT = 2**63 - 1
"""JSON integers must fit a signed 64-bit integer, as every database and most parsers
read them."""


def freeze_json(value: Any, what: str, depth: int = 0) -> Any:
    """Deep-copy a JSON-serialisable value into immutable containers, keeping key order.

    Mappings become :class:`FrozenDict` and sequences :class:`FrozenList`. NaN, Infinity,
    integers outside signed 64 bits, containers nested more than :data:`MAX_JSON_DEPTH`
    deep, non-string keys and values JSON cannot represent raise
    :class:`InvalidMessageError` (the depth is checked on the way down, so no value can
    exhaust the interpreter's recursion limit).

    Examples:
        >>> nested: object = 0
        >>> for _ in range(65):
        ...     nested = [nested]
        >>> freeze_json(nested, "metadata")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.InvalidMessageError: metadata is nested more than 64 deep
        >>> freeze_json({"n": 2**63}, "metadata")
        Traceback (most recent call last):
        ...
        sqlmemory.errors.InvalidMessageError: metadata['n'] holds an integer outside signed 64 bits
    """
    try:
        return _freeze(value, depth)
    except _Unfit:
        # Something to refuse, or a type the fast walk leaves alone: the full walk names it.
        return _freeze_checked(value, what, depth)


class _Unfit(Exception):
    """Raised by :func:`_freeze` for a value it leaves to :func:`_freeze_checked`."""


def _freeze(value: Any, depth: int) -> Any:
    """:func:`freeze_json` for the plain types JSON parsers and converters give, without
    building the path of every value (which only an error needs)."""
    kind = type(value)
    if kind is str:
        if value.isascii() or _encodes(value):
            return value
        raise _Unfit
    if value is None or kind is bool:
        return value
    if kind is int:
        if MIN_JSON_INT <= value <= MAX_JSON_INT:
            return value
        raise _Unfit
    if kind is float and math.isfinite(value):
        return value
    if depth >= MAX_JSON_DEPTH:
        raise _Unfit
    if kind in _OBJECTS:
        return _freeze_object(value, depth)
    if kind in _ARRAYS:
        return FrozenList([_freeze(item, depth + 1) for item in value])
    raise _Unfit


def _freeze_object(value: dict[str, Any], depth: int) -> FrozenDict:
    frozen: dict[str, Any] = {}
    for key, item in value.items():
        if type(key) is not str or not (key.isascii() or _encodes(key)):
            raise _Unfit
        frozen[key] = _freeze(item, depth + 1)
    return _frozen_dict(frozen)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _freeze_checked(value: Any, what: str, depth: int = 0) -> Any:
    """:func:`freeze_json` value by value, naming the path of the first value refused."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not MIN_JSON_INT <= value <= MAX_JSON_INT:
            raise InvalidMessageError(f"{what} holds an integer outside signed 64 bits")
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMessageError(f"{what} holds {value!r}, which JSON cannot represent")
        return value
    if isinstance(value, str):
        return check_str(value, what)
    if isinstance(value, (Mapping, list, tuple)) and depth >= MAX_JSON_DEPTH:
        raise InvalidMessageError(f"{_root(what)} is nested more than {MAX_JSON_DEPTH} deep")
    if isinstance(value, Mapping):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidMessageError(f"{what} has a non-string key {shown(key)}")
            check_str(key, f"{what} key")
            frozen[key] = _freeze_checked(item, f"{what}[{shown(key)}]", depth + 1)
        return _frozen_dict(frozen)
    if isinstance(value, (list, tuple)):
        return FrozenList(
            _freeze_checked(item, f"{what}[{i}]", depth + 1) for i, item in enumerate(value)
        )
    raise InvalidMessageError(f"{what} holds a {type(value).__name__}, which is not JSON")


def _root(what: str) -> str:
    """``what`` without the path into it (``metadata[0][0]...`` -> ``metadata``)."""
    return what.split("[", 1)[0]


def freeze_mapping(value: object, what: str) -> FrozenDict:
    """``value`` as a :class:`FrozenDict`: it must be a mapping holding JSON values.

    A :class:`FrozenDict` is returned as it is: it was checked when it was built.
    """
    if type(value) is FrozenDict:
        return value
    if not isinstance(value, Mapping):
        raise InvalidMessageError(f"{what} must be a mapping, not {type(value).__name__}")
    frozen: FrozenDict = freeze_json(value, what)
    return frozen


def thaw_json(value: Any) -> Any:
    """The mutable (``dict``/``list``) copy of a value made by :func:`freeze_json`."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    # Atoms are taken inline: most values of an object are, and a call each costs more.
    if kind in _OBJECTS or isinstance(value, Mapping):
        return {
            key: item if type(item) in _ATOMS else thaw_json(item) for key, item in value.items()
        }
    if kind in _ARRAYS or isinstance(value, (tuple, list)):
        return [item if type(item) in _ATOMS else thaw_json(item) for item in value]
    return value


def _not_json(value: object) -> NoReturn:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _compact_writer() -> Callable[[Any, int], Iterable[str]] | None:
    """CPython's C encoder set as ``json.dumps(value, ensure_ascii=False,
    allow_nan=False, separators=(",", ":"))`` sets it, made once (``None`` where there is
    none): ``json.dumps`` makes an encoder object and then a C encoder on every call,
    more than half the time of writing a tool call's arguments. It has no cycle check
    (``markers`` is ``None``): the values written are frozen or built from frozen ones,
    and a frozen value cannot hold itself."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    writer: Callable[[Any, int], Iterable[str]] = make(
        None, _not_json, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
    return writer


_WRITE = _compact_writer()


def dump_json(value: Any) -> str:
    """Compact JSON text of a frozen value, keys in their original order: what
    ``json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))``
    writes (``tests/unit/test_dump_json.py``)."""
    # FrozenDict and FrozenList are a dict and a tuple: json writes them without a copy.
    if _WRITE is None:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return "".join(_WRITE(value, 0))


# --- the frozen containers ----------------------------------------------------------


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is immutable")


class FrozenDict(dict[str, Any]):
    """A read-only JSON object: metadata, extras, tool arguments and opaque payloads.

    It is a ``dict`` whose mutating methods raise ``TypeError``, holding only JSON values
    (nested objects as :class:`FrozenDict`, arrays as :class:`FrozenList`), in the key order
    it was given. It equals the plain ``dict`` it was built from, ``json.dumps`` writes it
    as is, and ``copy.deepcopy`` and ``pickle`` keep it.

    Examples:
        >>> from sqlmemory import Message
        >>> metadata = Message.user("hi", metadata={"b": [1, 2], "a": None}).metadata
        >>> metadata == {"b": [1, 2], "a": None}, list(metadata)
        (True, ['b', 'a'])
        >>> metadata["c"] = 3
        Traceback (most recent call last):
        ...
        TypeError: FrozenDict is immutable

    Args:
        value: a mapping with string keys holding JSON values; it is copied and frozen
            deeply (:class:`~sqlmemory.errors.InvalidMessageError` when it is not JSON).
    """

    __slots__ = ()

    def __init__(self, value: Mapping[str, Any] | Iterable[tuple[str, Any]] = (), /) -> None:
        frozen = freeze_json(dict(value), "FrozenDict")
        dict.__init__(self, frozen)

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_frozen_dict, (dict(self),))


class FrozenList(tuple[Any, ...]):
    """A read-only JSON array: a ``tuple`` that also equals the ``list`` it was built from.

    Examples:
        >>> from sqlmemory import Message
        >>> tags = Message.user("hi", metadata={"tags": ["a", "b"]}).metadata["tags"]
        >>> tags == ["a", "b"], tags == ("a", "b"), type(tags).__name__
        (True, True, 'FrozenList')
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return tuple.__eq__(self, tuple(other))
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"FrozenList({list(self)!r})"

    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        item = tuple.__getitem__(self, index)
        return FrozenList(item) if isinstance(index, slice) else item

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self


def _frozen_dict(items: dict[str, Any]) -> FrozenDict:
    """A :class:`FrozenDict` of ``items``, whose values are frozen already (not copied deeply)."""
    frozen = dict.__new__(FrozenDict)
    dict.__init__(frozen, items)
    return frozen


# The exact types of plain JSON values, for walks that take the common case first.
_ATOMS = frozenset({str, int, float, bool, type(None)})
_OBJECTS = frozenset({dict, FrozenDict})
_ARRAYS = frozenset({list, tuple, FrozenList})
_PARSED_CONTAINERS = frozenset({dict, list})
"""The containers ``json.loads`` makes."""

EMPTY: FrozenDict = _frozen_dict({})
"""The empty :class:`FrozenDict`, shared."""


def freeze_trusted(value: Any) -> Any:
    """Freeze a value parsed from JSON the library wrote itself, without checking it again.

    The value must be fresh from ``json.loads`` (only ``dict``, ``list`` and atoms) and is
    consumed: its objects and arrays are frozen in place, where a copy of each would cost
    another walk.
    """
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(item) in _PARSED_CONTAINERS:
                value[key] = freeze_trusted(item)  # same keys: the walk stays valid
        return _frozen_dict(value)
    if kind is list:
        return FrozenList(
            [freeze_trusted(item) if type(item) in _PARSED_CONTAINERS else item for item in value]
        )
    return value
