"""The data the scenarios write: deterministic message texts and noise images."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator, Sequence
from typing import Any

from sqlmemory import Message, ToolCall

_WORD_LINES = (
    "the agent calls a tool and reads the result before it answers the user with a short",
    "summary of what changed in the repository since the last deploy including failing",
    "tests flaky network retries database migrations cache invalidation and metrics",
)
WORDS = tuple(" ".join(_WORD_LINES).split())


class Corpus:
    """Deterministic message texts (80 to 400 characters), alternating user/assistant."""

    def __init__(self, seed: int = 1234) -> None:
        self.rng = random.Random(seed)

    def text(self) -> str:
        target = self.rng.randint(80, 400)
        words: list[str] = []
        size = 0
        while size < target:
            word = self.rng.choice(WORDS)
            words.append(word)
            size += len(word) + 1
        return " ".join(words)

    def rows(self, n: int) -> list[tuple[str, str]]:
        """``n`` (role, text) pairs, a user message first."""
        return [("user" if i % 2 == 0 else "assistant", self.text()) for i in range(n)]

    def agent_rows(self, n: int) -> list[AgentRow]:
        """``n`` rows of an agent's conversation, as ``../shared/bench/compare.sh`` writes
        them: in every ten, the eighth is the assistant's tool call and the ninth its
        result; the others alternate user and assistant texts, a user's first."""
        rows: list[AgentRow] = []
        for i in range(n):
            k = i % 10
            if k == 7:
                rows.append(("call", f"call_{i:07d}", ""))
            elif k == 8:
                rows.append(("result", f"call_{i - 1:07d}", self.text()))
            else:
                rows.append(("user" if k % 2 == 0 else "assistant", "", self.text()))
        return rows


AgentRow = tuple[str, str, str]
"""``(kind, call id, text)``: kind ``user``, ``assistant``, ``call`` (a tool call, its
arguments :func:`call_arguments`) or ``result`` (the tool's output); the call id empty
for a text."""
TOOL_NAME = "lookup_order"


def call_arguments(call_id: str) -> dict[str, Any]:
    """The arguments of the benchmark's tool call ``call_id``."""
    return {"order_id": call_id, "include_history": True, "fields": ["status", "eta"]}


def agent_message(row: AgentRow) -> Message:
    kind, call_id, text = row
    if kind == "call":
        return Message.assistant(tool_calls=[ToolCall(call_id, TOOL_NAME, call_arguments(call_id))])
    if kind == "result":
        return Message.tool(call_id, text)
    return to_message(kind, text)


def raw_agent_row(row: AgentRow) -> tuple[str, str]:
    """The raw table's ``(role, content)`` of an agent row: a call as its JSON."""
    kind, call_id, text = row
    if kind == "call":
        call = {"id": call_id, "name": TOOL_NAME, "arguments": call_arguments(call_id)}
        return "assistant", json.dumps(call)
    return ("tool" if kind == "result" else kind), text


def to_message(role: str, text: str) -> Message:
    return Message.user(text) if role == "user" else Message.assistant(text)


def noise_png(rng: random.Random, side: int) -> bytes:
    """A PNG of random RGB noise, so it does not compress (about 3 * side**2 bytes)."""
    from PIL import Image

    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def chunks(seq: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]
