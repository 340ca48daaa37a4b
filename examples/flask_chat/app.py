"""A chat-history service on sqlmemory's ``SqlStorage``: the sync twin of ``fastapi_chat``,
each user's conversations theirs alone.

Run it from the repository root::

    flask --app examples.flask_chat.app run

The database comes from ``$SQLMEMORY_URL`` (a SQLAlchemy URL, by default
``sqlite:///chat.db``). :func:`create_app` brings the schema to head and opens one engine
for the life of the process; every request borrows a pooled connection through the
storage, which commits or rolls back each call on its own.

Every request names its user in the ``X-User-Id`` header (set by the authentication in
front of the app, or checked in :func:`current_user`), and works on
``storage.owned_by(user)`` (:func:`user_storage`): it sees and changes that user's
conversations only (docs/many-users.md). A missing or malformed header is a 401; another
user's conversation answers 404, as one that does not exist.

Messages travel in sqlmemory's versioned JSON form (``sqlmemory.wire``): a request body
is a JSON array of messages, and reads answer with the same array, so what a ``GET``
returns can be posted again as it is.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import sqlalchemy as sa
from flask import Flask, abort, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import BadRequest, HTTPException
from werkzeug.routing import PathConverter

from sqlmemory import (
    BlobTooLargeError,
    DuplicateMessageError,
    FixedWindow,
    InvalidSessionIdError,
    Policy,
    SchemaError,
    SessionInfo,
    SessionOwnerError,
    SqlStorage,
    StorageError,
    TokenWindow,
)
from sqlmemory.migrate import upgrade
from sqlmemory.wire import messages_from_dicts, messages_to_dicts

__all__ = ["DEFAULT_URL", "URL_ENV", "USER_HEADER", "create_app", "current_user", "user_storage"]

URL_ENV = "SQLMEMORY_URL"
"""The environment variable naming the database."""

DEFAULT_URL = "sqlite:///chat.db"
"""The database used when ``$SQLMEMORY_URL`` is not set: ``chat.db`` in the working dir."""

USER_HEADER = "X-User-Id"
"""The request header naming the signed-in user."""

logger = logging.getLogger(__name__)


class SessionIdConverter(PathConverter):
    """A session id in the path: may hold "/" ("user/42/chat") and may be empty.

    An empty or malformed id reaches the library, which answers it with a typed error
    (422 here) instead of the router's 404.
    """

    regex = ".*?"
    part_isolating = False  # it spans "/": Werkzeug must match it across path segments


def create_app(
    url: str | None = None, *, engine: sa.Engine | None = None, max_blob_bytes: int | None = None
) -> Flask:
    """Build the service.

    Args:
        url: a SQLAlchemy URL; ``$SQLMEMORY_URL`` or :data:`DEFAULT_URL` when ``None``.
        engine: an engine to use instead of making one from ``url`` (the caller disposes it).
        max_blob_bytes: the largest image or document accepted (the storage's default,
            20 MiB, when ``None``); larger ones are answered with 413.

    Returns:
        The application, its database schema at head.
    """
    if engine is None:
        # pre_ping: a worker that sat idle gets a fresh connection, not a dead one.
        engine = sa.create_engine(url or os.environ.get(URL_ENV) or DEFAULT_URL, pool_pre_ping=True)
    # Safe from several processes at once; `sqlmemory migrate` in the deploy step also works.
    upgrade(engine)
    limits = {} if max_blob_bytes is None else {"max_blob_bytes": max_blob_bytes}
    storage = SqlStorage(engine, **limits)

    app = Flask(__name__)
    # Flask sorts JSON keys by default; tool-call arguments must keep their order, so a
    # history read back is byte for byte what the model produced.
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.converters["session_id"] = SessionIdConverter
    app.url_map.merge_slashes = False  # "/sessions//messages" is the empty id, not a redirect
    app.extensions["sqlmemory"] = storage  # the unscoped storage: never handed to a route
    _add_error_handlers(app)
    _add_routes(app)
    return app


def current_user() -> str:
    """The user the request is made for: the ``X-User-Id`` header, as an authenticating
    proxy in front of the app sets it. Put your own authentication here (a session
    cookie, a bearer token checked against your identity provider).

    Raises:
        werkzeug.exceptions.Unauthorized: the header is missing (a 401).
    """
    user = request.headers.get(USER_HEADER)
    if user is None:
        abort(401, f"the {USER_HEADER} header is required")
    return user


def user_storage() -> SqlStorage:
    """The storage as the request's user sees it: ``storage.owned_by(user)``, no I/O.

    Raises:
        werkzeug.exceptions.Unauthorized: no user, or a user id the storage refuses as an
            owner (empty, over 255 characters, holding NUL): a 401.
    """
    storage: SqlStorage = current_app.extensions["sqlmemory"]
    try:
        return storage.owned_by(current_user())
    except InvalidSessionIdError:
        abort(401, f"the {USER_HEADER} header is not a valid user id")


def _error(status: int, detail: str) -> ResponseReturnValue:
    return jsonify(detail=detail), status


def _no_session(session_id: str) -> ResponseReturnValue:
    """A 404 that is the same for a session that does not exist and for another user's."""
    return _error(404, f"no session {session_id!r}")


def _not_theirs(exc: SessionOwnerError) -> ResponseReturnValue:
    # A write through the user's view met another user's session: nothing was written.
    # Answered as a session that does not exist; the error's own message, which names
    # the owner, stays on the server.
    return _no_session((request.view_args or {}).get("session_id", ""))


def _storage_failed(exc: StorageError) -> ResponseReturnValue:
    if isinstance(exc, SchemaError):
        # Says which command fixes the database; it holds no data and no password.
        return _error(503, str(exc))
    # A driver error quotes the SQL and its parameters, which may be other users'
    # messages: it goes to the log, and the client learns only that it may retry.
    logger.error("storage failed on %s %s", request.method, request.path, exc_info=exc)
    return _error(503, "the database is unavailable; try again later")


def _add_error_handlers(app: Flask) -> None:
    # Flask picks the handler of the most derived class in the error's MRO, so the
    # ValueError subclasses win over the ValueError catch-all (which covers
    # InvalidMessageError, InvalidSessionIdError and the library's argument checks), and
    # SessionOwnerError over the StorageError one.
    app.register_error_handler(ValueError, lambda exc: _error(422, str(exc)))
    app.register_error_handler(DuplicateMessageError, lambda exc: _error(409, str(exc)))
    app.register_error_handler(BlobTooLargeError, lambda exc: _error(413, str(exc)))
    app.register_error_handler(SessionOwnerError, _not_theirs)
    app.register_error_handler(StorageError, _storage_failed)
    app.register_error_handler(
        HTTPException, lambda exc: _error(exc.code or 500, exc.description or exc.name)
    )


def _json_body() -> Any:
    try:
        return request.get_json()
    except BadRequest as exc:  # malformed JSON: a client error in the body, as FastAPI's 422
        raise ValueError(f"the body is not valid JSON: {exc.description}") from None


def _int_arg(name: str, *, minimum: int) -> int | None:
    raw = request.args.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}")
    return value


def _add_routes(app: Flask) -> None:
    @app.post("/sessions/<session_id:session_id>/messages")
    def append_messages(session_id: str) -> ResponseReturnValue:
        """Append a JSON array of messages, all or none; retried messages are skipped."""
        storage = user_storage()
        batch = messages_from_dicts(_json_body())
        before = storage.count(session_id)
        storage.append(session_id, *batch)
        after = storage.count(session_id)
        # The count's growth is what this request added; another request appending to
        # the same session between the two counts would be counted too, hence the cap.
        return {"appended": min(len(batch), after - before), "count": after}, 201

    @app.get("/sessions/<session_id:session_id>/messages")
    def read_messages(session_id: str) -> ResponseReturnValue:
        """The history oldest first, or its window (``window=N`` or ``max_tokens=N``)."""
        storage = user_storage()
        window = _int_arg("window", minimum=0)
        max_tokens = _int_arg("max_tokens", minimum=1)
        if window is not None and max_tokens is not None:
            raise ValueError("give window or max_tokens, not both")
        policy: Policy | None = None
        if window is not None:
            policy = FixedWindow(window)
        elif max_tokens is not None:
            policy = TokenWindow(max_tokens)
        return jsonify(messages_to_dicts(storage.load(session_id, policy)))

    @app.post("/sessions/<session_id:session_id>/evict")
    def evict(session_id: str) -> ResponseReturnValue:
        """Delete the oldest messages so that at most ``keep`` remain."""
        storage = user_storage()
        keep = _int_arg("keep", minimum=0)
        if keep is None:
            raise ValueError("keep is required")
        return {"deleted": storage.evict(session_id, keep)}

    @app.delete("/sessions/<session_id:session_id>")
    def clear(session_id: str) -> ResponseReturnValue:
        """Delete a session and its messages (another user's: nothing, as for none)."""
        return {"deleted": user_storage().clear(session_id)}

    _add_session_routes(app)


def _record(info: SessionInfo) -> dict[str, Any]:
    """A conversation's record as JSON: title, metadata, message count, times."""
    return {
        "session_id": info.session_id,
        "title": info.title,
        "metadata": dict(info.metadata),
        "message_count": info.message_count,
        "created_at": info.created_at.isoformat(),
        "updated_at": info.updated_at.isoformat(),
    }


def _add_session_routes(app: Flask) -> None:
    @app.get("/sessions")
    def list_sessions() -> ResponseReturnValue:
        """The user's conversations, the most recently updated first, a page at a time:
        ``?prefix=chat-&limit=20&cursor=...`` (the cursor is the previous page's
        ``next_cursor``, null on the last page)."""
        storage = user_storage()
        limit = _int_arg("limit", minimum=1) or 20
        if limit > 100:
            raise ValueError("limit must be <= 100")
        page = storage.list_sessions(
            request.args.get("prefix"), limit=limit, cursor=request.args.get("cursor")
        )
        return {"items": [_record(i) for i in page.items], "next_cursor": page.next_cursor}

    @app.get("/sessions/<session_id:session_id>")
    def read_session(session_id: str) -> ResponseReturnValue:
        """A conversation's record; 404 when it does not exist (or is another user's)."""
        info = user_storage().session_info(session_id)
        if info is None:
            return _no_session(session_id)
        return _record(info)

    @app.patch("/sessions/<session_id:session_id>")
    def update_session(session_id: str) -> ResponseReturnValue:
        """Rename a conversation or set its metadata: a JSON object with ``title`` and/or
        ``metadata`` (a key left out is unchanged, null clears it); another user's
        conversation is a 404."""
        storage = user_storage()
        body = _json_body()
        if not isinstance(body, dict) or not set(body) <= {"title", "metadata"}:
            raise ValueError('the body must be {"title": ..., "metadata": {...}}')
        try:
            storage.update_session(session_id, **body)
        except TypeError as exc:  # a title that is not a string, metadata not an object
            raise ValueError(str(exc)) from None
        info = storage.session_info(session_id)
        assert info is not None  # noqa: S101 - just written
        return _record(info)
