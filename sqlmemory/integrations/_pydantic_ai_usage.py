"""Pydantic AI's ``ModelResponse.usage`` and ``model_name`` as a
:class:`~sqlmemory.types.Usage`, and back.

From a response dumped by Pydantic AI (``ModelMessagesTypeAdapter``): its
``RequestUsage``'s ``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
``cache_write_tokens`` and reasoning tokens (``output_reasoning_tokens``, or
``details["reasoning_tokens"]`` in older releases), and its ``model_name``. A response
that names no model and counts nothing (a history made by hand) has no usage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmemory.types import Usage

__all__ = ["response_usage", "usage_fields"]

_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def response_usage(response: Mapping[str, Any]) -> Usage | None:
    """The usage of a dumped ``ModelResponse`` (its fields but ``parts``).

    Raises:
        InvalidMessageError: a count a :class:`Usage` cannot hold, a bad model name.
    """
    usage = response.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    model = response.get("model_name")
    counts = {name: usage.get(name) or 0 for name in _COUNTS}
    details = usage.get("details")
    reasoning = usage.get("output_reasoning_tokens") or (
        details.get("reasoning_tokens", 0) if isinstance(details, Mapping) else 0
    )
    if model is None and not reasoning and not any(counts.values()):
        return None
    return Usage(model, reasoning_tokens=reasoning, **counts)


def usage_fields(usage: Usage | None, response: dict[str, Any]) -> dict[str, Any]:
    """``response`` (a ``ModelResponse`` to validate) with this usage and model, unless it
    holds Pydantic AI's own already (a response it made, read back as it was)."""
    if usage is None or "usage" in response:
        return response
    counts = {name: getattr(usage, name) for name in _COUNTS}
    if usage.reasoning_tokens:
        counts["details"] = {"reasoning_tokens": usage.reasoning_tokens}
    model = {} if usage.model is None else {"model_name": usage.model}
    return {**response, "usage": counts, **model}
