"""A chat-history service on sqlmemory's ``AsyncSqlStorage``.

Run it from the repository root::

    uvicorn examples.fastapi_chat.app:app

The database comes from ``$SQLMEMORY_URL`` (an async SQLAlchemy URL, by default
``sqlite+aiosqlite:///chat.db``). The engine lives as long as the application: created
in the lifespan, after the schema is brought to head, and disposed when it stops.

Messages travel in sqlmemory's versioned JSON form (``sqlmemory.wire``): a request body
is a JSON array of messages, and reads answer with the same array, so what a ``GET``
returns can be posted again as it is.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Body, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import create_async_engine

from sqlmemory import (
    AsyncSqlStorage,
    BlobTooLargeError,
    DuplicateMessageError,
    FixedWindow,
    Policy,
    SchemaError,
    StorageError,
    TokenWindow,
)
from sqlmemory.migrate import upgrade_async
from sqlmemory.wire import messages_from_dicts, messages_to_dicts

__all__ = ["DEFAULT_URL", "URL_ENV", "app", "create_app"]

URL_ENV = "SQLMEMORY_URL"
"""The environment variable naming the database."""

DEFAULT_URL = "sqlite+aiosqlite:///chat.db"
"""The database used when ``$SQLMEMORY_URL`` is not set: ``chat.db`` in the working dir."""

logger = logging.getLogger(__name__)

# Plain numbers: the named constants for 413 and 422 changed names across Starlette releases.
HTTP_409, HTTP_413, HTTP_422, HTTP_503 = 409, 413, 422, 503


def create_app(url: str | None = None, *, max_blob_bytes: int | None = None) -> FastAPI:
    """Build the service.

    Args:
        url: an async SQLAlchemy URL (``sqlite+aiosqlite``, ``postgresql+asyncpg``,
            ``mysql+aiomysql``); ``$SQLMEMORY_URL`` or :data:`DEFAULT_URL` when ``None``.
        max_blob_bytes: the largest image or document accepted (the storage's default,
            20 MiB, when ``None``); larger ones are answered with 413.

    Returns:
        The application. Nothing touches the database before its lifespan starts.
    """
    database_url = url or os.environ.get(URL_ENV) or DEFAULT_URL

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # pre_ping: a pooled connection that died while idle is replaced before use.
        engine = create_async_engine(database_url, pool_pre_ping=True)
        try:
            # On the app's own engine, without blocking the event loop (docs/production.md).
            await upgrade_async(engine)
            limits = {} if max_blob_bytes is None else {"max_blob_bytes": max_blob_bytes}
            app.state.storage = AsyncSqlStorage(engine, **limits)
            yield
        finally:
            await engine.dispose()

    app = FastAPI(title="sqlmemory chat history", lifespan=lifespan)
    _add_error_handlers(app)
    _add_routes(app)
    return app


def _detail(status_code: int) -> Any:
    async def handler(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status_code)

    return handler


async def _storage_failed(request: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, SchemaError):
        # Says which command fixes the database; it holds no data and no password.
        detail = str(exc)
    else:
        # A driver error quotes the SQL and its parameters, which may be other users'
        # messages: it goes to the log, and the client learns only that it may retry.
        logger.error("storage failed on %s %s", request.method, request.url.path, exc_info=exc)
        detail = "the database is unavailable; try again later"
    return JSONResponse({"detail": detail}, status_code=HTTP_503)


def _add_error_handlers(app: FastAPI) -> None:
    # Starlette picks the handler of the most derived class in the error's MRO, so the
    # ValueError subclasses below win over the ValueError catch-all (which covers
    # InvalidMessageError, InvalidSessionIdError and the library's argument checks).
    app.add_exception_handler(ValueError, _detail(HTTP_422))
    app.add_exception_handler(DuplicateMessageError, _detail(HTTP_409))
    app.add_exception_handler(BlobTooLargeError, _detail(HTTP_413))
    app.add_exception_handler(StorageError, _storage_failed)


def _storage(request: Request) -> AsyncSqlStorage:
    storage: AsyncSqlStorage = request.app.state.storage
    return storage


Storage = Annotated[AsyncSqlStorage, Depends(_storage)]

# `:path` lets a session id hold "/" ("user/42/chat"); the fixed suffix of each route
# keeps them apart, and an empty id reaches the library, which rejects it with 422.
SESSION = "/sessions/{session_id:path}"


def _add_routes(app: FastAPI) -> None:
    @app.post(f"{SESSION}/messages", status_code=201)
    async def append_messages(
        session_id: str,
        storage: Storage,
        messages: Annotated[list[Any], Body(description="messages in the wire form")],
    ) -> dict[str, int]:
        """Append messages to the end of a session, all or none.

        A message whose id is already stored with the same content is skipped, so a
        client may retry a request; the same id with other content is a 409.
        Returns how many of the request's messages were new (0 for a retry) and the
        session's count after it.
        """
        batch = messages_from_dicts(messages)
        before = await storage.count(session_id)
        await storage.append(session_id, *batch)
        after = await storage.count(session_id)
        # The count's growth is what this request added; another request appending to
        # the same session between the two counts would be counted too, hence the cap.
        return {"appended": min(len(batch), after - before), "count": after}

    @app.get(f"{SESSION}/messages")
    async def read_messages(
        session_id: str,
        storage: Storage,
        window: Annotated[
            int | None, Query(ge=0, description="the most recent N exchanges")
        ] = None,
        max_tokens: Annotated[
            int | None, Query(description="the most recent exchanges within this budget")
        ] = None,
    ) -> list[dict[str, Any]]:
        """The session's history oldest first, or a window of it; unknown session: ``[]``.

        A window never holds a tool result without the assistant message that called it.
        """
        if window is not None and max_tokens is not None:
            raise HTTPException(HTTP_422, "give window or max_tokens, not both")
        policy: Policy | None = None
        if window is not None:
            policy = FixedWindow(window)
        elif max_tokens is not None:
            policy = TokenWindow(max_tokens)
        return messages_to_dicts(await storage.load(session_id, policy))

    @app.post(f"{SESSION}/evict")
    async def evict(session_id: str, keep: int, storage: Storage) -> dict[str, int]:
        """Delete the oldest messages so that at most ``keep`` remain."""
        return {"deleted": await storage.evict(session_id, keep)}

    @app.delete(SESSION)
    async def clear(session_id: str, storage: Storage) -> dict[str, int]:
        """Delete a session and its messages."""
        return {"deleted": await storage.clear(session_id)}

    @app.get("/sessions")
    async def list_sessions(storage: Storage, prefix: str | None = None) -> list[str]:
        """The ids of the stored sessions, sorted; those starting with ``prefix`` if given."""
        return await storage.sessions(prefix)


app = create_app()
"""The service configured from the environment, for ``uvicorn examples.fastapi_chat.app:app``."""
