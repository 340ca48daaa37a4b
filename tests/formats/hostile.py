"""Hostile values, and documents with one of them put anywhere, for the no-foreign-error rule.

Data and strategies, not tests. ``docs/contract/errors.md``: no exception other than the
library's own (and ``TypeError`` or ``ValueError`` where the docs say so) escapes a public
call, whatever the input: no ``AttributeError``, ``KeyError``, ``RecursionError``,
``OverflowError``, ``UnicodeError`` nor a megabyte of error message from a tiny input.

A value here is wrong in type (``None``, bytes, sets, objects), in size (a 5,000-digit
integer, a megabyte of text, nesting 10,000 deep), in content (NaN, a lone surrogate,
NUL, non-string keys) or in behaviour (objects whose ``__eq__``, ``__hash__``,
``__iter__`` or ``__getitem__`` raise :class:`Lie`, or lie). What such an object raises
itself is the caller's own exception and may reach the caller: the tests let :class:`Lie`
through, nothing else.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

HOSTILE_SETTINGS = settings(
    max_examples=150 * (10 if os.environ.get("SQLMEMORY_THOROUGH_PROPERTIES") == "1" else 1),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""Modest: each test file stays well under a minute (ten times more examples with
``SQLMEMORY_THOROUGH_PROPERTIES=1``)."""

DEPTH = 10_000


class Lie(Exception):
    """Raised by the hostile objects' own methods: the caller's exception, let through."""


class RaisingEq:
    """An object whose comparison and hash raise."""

    def __eq__(self, other: object) -> bool:
        raise Lie("__eq__")

    def __hash__(self) -> int:
        raise Lie("__hash__")


class RaisingIterable:
    """An iterable whose ``__iter__`` and ``__len__`` raise."""

    def __iter__(self) -> Iterator[Any]:
        raise Lie("__iter__")

    def __len__(self) -> int:
        raise Lie("__len__")


class RaisingMapping(Mapping[str, Any]):
    """A mapping that names keys and raises when one is read."""

    def __getitem__(self, key: str) -> Any:
        raise Lie(f"__getitem__({key!r})")

    def __iter__(self) -> Iterator[str]:
        return iter(["type", "role", "content", "text"])

    def __len__(self) -> int:
        return 4


class LyingMapping(Mapping[Any, Any]):
    """A mapping whose length, keys and items disagree."""

    def __getitem__(self, key: Any) -> Any:
        if key == "type":
            return "text"
        raise Lie(f"no {key!r}")

    def __iter__(self) -> Iterator[Any]:
        return iter(["type", 3, None])

    def __len__(self) -> int:
        return 99


class LyingStr(str):
    """A string that equals nothing, itself included."""

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__


def nested_list(depth: int, leaf: Any = 1) -> Any:
    """``[[[...leaf...]]]``, ``depth`` deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int, key: str = "a") -> Any:
    """``{key: {key: ...}}``, ``depth`` deep."""
    value: Any = {}
    for _ in range(depth):
        value = {key: value}
    return value


MEGABYTE = "x" * 1_000_000

JSON_HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    2**63,
    10**5000,
    -(10**5000),
    1.5,
    "",
    "\ud800",
    "a\x00b",
    MEGABYTE,
    [],
    [None],
    [[1]],
    [{}],
    ["type", "text", "zzz"],
    {},
    {"type": None},
    {"type": []},
    {"fields": [1], "keys": 3},
    {"a": 10**5000},
    {MEGABYTE: 1},
    nested_list(DEPTH),
    nested_dict(DEPTH),
    nested_dict(63, MEGABYTE),
]
"""Values JSON can hold (or a ``Message`` refuses by itself): what hand-written extras may
carry."""

HOSTILE: list[Any] = [
    *JSON_HOSTILE,
    float("nan"),
    float("-inf"),
    1j,
    b"\xff\x00",
    bytearray(b"ab"),
    {1, 2},
    frozenset(),
    object(),
    ("text",),
    (),
    {1: 2, None: 3},
    {(1, (2,)): "tuple key"},
    {"\ud800": 1},
    {"type": 10**5000},
    {"type": nested_list(DEPTH)},
    {"type": "\ud800"},
    [{"type": "text", "text": "\ud800"}],
    nested_list(DEPTH, {"type": "text"}),
    RaisingEq(),
    RaisingIterable(),
    RaisingMapping(),
    LyingMapping(),
    LyingStr("text"),
    str,
    len,
]
"""Anything a caller might pass by mistake, or an attacker on purpose."""


LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.binary(max_size=4),
)
"""Small atoms, JSON's and bytes: the leaves of random junk."""


def hostile_values(pool: list[Any]) -> st.SearchStrategy[Any]:
    """A value of ``pool``, a generator of one, or a small random JSON-ish value."""
    junk = st.recursive(
        LEAVES,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.tuples(inner)
            | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=3)
        ),
        max_leaves=8,
    )
    picked = st.integers(0, len(pool) - 1).map(pool.__getitem__)
    generators = picked.map(lambda value: (v for v in [value]))
    return st.one_of(picked, junk, generators)


class Box:
    """A hostile value with a short ``repr``, for hypothesis to print (see :class:`Spoiled`)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"<a {type(self.value).__name__}>"


def boxed(pool: list[Any]) -> st.SearchStrategy[Box]:
    """:func:`hostile_values` in a :class:`Box`."""
    return hostile_values(pool).map(Box)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
        yield (*prefix, "zz_unknown")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``document`` with ``value`` at ``path`` (a new key, for a missing one)."""
    if not path:
        return value
    out = copy.deepcopy(document)
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return out


class Spoiled:
    """A document with a hostile value at ``path``; its ``repr`` is short whatever it holds
    (hypothesis prints the examples it runs, and a value 10,000 deep would break that)."""

    def __init__(self, document: Any, path: tuple[Any, ...], value: Any) -> None:
        self.path = path
        self.document = replaced(document, path, value)
        self._value_type = type(value).__name__

    def __repr__(self) -> str:
        return f"<a {self._value_type} at {self.path!r}>"


@st.composite
def spoiled(draw: st.DrawFn, documents: list[Any], pool: list[Any]) -> Spoiled:
    """One of ``documents`` with one value, anywhere in it, swapped for a hostile one."""
    document = draw(st.sampled_from(documents))
    path = draw(st.sampled_from(list(_paths(document))))
    return Spoiled(document, path, draw(hostile_values(pool)))
