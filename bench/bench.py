#!/usr/bin/env python
"""sqlmemory against the raw driver and the peer stores, side by side, on SQLite and PostgreSQL.

Run from the repository root after ``pip install -e '.[dev,bench]'`` (without ``bench``
the peers are left out, with the reason)::

    python bench/bench.py

Every timed operation is measured with ``time.perf_counter`` after a warm-up, sqlmemory,
the raw driver and the peers interleaved rep by rep (so background load hits all alike),
and reported as the median and p95 in milliseconds plus the ratios of the medians
(sqlmemory / raw, sqlmemory / the best peer). The async storage, ``AsyncSqlStorage`` on
the same database, runs in the same loops (``--async none`` leaves it out) and is reported
against the sync one. bench/README.md says what each scenario measures and what the raw
side, the async side and the peers do.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

# The sibling modules import each other by name; bench/ is on sys.path when this file is
# run as a script, not when it is loaded by path (as the smoke test does).
BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from async_side import AsyncSide, async_url  # noqa: E402
from backends import open_postgres, open_sqlite, safe_url  # noqa: E402
from latency_proxy import LatencyProxy  # noqa: E402
from machine import machine_info  # noqa: E402
from peers import NAMES as PEER_NAMES  # noqa: E402
from peers import PEERS, Peers, missing, versions  # noqa: E402
from report import derived, render, targets  # noqa: E402
from scenarios import Run  # noqa: E402
from sizes import BACKENDS, FULL, QUICK, SCENARIOS, Sizes  # noqa: E402

__all__ = [
    "FULL",
    "PEERS",
    "QUICK",
    "SCENARIOS",
    "main",
    "missing",
    "parse_args",
    "render",
    "run",
]

DEFAULT_JSON = BENCH_DIR / "results.json"
DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_URL_ENV = "SQLMEMORY_BENCH_POSTGRES_URL"


def run(
    sizes: Sizes,
    backends: Sequence[str],
    pg_url: str,
    json_path: Path | None,
    sqlite_dir: Path | None = None,
    log: Callable[[str], None] | None = None,
    peers: Sequence[str] | None = None,
    async_storage: bool = True,
    latency_ms: float = 0.0,
) -> dict[str, Any]:
    """Run every scenario on each backend in ``backends``; returns (and writes) the report.

    ``peers`` names the peer stores to run (default: every one installed);
    ``async_storage`` times ``AsyncSqlStorage`` beside the sync storage; ``latency_ms``
    puts a :class:`~latency_proxy.LatencyProxy` delaying each direction that much between
    every system measured and PostgreSQL.
    """
    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    run_id = uuid.uuid4().hex[:10]
    report: dict[str, Any] = {
        "machine": machine_info(),
        "sizes": dataclasses.asdict(sizes),
        "backends": {},
        "results": [],
        "skipped": {},
        "peers": {"versions": versions(), "skipped": {}},
    }
    started = time.perf_counter()
    proxy: LatencyProxy | None = None
    if latency_ms > 0 and "postgresql" in backends:
        target = make_url(pg_url)
        proxy = LatencyProxy(target.host or "127.0.0.1", target.port or 5432, latency_ms).start()
        pg_url = proxy.url(pg_url)
    for name in backends:
        try:
            backend = open_sqlite(sqlite_dir) if name == "sqlite" else open_postgres(pg_url)
            if proxy is not None and name == "postgresql":
                backend.info["latency_proxy"] = {
                    "delay_ms_each_way": latency_ms,
                    "round_trip_ms": proxy.measured_round_trip_ms(pg_url),
                }
                measured = backend.info["latency_proxy"]["round_trip_ms"]
                say(f"latency proxy: a SELECT 1 round trip takes {measured} ms")
        except Exception as exc:  # an unreachable server: say so and go on without it
            if name == "sqlite":
                raise
            first_line = (str(exc).strip().splitlines() or [""])[0]
            reason = f"{safe_url(pg_url)} unreachable ({type(exc).__name__}: {first_line})"
            say(f"{name}: {reason}; running without it")
            report["skipped"][name] = reason
            continue
        report["backends"][name] = backend.info
        contenders: Peers | None = None
        aio: AsyncSide | None = None
        try:
            backend.raw.create_tables()
            contenders = Peers(backend.peers, peers)
            report["peers"]["skipped"].update(contenders.skipped)
            if async_storage:
                aio = AsyncSide(async_url(backend.engine.url))
                backend.info["async_driver"] = aio.driver
            report["results"] += Run(backend, sizes, run_id, say, contenders, aio).run()
        finally:
            if aio is not None:
                aio.close()
            if contenders is not None:
                contenders.close()
            try:
                backend.raw.conn.rollback()
                backend.raw.drop_tables()
            except Exception as exc:
                say(f"{name}: could not drop the raw tables: {exc}")
            finally:
                backend.raw.close()
                backend.storage.close()
                for step in backend.cleanup:
                    step()
    if proxy is not None:
        proxy.stop()
    report["scaling"] = derived(report["results"])
    report["targets"] = targets(report["results"], report["scaling"])
    report["seconds"] = round(time.perf_counter() - started, 1)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--backends",
        default=",".join(BACKENDS),
        help="comma-separated subset of sqlite,postgresql (default: both)",
    )
    parser.add_argument(
        "--pg-url",
        default=os.environ.get(PG_URL_ENV) or DEFAULT_PG_URL,
        help=f"SQLAlchemy URL of the PostgreSQL database (default: ${PG_URL_ENV} or "
        f"{DEFAULT_PG_URL})",
    )
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, help=f"where to write results ({DEFAULT_JSON})"
    )
    parser.add_argument(
        "--sqlite-dir", type=Path, default=None, help="directory for the SQLite file (a temp dir)"
    )
    parser.add_argument(
        "--peers",
        default="all",
        help=f"comma-separated peers to run, 'all' (those installed) or 'none'; known: "
        f"{','.join(PEER_NAMES)}",
    )
    parser.add_argument(
        "--async",
        dest="async_side",
        choices=("on", "none"),
        default="on",
        help="time AsyncSqlStorage beside the sync storage ('on', the default) or not ('none')",
    )
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="delay each direction between every system and PostgreSQL by this many ms, "
        "through a TCP proxy (bench/latency_proxy.py): a network; the measured round trip "
        "is printed",
    )
    args = parser.parse_args(argv)
    if args.peers == "all":
        args.peer_list = None
    elif args.peers == "none":
        args.peer_list = []
    else:
        args.peer_list = [p.strip() for p in args.peers.split(",") if p.strip()]
        unknown_peers = sorted(set(args.peer_list) - set(PEER_NAMES))
        if unknown_peers:
            parser.error(f"unknown peers {unknown_peers}; known: {','.join(PEER_NAMES)}")
    names = [b.strip().lower() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(names) - set(BACKENDS))
    if unknown or not names:
        parser.error(f"--backends takes a subset of {','.join(BACKENDS)}; got {args.backends!r}")
    args.backend_list = names
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    report = run(
        sizes,
        args.backend_list,
        args.pg_url,
        args.json,
        args.sqlite_dir,
        peers=args.peer_list,
        async_storage=args.async_side == "on",
        latency_ms=args.latency_ms,
    )
    m = report["machine"]
    print(
        f"\nsqlmemory {m['sqlmemory']} @ {(m['sqlmemory_commit'] or '?')[:12]}"
        f"{' (+local changes)' if m['sqlmemory_dirty'] else ''}; {m['python']}; "
        f"{m['platform']}; {m['cpu_count']} CPUs ({m['cpu']})"
    )
    for name, info in report["backends"].items():
        version = info.get("sqlite_version") or info.get("server_version")
        driver = f"; async storage on {info['async_driver']}" if "async_driver" in info else ""
        print(f"{name}: {version}{driver}")
        if "latency_proxy" in info:
            proxy = info["latency_proxy"]
            print(
                f"  through a latency proxy: {proxy['delay_ms_each_way']} ms each way, "
                f"a SELECT 1 round trip measured at {proxy['round_trip_ms']} ms"
            )
    print("peers: " + (" ".join(f"{k}={v}" for k, v in report["peers"]["versions"].items()) or "-"))
    for peer, reason in report["peers"]["skipped"].items():
        print(f"  {peer} not run: {reason}")
    print()
    print(render(report))
    print(f"\n{report['seconds']} s; results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
