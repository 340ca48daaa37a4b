"""How the SQL storages fork: the database copies the rows, in a fixed number of
statements whatever the history's length, and each side keeps blob rows of its own."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from sqlmemory import ImageBlock, Message, TextBlock
from tests.support.cases import image_bytes
from tests.support.tables import blob_rows


@contextmanager
def statements(engine: sa.Engine) -> Iterator[list[str]]:
    """The SQL sent through ``engine`` while the block runs."""
    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def history(n: int) -> list[Message]:
    return [
        Message.user([TextBlock(f"q{i}"), ImageBlock(image_bytes(3, 3, seed=i), "image/png")])
        if i % 2 == 0
        else Message.assistant([TextBlock(f"a{i}"), TextBlock("two blocks")])
        for i in range(n)
    ]


def test_a_fork_costs_the_same_statements_for_4_or_400_messages(storage: Any) -> None:
    storage.append("short", *history(4))
    storage.append("long", *history(400))
    storage.count("short")  # the schema check is behind us
    sent = {}
    for sid in ("short", "long"):
        at = storage.load(sid)[-2].id
        with statements(storage.sync_engine) as sent[sid]:
            storage.fork(sid, f"{sid}-whole")
            storage.fork(sid, f"{sid}-prefix", at=at)
    assert len(sent["short"]) == len(sent["long"]), sent["long"]
    copies = [s for s in sent["long"] if s.lstrip().upper().startswith("INSERT")]
    for table in ("sqlmemory_messages", "sqlmemory_blocks", "sqlmemory_blobs"):
        assert sum(f"INSERT INTO {table}" in s and "SELECT" in s for s in copies) == 2, table
    assert storage.load("long-whole") == storage.load("long")
    assert storage.load("long-prefix") == storage.load("long")[:-1]


def test_each_side_has_blob_rows_of_its_own_and_a_prefix_only_those_it_uses(
    storage: Any, engine: sa.Engine
) -> None:
    storage.append("src", *history(6))  # three images
    storage.fork("src", "whole")
    storage.fork("src", "first-two", at=storage.load("src")[1].id)  # one image
    with engine.connect() as conn:
        source = blob_rows(conn, "src")
        whole = blob_rows(conn, "whole")
        prefix = blob_rows(conn, "first-two")
    assert len(source) == 3
    assert [{**r, "session_id": "src"} for r in whole] == source
    first = hashlib.sha256(image_bytes(3, 3, seed=0)).hexdigest()
    assert [r["sha256"] for r in prefix] == [first]
