"""What an Anthropic request may hold, for the strict checker: params only.

The SDK's ``MessageParam`` also admits the response models (``ContentBlock``) inside
``content``, and pydantic lets those models carry any extra key, so a field the API does
not know would pass unseen. These TypedDicts take the SDK's param blocks only
(``ContentBlockParam``), so :func:`tests.support.provider_types.problems` reports every
unknown key; :func:`request_problems` also validates in pydantic's strict mode (no
``"no"`` taken for ``False``). :func:`api_problems` adds the rules on turns that the
types cannot say (:func:`turn_problems`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from anthropic.types import ContentBlockParam, MessageParam, TextBlockParam
from pydantic import TypeAdapter, ValidationError
from typing_extensions import Required, TypedDict

from tests.support.provider_types import problems

__all__ = ["SYSTEM", "TURNS", "api_problems", "request_problems", "turn_problems"]


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


def api_problems(request: dict[str, Any]) -> list[str]:
    """Why the API would refuse ``request``: its types (strictly), then its turn rules."""
    return request_problems(request) or turn_problems(request["messages"])


@dataclass
class _Turn:
    """Consecutive turns of one role, as the API combines them."""

    role: str
    first: int  # the index of its first turn in ``messages``
    blocks: list[Any] = field(default_factory=list)

    def ids(self, kind: str, key: str) -> list[str]:
        return [b.get(key) for b in self.blocks if b.get("type") == kind]


def _combined(turns: list[dict[str, Any]]) -> list[_Turn]:
    combined: list[_Turn] = []
    for index, turn in enumerate(turns):
        content = turn["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not combined or combined[-1].role != turn["role"] or turn["role"] == "system":
            combined.append(_Turn(turn["role"], index))
        combined[-1].blocks.extend(blocks)
    return combined


def turn_problems(turns: list[dict[str, Any]]) -> list[str]:
    """The Messages API's rules on the turns of a valid request, as problems.

    Consecutive turns of one role count as one (the API combines them). The first turn
    that is not a system turn is the user's. Every ``tool_use`` is answered once in the
    user turn right after it, whose ``tool_result`` blocks come before anything else;
    no ``tool_result`` answers anything else, and ``tool_use`` ids are unique. A turn's
    text blocks hold more than whitespace.
    """
    combined = _combined(turns)
    found: list[str] = []
    talk = [turn for turn in combined if turn.role != "system"]
    if talk and talk[0].role != "user":
        found.append(f"[{talk[0].first}] the first turn is the {talk[0].role}'s, not the user's")
    uses = [use for turn in combined for use in turn.ids("tool_use", "id")]
    if len(set(uses)) != len(uses):
        found.append(f"tool_use ids are not unique: {uses}")
    open_uses: list[str] = []
    for turn in combined:
        results = turn.ids("tool_result", "tool_use_id")
        where = f"[{turn.first}] {turn.role} turn"
        if results and turn.role != "user":
            found.append(f"{where}: tool_result blocks outside a user turn")
        leading = next(
            (i for i, b in enumerate(turn.blocks) if b.get("type") != "tool_result"),
            len(turn.blocks),
        )
        if any(b.get("type") == "text" and not b.get("text", "").strip() for b in turn.blocks):
            found.append(f"{where}: a text block of whitespace only, or empty")
        if leading != len(results):
            found.append(f"{where}: tool_result blocks after other content")
        if sorted(results) != sorted(open_uses if turn.role == "user" else []):
            found.append(f"{where}: answers {results}, the turn before called {open_uses}")
        open_uses = turn.ids("tool_use", "id") if turn.role == "assistant" else []
    if open_uses:
        found.append(f"tool_use {open_uses} never answered")
    return found
