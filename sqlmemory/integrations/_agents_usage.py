"""A finished OpenAI Agents run's usage, per model response, on the messages it produced.

Each ``result.raw_responses[i]`` (an SDK ``ModelResponse``) has its ``usage``
(``input_tokens``, ``output_tokens``, ``input_tokens_details.cached_tokens`` and
``cache_write_tokens``, ``output_tokens_details.reasoning_tokens``) but no model name:
the model is the one of the agent that produced its items (``agent.model``, a name or a
``Model`` with a ``model`` name; ``None`` otherwise). A response is matched to the
stored message that holds its last output item, by the item's ``id``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmemory.formats import to_openai_responses
from sqlmemory.types import Message, Role, Usage
from sqlmemory.types._message_checks import copy_unchecked

__all__ = ["with_run_usage"]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _model_name(agent: Any) -> str | None:
    model = getattr(agent, "model", None)
    name = model if isinstance(model, str) else getattr(model, "model", None)
    return name if isinstance(name, str) and name else None


def _item_id(item: Any) -> str | None:
    found = item.get("id") if isinstance(item, dict) else getattr(item, "id", None)
    return found if isinstance(found, str) else None


def response_usage(response: Any, model: str | None) -> Usage:
    """The :class:`Usage` of one SDK ``ModelResponse``."""
    usage = response.usage
    cached = getattr(usage.input_tokens_details, "cached_tokens", 0)
    written = getattr(usage.input_tokens_details, "cache_write_tokens", 0)
    reasoning = getattr(usage.output_tokens_details, "reasoning_tokens", 0)
    return Usage(
        model,
        input_tokens=_count(usage.input_tokens),
        output_tokens=_count(usage.output_tokens),
        cache_read_tokens=_count(cached),
        cache_write_tokens=_count(written),
        reasoning_tokens=_count(reasoning),
    )


def _agents_by_item(result: Any) -> dict[str, Any]:
    """The agent of each new item of the run, by the item's id."""
    found = {}
    for item in getattr(result, "new_items", ()):
        item_id = _item_id(getattr(item, "raw_item", None))
        if item_id is not None:
            found[item_id] = getattr(item, "agent", None)
    return found


def with_run_usage(messages: Sequence[Message], result: Any) -> tuple[list[Message], int]:
    """``messages`` with the usage of each response of ``result`` on the message holding
    its last output item (summed when one message holds the outputs of several), and
    how many responses were matched. The messages of no response are left as they are."""
    holder: dict[str, int] = {}
    for position, message in enumerate(messages):
        if message.role is Role.ASSISTANT:
            for item in to_openai_responses([message]):
                item_id = _item_id(item)
                if item_id is not None:
                    holder[item_id] = position
    agents = _agents_by_item(result)
    usages: dict[int, Usage] = {}
    matched = 0
    for response in getattr(result, "raw_responses", ()):
        ids = [i for i in map(_item_id, response.output) if i is not None]
        if not ids or ids[-1] not in holder:
            continue
        matched += 1
        position = holder[ids[-1]]
        usage = response_usage(response, _model_name(agents.get(ids[-1])))
        usages[position] = usages[position] + usage if position in usages else usage
    out = list(messages)
    for position, usage in usages.items():
        out[position] = copy_unchecked(Message, out[position], usage=usage)
    return out, matched
