"""The peers: other chat-history stores doing the same work on the same database server.

Installed with the ``bench`` extra (``pip install -e '.[bench]'``); a peer whose package is
missing is left out of the run with the reason. Each peer stores messages its own way, as
its users would call it:

- ``agents_sqlite``: the OpenAI Agents SDK's ``SQLiteSession`` (stdlib ``sqlite3`` in a
  worker thread, one JSON string per item); SQLite only.
- ``agents_sqlalchemy``: the SDK's ``SQLAlchemySession`` (async: ``aiosqlite`` /
  ``asyncpg``, one JSON string per item, ``create_tables=True``).
- ``langchain_sql``: LangChain's ``SQLChatMessageHistory`` (sync, on a SQLAlchemy engine:
  ``pysqlite`` / ``psycopg``). It has no windowed read: a window is the tail of the whole
  history it loads.

Items are built before timing (the neutral ``(role, text)`` rows of the corpus turned into
each peer's own objects); only the store calls are timed. One session object per session
id is kept for the run, as an application holding it would. The async peers run on one
event loop owned by :class:`Peers`.

On SQLite each peer gets a file of its own in the run's directory; on PostgreSQL its
tables are ``bench_peer_*`` in the benchmark's database, dropped before and after.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import warnings
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from corpus import TOOL_NAME, AgentRow, call_arguments
from sqlalchemy.engine import make_url

Row = tuple[str, str]
"""A corpus message: ``(role, text)``, role ``user`` or ``assistant``."""

TABLE_PREFIX = "bench_peer_"


class Place:
    """Where the peers keep their data: a directory (SQLite) or a PostgreSQL URL."""

    def __init__(self, backend: str, directory: Path | None = None, url: str = "") -> None:
        self.backend = backend
        self.directory = directory
        self.url = url

    def sqlite_path(self, name: str) -> Path:
        if self.directory is None:
            raise ValueError("a SQLite place needs a directory")
        return self.directory / f"peer-{name}.db"

    def sync_url(self, name: str) -> str:
        if self.backend == "sqlite":
            return f"sqlite+pysqlite:///{self.sqlite_path(name)}"
        return make_url(self.url).set(drivername="postgresql+psycopg").render_as_string(False)

    def async_url(self, name: str) -> str:
        if self.backend == "sqlite":
            return f"sqlite+aiosqlite:///{self.sqlite_path(name)}"
        return make_url(self.url).set(drivername="postgresql+asyncpg").render_as_string(False)


class Peer:
    """One peer store; subclasses say how its users write and read."""

    name = ""
    backends: tuple[str, ...] = ("sqlite", "postgresql")
    bounded_window = True
    """Whether it reads a window with a limit. One that loads the whole history for a
    window is timed on sessions up to ``Sizes.unbounded_window_limit`` messages only (a
    100k-message load per read would make the run last hours)."""

    def __init__(self, place: Place, run: Callable[[Awaitable[Any]], Any]) -> None:
        self.place = place
        self.run = run
        self.handles: dict[str, Any] = {}

    # Items, built before timing.
    def item(self, role: str, text: str) -> Any:
        raise NotImplementedError

    def image_item(self, text: str, png: bytes) -> Any:
        raise NotImplementedError

    def call_item(self, call_id: str, name: str, arguments: dict[str, Any]) -> Any:
        """The assistant's call of a tool, as the peer's users store it."""
        raise NotImplementedError

    def result_item(self, call_id: str, name: str, text: str) -> Any:
        """The tool's output for ``call_id``."""
        raise NotImplementedError

    def agent_item(self, row: AgentRow) -> Any:
        kind, call_id, text = row
        if kind == "call":
            return self.call_item(call_id, TOOL_NAME, call_arguments(call_id))
        if kind == "result":
            return self.result_item(call_id, TOOL_NAME, text)
        return self.item(kind, text)

    def texts(self, items: Sequence[Any]) -> list[Row]:
        """``(role, first text)`` of what a read returned, to check it against sqlmemory."""
        raise NotImplementedError

    # The timed calls.
    def append(self, sid: str, item: Any) -> None:
        raise NotImplementedError

    def append_many(self, sid: str, items: Sequence[Any]) -> None:
        raise NotImplementedError

    def window(self, sid: str, n: int) -> list[Any]:
        raise NotImplementedError

    def full(self, sid: str) -> list[Any]:
        raise NotImplementedError

    def handle(self, sid: str) -> Any:
        found = self.handles.get(sid)
        if found is None:
            found = self.handles[sid] = self.open(sid)
        return found

    def open(self, sid: str) -> Any:
        raise NotImplementedError

    def fill(self, sid: str, rows: Sequence[Row], batch: int) -> None:
        """Untimed: ``rows`` appended ``batch`` at a time."""
        for start in range(0, len(rows), batch):
            self.append_many(sid, [self.item(r, t) for r, t in rows[start : start + batch]])

    def close(self) -> None:
        """Close what the peer opened and drop what it created."""


# --- OpenAI Agents SDK ----------------------------------------------------------------


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


class _AgentsPeer(Peer):
    """Responses input items, shaped as the Agents ``Runner`` stores them in a session."""

    def item(self, role: str, text: str) -> Any:
        if role == "user":
            return {"role": "user", "content": text}
        return {
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }

    def image_item(self, text: str, png: bytes) -> Any:
        return {
            "role": "user",
            "content": [
                {"type": "input_text", "text": text},
                {"type": "input_image", "image_url": _data_url(png), "detail": "auto"},
            ],
        }

    def call_item(self, call_id: str, name: str, arguments: dict[str, Any]) -> Any:
        return {
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }

    def result_item(self, call_id: str, name: str, text: str) -> Any:
        return {"type": "function_call_output", "call_id": call_id, "output": text}

    def texts(self, items: Sequence[Any]) -> list[Row]:
        out = []
        for item in items:
            content = item["content"]
            out.append((item["role"], content if isinstance(content, str) else content[0]["text"]))
        return out

    def append(self, sid: str, item: Any) -> None:
        self.run(self.handle(sid).add_items([item]))

    def append_many(self, sid: str, items: Sequence[Any]) -> None:
        self.run(self.handle(sid).add_items(list(items)))

    def window(self, sid: str, n: int) -> list[Any]:
        return self.run(self.handle(sid).get_items(limit=n))  # type: ignore[no-any-return]

    def full(self, sid: str) -> list[Any]:
        return self.run(self.handle(sid).get_items())  # type: ignore[no-any-return]


class AgentsSQLite(_AgentsPeer):
    name = "agents_sqlite"
    backends = ("sqlite",)

    def open(self, sid: str) -> Any:
        from agents import SQLiteSession

        return SQLiteSession(sid, db_path=self.place.sqlite_path(self.name))

    def close(self) -> None:
        for session in self.handles.values():
            session.close()


class AgentsSQLAlchemy(_AgentsPeer):
    name = "agents_sqlalchemy"

    def __init__(self, place: Place, run: Callable[[Awaitable[Any]], Any]) -> None:
        super().__init__(place, run)
        from sqlalchemy.ext.asyncio import create_async_engine

        self.tables = (f"{TABLE_PREFIX}agent_sessions", f"{TABLE_PREFIX}agent_messages")
        _drop(place, self.name, reversed(self.tables))
        self.engine = create_async_engine(place.async_url(self.name))

    def open(self, sid: str) -> Any:
        from agents.extensions.memory import SQLAlchemySession

        sessions, messages = self.tables
        return SQLAlchemySession(
            sid,
            engine=self.engine,
            create_tables=True,
            sessions_table=sessions,
            messages_table=messages,
        )

    def close(self) -> None:
        self.run(self.engine.dispose())
        _drop(self.place, self.name, reversed(self.tables))


# --- LangChain ------------------------------------------------------------------------


class LangChainSQL(Peer):
    name = "langchain_sql"
    bounded_window = False

    def __init__(self, place: Place, run: Callable[[Awaitable[Any]], Any]) -> None:
        super().__init__(place, run)
        self.table = f"{TABLE_PREFIX}langchain"
        _drop(place, self.name, [self.table])
        self.engine = sa.create_engine(place.sync_url(self.name))

    def item(self, role: str, text: str) -> Any:
        from langchain_core.messages import AIMessage, HumanMessage

        return HumanMessage(content=text) if role == "user" else AIMessage(content=text)

    def image_item(self, text: str, png: bytes) -> Any:
        from langchain_core.messages import HumanMessage

        return HumanMessage(
            content=[
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": _data_url(png)}},
            ]
        )

    def call_item(self, call_id: str, name: str, arguments: dict[str, Any]) -> Any:
        from langchain_core.messages import AIMessage

        call = {"name": name, "args": arguments, "id": call_id, "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])

    def result_item(self, call_id: str, name: str, text: str) -> Any:
        from langchain_core.messages import ToolMessage

        return ToolMessage(content=text, tool_call_id=call_id, name=name)

    def texts(self, items: Sequence[Any]) -> list[Row]:
        roles = {"human": "user", "ai": "assistant"}
        out = []
        for m in items:
            content = m.content
            out.append((roles[m.type], content if isinstance(content, str) else content[0]["text"]))
        return out

    def open(self, sid: str) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # langchain-community's sunset notice
            from langchain_community.chat_message_histories import SQLChatMessageHistory

            return SQLChatMessageHistory(
                session_id=sid, table_name=self.table, connection=self.engine
            )

    def append(self, sid: str, item: Any) -> None:
        self.handle(sid).add_message(item)

    def append_many(self, sid: str, items: Sequence[Any]) -> None:
        self.handle(sid).add_messages(items)

    def window(self, sid: str, n: int) -> list[Any]:
        return self.handle(sid).messages[-n:]  # type: ignore[no-any-return]

    def full(self, sid: str) -> list[Any]:
        return self.handle(sid).messages  # type: ignore[no-any-return]

    def close(self) -> None:
        for history in self.handles.values():
            history.session_maker.remove()
        self.engine.dispose()
        _drop(self.place, self.name, [self.table])


def _drop(place: Place, name: str, tables: Any) -> None:
    """Drop a peer's tables on PostgreSQL (a SQLite peer has a fresh file of its own)."""
    if place.backend == "sqlite":
        return
    engine = sa.create_engine(place.sync_url(name))
    try:
        with engine.begin() as conn:
            for table in tables:
                conn.exec_driver_sql(f'DROP TABLE IF EXISTS "{table}" CASCADE')
    finally:
        engine.dispose()


PEERS: tuple[type[Peer], ...] = (AgentsSQLite, AgentsSQLAlchemy, LangChainSQL)
NAMES = tuple(p.name for p in PEERS)


def missing(cls: type[Peer]) -> str | None:
    """Why ``cls`` cannot run (its package is not installed), or ``None``."""
    module = {"langchain_sql": "langchain_community", "agents_sqlalchemy": "agents"}.get(
        cls.name, "agents"
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            __import__(module)
            if cls is AgentsSQLAlchemy:
                __import__("agents.extensions.memory.sqlalchemy_session")
    except ImportError as exc:
        return f"{exc} (pip install -e '.[bench]')"
    return None


class Peers:
    """The peers of one backend's run, and the event loop the async ones run on."""

    def __init__(self, place: Place, names: Sequence[str] | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        self.peers: list[Peer] = []
        self.skipped: dict[str, str] = {}
        for cls in PEERS:
            if names is not None and cls.name not in names:
                continue
            if place.backend not in cls.backends:
                continue
            reason = missing(cls)
            if reason is not None:
                self.skipped[cls.name] = reason
                continue
            self.peers.append(cls(place, self.loop.run_until_complete))

    def __iter__(self) -> Any:
        return iter(self.peers)

    def close(self) -> None:
        try:
            for peer in self.peers:
                peer.close()
        finally:
            self.loop.close()


def versions() -> dict[str, str]:
    """The installed versions of the peers' packages."""
    import importlib.metadata as md

    out = {}
    for dist in ("openai-agents", "langchain-community", "langchain-core"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[dist] = md.version(dist)
    return out


__all__ = ["NAMES", "PEERS", "Peer", "Peers", "Place", "versions"]
