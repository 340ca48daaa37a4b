"""OpenAI Agents SDK: a ``Session`` whose items live in sqlmemory.

Needs ``pip install 'sqlmemory[openai-agents]'`` (``openai-agents``, and the async SQLite
driver; add ``[postgres]`` or ``[mysql]`` for a server). The guide is
``docs/integrations/openai-agents.md``.

:class:`SqlMemorySession` implements the SDK's ``Session`` protocol over an
:class:`~sqlmemory.AsyncSqlStorage`, or over a :class:`~sqlmemory.SqlStorage` whose calls
run in a worker thread, as the SDK's ``SQLiteSession`` runs its ``sqlite3`` calls. Items go
through
:func:`~sqlmemory.formats.from_openai_responses` and come back through
:func:`~sqlmemory.formats.to_openai_responses`, exactly as they were added (ids, argument
text, reasoning, hosted tool items). The output items of one model response are one
assistant message, so the rest of sqlmemory (windows, ``sqlmemory show``, compaction) sees
a reasoning item with the call it led to, and every result with its call.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlmemory._urls import has_async_driver
from sqlmemory.formats import from_openai_responses, to_openai_responses
from sqlmemory.integrations._agents_usage import with_run_usage
from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.sql._io_async import finish_before_cancel
from sqlmemory.types import Message

try:
    from agents.memory import SessionSettings
    from pydantic import ValidationError
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'sqlmemory[openai-agents]'"
    ) from exc

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from sqlmemory.policy.groups import Item
    from sqlmemory.storage import AsyncSqlStorage, AsyncStorage, SqlStorage, Storage

__all__ = ["SqlMemorySession"]

T = TypeVar("T")

_STORAGE_METHODS = ("load", "append", "pop", "clear", "save")


class _Newest:
    """The newest ``n`` messages as stored: a tail read, with no window rule applied.

    ``get_items(limit)`` counts items; a message holds one item or more, so the newest
    ``limit`` messages always hold the newest ``limit`` items.
    """

    needs_content = False

    def __init__(self, n: int) -> None:
        self.n = n
        self.page_hint = n

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        return list(messages[-self.n :])

    def select(self, tail: Sequence[Item], complete: bool) -> list[int] | None:
        if len(tail) < self.n and not complete:
            return None
        return list(range(max(len(tail) - self.n, 0), len(tail)))


class SqlMemorySession:
    """An OpenAI Agents SDK ``Session`` kept in PostgreSQL, MySQL/MariaDB or SQLite.

    Pass it to ``Runner.run(agent, input, session=...)``: the runner reads the history with
    :meth:`get_items` and stores each turn's items with :meth:`add_items`.

    The storage is an :class:`~sqlmemory.AsyncSqlStorage`, or a sync
    :class:`~sqlmemory.SqlStorage`: then each call runs whole in a worker thread
    (``asyncio.to_thread``), one thread hand-off per call where ``aiosqlite`` takes four per
    statement. On SQLite that is the faster of the two (``docs/integrations/openai-agents.md``).

    Examples:
        >>> import asyncio, tempfile
        >>> from sqlmemory import AsyncSqlStorage, migrate
        >>> path = f"{tempfile.mkdtemp()}/chat.db"
        >>> migrate.upgrade(f"sqlite:///{path}")
        >>> async def main():
        ...     async with AsyncSqlStorage.from_url(f"sqlite+aiosqlite:///{path}") as storage:
        ...         session = SqlMemorySession("chat-1", storage)
        ...         await session.add_items([{"role": "user", "content": "Hi"}])
        ...         return await session.get_items()
        >>> asyncio.run(main())
        [{'role': 'user', 'content': 'Hi'}]

    Args:
        session_id: the conversation's id (a sqlmemory session id).
        storage: an :class:`~sqlmemory.AsyncSqlStorage` or a :class:`~sqlmemory.SqlStorage`
            (any async or sync sqlmemory storage), shared by every session of the
            application (it holds the connection pool).
        session_settings: the SDK's ``SessionSettings`` (or a dict of them): its ``limit``
            is how many of the newest items :meth:`get_items` returns by default.

    Raises:
        TypeError: a session id that is not a ``str``, a storage that is not a sqlmemory
            storage, or ``session_settings`` that is neither ``SessionSettings``, a dict
            of them nor ``None`` (or whose ``limit`` is not an int).
        InvalidSessionIdError: a session id sqlmemory refuses (empty, padded, control
            characters).
    """

    def __init__(
        self,
        session_id: str,
        storage: AsyncStorage | AsyncSqlStorage | Storage | SqlStorage,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        self.session_id: str = check_session_id(session_id)
        if not all(callable(getattr(storage, name, None)) for name in _STORAGE_METHODS):
            raise TypeError(
                f"storage must be a sqlmemory storage (AsyncSqlStorage or SqlStorage), "
                f"not {type(storage).__name__}"
            )
        self.storage = storage
        self._io: Any = (
            storage
            if inspect.iscoroutinefunction(storage.load)
            else _InThread(cast("Storage", storage))
        )
        self.session_settings: SessionSettings | None = _settings(session_settings)

    @classmethod
    def from_url(
        cls,
        session_id: str,
        url: str,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        **engine_kwargs: Any,
    ) -> SqlMemorySession:
        """A session over a new storage of ``url``: an :class:`~sqlmemory.AsyncSqlStorage`
        when its driver has an asyncio version (``sqlite+aiosqlite://``,
        ``postgresql+asyncpg://``, ``postgresql+psycopg://``, ``mysql+aiomysql://``), else a
        :class:`~sqlmemory.SqlStorage` whose calls run in a worker thread (``sqlite://``,
        ``mysql+pymysql://``).

        For a script or a benchmark; an application makes one storage and gives it to every
        session. The database must be migrated (``sqlmemory migrate --url ...``).

        Examples:
            >>> session = SqlMemorySession.from_url(  # doctest: +SKIP
            ...     "chat-1", "postgresql+asyncpg://app@db/app"
            ... )
        """
        from sqlmemory.storage import AsyncSqlStorage, SqlStorage

        kind = AsyncSqlStorage if has_async_driver(url) else SqlStorage
        storage = kind.from_url(url, **engine_kwargs)
        return cls(session_id, storage, session_settings=session_settings)

    def __repr__(self) -> str:
        return f"SqlMemorySession({self.session_id!r}, {self.storage!r})"

    def _limit(self, limit: int | None) -> int | None:
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(f"limit must be an int or None, not {type(limit).__name__}")
        return limit

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history's items, oldest first; with a limit, the newest ``limit`` of them.

        ``limit`` defaults to ``session_settings.limit``; zero or less gives ``[]``. A
        limited read is a tail read in SQL: its cost does not grow with the history.

        Raises:
            TypeError: a ``limit`` that is not an int (a ``bool``, a float, a string).
        """
        limit = self._limit(limit)
        if limit is None:
            messages = await self._io.load(self.session_id)
        elif limit <= 0:
            return []
        else:
            messages = await self._io.load(self.session_id, _Newest(limit))
        items: list[Any] = to_openai_responses(messages)
        return items if limit is None else items[-limit:]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Store ``items`` at the end of the history, in one transaction (all or none).

        Raises:
            ConversionError: ``items`` is not a list of items, or holds an item the
                Responses converter cannot read; nothing is stored.
        """
        messages = from_openai_responses(items)
        if messages:
            await self._io.append(self.session_id, *messages)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item; ``None`` when the history is empty.

        When the newest message holds several items (the outputs of one response), the
        items before the last one are stored back in its place, in the same transaction
        on a SQL storage: nothing else is written between, and a failure leaves the
        history as it was.
        """
        split = _Split()
        pop_keeping = getattr(self._io, "_pop_keeping", None)
        if pop_keeping is not None:
            if await pop_keeping(self.session_id, split) is None:
                return None
            return split.last
        message = await self._io.pop(self.session_id)
        if message is None:
            return None
        rest = split(message)
        if rest:
            try:
                await self._io.append(self.session_id, *rest)
            except BaseException:
                # Put the whole message back rather than lose the items before the last.
                await self._io.append(self.session_id, message)
                raise
        return split.last

    async def clear_session(self) -> None:
        """Delete every item of the session."""
        await self._io.clear(self.session_id)

    async def store_run_usage(self, result: Any) -> int:
        """Record a finished run's usage: each model response's model and token counts
        on the stored message that holds its output (``docs/usage.md``).

        Call it once the run has ended (``result`` is its ``RunResult``); calling it again
        with the same result changes nothing. On a sqlmemory storage the history is read
        and written back in one transaction under the session's lock, rewriting only
        from the first message whose usage changed, so an append by another writer is
        never lost (another implementation of the protocol gets a ``load`` then a
        ``save``: run it there before the session's next turn).

        Examples:
            >>> result = await Runner.run(agent, "6 x 7?", session=session)  # doctest: +SKIP
            >>> await session.store_run_usage(result)  # doctest: +SKIP
            2

        Returns:
            How many model responses were matched to a stored message (a response whose
            output items carry no id cannot be).
        """
        rewrite = getattr(self._io, "_rewrite", None)
        if rewrite is not None:
            matched: int = await rewrite(self.session_id, lambda h: with_run_usage(h, result))
            return matched
        messages = await self._io.load(self.session_id)
        updated, matched = with_run_usage(messages, result)
        if updated != messages:
            await self._io.save(self.session_id, updated)
        return matched


def _settings(value: SessionSettings | dict[str, Any] | None) -> SessionSettings:
    """The session's settings: ``value``, made from a dict, or the SDK's defaults."""
    if value is None:
        return SessionSettings()
    if isinstance(value, dict):
        try:
            value = SessionSettings(**value)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise TypeError(f"session_settings {where}: {problem['msg']}") from None
    if not isinstance(value, SessionSettings):
        raise TypeError(
            "session_settings must be a SessionSettings, a dict or None, "
            f"not {type(value).__name__}"
        )
    return value


class _InThread:
    """The async face of a sync storage: each call runs whole in a worker thread.

    A cancelled caller gets ``CancelledError`` once the call has ended, committed or
    rolled back, as from :class:`~sqlmemory.AsyncSqlStorage`: a thread cannot be stopped
    mid-way, and the caller must not go on while its write may still land.
    """

    def __init__(self, storage: Storage | SqlStorage) -> None:
        self.storage = storage
        pop_keeping = getattr(storage, "_pop_keeping", None)
        if pop_keeping is not None:
            self._pop_keeping = lambda sid, keep: _in_thread(pop_keeping, sid, keep)
        rewrite = getattr(storage, "_rewrite", None)
        if rewrite is not None:
            self._rewrite = lambda sid, change: _in_thread(rewrite, sid, change)

    async def load(self, session_id: str, policy: Any = None) -> list[Message]:
        return await _in_thread(self.storage.load, session_id, policy)

    async def append(self, session_id: str, *messages: Message) -> None:
        await _in_thread(self.storage.append, session_id, *messages)

    async def pop(self, session_id: str) -> Message | None:
        return await _in_thread(self.storage.pop, session_id)

    async def clear(self, session_id: str) -> int:
        return await _in_thread(self.storage.clear, session_id)

    async def save(self, session_id: str, messages: Sequence[Message]) -> None:
        await _in_thread(self.storage.save, session_id, messages)


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    return await finish_before_cancel(asyncio.to_thread(fn, *args))


class _Split:
    """Splits a popped message into its last Responses item and the messages of the
    items before it (none when it holds one item), to be stored in its place."""

    def __init__(self) -> None:
        self.last: TResponseInputItem | None = None

    def __call__(self, message: Message) -> list[Message]:
        items: list[Any] = to_openai_responses([message])
        self.last = items[-1] if items else None
        return from_openai_responses(items[:-1]) if len(items) > 1 else []
