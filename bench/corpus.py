"""The data the scenarios write: deterministic message texts and noise images."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator, Sequence
from typing import Any

from sqlmemory import Message

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
