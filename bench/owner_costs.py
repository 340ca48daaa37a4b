#!/usr/bin/env python
"""What owners cost: one owner's session pages, owned views against the unscoped storage,
and erasure, on SQLite and PostgreSQL (and MySQL/MariaDB when given a URL).

From the repository root, after ``pip install -e '.[dev,bench]'``::

    python bench/owner_costs.py            # full sizes
    python bench/owner_costs.py --quick    # small sizes, a check that it runs

Three measures on each backend, in one run (bench/README.md says more):

- **pages**: 100,000 session records over 1,000 owners (plain ``INSERT``s, untimed), one
  owner holding every tenth; ``list_sessions(limit=50)`` pages of that owner, through
  its owned view, at pages 0, 10, 50 and its last, beside the unscoped list's pages at
  the same numbers, all interleaved: flat with depth when each page is a range scan.
- **views**: an owned view's ``append`` of one message and ``FixedWindow(10)`` read of a
  1,000-message session against the unscoped storage's, sync (``SqlStorage``) and async
  (``AsyncSqlStorage``), the four contenders of a call interleaved; the figure is the
  owned median over the unscoped one (the goal of issue 25: within 5%).
- **erasure**: ``erase_owner`` of an owner with 100 sessions of 1,000 messages, one in
  100 with an image of its own: its time, its transactions and the longest of them.

The SQLite database is a fresh file in a temporary directory. On PostgreSQL
(``--pg-url``) and MySQL/MariaDB (``--mysql-url``) the schema is upgraded if needed, the
sessions are named ``bench-owners-<run id>-...`` and deleted at the end; a server that
cannot be reached is left out, with the reason.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import sqlalchemy as sa  # noqa: E402
from async_side import async_url  # noqa: E402
from backends import safe_url  # noqa: E402
from machine import machine_info  # noqa: E402
from owner_scenarios import (  # noqa: E402
    FULL,
    QUICK,
    Loop,
    Names,
    Sizes,
    cleanup,
    erasure,
    fill_records,
    pages,
    view_ratios,
)

from sqlmemory import AsyncSqlStorage, SqlStorage, migrate  # noqa: E402

__all__ = ["FULL", "QUICK", "Sizes", "main", "parse_args", "render", "run_backend"]

DEFAULT_JSON = BENCH_DIR / "results-owners.json"
DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_URL_ENV = "SQLMEMORY_BENCH_POSTGRES_URL"
MYSQL_URL_ENV = "SQLMEMORY_BENCH_MYSQL_URL"
BACKENDS = ("sqlite", "postgresql", "mysql")


def run_backend(name: str, url: str, sizes: Sizes, with_async: bool, say: Any) -> dict[str, Any]:
    """Every measure on the database at ``url``; its sessions are deleted afterwards."""
    migrate.upgrade(url)
    storage = SqlStorage.from_url(url)
    aio = AsyncSqlStorage.from_url(async_url(storage.engine.url)) if with_async else None
    loop = Loop()
    names = Names(uuid.uuid4().hex[:8])
    result: dict[str, Any] = {"backend": name, "url": safe_url(url)}
    if aio is not None:
        result["async_driver"] = aio.engine.url.drivername
    try:
        began = time.perf_counter()
        fill_records(storage.engine, names, sizes)
        say(
            f"{name}: {sizes.sessions:,} session records written in "
            f"{time.perf_counter() - began:.1f} s"
        )
        result["pages"] = pages(storage, names, sizes)
        say(f"{name}: pages timed")
        result["views"] = view_ratios(storage, aio, loop, names, sizes)
        say(f"{name}: owned views timed")
        result["erasure"] = erasure(storage, names, sizes)
        say(f"{name}: erasure timed")
    finally:
        cleanup(storage.engine, names)
        if aio is not None:
            loop.run(aio.close())
        loop.close()
        storage.close()
    return result


def unreachable(url: str) -> str | None:
    """Why the database at ``url`` cannot be used, or ``None`` when it answers."""
    engine = sa.create_engine(url)
    try:
        with engine.connect():
            return None
    except Exception as exc:  # an unreachable server is reported, not fatal
        first = (str(exc).strip().splitlines() or [""])[0]
        return f"{safe_url(url)} unreachable ({type(exc).__name__}: {first})"
    finally:
        engine.dispose()


def render(report: dict[str, Any]) -> str:
    """The printed tables: pages, view ratios, erasure."""
    lines = [
        f"{'backend':<11} {'pages of':<9} {'page':>11} {'median ms':>10} {'p95 ms':>8} "
        f"{'x page 0':>9}"
    ]
    for b in report["backends"]:
        for r in b["pages"]:
            page = f"{r['page']} (last)" if r["last"] else str(r["page"])
            lines.append(
                f"{b['backend']:<11} {r['scope']:<9} {page:>11} "
                f"{r['median_ms']:>10.3f} {r['p95_ms']:>8.3f} {r['x_first']:>8.2f}x"
            )
    lines += [
        "",
        f"{'backend':<11} {'call':<22} {'flavour':<7} {'unscoped ms':>12} {'owned ms':>9} "
        f"{'owned/unscoped':>15} {'paired':>7} {'again/unscoped':>15} {'paired':>7}",
    ]
    for b in report["backends"]:
        for r in b["views"]:
            lines.append(
                f"{b['backend']:<11} {r['call']:<22} {r['flavour']:<7} "
                f"{r['unscoped']['median_ms']:>12.3f} {r['owned']['median_ms']:>9.3f} "
                f"{r['owned_x_unscoped']:>14.3f}x {r['owned_x_unscoped_paired']:>6.3f}x "
                f"{r['again_x_unscoped']:>14.3f}x {r['again_x_unscoped_paired']:>6.3f}x"
            )
    lines += [
        "",
        f"{'backend':<11} {'sessions':>8} {'messages':>9} {'images':>7} {'erase s':>8} "
        f"{'transactions':>12} {'longest ms':>11} {'median ms':>10}",
    ]
    for b in report["backends"]:
        e = b["erasure"]
        lines.append(
            f"{b['backend']:<11} {e['sessions']:>8} {e['messages']:>9} {e['blobs']:>7} "
            f"{e['seconds']:>8.2f} {e['transactions']:>12} {e['longest_transaction_ms']:>11.1f} "
            f"{e['median_transaction_ms']:>10.1f}"
        )
    for name, reason in report["skipped"].items():
        lines.append(f"{name}: left out: {reason}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--backends",
        default=None,
        help="comma-separated subset of sqlite,postgresql,mysql (default: sqlite,postgresql, "
        "and mysql when a MySQL URL is given)",
    )
    parser.add_argument(
        "--pg-url",
        default=os.environ.get(PG_URL_ENV) or DEFAULT_PG_URL,
        help=f"SQLAlchemy URL of the PostgreSQL database (default: ${PG_URL_ENV} or "
        f"{DEFAULT_PG_URL})",
    )
    parser.add_argument(
        "--mysql-url",
        default=os.environ.get(MYSQL_URL_ENV) or None,
        help=f"SQLAlchemy URL of a MySQL/MariaDB database (default: ${MYSQL_URL_ENV}; "
        "none: MySQL/MariaDB is left out)",
    )
    parser.add_argument("--sqlite-dir", type=Path, default=None, help="where the SQLite file goes")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"({DEFAULT_JSON})")
    parser.add_argument(
        "--async",
        dest="async_side",
        choices=("on", "none"),
        default="on",
        help="time AsyncSqlStorage's views beside the sync storage's ('on', the default)",
    )
    args = parser.parse_args(argv)
    default = ["sqlite", "postgresql"] + (["mysql"] if args.mysql_url else [])
    names = (
        default
        if args.backends is None
        else [b.strip().lower() for b in args.backends.split(",") if b.strip()]
    )
    unknown = sorted(set(names) - set(BACKENDS))
    if unknown or not names:
        parser.error(f"--backends takes a subset of {','.join(BACKENDS)}; got {args.backends!r}")
    args.backend_list = names
    return args


def main(argv: Sequence[str] | None = None, sizes: Sizes | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    sizes = sizes or (QUICK if args.quick else FULL)

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    report: dict[str, Any] = {
        "machine": machine_info(),
        "sizes": dataclasses.asdict(sizes),
        "backends": [],
        "skipped": {},
    }
    with tempfile.TemporaryDirectory(dir=args.sqlite_dir) as directory:
        urls = {
            "sqlite": f"sqlite+pysqlite:///{directory}/owners.db",
            "postgresql": args.pg_url,
            "mysql": args.mysql_url,
        }
        for name in args.backend_list:
            url = urls[name]
            if url is None:
                report["skipped"][name] = f"no --mysql-url (or ${MYSQL_URL_ENV}) given"
                continue
            reason = unreachable(url)
            if reason is not None:
                say(f"{name}: {reason}; running without it")
                report["skipped"][name] = reason
                continue
            report["backends"].append(run_backend(name, url, sizes, args.async_side == "on", say))
    m = report["machine"]
    print(
        f"sqlmemory {m['sqlmemory']} @ {(m['sqlmemory_commit'] or '?')[:12]}"
        f"{' (+local changes)' if m['sqlmemory_dirty'] else ''}; {m['python']}; "
        f"{m['platform']}; {m['cpu_count']} CPUs ({m['cpu']})"
    )
    print(render(report))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n")
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
