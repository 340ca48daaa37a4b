"""What an Anthropic request may hold, for the strict checker: params only.

The SDK's ``MessageParam`` also admits the response models (``ContentBlock``) inside
``content``, and pydantic lets those models carry any extra key, so a field the API does
not know would pass unseen. These TypedDicts take the SDK's param blocks only
(``ContentBlockParam``), so :func:`tests.support.provider_types.problems` reports every
unknown key; :func:`request_problems` also validates in pydantic's strict mode (no
``"no"`` taken for ``False``).
"""

from __future__ import annotations

from typing import Any, Literal

from anthropic.types import ContentBlockParam, MessageParam, TextBlockParam
from pydantic import TypeAdapter, ValidationError
from typing_extensions import Required, TypedDict

from tests.support.provider_types import problems

__all__ = ["SYSTEM", "TURNS", "request_problems"]


class UserTurn(TypedDict, total=False):
    role: Required[Literal["user"]]
    content: Required[str | list[ContentBlockParam]]


class AssistantTurn(TypedDict, total=False):
    role: Required[Literal["assistant"]]
    content: Required[str | list[ContentBlockParam]]


class SystemTurn(TypedDict, total=False):
    role: Required[Literal["system"]]
    content: Required[str | list[TextBlockParam]]


TURNS = list[UserTurn | AssistantTurn | SystemTurn]
"""The ``messages`` of a request, param blocks only."""
SYSTEM = str | list[TextBlockParam]
"""The ``system`` of a request."""

_STRICT = TypeAdapter(TURNS)
_STRICT_SYSTEM: TypeAdapter[Any] = TypeAdapter(SYSTEM)


def request_problems(request: dict[str, Any]) -> list[str]:
    """Why ``request`` (``{"system"?, "messages"}``) is no valid request, as a list."""
    found = [f"unknown request key {key!r}" for key in request if key not in ("system", "messages")]
    found += problems(request["messages"], TURNS)
    found += problems(request["messages"], list[MessageParam])
    for adapter, value in ((_STRICT, request["messages"]), (_STRICT_SYSTEM, request.get("system"))):
        if value is None:
            continue
        try:
            adapter.validate_python(value, strict=True)
        except ValidationError as exc:
            found.append(str(exc).replace("\n", " "))
    if "system" in request:
        found += problems(request["system"], SYSTEM)
    return found
