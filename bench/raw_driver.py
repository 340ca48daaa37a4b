"""The raw side: sqlite3 and psycopg on a minimal equivalent table, no sqlmemory."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from timing import now_utc

RAW_TABLE = "bench_raw"
RAW_IMAGE_TABLE = "bench_raw_img"
SQLITE_BUSY_TIMEOUT_MS = 30_000  # what sqlmemory sets on its own SQLite connections


class RawDriver:
    """The raw driver on a minimal table: one connection, autocommit off.

    The SQL is written once with ``?`` placeholders; PostgreSQL's are ``%s``.
    """

    placeholder = "?"
    name = ""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.cur = conn.cursor()

    def q(self, sql: str) -> str:
        return sql.replace("?", self.placeholder)

    # Dialect hooks.
    def ddl(self) -> list[str]:
        raise NotImplementedError

    def begin_write(self) -> None:
        """Open the write transaction before a read-then-write (SQLite: BEGIN IMMEDIATE)."""

    def stamp(self, value: datetime) -> Any:
        return value

    def unstamp(self, value: Any) -> datetime:
        return value  # type: ignore[no-any-return]

    # Setup.
    def create_tables(self) -> None:
        self.drop_tables()
        for statement in self.ddl():
            self.cur.execute(statement)
        self.conn.commit()

    def drop_tables(self) -> None:
        for table in (RAW_TABLE, RAW_IMAGE_TABLE):
            self.cur.execute(f"DROP TABLE IF EXISTS {table}")
        self.conn.commit()

    # The operations timed against sqlmemory.
    def append_one(self, sid: str, role: str, text: str) -> None:
        """One message, one transaction: seq = max + 1 in the INSERT itself."""
        self.cur.execute(
            self.q(
                f"INSERT INTO {RAW_TABLE} (session_id, seq, role, content, created_at) "
                f"SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM {RAW_TABLE} "
                "WHERE session_id = ?"
            ),
            (sid, role, text, self.stamp(now_utc()), sid),
        )
        self.conn.commit()

    def append_many(self, sid: str, rows: Sequence[tuple[str, str]]) -> None:
        """Messages in one transaction: read max(seq) once, then executemany."""
        self.begin_write()
        self.cur.execute(
            self.q(f"SELECT COALESCE(MAX(seq), 0) FROM {RAW_TABLE} WHERE session_id = ?"),
            (sid,),
        )
        base = int(self.cur.fetchone()[0])
        stamp = self.stamp(now_utc())
        self.cur.executemany(
            self.q(
                f"INSERT INTO {RAW_TABLE} (session_id, seq, role, content, created_at) "
                "VALUES (?, ?, ?, ?, ?)"
            ),
            [(sid, base + 1 + i, role, text, stamp) for i, (role, text) in enumerate(rows)],
        )
        self.conn.commit()

    def fill(self, sid: str, rows: Sequence[tuple[str, str]], batch: int) -> None:
        """Untimed: the session's rows, seq 1..n, committed every ``batch`` rows."""
        stamp = self.stamp(now_utc())
        sql = self.q(
            f"INSERT INTO {RAW_TABLE} (session_id, seq, role, content, created_at) "
            "VALUES (?, ?, ?, ?, ?)"
        )
        for start in range(0, len(rows), batch):
            self.cur.executemany(
                sql,
                [
                    (sid, start + i + 1, role, text, stamp)
                    for i, (role, text) in enumerate(rows[start : start + batch])
                ],
            )
            self.conn.commit()

    def window(self, sid: str, n: int) -> list[dict[str, Any]]:
        """The newest ``n`` rows, oldest first, as dicts."""
        self.cur.execute(
            self.q(
                f"SELECT seq, role, content, created_at FROM {RAW_TABLE} "
                "WHERE session_id = ? ORDER BY seq DESC LIMIT ?"
            ),
            (sid, n),
        )
        rows = self.cur.fetchall()
        self.conn.commit()
        unstamp = self.unstamp
        return [
            {"seq": seq, "role": role, "content": content, "created_at": unstamp(created)}
            for seq, role, content, created in reversed(rows)
        ]

    def full(self, sid: str) -> list[dict[str, Any]]:
        """The whole session, oldest first, as dicts."""
        self.cur.execute(
            self.q(
                f"SELECT seq, role, content, created_at FROM {RAW_TABLE} "
                "WHERE session_id = ? ORDER BY seq"
            ),
            (sid,),
        )
        rows = self.cur.fetchall()
        self.conn.commit()
        unstamp = self.unstamp
        return [
            {"seq": seq, "role": role, "content": content, "created_at": unstamp(created)}
            for seq, role, content, created in rows
        ]

    def fill_images(
        self, sid: str, rows: Sequence[tuple[str, str, bytes | None]], batch: int
    ) -> None:
        stamp = self.stamp(now_utc())
        sql = self.q(
            f"INSERT INTO {RAW_IMAGE_TABLE} "
            "(session_id, seq, role, content, created_at, media_type, image) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)"
        )
        for start in range(0, len(rows), batch):
            self.cur.executemany(
                sql,
                [
                    (
                        sid,
                        start + i + 1,
                        role,
                        text,
                        stamp,
                        "image/png" if image is not None else None,
                        image,
                    )
                    for i, (role, text, image) in enumerate(rows[start : start + batch])
                ],
            )
            self.conn.commit()

    def image_window(self, sid: str, n: int) -> list[dict[str, Any]]:
        self.cur.execute(
            self.q(
                f"SELECT seq, role, content, created_at, media_type, image "
                f"FROM {RAW_IMAGE_TABLE} WHERE session_id = ? ORDER BY seq DESC LIMIT ?"
            ),
            (sid, n),
        )
        rows = self.cur.fetchall()
        self.conn.commit()
        unstamp = self.unstamp
        return [
            {
                "seq": seq,
                "role": role,
                "content": content,
                "created_at": unstamp(created),
                "media_type": media_type,
                "image": bytes(image) if image is not None else None,
            }
            for seq, role, content, created, media_type, image in reversed(rows)
        ]

    def close(self) -> None:
        self.conn.close()


class RawSqlite(RawDriver):
    """sqlite3 with the settings sqlmemory uses: WAL, BEGIN IMMEDIATE for writes,
    the same busy timeout, ``synchronous`` left at its default (FULL)."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        # isolation_level="IMMEDIATE": the module opens BEGIN IMMEDIATE before DML itself.
        conn = sqlite3.connect(path, isolation_level="IMMEDIATE")
        conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        super().__init__(conn)

    def ddl(self) -> list[str]:
        return [
            f"CREATE TABLE {RAW_TABLE} (session_id TEXT NOT NULL, seq INTEGER NOT NULL, "
            "role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL, "
            "PRIMARY KEY (session_id, seq))",
            f"CREATE TABLE {RAW_IMAGE_TABLE} (session_id TEXT NOT NULL, "
            "seq INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, "
            "created_at TEXT NOT NULL, media_type TEXT, image BLOB, "
            "PRIMARY KEY (session_id, seq))",
        ]

    def begin_write(self) -> None:
        # The module's implicit BEGIN comes only before DML; the max(seq) read must be
        # inside the write transaction too.
        self.cur.execute("BEGIN IMMEDIATE")

    def stamp(self, value: datetime) -> Any:
        return value.isoformat()

    def unstamp(self, value: Any) -> datetime:
        return datetime.fromisoformat(value)

    def settings(self) -> dict[str, Any]:
        return {
            "journal_mode": self.conn.execute("PRAGMA journal_mode").fetchone()[0],
            "synchronous": self.conn.execute("PRAGMA synchronous").fetchone()[0],
            "busy_timeout": self.conn.execute("PRAGMA busy_timeout").fetchone()[0],
        }


class RawPostgres(RawDriver):
    """psycopg 3, autocommit off (every statement inside BEGIN ... COMMIT), server-side
    parameters, prepared automatically after psycopg's default 5 executions."""

    name = "postgresql"
    placeholder = "%s"

    def __init__(self, conninfo: str) -> None:
        import psycopg

        super().__init__(psycopg.connect(conninfo, autocommit=False, connect_timeout=5))

    def ddl(self) -> list[str]:
        return [
            f"CREATE TABLE {RAW_TABLE} (session_id text NOT NULL, seq bigint NOT NULL, "
            "role text NOT NULL, content text NOT NULL, created_at timestamptz NOT NULL, "
            "PRIMARY KEY (session_id, seq))",
            f"CREATE TABLE {RAW_IMAGE_TABLE} (session_id text NOT NULL, seq bigint NOT NULL, "
            "role text NOT NULL, content text NOT NULL, created_at timestamptz NOT NULL, "
            "media_type text, image bytea, PRIMARY KEY (session_id, seq))",
        ]

    def settings(self) -> dict[str, Any]:
        out = {}
        for name in ("server_version", "synchronous_commit", "fsync", "shared_buffers"):
            self.cur.execute(f"SHOW {name}")
            out[name] = self.cur.fetchone()[0]
        self.conn.commit()
        return out
