"""The Flask chat-history service through Flask's test client, on every backend.

The database fixtures are the test suite's (``examples/conftest.py``): each test gets
clean ``sqlmemory_*`` tables on SQLite, PostgreSQL and MySQL/MariaDB. Every request names
its user in the ``X-User-Id`` header: ``client`` is user ``ann``, ``other`` user ``bob``.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from PIL import Image
from sqlalchemy.pool import NullPool

from sqlmemory import (
    DocumentBlock,
    ImageBlock,
    Message,
    StorageError,
    TextBlock,
    TokenWindow,
    ToolCall,
)
from sqlmemory.wire import messages_to_dicts

from .app import URL_ENV, USER_HEADER, create_app

BLOB_LIMIT = 4096
"""The app's blob limit in these tests: small, so that a 413 needs no 20 MiB upload."""
ANN, BOB = "ann", "bob"
"""The users of ``client`` and ``other``."""


@pytest.fixture
def app(engine: sa.Engine) -> Flask:
    """The service on the clean tables of the backend under test."""
    app = create_app(engine=engine, max_blob_bytes=BLOB_LIMIT)
    app.config["TESTING"] = True
    return app


def as_user(app: Flask, user: str | None) -> FlaskClient:
    """A test client of ``app`` whose requests are ``user``'s (no header when ``None``)."""
    client = app.test_client()
    if user is not None:
        client.environ_base["HTTP_" + USER_HEADER.upper().replace("-", "_")] = user
    return client


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return as_user(app, ANN)


@pytest.fixture
def other(app: Flask) -> FlaskClient:
    return as_user(app, BOB)


def post(client: FlaskClient, sid: str, *messages: Message) -> Any:
    return client.post(f"/sessions/{sid}/messages", json=messages_to_dicts(messages))


def ids(client: FlaskClient, sid: str, **params: Any) -> list[str]:
    response = client.get(f"/sessions/{sid}/messages", query_string=params)
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json]


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, "PNG")
    return out.getvalue()


def tool_exchange() -> list[Message]:
    """The example of docs/contract/windows.md: user, call c1, its result, the answer."""
    return [
        Message.user("What is 6 x 7?"),
        Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6, "b": 7})]),
        Message.tool("c1", "42"),
        Message.assistant("6 x 7 = 42."),
    ]


def test_append_and_read_back_exactly(client: FlaskClient) -> None:
    imported_at = datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=timezone.utc)
    messages = [
        Message.user(
            [
                TextBlock("What is in this picture? 😀 \x00"),
                ImageBlock(png(65, 64), "image/png"),
                DocumentBlock(b"notes", "text/plain", title="notes.txt"),
            ]
        ),
        Message.assistant(tool_calls=[ToolCall("c1", "search", {"zeta": 1, "alpha": [1, 2]})]),
        Message.tool("c1", "found"),
        Message.user("imported", recorded_at=imported_at),
    ]
    sent = messages_to_dicts(messages)
    response = client.post("/sessions/user/7/chat/messages", json=sent)
    assert response.status_code == 201, response.text
    assert response.json == {"appended": 4, "count": 4}

    got = client.get("/sessions/user/7/chat/messages").json
    for stored, original in zip(got, sent, strict=True):
        if original["recorded_at"] is None:  # the store fills it in, in UTC
            assigned = datetime.fromisoformat(stored["recorded_at"])
            assert assigned.utcoffset() == timedelta(0)
            original = {**original, "recorded_at": stored["recorded_at"]}
        assert stored == original
    assert list(got[1]["content"][0]["arguments"]) == ["zeta", "alpha"]  # the tool call block

    # What a read returns can be posted again as it is: a retry appends nothing.
    again = client.post("/sessions/user/7/chat/messages", json=got)
    assert again.status_code == 201
    assert again.json == {"appended": 0, "count": 4}
    more = post(client, "user/7/chat", Message.from_dict(got[0]), Message.user("new"))
    assert more.json == {"appended": 1, "count": 5}


def test_windows_and_token_budgets(client: FlaskClient) -> None:
    user, call, result, answer = tool_exchange()
    post(client, "w", user, call, result, answer)
    assert ids(client, "w", window=2) == [call.id, result.id, answer.id]
    assert ids(client, "w", window=1) == [answer.id]
    assert ids(client, "w", window=0) == []
    assert ids(client, "nobody") == []
    for budget in (1, 8, 20, 1000):
        expected = [m.id for m in TokenWindow(budget).apply([user, call, result, answer])]
        assert ids(client, "w", max_tokens=budget) == expected, budget


def test_evict_delete_and_list(client: FlaskClient) -> None:
    texts = [Message.user(t) for t in ("one", "two", "three")]
    post(client, "a/1", *texts)
    post(client, "a/2", Message.user("x"))
    post(client, "b", Message.user("y"))

    assert client.post("/sessions/a/1/evict?keep=1").json == {"deleted": 2}
    assert ids(client, "a/1") == [texts[2].id]
    # The evict changed a/1 last: it is the most recently updated.
    assert listed(client) == ["a/1", "b", "a/2"]
    assert listed(client, prefix="a/") == ["a/1", "a/2"]
    assert client.delete("/sessions/a/1").json == {"deleted": 1}
    assert listed(client, prefix="a/") == ["a/2"]


def listed(client: FlaskClient, **params: Any) -> list[str]:
    """The ids of every page of ``GET /sessions``, in order."""
    found: list[str] = []
    while True:
        page = client.get("/sessions", query_string=params).json
        found += [item["session_id"] for item in page["items"]]
        if page["next_cursor"] is None:
            return found
        params["cursor"] = page["next_cursor"]


def test_conversations_are_paged_renamed_and_deleted(client: FlaskClient) -> None:
    for name in ("first", "second", "third"):
        post(client, f"u/{name}", *tool_exchange())
    renamed = client.patch("/sessions/u/first", json={"title": "Multiplication"})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json["title"] == "Multiplication" and renamed.json["message_count"] == 4
    assert listed(client, prefix="u/", limit=1) == ["u/first", "u/third", "u/second"]
    page = client.get("/sessions", query_string={"limit": 2}).json
    assert page["items"][0] == renamed.json and page["next_cursor"] is not None

    tagged = client.patch("/sessions/u/first", json={"metadata": {"user": 7}})
    assert (tagged.json["title"], tagged.json["metadata"]) == ("Multiplication", {"user": 7})
    cleared = client.patch("/sessions/u/first", json={"title": None})
    assert cleared.json["title"] is None and cleared.json["metadata"] == {"user": 7}
    assert client.get("/sessions/u/first").json == cleared.json

    assert client.delete("/sessions/u/first").json == {"deleted": 4}
    assert client.get("/sessions/u/first").status_code == 404
    assert listed(client, prefix="u/") == ["u/third", "u/second"]

    for bad in ({"title": 5}, {"name": "x"}, ["title"]):
        assert client.patch("/sessions/u/second", json=bad).status_code == 422, bad
    for params in ({"cursor": "nonsense"}, {"limit": 0}, {"limit": 101}):
        assert client.get("/sessions", query_string=params).status_code == 422, params
    assert client.get("/sessions/u/second").json["title"] is None


def test_duplicate_id_with_other_content_is_409_and_writes_nothing(client: FlaskClient) -> None:
    post(client, "dup", Message.user("original", id="m-1"))
    response = post(client, "dup", Message.user("new"), Message.user("changed", id="m-1"))
    assert response.status_code == 409
    assert "m-1" in response.json["detail"]
    assert ids(client, "dup") == ["m-1"]


def _message(**fields: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"kind": "text", "text": "hi"}], **fields}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param([{"content": []}], "message.role is missing", id="no-role"),
        pytest.param([_message(role="tool")], "tool_call_id", id="tool-without-call-id"),
        pytest.param([_message(), "hello"], "[1]", id="item-not-an-object"),
        pytest.param({"messages": []}, "array", id="body-not-a-list"),
    ],
)
def test_malformed_messages_are_422(client: FlaskClient, body: Any, fragment: str) -> None:
    response = client.post("/sessions/bad/messages", json=body)
    assert response.status_code == 422, response.text
    assert fragment in response.json["detail"]
    assert ids(client, "bad") == []


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        pytest.param('[{"role": "user", "content": [', "not valid JSON", id="truncated-json"),
        pytest.param(
            '[{"role": "user", "content": [{"kind": "text", "text": "\\ud800"}]}]',
            "surrogate",
            id="lone-surrogate",
        ),
        pytest.param(
            '[{"role": "assistant", "content": [],'
            ' "tool_calls": [{"id": "c1", "name": "f", "arguments": {"x": NaN}}]}]',
            "NaN",
            id="nan-argument",
        ),
    ],
)
def test_malformed_json_is_422(client: FlaskClient, raw: str, fragment: str) -> None:
    response = client.post(
        "/sessions/bad/messages", data=raw.encode(), content_type="application/json"
    )
    assert response.status_code == 422, response.text
    assert fragment.lower() in response.json["detail"].lower()
    assert ids(client, "bad") == []


@pytest.mark.parametrize(
    ("method", "path", "fragment"),
    [
        pytest.param("GET", "/sessions/%20padded/messages", "whitespace", id="get-padded"),
        pytest.param("POST", "/sessions/bell%07/messages", "control", id="post-control"),
        pytest.param("GET", f"/sessions/{'x' * 256}/messages", "255", id="get-too-long"),
        pytest.param("POST", "/sessions//messages", "empty", id="post-empty"),
        pytest.param("DELETE", "/sessions/tab%09", "whitespace", id="delete-padded"),
    ],
)
def test_invalid_session_id_is_422(
    client: FlaskClient, method: str, path: str, fragment: str
) -> None:
    body = messages_to_dicts([Message.user("hi")]) if method == "POST" else None
    response = client.open(path, method=method, json=body)
    assert response.status_code == 422, response.text
    assert fragment in response.json["detail"]


@pytest.mark.parametrize(
    ("method", "suffix", "fragment"),
    [
        pytest.param("POST", "evict?keep=-1", "keep must be >= 0", id="negative-keep"),
        pytest.param("POST", "evict?keep=two", "keep must be an integer", id="keep-not-int"),
        pytest.param("POST", "evict", "keep is required", id="keep-missing"),
        pytest.param("GET", "messages?window=2&max_tokens=10", "not both", id="both-windows"),
        pytest.param("GET", "messages?max_tokens=0", "max_tokens must be >= 1", id="zero-budget"),
    ],
)
def test_bad_query_is_422(client: FlaskClient, method: str, suffix: str, fragment: str) -> None:
    post(client, "q", Message.user("keep me"))
    response = client.open(f"/sessions/q/{suffix}", method=method)
    assert response.status_code == 422, response.text
    assert fragment in response.json["detail"]
    assert len(ids(client, "q")) == 1


def test_blob_over_the_limit_is_413(client: FlaskClient) -> None:
    small = Message.user([DocumentBlock(b"x" * BLOB_LIMIT, "text/plain")])
    large = Message.user([DocumentBlock(b"x" * (BLOB_LIMIT + 1), "text/plain")])
    assert post(client, "blob", small).status_code == 201
    response = post(client, "blob", large)
    assert response.status_code == 413
    assert str(BLOB_LIMIT) in response.json["detail"]
    assert ids(client, "blob") == [small.id]


def test_unknown_route_and_method_are_json_4xx(client: FlaskClient) -> None:
    missing = client.get("/nowhere")
    assert missing.status_code == 404 and "detail" in missing.json
    wrong = client.put("/sessions/s/messages")
    assert wrong.status_code == 405 and "detail" in wrong.json


def test_concurrent_posts_lose_and_duplicate_nothing(app: Flask) -> None:
    messages = [Message.user(f"message {i}") for i in range(12)]

    def send(message: Message) -> Any:
        return post(as_user(app, ANN), "busy", message)

    with ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(send, messages))
    assert [r.status_code for r in responses] == [201] * 12
    assert sorted(ids(as_user(app, ANN), "busy")) == sorted(m.id for m in messages)


def test_storage_failure_is_503_without_details(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise StorageError("append failed: INSERT ... ('secret user text')")

    monkeypatch.setattr(app.extensions["sqlmemory"], "append", broken)
    response = post(client, "down", Message.user("hi"))
    assert response.status_code == 503
    assert "secret" not in response.text
    assert "unavailable" in response.json["detail"]


def test_schema_not_at_head_is_503_naming_the_fix(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'chat.db'}"
    app = create_app(url)
    engine = sa.create_engine(url, poolclass=NullPool)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM sqlmemory_alembic_version"))
    engine.dispose()
    response = as_user(app, ANN).get("/sessions/s/messages")
    assert response.status_code == 503
    assert "sqlmemory migrate" in response.json["detail"]
    app.extensions["sqlmemory"].engine.dispose()


def test_url_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "from-env.db"
    monkeypatch.setenv(URL_ENV, f"sqlite:///{database}")
    app = create_app()
    try:
        assert post(as_user(app, ANN), "s", Message.user("hi")).status_code == 201
    finally:
        app.extensions["sqlmemory"].engine.dispose()
    assert database.is_file()


# --- many users: each sees and changes only their own conversations ----------------------


@pytest.mark.parametrize(
    "user", [pytest.param(None, id="no-header"), "", pytest.param("u" * 256, id="too-long")]
)
def test_a_request_without_a_valid_user_is_401_and_writes_nothing(
    app: Flask, client: FlaskClient, user: str | None
) -> None:
    anonymous = as_user(app, user)
    requests = [
        ("GET", "/sessions", None),
        ("GET", "/sessions/chat", None),
        ("GET", "/sessions/chat/messages", None),
        ("POST", "/sessions/chat/messages", messages_to_dicts([Message.user("hi")])),
        ("PATCH", "/sessions/chat", {"title": "mine"}),
        ("POST", "/sessions/chat/evict?keep=0", None),
        ("DELETE", "/sessions/chat", None),
    ]
    for method, path, body in requests:
        response = anonymous.open(path, method=method, json=body)
        assert response.status_code == 401, (method, path, response.text)
        assert USER_HEADER in response.json["detail"]
    assert listed(client) == []


def test_another_users_conversation_does_not_exist_for_them(
    client: FlaskClient, other: FlaskClient
) -> None:
    private = "ann's private plan"
    messages = [Message.user(private), Message.assistant("noted")]
    assert post(client, "chat", *messages).status_code == 201
    assert client.patch("/sessions/chat", json={"title": private}).status_code == 200
    mine = client.get("/sessions/chat/messages").json
    record = client.get("/sessions/chat").json

    absent = other.get("/sessions/nothing")
    answers = [
        other.get("/sessions/chat/messages"),
        other.get("/sessions/chat/messages?window=2"),
        other.get("/sessions/chat/messages?max_tokens=1000"),
        other.get("/sessions/chat"),
        other.get("/sessions"),
        other.post("/sessions/chat/messages", json=messages_to_dicts([Message.user("x")])),
        other.post("/sessions/chat/messages", json=mine),  # a "retry" of ann's
        other.patch("/sessions/chat", json={"title": "bob's now"}),
        other.post("/sessions/chat/evict?keep=0"),
        other.delete("/sessions/chat"),
    ]
    assert [r.json for r in answers[:3]] == [[], [], []]
    assert answers[3].status_code == absent.status_code == 404
    assert answers[3].json["detail"] == absent.json["detail"].replace("nothing", "chat")
    assert answers[4].json == {"items": [], "next_cursor": None}
    # A write that would change ann's conversation: the 404 of a read of one that does
    # not exist.
    assert [(r.status_code, r.json) for r in answers[5:8]] == [(404, answers[3].json)] * 3
    assert [r.json for r in answers[8:]] == [{"deleted": 0}, {"deleted": 0}]
    for response in answers:
        assert private not in response.text and ANN not in response.text, response.text

    assert client.get("/sessions/chat/messages").json == mine
    assert client.get("/sessions/chat").json == record
    assert listed(client) == ["chat"]


def test_two_users_keep_their_own_conversations_apart(
    client: FlaskClient, other: FlaskClient
) -> None:
    assert post(client, "ann-1", Message.user("a1")).status_code == 201
    assert post(other, "bob-1", Message.user("b1")).status_code == 201
    assert post(client, "ann-2", Message.user("a2")).status_code == 201
    assert listed(client) == ["ann-2", "ann-1"]
    assert listed(other) == ["bob-1"]
    assert ids(client, "bob-1") == []
    assert client.delete("/sessions/bob-1").json == {"deleted": 0}
    assert len(ids(other, "bob-1")) == 1
    # Once ann's conversation is gone, its id is free: bob may start one under it.
    assert client.delete("/sessions/ann-1").json == {"deleted": 1}
    assert post(other, "ann-1", Message.user("b2")).status_code == 201
    assert listed(other) == ["ann-1", "bob-1"]
    assert listed(client) == ["ann-2"]
