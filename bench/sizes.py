"""What the benchmark runs: the backends, the scenarios and how much work each does."""

from __future__ import annotations

import dataclasses

BACKENDS = ("sqlite", "postgresql")

SCENARIOS = (
    "append_one",
    "append_batch",
    "append_tool_batch",
    "window_read",
    "full_read",
    "window_read_shared",
    "resave",
    "image_window_read",
)


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much work each scenario does; :data:`FULL` is the default run."""

    append_one: int = 500
    append_warmup: int = 20
    batches: int = 20
    batch_size: int = 100
    batch_warmup: int = 2
    window_sessions: tuple[int, ...] = (1_000, 10_000, 100_000)
    window: int = 20
    window_reps: int = 200
    window_warmup: int = 20
    full_read: int = 10_000
    full_reps: int = 20
    full_warmup: int = 3
    shared_sessions: int = 100
    shared_messages: int = 1_000
    shared_chunk: int = 50  # messages appended to each session in turn while filling
    unbounded_window_limit: int = 10_000  # see peers.Peer.bounded_window
    resave_turns: int = 200
    resave_tail: int = 20
    image_messages: int = 1_000
    image_every: int = 5
    image_side: int = 128  # 128 x 128 RGB noise: a PNG of about 49 KiB
    image_reps: int = 200
    image_warmup: int = 20
    fill_batch: int = 5_000


FULL = Sizes()
QUICK = Sizes(
    append_one=50,
    append_warmup=5,
    batches=5,
    batch_size=20,
    batch_warmup=1,
    window_sessions=(100, 1_000, 5_000),
    window_reps=30,
    window_warmup=5,
    full_read=1_000,
    full_reps=5,
    full_warmup=1,
    shared_sessions=10,
    shared_messages=200,
    unbounded_window_limit=1_000,
    resave_turns=30,
    resave_tail=5,
    image_messages=100,
    image_reps=20,
    image_warmup=3,
    image_side=64,
    fill_batch=1_000,
)


def size_label(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)
