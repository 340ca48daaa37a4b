"""The report: derived figures (scaling, targets) and the printed table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sizes import BACKENDS, size_label


def derived(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """window_read at the largest session over the smallest, per backend and policy."""
    out = []
    for backend in BACKENDS:
        for variant in ("FixedWindow", "TokenWindow"):
            rows = [
                r
                for r in results
                if r["backend"] == backend
                and r["scenario"] == "window_read"
                and r.get("variant") == variant
            ]
            if len(rows) < 2:
                continue
            small = min(rows, key=lambda r: r["messages"])
            large = max(rows, key=lambda r: r["messages"])
            out.append(
                {
                    "name": (
                        f"window_read {variant} @{size_label(large['messages'])}"
                        f" / @{size_label(small['messages'])}"
                    ),
                    "backend": backend,
                    "variant": variant,
                    "sqlmemory": large["sqlmemory"]["median_ms"] / small["sqlmemory"]["median_ms"],
                    "raw": large["raw"]["median_ms"] / small["raw"]["median_ms"],
                }
            )
    return out


def targets(results: Sequence[dict[str, Any]], scaling: Sequence[dict[str, Any]]) -> list[dict]:
    """The issue's targets, each as measured figure, limit and whether it is met."""
    out: list[dict[str, Any]] = []

    def add(name: str, backend: str, measured: float, limit: float) -> None:
        out.append(
            {
                "target": name,
                "backend": backend,
                "measured": measured,
                "limit": limit,
                "met": measured <= limit,
            }
        )

    for s in scaling:
        add(f"{s['name']} (sqlmemory)", s["backend"], s["sqlmemory"], 1.2)
    for backend in BACKENDS:
        ours = [r for r in results if r["backend"] == backend]
        windows = [r for r in ours if r["scenario"] == "window_read"]
        if windows:
            largest = max(r["messages"] for r in windows)
            for r in windows:
                if r["messages"] == largest:
                    add(f"{r['label']} vs raw", backend, r["ratio"], 2.0)
        limits = {"append_one": 2.5, "append_batch": 1.5, "full_read": 1.5}
        for r in ours:
            if r["scenario"] in limits:
                add(f"{r['scenario']} vs raw", backend, r["ratio"], limits[r["scenario"]])
            if r["scenario"] == "resave" and "vs_append_one" in r:
                add(f"{r['label']} vs append_one", backend, r["vs_append_one"], 3.0)
    return out


def render(report: dict[str, Any]) -> str:
    lines = []
    header = (
        f"{'scenario':<40} {'backend':<10} {'sqlm med':>9} {'sqlm p95':>9} "
        f"{'raw med':>9} {'raw p95':>9} {'ratio':>7}"
    )
    lines += [header, "-" * len(header)]
    for r in report["results"]:
        raw = r["raw"] or {}
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        lines.append(
            f"{r['label']:<40} {r['backend']:<10} {r['sqlmemory']['median_ms']:>9.3f} "
            f"{r['sqlmemory']['p95_ms']:>9.3f} {raw.get('median_ms', float('nan')):>9.3f} "
            f"{raw.get('p95_ms', float('nan')):>9.3f} {ratio:>7}"
        )
    lines.append("(times in ms; ratio = sqlmemory median / raw median)")
    if report["scaling"]:
        lines += ["", "history-length scaling (median at largest / median at smallest):"]
        for s in report["scaling"]:
            lines.append(
                f"  {s['name']:<42} {s['backend']:<10} sqlmemory {s['sqlmemory']:.2f}x"
                f"   raw {s['raw']:.2f}x"
            )
    resaves = [r for r in report["results"] if "vs_append_one" in r]
    if resaves:
        lines += ["", "resave at the last turn / append_one (sqlmemory medians):"]
        for r in resaves:
            lines.append(
                f"  {r['backend']:<10} {r['sqlmemory']['median_ms']:.3f} ms -> "
                f"{r['vs_append_one']:.2f}x append_one  (first {r['first_turns']['n']} turns:"
                f" {r['first_turns']['median_ms']:.3f} ms)"
            )
    if report["targets"]:
        lines += ["", "targets (issue 5, item 6):"]
        for t in report["targets"]:
            mark = "met " if t["met"] else "MISS"
            lines.append(
                f"  [{mark}] {t['target']:<52} {t['backend']:<10} "
                f"{t['measured']:.2f}x (limit {t['limit']}x)"
            )
    for backend, reason in report["skipped"].items():
        lines.append(f"\n{backend} skipped: {reason}")
    return "\n".join(lines)
