"""A chat-history service on sqlmemory's ``AsyncSqlStorage``, each user's conversations
theirs alone.

Run it from the repository root::

    uvicorn examples.fastapi_chat.app:app

The database comes from ``$SQLMEMORY_URL`` (an async SQLAlchemy URL, by default
``sqlite+aiosqlite:///chat.db``). The engine lives as long as the application: created
in the lifespan, after the schema is brought to head, and disposed when it stops.

Messages travel in sqlmemory's versioned JSON form (``sqlmemory.wire``): a request body
is a JSON array of messages, and reads answer with the same array, so what a ``GET``
returns can be posted again as it is. The OpenAPI schema (``/docs``) describes them with
``sqlmemory.wire.MESSAGE_JSON_SCHEMA``.

Every request names its user in the ``X-User-Id`` header (in a real deployment, the
authentication in front of the app sets it, or :func:`current_user` checks a token):
the request gets ``storage.owned_by(user)``, an owned view of the storage, so it sees
and changes that user's conversations only (docs/many-users.md). A missing or malformed
header is a 401; another user's conversation answers 404, as one that does not exist.

What a chat front end needs: conversations listed newest first a page at a time, with
their titles (``GET /sessions``), renamed (``PATCH /sessions/{id}``), deleted
(``DELETE /sessions/{id}``); a conversation's history or its window
(``GET /sessions/{id}/messages?window=N``); images uploaded as files
(``POST /sessions/{id}/images``, multipart).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any

from fastapi import (
    Body,
    Depends,
    FastAPI,
    File,
    Form,
    Header,
    HTTPException,
    Query,
    Request,
    UploadFile,
)
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.ext.asyncio import create_async_engine

from sqlmemory import (
    AsyncSqlStorage,
    BlobTooLargeError,
    DuplicateMessageError,
    FixedWindow,
    ImageBlock,
    InvalidSessionIdError,
    Message,
    Policy,
    SchemaError,
    SessionInfo,
    SessionOwnerError,
    StorageError,
    TextBlock,
    TokenWindow,
)
from sqlmemory.migrate import upgrade_async
from sqlmemory.wire import MESSAGE_JSON_SCHEMA, messages_from_dicts, messages_to_dicts

__all__ = ["DEFAULT_URL", "URL_ENV", "USER_HEADER", "app", "create_app", "current_user"]

URL_ENV = "SQLMEMORY_URL"
"""The environment variable naming the database."""

DEFAULT_URL = "sqlite+aiosqlite:///chat.db"
"""The database used when ``$SQLMEMORY_URL`` is not set: ``chat.db`` in the working dir."""

USER_HEADER = "X-User-Id"
"""The request header naming the signed-in user."""

logger = logging.getLogger(__name__)

# Plain numbers: the named constants for 413 and 422 changed names across Starlette releases.
HTTP_401, HTTP_404, HTTP_409, HTTP_413, HTTP_422, HTTP_503 = 401, 404, 409, 413, 422, 503

MESSAGES_SCHEMA = {"type": "array", "items": {"$ref": "#/components/schemas/Message"}}
"""A JSON array of messages in the wire form, as the OpenAPI schema names it."""


class SessionOut(BaseModel):
    """A conversation: its record, without its messages."""

    session_id: str
    title: str | None
    metadata: dict[str, Any]
    message_count: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, info: SessionInfo) -> SessionOut:
        return cls(
            session_id=info.session_id,
            title=info.title,
            metadata=dict(info.metadata),
            message_count=info.message_count,
            created_at=info.created_at,
            updated_at=info.updated_at,
        )


class SessionPageOut(BaseModel):
    """A page of conversations, the most recently updated first."""

    items: list[SessionOut]
    next_cursor: str | None = Field(description="pass it as `cursor` for the next page")


class SessionUpdate(BaseModel):
    """New values for a conversation's record: a field left out is unchanged, null clears."""

    title: str | None = None
    metadata: dict[str, Any] | None = None


class Appended(BaseModel):
    """What an append did."""

    appended: int = Field(description="how many of the request's messages were new")
    count: int = Field(description="the conversation's message count after it")


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
    _add_session_routes(app)
    _add_message_schema(app)
    return app


def _add_message_schema(app: FastAPI) -> None:
    """Put sqlmemory's message schema in the OpenAPI document, as ``Message``."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title, version=app.version, routes=app.routes, description=__doc__
            )
            message = {k: v for k, v in MESSAGE_JSON_SCHEMA.items() if k != "$schema"}
            schema.setdefault("components", {}).setdefault("schemas", {})["Message"] = message
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


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


def _no_session(session_id: str) -> str:
    """The detail of a 404: the same for a session that does not exist and for another
    user's, so that the answer does not tell the two apart."""
    return f"no session {session_id!r}"


async def _not_theirs(request: Request, exc: Exception) -> JSONResponse:
    # A write through the user's view met another user's session (SessionOwnerError):
    # nothing was written. Answered as a session that does not exist; the error's own
    # message, which names the owner, stays on the server.
    detail = _no_session(request.path_params.get("session_id", ""))
    return JSONResponse({"detail": detail}, status_code=HTTP_404)


def _add_error_handlers(app: FastAPI) -> None:
    # Starlette picks the handler of the most derived class in the error's MRO, so the
    # ValueError subclasses below win over the ValueError catch-all (which covers
    # InvalidMessageError, InvalidSessionIdError and the library's argument checks), and
    # SessionOwnerError over the StorageError one.
    app.add_exception_handler(ValueError, _detail(HTTP_422))
    app.add_exception_handler(DuplicateMessageError, _detail(HTTP_409))
    app.add_exception_handler(BlobTooLargeError, _detail(HTTP_413))
    app.add_exception_handler(SessionOwnerError, _not_theirs)
    app.add_exception_handler(StorageError, _storage_failed)


async def current_user(
    x_user_id: Annotated[str | None, Header(description="the signed-in user's id")] = None,
) -> str:
    """The user the request is made for: the ``X-User-Id`` header, as an authenticating
    proxy in front of the app sets it. Put your own authentication here (a session
    cookie, a bearer token checked against your identity provider) and return its user id.

    Raises:
        HTTPException: 401 when the header is missing.
    """
    if x_user_id is None:
        raise HTTPException(HTTP_401, f"the {USER_HEADER} header is required")
    return x_user_id


def user_storage(request: Request, user: Annotated[str, Depends(current_user)]) -> AsyncSqlStorage:
    """The storage as the request's user sees it: ``storage.owned_by(user)``, no I/O.

    Raises:
        HTTPException: 401 for a user id the storage refuses as an owner (empty, over 255
            characters, holding NUL).
    """
    storage: AsyncSqlStorage = request.app.state.storage
    try:
        return storage.owned_by(user)
    except InvalidSessionIdError:
        raise HTTPException(HTTP_401, f"the {USER_HEADER} header is not a valid user id") from None


Storage = Annotated[AsyncSqlStorage, Depends(user_storage)]
"""Every route's storage: the owned view of the request's user, never the unscoped one."""

# `:path` lets a session id hold "/" ("user/42/chat"); the fixed suffix of each route
# keeps them apart, and an empty id reaches the library, which rejects it with 422.
SESSION = "/sessions/{session_id:path}"


def _add_routes(app: FastAPI) -> None:
    @app.post(
        f"{SESSION}/messages",
        status_code=201,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": MESSAGES_SCHEMA}},
            }
        },
    )
    async def append_messages(
        session_id: str,
        storage: Storage,
        messages: Annotated[list[Any], Body(description="messages in the wire form")],
    ) -> Appended:
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
        return Appended(appended=min(len(batch), after - before), count=after)

    @app.get(
        f"{SESSION}/messages",
        response_model=None,
        responses={200: {"content": {"application/json": {"schema": MESSAGES_SCHEMA}}}},
    )
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
        """Delete a session and its messages (another user's: nothing, as for none)."""
        return {"deleted": await storage.clear(session_id)}


def _add_session_routes(app: FastAPI) -> None:
    @app.get("/sessions")
    async def list_sessions(
        storage: Storage,
        prefix: str | None = None,
        limit: Annotated[int, Query(ge=1, le=100)] = 20,
        cursor: str | None = None,
    ) -> SessionPageOut:
        """The user's conversations, the most recently updated first, a page at a time.

        Only those whose id starts with ``prefix`` if given. The answer's
        ``next_cursor``, passed as ``cursor``, gives the next page; it is null on the last.
        """
        page = await storage.list_sessions(prefix, limit=limit, cursor=cursor)
        items = [SessionOut.of(info) for info in page.items]
        return SessionPageOut(items=items, next_cursor=page.next_cursor)

    @app.post(
        f"{SESSION}/images",
        status_code=201,
        response_model=None,
        responses={201: {"content": {"application/json": {"schema": MESSAGES_SCHEMA}}}},
    )
    async def upload_image(
        session_id: str,
        storage: Storage,
        image: Annotated[UploadFile, File(description="a JPEG, PNG, GIF or WebP image")],
        text: Annotated[str | None, Form(description="text sent with the image")] = None,
    ) -> list[dict[str, Any]]:
        """Append a user message holding an uploaded image (and a text, if given).

        Answers with the stored message in the wire form, a one-item array. An image over
        the size limit is a 413, a file that is not an image of its type a 422.
        """
        data = await image.read()
        if not image.content_type:
            raise HTTPException(HTTP_422, "the image part needs a Content-Type")
        blocks: list[Any] = [ImageBlock(data, image.content_type)]
        if text:
            blocks.append(TextBlock(text))
        message = Message.user(blocks)
        await storage.append(session_id, message)
        return messages_to_dicts([message])

    @app.get(SESSION)
    async def read_session(session_id: str, storage: Storage) -> SessionOut:
        """A conversation's record: title, metadata, message count, times."""
        info = await storage.session_info(session_id)
        if info is None:  # or another user's: the view does not see it
            raise HTTPException(HTTP_404, _no_session(session_id))
        return SessionOut.of(info)

    @app.patch(SESSION)
    async def update_session(
        session_id: str, update: SessionUpdate, storage: Storage
    ) -> SessionOut:
        """Rename a conversation, or set its metadata; creates the record if needed (as the
        user's). Another user's conversation is a 404."""
        fields = {name: getattr(update, name) for name in update.model_fields_set}
        await storage.update_session(session_id, **fields)
        info = await storage.session_info(session_id)
        assert info is not None  # noqa: S101 - just written
        return SessionOut.of(info)


app = create_app()
"""The service configured from the environment, for ``uvicorn examples.fastapi_chat.app:app``."""
