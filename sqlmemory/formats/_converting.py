"""What every converter shares: reading provider items, naming faults, extras by format.

Pure Python: no SQLAlchemy, no provider SDK. A converter reads the provider's plain dicts
or its SDK objects (anything with ``model_dump()``), and keeps what has no common meaning
in ``extras`` under its own format's key, so that another format never re-emits a field
it does not know (``docs/providers.md``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from sqlmemory.errors import ConversionError

__all__ = [
    "ANTHROPIC",
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "DroppedContentWarning",
    "Format",
    "format_extras",
    "items_of",
    "plain",
    "warn_dropped",
    "where",
]

Format = Literal["openai_chat", "openai_responses", "anthropic"]
"""The provider formats: the key of a converter's own part of ``extras``, and the
``provider`` of the :class:`~sqlmemory.types.OpaqueBlock` values it makes."""
OPENAI_CHAT: Format = "openai_chat"
OPENAI_RESPONSES: Format = "openai_responses"
ANTHROPIC: Format = "anthropic"


class DroppedContentWarning(UserWarning):
    """Content a converter left out because the target format cannot carry it.

    Thinking signed by another provider, another format's opaque items, a source the
    target does not accept: each is dropped (never guessed at) and reported with this
    warning, so a request the target would refuse is never built.

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_dropped("a reasoning item of openai_responses", ANTHROPIC)
        >>> caught[0].category is DroppedContentWarning
        True
    """


def warn_dropped(what: str, target: Format, *, stacklevel: int = 3) -> None:
    """Report with :class:`DroppedContentWarning` that ``what`` is left out for ``target``."""
    warnings.warn(f"{what} dropped: {target} cannot carry it", DroppedContentWarning, stacklevel)


def where(index: int, field: str = "") -> str:
    """How a fault's place is named: ``item 3`` or ``item 3: content[0].type``."""
    return f"item {index}: {field}" if field else f"item {index}"


def plain(item: Any, index: int) -> Any:
    """The provider's item as plain JSON values: a ``Mapping`` as is, an SDK object dumped.

    SDK objects (pydantic models of ``openai`` and ``anthropic``) are dumped with
    ``model_dump(mode="json", exclude_unset=True, by_alias=True)``: the fields the
    provider sent, nulls included, under the provider's names (``async``, not the SDK's
    ``async_``), and no defaults the SDK filled in.

    Raises:
        ConversionError: ``item`` is neither a mapping nor has ``model_dump()``, or its
            dump fails (a field set, past validation, to what JSON cannot hold).
    """
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json", exclude_unset=True, by_alias=True)
        except TypeError:  # a model_dump() that takes no such arguments
            return dump()
        except (ValueError, AttributeError) as exc:  # what pydantic raises on a bad field
            raise ConversionError(
                f"{where(index)}: the SDK object cannot be dumped: {exc}"
            ) from None
    raise ConversionError(
        f"{where(index)}: expected a dict or an SDK object, got {type(item).__name__}"
    )


def items_of(
    items: Iterable[Any], what: str, *, single: tuple[type, ...] = (), noun: str = "items"
) -> list[Any]:
    """``items`` as a list; a single mapping or a string (or one of ``single``: a lone
    message), given by mistake, is refused.

    Raises:
        ConversionError: ``items`` is a mapping, a string, one of ``single`` or not
            iterable; the message says ``what`` must be a list of ``noun``.
    """
    if isinstance(items, (str, bytes, Mapping, *single)) or not isinstance(items, Iterable):
        raise ConversionError(f"{what} must be a list of {noun}, not {type(items).__name__}")
    return list(items)


def format_extras(extras: Mapping[str, Any], fmt: str) -> Mapping[str, Any]:
    """The part of a block's or message's ``extras`` that format ``fmt`` put there (a
    provider format, or a framework adapter's key: ``"agent_framework"``).

    Examples:
        >>> format_extras({"anthropic": {"cache_control": {"type": "ephemeral"}}}, ANTHROPIC)
        {'cache_control': {'type': 'ephemeral'}}
        >>> format_extras({"anthropic": {"cache_control": {}}}, OPENAI_CHAT)
        {}
    """
    own = extras.get(fmt)
    return own if isinstance(own, Mapping) else {}
