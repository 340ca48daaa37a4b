"""CPU time per call of a sqlmemory checkout on SQLite, for A/B runs on a busy machine.

``bench.py`` measures wall time, which on a shared machine mostly measures the wait for a
core. This script measures process time (``time.process_time``: the CPU this process
used, the kernel's share of each commit included), the minimum over 5 rounds, for the
checkout given (``sqlmemory`` imported from that directory, whatever is installed):

    python bench/cpu_time.py .                     # this checkout
    mkdir /tmp/before && git archive main sqlmemory migrations | tar -x -C /tmp/before
    python bench/cpu_time.py /tmp/before

Run the two alternately, twice or more, and compare the figures of one machine. It prints
one JSON object: milliseconds per call.
"""

from __future__ import annotations

import importlib
import io
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any


def _import_from(src: str) -> Any:
    # An editable install puts a finder before sys.path: drop it so src is imported.
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, src)
    import sqlmemory

    return sqlmemory


def _png(seed: int) -> bytes:
    from PIL import Image

    rng = random.Random(seed)
    image = Image.new("RGB", (64, 48), tuple(rng.randrange(256) for _ in range(3)))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _best(fn: Callable[[], object], n: int, rounds: int = 5) -> float:
    """The fewest milliseconds of CPU one call took, averaged over ``n`` calls a round."""
    found = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(n):
            fn()
        found.append((time.process_time() - start) / n * 1000)
    return min(found)


def main(src: str) -> dict[str, float]:
    sm = _import_from(src)
    import sqlalchemy as sa

    Message, ImageBlock, FixedWindow = sm.Message, sm.ImageBlock, sm.FixedWindow
    engine = sa.create_engine("sqlite:///" + tempfile.mkdtemp() + "/cpu.db")
    importlib.import_module("sqlmemory.migrate").upgrade(engine)
    s = sm.SqlStorage(engine)
    texts = ["x" * (80 + (i * 37) % 320) for i in range(10_000)]
    s.append("full", *[Message(("user", "assistant")[i % 2], t) for i, t in enumerate(texts)])
    pictures = [
        Message.user([f"p{i}", ImageBlock(_png(i), "image/png")])
        if i % 10 == 0
        else Message.user(f"t{i}")
        for i in range(100)
    ]
    s.append("img", *pictures)
    calls = [sm.ToolCall(f"c{i}", "lookup", {"q": i}) for i in range(333)]
    agent = [
        m
        for i, call in enumerate(calls)
        for m in (
            Message.user(f"question {i}"),
            Message.assistant("let me look", tool_calls=[call]),
            Message.tool(call.id, f"answer {i}"),
        )
    ]
    s.append("agent", *agent)
    singles = iter([Message.user("hello there " * 8) for _ in range(5_000)])
    batches = iter([[Message.user(f"b{i} {j}") for j in range(100)] for i in range(30)])
    history = s.load("full")[:200]
    s.save("resave", history)

    def resave() -> None:
        nonlocal history
        history = [*history, Message.user("q"), Message.assistant("a")]
        s.save("resave", history)

    return {
        "full_read@10k": _best(lambda: s.load("full"), 1),
        "window_read FixedWindow(20) @10k": _best(lambda: s.load("full", FixedWindow(20)), 200),
        "image_window_read FixedWindow(20) @100": _best(lambda: s.load("img", FixedWindow(20)), 50),
        "tool_window_read FixedWindow(10) @1k": _best(
            lambda: s.load("agent", FixedWindow(10)), 200
        ),
        "append_one": _best(lambda: s.append("one", next(singles)), 200),
        "append_batch 100": _best(lambda: s.append("batch", *next(batches)), 5),
        "resave @200 (+2)": _best(resave, 20),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "."), indent=1))
