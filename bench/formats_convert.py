"""The OpenAI Responses converters alone: ``from_openai_responses`` and ``to_openai_responses``
on a history as the OpenAI Agents ``Runner`` stores it, no database involved.

Each turn is a user message, a reasoning item (SDK field order, encrypted content), the
model's ``function_call``, its ``function_call_output`` and the assistant's ``message``
(ids, status, annotations): the items ``bench/agents_session.py`` adds, plus reasoning.
Before timing, the script checks that ``to_openai_responses(from_openai_responses(items))``
gives the items back exactly (key order included). Run from the repository root::

    python bench/formats_convert.py            # 1,000 and 10,000 items
    python bench/formats_convert.py --quick    # a check that it runs
    python bench/formats_convert.py --profile  # cProfile of the round trip, top functions
    python bench/formats_convert.py --src /tmp/before   # another checkout (A/B runs)

Besides the median wall time of a call it prints its CPU time (``time.process_time``, the
fewest of the rounds): on a shared machine the wall time mostly measures the wait for a
core, so compare checkouts by CPU time, run alternately (``bench/cpu_time.py`` says how
to unpack one).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _import_from(src: str) -> None:
    # An editable install puts a finder before sys.path: drop it so src is imported.
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, src)


if "--src" in sys.argv[:-1]:  # before corpus imports sqlmemory
    _import_from(sys.argv[sys.argv.index("--src") + 1])

from corpus import Corpus  # noqa: E402
from timing import rotating, summarize  # noqa: E402

import sqlmemory  # noqa: E402
from sqlmemory.formats import from_openai_responses, to_openai_responses  # noqa: E402


def turn(corpus: Corpus, i: int) -> list[dict[str, Any]]:
    """One turn of Responses items, as ``Runner`` stores them (``model_dump`` field order)."""
    call_id = f"call_{i:08d}{uuid.UUID(int=i).hex[:16]}"
    order = f"A-{1_000_000 + i}"
    return [
        {"role": "user", "content": corpus.text()},
        {
            "id": f"rs_{i:08d}{uuid.UUID(int=i * 3).hex[:24]}",
            "summary": [{"text": corpus.text(), "type": "summary_text"}],
            "type": "reasoning",
            "encrypted_content": "gAAAAB" + uuid.UUID(int=i * 5).hex * 8,
        },
        {
            "arguments": json.dumps({"order_id": order, "fields": ["status", "eta"]}),
            "call_id": call_id,
            "name": "lookup_order",
            "type": "function_call",
            "id": f"fc_{i:08d}{uuid.UUID(int=i * 7).hex[:24]}",
            "status": "completed",
        },
        {
            "call_id": call_id,
            "output": json.dumps(
                {"order_id": order, "status": "shipped", "eta": "2026-12-04", "note": ""}
            ),
            "type": "function_call_output",
        },
        {
            "id": f"msg_{i:08d}{uuid.UUID(int=i * 13).hex[:24]}",
            "content": [{"annotations": [], "text": corpus.text(), "type": "output_text"}],
            "role": "assistant",
            "status": "completed",
            "type": "message",
        },
    ]


def history(n_items: int, seed: int = 1234) -> list[dict[str, Any]]:
    corpus = Corpus(seed)
    items: list[dict[str, Any]] = []
    i = 0
    while len(items) < n_items:
        items += turn(corpus, i)
        i += 1
    return items[:n_items]


def _cpu(fn: Callable[[], object], rounds: int) -> float:
    """The fewest milliseconds of CPU one call took, over ``rounds`` calls."""
    found = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        found.append(time.process_time() - start)
    return min(found) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--profile", action="store_true", help="cProfile the round trip")
    parser.add_argument("--sizes", default=None, help="item counts, e.g. 1000,10000")
    parser.add_argument("--src", default=None, help="import sqlmemory from this checkout")
    args = parser.parse_args()

    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    if sizes is None:
        sizes = [200] if args.quick else [1_000, 10_000]

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"sqlmemory from {Path(sqlmemory.__file__).parent.parent}, "
        f"Python {sys.version.split()[0]}, "
        f"load average {' '.join(f'{x:.2f}' for x in load) if load else '?'}"
    )
    print(f"{'case':<32}{'median ms':>11}{'p95 ms':>10}{'CPU ms':>10}{'CPU us/item':>13}")
    for n in sizes:
        items = history(n)
        messages = from_openai_responses(items)
        if to_openai_responses(messages) != items or json.dumps(
            to_openai_responses(messages)
        ) != json.dumps(items):
            raise SystemExit(f"round trip of {n} items is not exact")
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            to_openai_responses(from_openai_responses(items))
            profile.disable()
            print(f"--- profile, {n} items")
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)
            continue
        reps = 3 if args.quick else max(5, 200_000 // (n * 4))
        fns = (
            lambda _i, items=items: from_openai_responses(items),
            lambda _i, messages=messages: to_openai_responses(messages),
        )
        samples = rotating(fns, reps, warmup=1)
        names = ("from_openai_responses", "to_openai_responses")
        for name, fn, got in zip(names, fns, samples, strict=True):
            stats = summarize(got)
            cpu = _cpu(partial(fn, 0), reps)
            print(
                f"{name + f' @{n:,}':<32}{stats['median_ms']:>11.2f}{stats['p95_ms']:>10.2f}"
                f"{cpu:>10.2f}{cpu * 1000 / n:>13.2f}"
            )


if __name__ == "__main__":
    main()
