"""The chat-history service, driven through httpx on SQLite, PostgreSQL and MySQL/MariaDB.

Every test runs once per backend. PostgreSQL and MySQL/MariaDB are the test suite's
databases (``examples/conftest.py``), found as docs/contract/backends.md says (for
PostgreSQL ``$SQLMEMORY_TEST_POSTGRES_URL``, else ``127.0.0.1:5432``); when one does not
answer its tests are skipped, or fail if it is listed in ``$SQLMEMORY_REQUIRE_BACKENDS``.

The PostgreSQL database is shared with the integration tests, so each test works only on
sessions under its own random prefix, and deletes them when it ends.

Every request names its user in the ``X-User-Id`` header: ``client`` is user ``ann``,
``other`` is user ``bob`` on the same running app.
"""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from fastapi import FastAPI
from PIL import Image
from sqlalchemy.pool import NullPool

from sqlmemory import (
    DocumentBlock,
    ImageBlock,
    Message,
    Role,
    StorageError,
    TextBlock,
    ThinkingBlock,
    TokenWindow,
    ToolCall,
)
from sqlmemory.migrate import sync_url
from sqlmemory.wire import messages_to_dicts
from tests.support.storages import Databases

from .app import URL_ENV, USER_HEADER, create_app

pytestmark = pytest.mark.anyio

BACKENDS = ("sqlite", "postgresql", "mysql")
BLOB_LIMIT = 4096
"""The app's blob limit in these tests: small, so that a 413 needs no 20 MiB upload."""
ANN, BOB = "ann", "bob"
"""The users of ``client`` and ``other``."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Run on asyncio only (the drivers under test are asyncio drivers)."""
    return "asyncio"


@pytest.fixture(scope="session")
def postgres_url(databases: Databases) -> str:
    """The suite's PostgreSQL database (tests/conftest.py) through asyncpg.

    Found as the integration tests find it (docs/contract/backends.md): skipped when it
    does not answer, or failed if ``postgresql`` is in ``$SQLMEMORY_REQUIRE_BACKENDS``; a
    pytest-xdist worker's own database.
    """
    return databases.async_url("postgresql")


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An async URL of the backend under test, its ``sqlmemory_*`` tables empty.

    The server databases are the suite's (tests/conftest.py), shared by the tests of one
    pytest-xdist worker, the Flask example's among them: emptied first, as the suite's
    ``engine`` fixture empties them, so that what another test left is never listed here.
    """
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"
    databases = request.getfixturevalue("databases")
    databases.clean_engine(request.param)
    if request.param == "mysql":
        # Through aiomysql.
        return str(databases.async_url("mysql"))
    return str(request.getfixturevalue("postgres_url"))


def _client(app: FastAPI, user: str | None) -> httpx.AsyncClient:
    """A client of ``app`` whose requests are ``user``'s (no user header when ``None``)."""
    headers = {} if user is None else {USER_HEADER: user}
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers)


@asynccontextmanager
async def _serve(app: FastAPI, user: str = ANN) -> AsyncIterator[httpx.AsyncClient]:
    # httpx's ASGI transport sends no lifespan events: run the app's lifespan around it.
    async with app.router.lifespan_context(app), _client(app, user) as c:
        yield c


@pytest.fixture
def app(database_url: str) -> FastAPI:
    """The service on the backend under test, not started."""
    return create_app(database_url, max_blob_bytes=BLOB_LIMIT)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """A client of ``app``, started: its schema upgraded, its engine open."""
    async with _serve(app) as c:
        yield c


@pytest.fixture
async def other(app: FastAPI, client: httpx.AsyncClient) -> AsyncIterator[httpx.AsyncClient]:
    """A second user's client of the app ``client`` started."""
    async with _client(app, BOB) as c:
        yield c


@pytest.fixture
async def prefix(app: FastAPI, client: httpx.AsyncClient) -> AsyncIterator[str]:
    """A prefix no other test uses; every session under it is deleted afterwards, each
    by its user."""
    unique = f"fastapi-test/{uuid.uuid4().hex}/"
    yield unique
    for user in (ANN, BOB):
        async with _client(app, user) as c:
            for sid in await _all_sessions(c, unique):
                assert (await c.delete(f"/sessions/{sid}")).status_code == 200


async def _pages(client: httpx.AsyncClient, prefix: str, limit: int = 100) -> list[dict[str, Any]]:
    """Every conversation under ``prefix``, through pages of ``limit`` and their cursors."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"prefix": prefix, "limit": limit}
    while True:
        response = await client.get("/sessions", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        items += page["items"]
        if page["next_cursor"] is None:
            return items
        params["cursor"] = page["next_cursor"]


async def _all_sessions(client: httpx.AsyncClient, prefix: str) -> list[str]:
    return [item["session_id"] for item in await _pages(client, prefix)]


async def _post(client: httpx.AsyncClient, sid: str, *messages: Message) -> httpx.Response:
    return await client.post(f"/sessions/{sid}/messages", json=messages_to_dicts(messages))


async def _ids(client: httpx.AsyncClient, sid: str, **params: Any) -> list[str]:
    response = await client.get(f"/sessions/{sid}/messages", params=params)
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()]


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, "PNG")
    return out.getvalue()


def _tool_exchange() -> list[Message]:
    """The example of docs/contract/windows.md: user, call c1, its result, the answer."""
    return [
        Message.user("What is 6 x 7?"),
        Message.assistant(tool_calls=[ToolCall("c1", "multiply", {"a": 6, "b": 7})]),
        Message.tool("c1", "42"),
        Message.assistant("6 x 7 = 42."),
    ]


async def test_append_and_read_back_exactly(client: httpx.AsyncClient, prefix: str) -> None:
    imported_at = datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=timezone.utc)
    messages = [
        Message.system("Be brief."),
        Message.user(
            [
                TextBlock("What is in this picture? 😀 \x00"),
                ImageBlock(_png(65, 64), "image/png"),
                DocumentBlock(b"notes", "text/plain", title="notes.txt"),
            ]
        ),
        Message.assistant(
            [ThinkingBlock("look it up", signature="sig")],
            tool_calls=[ToolCall("c1", "search", {"zeta": 1, "alpha": {"y": [1, 2], "b": None}})],
        ),
        Message.tool("c1", "found"),
        Message(role=Role.ASSISTANT, content=(TextBlock("done"),), metadata={"model": "m1"}),
        Message.user("imported", recorded_at=imported_at),
    ]
    sent = messages_to_dicts(messages)

    response = await client.post(f"/sessions/{prefix}chat/messages", json=sent)
    assert response.status_code == 201, response.text
    assert response.json() == {"appended": len(messages), "count": len(messages)}

    got = (await client.get(f"/sessions/{prefix}chat/messages")).json()
    assert len(got) == len(sent)
    for stored, original in zip(got, sent, strict=True):
        if original["recorded_at"] is None:  # the store fills it in, in UTC
            assigned = datetime.fromisoformat(stored["recorded_at"])
            assert assigned.utcoffset() == timedelta(0)
            original = {**original, "recorded_at": stored["recorded_at"]}
        assert stored == original
    # Dict equality ignores order; a byte-exact replay needs the arguments' key order too.
    arguments = got[2]["content"][1]["arguments"]  # the tool call, after the thinking
    assert list(arguments) == ["zeta", "alpha"]
    assert list(arguments["alpha"]) == ["y", "b"]
    assert got[-1]["recorded_at"] == imported_at.isoformat()

    # What a read returns can be posted again as it is: a no-op retry.
    again = await client.post(f"/sessions/{prefix}chat/messages", json=got)
    assert again.json() == {"appended": 0, "count": len(messages)}


async def test_unknown_session_reads_empty(client: httpx.AsyncClient, prefix: str) -> None:
    assert await _ids(client, f"{prefix}nobody") == []
    assert await _ids(client, f"{prefix}nobody", window=3) == []


async def test_window_query(client: httpx.AsyncClient, prefix: str) -> None:
    user, call, result, answer = _tool_exchange()
    await _post(client, f"{prefix}w", user, call, result, answer)

    assert await _ids(client, f"{prefix}w", window=2) == [call.id, result.id, answer.id]
    assert await _ids(client, f"{prefix}w", window=1) == [answer.id]
    assert await _ids(client, f"{prefix}w", window=0) == []
    assert await _ids(client, f"{prefix}w", window=10) == [
        m.id for m in (user, call, result, answer)
    ]


async def test_max_tokens_query(client: httpx.AsyncClient, prefix: str) -> None:
    # The TokenWindow(9) example of docs/contract/windows.md: the call with its result does not fit.
    call = Message.assistant(tool_calls=[ToolCall("c1", "f", {})])
    result = Message.tool("c1", "42")
    answer = Message.assistant("answer")
    await _post(client, f"{prefix}t", call, result, answer)
    assert await _ids(client, f"{prefix}t", max_tokens=9) == [answer.id]

    exchange = _tool_exchange()
    await _post(client, f"{prefix}t2", *exchange)
    for budget in (1, 8, 20, 30, 1000):
        expected = [m.id for m in TokenWindow(budget).apply(exchange)]
        assert await _ids(client, f"{prefix}t2", max_tokens=budget) == expected, budget


async def test_evict(client: httpx.AsyncClient, prefix: str) -> None:
    texts = [Message.user(t) for t in ("one", "two", "three", "four", "five")]
    await _post(client, f"{prefix}e", *texts)

    response = await client.post(f"/sessions/{prefix}e/evict", params={"keep": 2})
    assert response.status_code == 200
    assert response.json() == {"deleted": 3}
    assert await _ids(client, f"{prefix}e") == [texts[3].id, texts[4].id]

    response = await client.post(f"/sessions/{prefix}e/evict", params={"keep": 5})
    assert response.json() == {"deleted": 0}

    response = await client.post(f"/sessions/{prefix}e/evict", params={"keep": 0})
    assert response.json() == {"deleted": 2}
    assert await _ids(client, f"{prefix}e") == []


async def test_evict_never_leaves_a_tool_result_first(
    client: httpx.AsyncClient, prefix: str
) -> None:
    exchange = _tool_exchange()
    await _post(client, f"{prefix}e", *exchange)
    # keep=2 would leave the result of c1 without its call: it goes too.
    response = await client.post(f"/sessions/{prefix}e/evict", params={"keep": 2})
    assert response.json() == {"deleted": 3}
    assert await _ids(client, f"{prefix}e") == [exchange[-1].id]


async def test_delete_session(client: httpx.AsyncClient, prefix: str) -> None:
    await _post(client, f"{prefix}d", *_tool_exchange())

    response = await client.delete(f"/sessions/{prefix}d")
    assert response.status_code == 200
    assert response.json() == {"deleted": 4}
    assert await _ids(client, f"{prefix}d") == []
    assert await _all_sessions(client, prefix) == []
    assert (await client.delete(f"/sessions/{prefix}d")).json() == {"deleted": 0}


async def test_list_sessions_by_prefix(client: httpx.AsyncClient, prefix: str) -> None:
    names = ["a/1", "a/2", "a_%", "b"]
    for name in names:
        assert (await _post(client, f"{prefix}{name}", Message.user(name))).status_code == 201

    newest_first = [f"{prefix}{n}" for n in reversed(names)]
    assert await _all_sessions(client, prefix) == newest_first
    assert await _all_sessions(client, f"{prefix}a/") == [f"{prefix}a/2", f"{prefix}a/1"]
    # LIKE wildcards in a prefix are plain characters.
    assert await _all_sessions(client, f"{prefix}a_") == [f"{prefix}a_%"]
    assert await _all_sessions(client, f"{prefix}zzz") == []
    # Pages of one: the same conversations, in the same order.
    assert [i["session_id"] for i in await _pages(client, prefix, limit=1)] == newest_first


async def test_conversations_are_listed_renamed_and_deleted(
    client: httpx.AsyncClient, prefix: str
) -> None:
    for name in ("first", "second", "third"):
        assert (await _post(client, f"{prefix}{name}", *_tool_exchange())).status_code == 201

    renamed = await client.patch(f"/sessions/{prefix}first", json={"title": "Multiplication"})
    assert renamed.status_code == 200, renamed.text
    record = renamed.json()
    assert record["title"] == "Multiplication" and record["metadata"] == {}
    assert record["message_count"] == 4
    # Renaming is a change: the conversation comes first.
    page = (await client.get("/sessions", params={"prefix": prefix, "limit": 2})).json()
    assert [i["session_id"] for i in page["items"]] == [f"{prefix}first", f"{prefix}third"]
    assert page["items"][0] == record
    rest = await client.get(
        "/sessions", params={"prefix": prefix, "limit": 2, "cursor": page["next_cursor"]}
    )
    assert [i["session_id"] for i in rest.json()["items"]] == [f"{prefix}second"]
    assert rest.json()["next_cursor"] is None

    tagged = await client.patch(f"/sessions/{prefix}first", json={"metadata": {"user": 7}})
    assert tagged.json()["title"] == "Multiplication"  # left out: unchanged
    assert tagged.json()["metadata"] == {"user": 7}
    cleared = await client.patch(f"/sessions/{prefix}first", json={"title": None})
    assert cleared.json()["title"] is None and cleared.json()["metadata"] == {"user": 7}
    shown = await client.get(f"/sessions/{prefix}first")
    assert shown.status_code == 200 and shown.json() == cleared.json()

    assert (await client.delete(f"/sessions/{prefix}first")).json() == {"deleted": 4}
    assert (await client.get(f"/sessions/{prefix}first")).status_code == 404
    assert await _all_sessions(client, prefix) == [f"{prefix}third", f"{prefix}second"]

    # A new conversation may get its title before its first message.
    created = await client.patch(f"/sessions/{prefix}new", json={"title": "Draft"})
    assert created.json()["message_count"] == 0


async def test_bad_pages_and_titles_are_422(client: httpx.AsyncClient, prefix: str) -> None:
    await _post(client, f"{prefix}x", Message.user("hi"))
    for params in ({"cursor": "nonsense"}, {"limit": 0}, {"limit": 101}):
        response = await client.get("/sessions", params=params)
        assert response.status_code == 422, params
    bad = await client.patch(f"/sessions/{prefix}x", json={"title": 5})
    assert bad.status_code == 422
    assert (await client.get(f"/sessions/{prefix}x")).json()["title"] is None


async def test_an_image_is_uploaded_as_a_file(client: httpx.AsyncClient, prefix: str) -> None:
    png = _png(40, 30)
    response = await client.post(
        f"/sessions/{prefix}pics/images",
        files={"image": ("cat.png", png, "image/png")},
        data={"text": "What is this?"},
    )
    assert response.status_code == 201, response.text
    (sent,) = response.json()
    stored = (await client.get(f"/sessions/{prefix}pics/messages")).json()
    assert [m["id"] for m in stored] == [sent["id"]]
    image, text = stored[0]["content"]
    assert image["kind"] == "image" and image["media_type"] == "image/png"
    assert (image["width"], image["height"]) == (40, 30)
    assert text == {"kind": "text", "text": "What is this?"}

    not_png = await client.post(
        f"/sessions/{prefix}pics/images", files={"image": ("x.png", b"GIF89a...", "image/png")}
    )
    assert not_png.status_code == 422
    too_big = await client.post(
        f"/sessions/{prefix}pics/images",
        files={"image": ("big.png", _png(200, 200) + b"\0" * BLOB_LIMIT, "image/png")},
    )
    assert too_big.status_code == 413
    assert len(await _ids(client, f"{prefix}pics")) == 1


async def test_the_openapi_schema_describes_messages(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    message = schema["components"]["schemas"]["Message"]
    assert message["properties"]["role"]["enum"] == [
        "system",
        "developer",
        "user",
        "assistant",
        "tool",
        "document",
    ]
    array = {"type": "array", "items": {"$ref": "#/components/schemas/Message"}}
    paths = schema["paths"]
    post = paths["/sessions/{session_id}/messages"]["post"]
    body = post["requestBody"]["content"]["application/json"]["schema"]
    assert {k: body[k] for k in array} == array
    get = paths["/sessions/{session_id}/messages"]["get"]
    assert get["responses"]["200"]["content"]["application/json"]["schema"] == array
    upload = paths["/sessions/{session_id}/images"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]
    listed = paths["/sessions"]["get"]["responses"]["200"]["content"]["application/json"]
    assert listed["schema"] == {"$ref": "#/components/schemas/SessionPageOut"}
    assert "title" in schema["components"]["schemas"]["SessionOut"]["properties"]


async def test_identical_retry_is_a_no_op(client: httpx.AsyncClient, prefix: str) -> None:
    message = Message.user("once")
    first = await _post(client, f"{prefix}r", message)
    assert first.status_code == 201
    assert first.json() == {"appended": 1, "count": 1}
    response = await _post(client, f"{prefix}r", message)
    assert response.status_code == 201
    assert response.json() == {"appended": 0, "count": 1}
    # A retry that carries one more message appends only that one.
    more = await _post(client, f"{prefix}r", message, Message.user("twice"))
    assert more.json() == {"appended": 1, "count": 2}


async def test_duplicate_id_with_other_content_is_409(
    client: httpx.AsyncClient, prefix: str
) -> None:
    original = Message.user("original", id="m-1")
    await _post(client, f"{prefix}dup", original)

    response = await _post(
        client, f"{prefix}dup", Message.user("new"), Message.user("changed", id="m-1")
    )
    assert response.status_code == 409
    assert "m-1" in response.json()["detail"]
    assert await _ids(client, f"{prefix}dup") == ["m-1"]  # all or none: "new" not written


def _message(**fields: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"kind": "text", "text": "hi"}], **fields}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param([{"content": []}], "message.role is missing", id="no-role"),
        pytest.param([_message(role="robot")], "robot", id="unknown-role"),
        pytest.param([_message(content=[{"kind": "text"}])], "content[0].text", id="no-text"),
        pytest.param(
            [_message(content=[{"kind": "image", "media_type": "image/png", "data": "@@"}])],
            "base64",
            id="bad-base64",
        ),
        pytest.param(
            [_message(content=[{"kind": "image", "media_type": "image/png", "data": "AAAA"}])],
            "content[0]",
            id="not-a-png",
        ),
        pytest.param([_message(role="tool")], "tool_call_id", id="tool-without-call-id"),
        pytest.param(
            [_message(role="user", tool_calls=[{"id": "c1", "name": "f", "arguments": {}}])],
            "tool call",
            id="tool-calls-on-user",
        ),
        pytest.param([_message(content="hi")], "message.content", id="content-not-a-list"),
        pytest.param([_message(v=3)], "message.v", id="unknown-version"),
        pytest.param([_message(recorded_at="yesterday")], "recorded_at", id="bad-recorded-at"),
        pytest.param([_message(), "hello"], "[1]", id="item-not-an-object"),
        pytest.param({"messages": []}, "list", id="body-not-a-list"),
    ],
)
async def test_malformed_messages_are_422(
    client: httpx.AsyncClient, prefix: str, body: Any, fragment: str
) -> None:
    response = await client.post(f"/sessions/{prefix}bad/messages", json=body)
    assert response.status_code == 422, response.text
    assert fragment in json.dumps(response.json()["detail"]), response.text
    assert await _ids(client, f"{prefix}bad") == []


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        pytest.param('[{"role": "user", "content": [', "json", id="truncated-json"),
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
async def test_malformed_json_is_422(
    client: httpx.AsyncClient, prefix: str, raw: str, fragment: str
) -> None:
    response = await client.post(
        f"/sessions/{prefix}bad/messages",
        content=raw.encode(),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422, response.text
    assert fragment.lower() in response.text.lower()
    assert await _ids(client, f"{prefix}bad") == []


@pytest.mark.parametrize(
    ("method", "path", "fragment"),
    [
        pytest.param("GET", "/sessions/%20padded/messages", "whitespace", id="get-padded"),
        pytest.param("POST", "/sessions/padded%20/messages", "whitespace", id="post-padded"),
        pytest.param("POST", "/sessions/bell%07/messages", "control", id="post-control"),
        pytest.param("GET", "/sessions/nul%00/messages", "control", id="get-nul"),
        pytest.param("GET", f"/sessions/{'x' * 256}/messages", "255", id="get-too-long"),
        pytest.param("POST", "/sessions//messages", "empty", id="post-empty"),
        pytest.param("POST", "/sessions/%20/evict?keep=1", "whitespace", id="evict-padded"),
        pytest.param("DELETE", "/sessions/tab%09", "whitespace", id="delete-padded"),
        pytest.param("DELETE", "/sessions/", "empty", id="delete-empty"),
    ],
)
async def test_invalid_session_id_is_422(
    client: httpx.AsyncClient, method: str, path: str, fragment: str
) -> None:
    body = messages_to_dicts([Message.user("hi")]) if method == "POST" else None
    response = await client.request(method, path, json=body)
    assert response.status_code == 422, response.text
    assert fragment in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "suffix", "fragment"),
    [
        pytest.param("POST", "evict?keep=-1", "keep must be >= 0", id="negative-keep"),
        pytest.param("POST", "evict?keep=two", "keep", id="keep-not-int"),
        pytest.param("POST", "evict", "keep", id="keep-missing"),
        pytest.param("GET", "messages?window=2&max_tokens=10", "not both", id="both-windows"),
        pytest.param("GET", "messages?window=-1", "window", id="negative-window"),
        pytest.param("GET", "messages?window=many", "window", id="window-not-int"),
        pytest.param("GET", "messages?max_tokens=0", "max_tokens", id="zero-budget"),
    ],
)
async def test_bad_query_is_422(
    client: httpx.AsyncClient, prefix: str, method: str, suffix: str, fragment: str
) -> None:
    await _post(client, f"{prefix}q", Message.user("keep me"))
    response = await client.request(method, f"/sessions/{prefix}q/{suffix}")
    assert response.status_code == 422, response.text
    assert fragment in json.dumps(response.json()["detail"])
    assert len(await _ids(client, f"{prefix}q")) == 1


async def test_blob_over_the_limit_is_413(client: httpx.AsyncClient, prefix: str) -> None:
    small = Message.user([DocumentBlock(b"x" * BLOB_LIMIT, "text/plain")])
    large = Message.user([DocumentBlock(b"x" * (BLOB_LIMIT + 1), "text/plain")])

    assert (await _post(client, f"{prefix}blob", small)).status_code == 201
    response = await _post(client, f"{prefix}blob", large)
    assert response.status_code == 413
    assert str(BLOB_LIMIT) in response.json()["detail"]
    assert await _ids(client, f"{prefix}blob") == [small.id]


async def test_50_concurrent_posts_lose_and_duplicate_nothing(
    client: httpx.AsyncClient, prefix: str
) -> None:
    sid = f"{prefix}busy"
    messages = [Message.user(f"message {i}") for i in range(50)]

    responses = await asyncio.gather(*(_post(client, sid, m) for m in messages))

    assert [r.status_code for r in responses] == [201] * 50
    stored = (await client.get(f"/sessions/{sid}/messages")).json()
    ids = [m["id"] for m in stored]
    assert len(ids) == 50
    assert set(ids) == {m.id for m in messages}
    # Store-assigned times follow the append order.
    times = [datetime.fromisoformat(m["recorded_at"]) for m in stored]
    assert times == sorted(times)
    counts = sorted(r.json()["count"] for r in responses)
    assert counts[-1] == 50


async def test_storage_failure_is_503_without_details(
    app: FastAPI, client: httpx.AsyncClient, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object) -> None:
        raise StorageError("append failed: INSERT ... ('secret user text')")

    monkeypatch.setattr(app.state.storage, "append", broken)
    response = await _post(client, f"{prefix}down", Message.user("hi"))
    assert response.status_code == 503
    assert "secret" not in response.text
    assert "unavailable" in response.json()["detail"]


async def test_schema_not_at_head_is_503_naming_the_fix(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"
    async with _serve(create_app(url)) as client:
        # The storage checks the schema on first use; take it off head before that.
        engine = sa.create_engine(sync_url(url), poolclass=NullPool)
        with engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM sqlmemory_alembic_version"))
        engine.dispose()

        response = await client.get("/sessions/s/messages")
        assert response.status_code == 503
        assert "sqlmemory migrate" in response.json()["detail"]


async def test_url_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "from-env.db"
    monkeypatch.setenv(URL_ENV, f"sqlite+aiosqlite:///{database}")
    async with _serve(create_app()) as client:
        assert (await _post(client, "s", Message.user("hi"))).status_code == 201
    assert database.is_file()


@pytest.mark.parametrize("depth", [65, 400, 5000])
async def test_json_nested_too_deep_is_refused_before_it_is_stored(
    client: httpx.AsyncClient, prefix: str, depth: int
) -> None:
    # docs/contract/errors.md: JSON nested deeper than 64 is refused, nothing stored, so
    # no later read of the session can fail on it. Deeper than the JSON parser goes, the
    # body itself is refused.
    sid = f"{prefix}deep"
    body = '{"a": ' * depth + "1" + "}" * depth
    wire = messages_to_dicts([Message.user("hi")])[0]
    text = json.dumps([{**wire, "metadata": "DEEP"}]).replace('"DEEP"', body)
    response = await client.post(
        f"/sessions/{sid}/messages", content=text, headers={"content-type": "application/json"}
    )
    assert response.status_code in (400, 422), response.text
    assert await _ids(client, sid) == []
    fine = await _post(client, sid, Message.user("still fine"))
    assert fine.status_code == 201
    assert len(await _ids(client, sid)) == 1


# --- many users: each sees and changes only their own conversations ----------------------


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-header"),
        pytest.param({USER_HEADER: ""}, id="empty"),
        pytest.param({USER_HEADER: "u" * 256}, id="too-long"),
    ],
)
async def test_a_request_without_a_valid_user_is_401_and_writes_nothing(
    app: FastAPI, client: httpx.AsyncClient, prefix: str, headers: dict[str, str]
) -> None:
    sid = f"{prefix}chat"
    requests = [
        ("GET", "/sessions", None),
        ("GET", f"/sessions/{sid}", None),
        ("GET", f"/sessions/{sid}/messages", None),
        ("POST", f"/sessions/{sid}/messages", messages_to_dicts([Message.user("hi")])),
        ("PATCH", f"/sessions/{sid}", {"title": "mine"}),
        ("POST", f"/sessions/{sid}/evict?keep=0", None),
        ("DELETE", f"/sessions/{sid}", None),
    ]
    async with _client(app, None) as anonymous:
        for method, path, body in requests:
            response = await anonymous.request(method, path, json=body, headers=headers)
            assert response.status_code == 401, (method, path, response.text)
            assert USER_HEADER in response.json()["detail"]
    assert await _all_sessions(client, prefix) == []


async def test_another_users_conversation_does_not_exist_for_them(
    client: httpx.AsyncClient, other: httpx.AsyncClient, prefix: str
) -> None:
    sid = f"{prefix}chat"
    private = "ann's private plan"
    messages = [Message.user(private), Message.assistant("noted")]
    assert (await _post(client, sid, *messages)).status_code == 201
    image = {"image": ("cat.png", _png(8, 8), "image/png")}
    assert (await client.post(f"/sessions/{sid}/images", files=image)).status_code == 201
    assert (await client.patch(f"/sessions/{sid}", json={"title": private})).status_code == 200
    mine = (await client.get(f"/sessions/{sid}/messages")).json()
    record = (await client.get(f"/sessions/{sid}")).json()

    absent = await other.get(f"/sessions/{prefix}nothing")
    answers = [
        await other.get(f"/sessions/{sid}/messages"),
        await other.get(f"/sessions/{sid}/messages", params={"window": 2}),
        await other.get(f"/sessions/{sid}/messages", params={"max_tokens": 1000}),
        await other.get(f"/sessions/{sid}"),
        await other.get("/sessions"),
        await other.get("/sessions", params={"prefix": prefix}),
        await other.post(f"/sessions/{sid}/messages", json=messages_to_dicts([Message.user("x")])),
        await other.post(f"/sessions/{sid}/messages", json=mine),  # a "retry" of ann's
        await other.post(f"/sessions/{sid}/images", files=image),
        await other.patch(f"/sessions/{sid}", json={"title": "bob's now"}),
        await other.post(f"/sessions/{sid}/evict", params={"keep": 0}),
        await other.delete(f"/sessions/{sid}"),
    ]
    reads, listed, writes, deletes = answers[:3], answers[4:6], answers[6:10], answers[10:]
    assert [r.json() for r in reads] == [[], [], []]
    assert answers[3].status_code == absent.status_code == 404
    assert answers[3].json()["detail"] == absent.json()["detail"].replace("nothing", "chat")
    assert [r.json() for r in listed] == [{"items": [], "next_cursor": None}] * 2
    # A write that would change ann's conversation: 404, as for a session that does not
    # exist, and the same answer as a read of one.
    assert [r.status_code for r in writes] == [404] * 4
    assert all(r.json() == answers[3].json() for r in writes)
    assert [r.json() for r in deletes] == [{"deleted": 0}, {"deleted": 0}]
    for response in answers:
        assert private not in response.text and ANN not in response.text, response.text

    # Ann's conversation is as she left it.
    assert (await client.get(f"/sessions/{sid}/messages")).json() == mine
    assert (await client.get(f"/sessions/{sid}")).json() == record
    assert await _all_sessions(client, prefix) == [sid]


async def test_two_users_keep_their_own_conversations_apart(
    client: httpx.AsyncClient, other: httpx.AsyncClient, prefix: str
) -> None:
    assert (await _post(client, f"{prefix}ann-1", Message.user("a1"))).status_code == 201
    assert (await _post(other, f"{prefix}bob-1", Message.user("b1"))).status_code == 201
    assert (await _post(client, f"{prefix}ann-2", Message.user("a2"))).status_code == 201
    # Each lists, reads and deletes their own only, however the ids are named.
    assert await _all_sessions(client, prefix) == [f"{prefix}ann-2", f"{prefix}ann-1"]
    assert await _all_sessions(other, prefix) == [f"{prefix}bob-1"]
    assert await _ids(client, f"{prefix}bob-1") == []
    assert (await client.delete(f"/sessions/{prefix}bob-1")).json() == {"deleted": 0}
    assert len(await _ids(other, f"{prefix}bob-1")) == 1
    # Once ann's conversation is gone, its id is free: bob may start one under it.
    assert (await client.delete(f"/sessions/{prefix}ann-1")).json() == {"deleted": 1}
    assert (await _post(other, f"{prefix}ann-1", Message.user("b2"))).status_code == 201
    assert await _all_sessions(other, prefix) == [f"{prefix}ann-1", f"{prefix}bob-1"]
    assert await _all_sessions(client, prefix) == [f"{prefix}ann-2"]
