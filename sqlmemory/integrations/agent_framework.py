"""Microsoft Agent Framework: a history provider whose messages live in sqlmemory.

Needs ``pip install 'sqlmemory[agent-framework]'`` (``agent-framework-core``, and the async
SQLite driver; add ``[postgres]`` or ``[mysql]`` for a server). The guide is
``docs/integrations/agent-framework.md``.

- :class:`SqlMemoryHistoryProvider` is a ``HistoryProvider`` (the framework's interface
  for conversation history, beside its Redis and Cosmos DB providers) over an
  :class:`~sqlmemory.AsyncSqlStorage`, a :class:`~sqlmemory.SqlStorage` (its calls run in
  a worker thread) or an owned view of either: it loads an ``AgentSession``'s messages
  before a run and stores the run's inputs and outputs after it, one transaction per run.
- :func:`from_agent_framework` and :func:`to_agent_framework` convert ``Message`` values
  losslessly: text, reasoning, function calls and results, data and URI contents (images
  and documents as blocks, their bytes stored once, by reference), usage contents as
  :attr:`~sqlmemory.Message.usage`; what has no common meaning is kept under the
  ``"agent_framework"`` key of ``extras``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import items_of
from sqlmemory.storage.checks import check_session_id
from sqlmemory.storage.sql._io_async import finish_before_cancel
from sqlmemory.types import Message, Role, Usage

try:
    from agent_framework import (
        AgentSession,
        HistoryProvider,
        SessionContext,
        SupportsAgentRun,
    )
    from agent_framework import Message as AFMessage
except ImportError as exc:  # pragma: no cover - exercised by the extras check
    raise ImportError(
        "sqlmemory.integrations.agent_framework needs the Microsoft Agent Framework: "
        "pip install 'sqlmemory[agent-framework]'"
    ) from exc

# After the check above, which names the extra to install.
from sqlmemory.integrations._agent_framework_read import (
    AGENT_FRAMEWORK,
    USAGE_COUNTS,
    messages_of,
)
from sqlmemory.integrations._agent_framework_write import message_dicts

if TYPE_CHECKING:
    from sqlmemory.policy import Policy
    from sqlmemory.storage import AsyncSqlStorage, AsyncStorage, SqlStorage, Storage

__all__ = [
    "AGENT_FRAMEWORK",
    "SqlMemoryHistoryProvider",
    "from_agent_framework",
    "to_agent_framework",
]

_RUN_USAGE: ContextVar[Usage | None] = ContextVar("sqlmemory_agent_framework_usage", default=None)
"""The usage of the run whose messages ``after_run`` is storing."""


def from_agent_framework(messages: Iterable[AFMessage]) -> list[Message]:
    """sqlmemory messages of Agent Framework messages, ready to store.

    A ``tool`` message becomes one sqlmemory tool message per function result.

    Examples:
        >>> from agent_framework import Content, Message as AFMessage
        >>> history = from_agent_framework([
        ...     AFMessage("user", ["What is 6 x 7?"]),
        ...     AFMessage("assistant", [Content.from_function_call("c1", "mul", arguments="{}")]),
        ...     AFMessage("tool", [Content.from_function_result("c1", result="42")]),
        ... ])
        >>> [(m.role.value, m.text_content()) for m in history]
        [('user', 'What is 6 x 7?'), ('assistant', ''), ('tool', '42')]

    Raises:
        ConversionError: a value that is no framework ``Message``, or one sqlmemory cannot
            hold (a result or a property that is not JSON, a count out of range); the
            message names the index.
    """
    items = items_of(messages, "messages", single=(AFMessage,), noun="messages")
    out: list[Message] = []
    for index, message in enumerate(items):
        if not isinstance(message, AFMessage):
            raise ConversionError(
                f"message {index}: expected an agent_framework Message, "
                f"got {type(message).__name__}"
            )
        try:
            out.extend(messages_of(message.to_dict()))
        except InvalidMessageError as exc:
            raise ConversionError(f"message {index}: {exc}") from None
        except Exception as exc:  # the framework cannot dump it (a value of no JSON type)
            raise ConversionError(f"message {index} cannot be dumped: {exc}") from None
    return out


def to_agent_framework(messages: Iterable[Message]) -> list[AFMessage]:
    """Agent Framework messages of sqlmemory messages: what :func:`from_agent_framework`
    read, equal (``to_dict()`` for ``to_dict()``).

    Messages from other sources get the framework's contents; an item that only another
    provider understands is dropped with a :class:`~sqlmemory.formats.DroppedContentWarning`.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> history = to_agent_framework([
        ...     Message.user("What is 6 x 7?"),
        ...     Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6, "b": 7})]),
        ...     Message.tool("c1", "42"),
        ... ])
        >>> [(m.role, [c.type for c in m.contents]) for m in history]
        [('user', ['text']), ('assistant', ['function_call']), ('tool', ['function_result'])]

    Raises:
        ConversionError: ``messages`` is not a list of :class:`~sqlmemory.Message`, or
            one whose ``extras["agent_framework"]`` the framework refuses.
    """
    items = items_of(messages, "messages", single=(Message,), noun="messages")
    for index, message in enumerate(items):
        if not isinstance(message, Message):
            raise ConversionError(
                f"message {index}: expected a sqlmemory Message, got {type(message).__name__}"
            )
    out: list[AFMessage] = []
    for index, dumped in enumerate(message_dicts(items)):
        try:
            out.append(AFMessage.from_dict(dumped))
        except Exception as exc:  # the framework refuses hand-made extras
            raise ConversionError(f"message {index}: agent_framework refuses it: {exc}") from None
    return out


def _usage_of(response: Any) -> Usage | None:
    """The :class:`Usage` of an ``AgentResponse``'s ``usage_details``, if it has any."""
    details = getattr(response, "usage_details", None)
    if not isinstance(details, dict):
        return None
    counts = {
        ours: value
        for ours, theirs in USAGE_COUNTS.items()
        if isinstance(value := details.get(theirs), int) and not isinstance(value, bool)
    }
    try:
        return Usage(None, **counts) if counts else None
    except InvalidMessageError:
        return None  # counts a Usage cannot hold: the run is stored without them


def _with_run_usage(messages: list[Message], usage: Usage | None) -> list[Message]:
    """``messages`` with the run's usage on its last assistant message, unless one of
    them carries usage contents of its own."""
    if usage is None or any(m.usage is not None for m in messages):
        return messages
    for index in range(len(messages) - 1, -1, -1):
        last = messages[index]
        if last.role is Role.ASSISTANT:
            messages[index] = Message(
                last.role, last.content, id=last.id, extras=last.extras, usage=usage
            )
            break
    return messages


class SqlMemoryHistoryProvider(HistoryProvider):
    """An Agent Framework history provider kept in PostgreSQL, MySQL/MariaDB or SQLite.

    Give it to an agent's ``context_providers`` where ``InMemoryHistoryProvider`` (or the
    Redis or Cosmos DB provider) was: each ``AgentSession`` is a sqlmemory session of the
    same id. The database is migrated by sqlmemory (``sqlmemory migrate``).

    Examples:
        >>> import asyncio, tempfile
        >>> from agent_framework import Message as AFMessage
        >>> from sqlmemory import AsyncSqlStorage, migrate
        >>> path = f"{tempfile.mkdtemp()}/af.db"
        >>> migrate.upgrade(f"sqlite:///{path}")
        >>> async def main():
        ...     async with AsyncSqlStorage.from_url(f"sqlite+aiosqlite:///{path}") as storage:
        ...         history = SqlMemoryHistoryProvider(storage)
        ...         await history.save_messages("chat-1", [AFMessage("user", ["Hi"])])
        ...         return [m.text for m in await history.get_messages("chat-1")]
        >>> asyncio.run(main())
        ['Hi']

    Args:
        storage: an :class:`~sqlmemory.AsyncSqlStorage` or a :class:`~sqlmemory.SqlStorage`
            (any async or sync sqlmemory storage, an owned view among them), shared by the
            whole application.
        source_id: the provider's id among the agent's context providers.
        policy: the window that :meth:`get_messages` reads, in SQL (a
            :class:`~sqlmemory.FixedWindow`, a :class:`~sqlmemory.TokenWindow`); every
            message when ``None``. A window never separates a call from its result.
        load_messages: as for every ``HistoryProvider``.
        store_inputs: as for every ``HistoryProvider``.
        store_context_messages: as for every ``HistoryProvider``.
        store_context_from: as for every ``HistoryProvider``.
        store_outputs: as for every ``HistoryProvider``.

    Raises:
        TypeError: ``storage`` is not a sqlmemory storage.
    """

    DEFAULT_SOURCE_ID: ClassVar[str] = "sqlmemory"

    def __init__(
        self,
        storage: AsyncStorage | AsyncSqlStorage | Storage | SqlStorage,
        source_id: str | None = None,
        *,
        policy: Policy | None = None,
        load_messages: bool = True,
        store_inputs: bool = True,
        store_context_messages: bool = False,
        store_context_from: set[str] | None = None,
        store_outputs: bool = True,
    ) -> None:
        if not all(callable(getattr(storage, name, None)) for name in ("load", "append", "clear")):
            raise TypeError(
                "storage must be a sqlmemory storage (AsyncSqlStorage or SqlStorage), "
                f"not {type(storage).__name__}"
            )
        super().__init__(
            source_id or self.DEFAULT_SOURCE_ID,
            load_messages=load_messages,
            store_inputs=store_inputs,
            store_context_messages=store_context_messages,
            store_context_from=store_context_from,
            store_outputs=store_outputs,
        )
        self.storage = storage
        self.policy = policy
        self._async = inspect.iscoroutinefunction(storage.load)

    async def _call(self, name: str, *args: Any) -> Any:
        method = getattr(self.storage, name)
        if self._async:
            return await method(*args)
        # A sync storage: the whole call in a worker thread, ended before a cancel lands.
        return await finish_before_cancel(asyncio.to_thread(method, *args))

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[AFMessage]:
        """The session's stored messages (the window of ``policy`` when one is set).

        Raises:
            TypeError: ``session_id`` is not a ``str``.
            InvalidSessionIdError: a session id sqlmemory refuses.
        """
        sid = check_session_id(session_id)
        return to_agent_framework(await self._call("load", sid, self.policy))

    async def save_messages(
        self,
        session_id: str | None,
        messages: Sequence[AFMessage],
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Append ``messages`` in one transaction (all or none); within a run, the last
        assistant message carries the run's usage.

        Raises:
            TypeError: ``session_id`` is not a ``str``.
            ConversionError: a message sqlmemory cannot hold (nothing is stored).
            SessionOwnerError: over an owned view, the session belongs to another owner.
        """
        sid = check_session_id(session_id)
        converted = _with_run_usage(from_agent_framework(messages), _RUN_USAGE.get())
        if converted:
            await self._call("append", sid, *converted)

    async def clear(self, session_id: str) -> None:
        """Delete the session's messages."""
        await self._call("clear", check_session_id(session_id))

    async def after_run(
        self,
        *,
        agent: SupportsAgentRun,
        session: AgentSession,
        context: SessionContext,
        state: dict[str, Any],
    ) -> None:
        """Store the run's messages as every ``HistoryProvider`` does, with its usage."""
        token = _RUN_USAGE.set(_usage_of(context.response))
        try:
            await super().after_run(agent=agent, session=session, context=context, state=state)
        finally:
            _RUN_USAGE.reset(token)
