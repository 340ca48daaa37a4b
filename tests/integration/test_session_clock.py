"""The session's clock when a writer's clock is behind the stored one.

Messages appended without a ``recorded_at`` get the session's stamp, never before a time
it stored earlier (``docs/contract/persistence.md``): a writer on a host whose clock is
behind takes the stored time. MySQL/MariaDB learn an append's seqs from the upsert's
answer alone (``session_lock._told``), which also says whether the stored clock is ahead;
only then is the row read. The same test body runs on every backend and storage.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import sqlalchemy as sa

from sqlmemory import Message
from sqlmemory.storage.sql.schema import sessions_table
from tests.integration.test_sql_efficiency import recording


def test_an_append_behind_the_stored_clock_takes_the_stored_time(
    storage: Any, backend: str, engine: sa.Engine
) -> None:
    storage.append("s", Message.user("first"))
    ahead = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=3)
    with engine.begin() as conn:
        conn.execute(
            sa.update(sessions_table)
            .where(sessions_table.c.session_id == "s")
            .values(last_recorded_at=ahead)
        )
    with recording(storage.sync_engine) as rec:
        storage.append("s", Message.user("second"), Message.user("third"))
    storage.append("s", Message.user("fourth"))
    history = storage.load("s")
    assert [m.text_content() for m in history] == ["first", "second", "third", "fourth"]
    assert [m.recorded_at for m in history[1:]] == [ahead] * 3
    if backend == "mysql":
        # The upsert's answer said the stored clock is ahead: the row is read.
        assert rec.shape()[:2] == ["INSERT sqlmemory_sessions", "SELECT sqlmemory_sessions"]


def test_appends_in_step_with_the_clock_number_their_messages_in_order(
    storage: Any, backend: str
) -> None:
    # Seqs from the upsert's answer on MySQL/MariaDB: a new session, a batch, one more.
    storage.append("s", *(Message.user(f"m{i}") for i in range(3)))
    storage.append("s", Message.user("m3"))
    storage.append("t", Message.user("other"))
    storage.append("s", *(Message.user(f"m{i}") for i in range(4, 9)))
    history = storage.load("s")
    assert [m.text_content() for m in history] == [f"m{i}" for i in range(9)]
    times = [m.recorded_at for m in history]
    assert times == sorted(times)
    info = storage.session_info("s")
    assert info.message_count == 9
