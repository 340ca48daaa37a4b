"""``bench/chat_turn.py`` runs on both servers, through the latency proxy too: every turn
of every client is counted, and the sessions it wrote are gone afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.support.scripts import bench_script
from tests.support.storages import Databases


@pytest.mark.parametrize("latency", [0.0, 0.2], ids=["local", "proxied"])
@pytest.mark.parametrize("server", ["postgresql", "mysql"])
def test_chat_turns_run_on_each_server(
    databases: Databases, server: str, latency: float, tmp_path: Path
) -> None:
    url = databases.url(server)
    out = tmp_path / "turns.json"
    flag = "--pg-url" if server == "postgresql" else "--mysql-url"
    with bench_script("chat_turn.py") as chat_turn:
        args = [flag, url, "--backend", server, "--quick", "--json", str(out)]
        args += ["--stores", "sqlmemory_sync,sqlmemory_async", "--latency-ms", str(latency)]
        assert chat_turn.main(args) == 0
    report = json.loads(out.read_text())
    # --quick: clients 1 and 4 on sessions of their own, then 4 on one, 3 turns each.
    cases = {(r["store"], r["clients"], r["shared_session"]): r for r in report["results"]}
    assert set(cases) == {
        (store, clients, shared)
        for store in ("sqlmemory_sync", "sqlmemory_async")
        for clients, shared in ((1, False), (4, False), (4, True))
    }
    for (_, clients, _), row in cases.items():
        assert row["turns"] == clients * 3
        assert row["turns_per_s"] > 0 and 0 < row["p50_ms"] <= row["p99_ms"]
    assert ("latency_proxy" in report) is (latency > 0)
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            left = conn.execute(
                sa.text("SELECT COUNT(*) FROM sqlmemory_sessions WHERE session_id LIKE :p"),
                {"p": "bench-turn-%"},
            ).scalar_one()
    finally:
        engine.dispose()
    assert left == 0
