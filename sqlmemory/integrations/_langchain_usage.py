"""LangChain's ``usage_metadata`` and ``response_metadata["model_name"]`` as a
:class:`~sqlmemory.types.Usage`, and back.

LangChain's ``input_tokens`` counts every input token (cache reads and writes included,
whatever the provider), its ``input_token_details`` the ``cache_read`` and
``cache_creation`` among them, its ``output_token_details`` the ``reasoning`` tokens of
``output_tokens``; a detail left out is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmemory.types import Usage

__all__ = ["model_name_of", "usage_metadata_of", "usage_of"]

_DETAILS = {
    "cache_read_tokens": ("input_token_details", "cache_read"),
    "cache_write_tokens": ("input_token_details", "cache_creation"),
    "reasoning_tokens": ("output_token_details", "reasoning"),
}


def _detail(metadata: Mapping[str, Any], group: str, key: str) -> Any:
    details = metadata.get(group)
    return details.get(key, 0) if isinstance(details, Mapping) else 0


def usage_of(metadata: Mapping[str, Any], response_metadata: Mapping[str, Any]) -> Usage:
    """The usage of an ``AIMessage``'s ``usage_metadata`` (checked by LangChain already)
    and the ``model_name`` of its ``response_metadata``.

    Raises:
        InvalidMessageError: a count a :class:`Usage` cannot hold (negative, past 2**63-1),
            a bad model name.
    """
    model = response_metadata.get("model_name")
    counts = {name: _detail(metadata, *where) or 0 for name, where in _DETAILS.items()}
    return Usage(
        model if isinstance(model, str) else None,
        input_tokens=metadata.get("input_tokens", 0),
        output_tokens=metadata.get("output_tokens", 0),
        **counts,
    )


def usage_metadata_of(usage: Usage) -> dict[str, Any]:
    """The ``usage_metadata`` LangChain gives an ``AIMessage`` of this usage."""
    metadata: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    for name, (group, key) in _DETAILS.items():
        if getattr(usage, name):
            metadata.setdefault(group, {})[key] = getattr(usage, name)
    return metadata


def model_name_of(usage: Usage | None, response_metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``response_metadata`` with the usage's model as ``model_name`` when it has none."""
    if usage is None or usage.model is None or "model_name" in response_metadata:
        return dict(response_metadata)
    return {**response_metadata, "model_name": usage.model}
