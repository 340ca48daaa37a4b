"""The framework adapters under hostile input: only sqlmemory's errors, and no half writes.

Each test feeds what a buggy caller or a changed framework object can hand over: wrong
types, containers that are no lists, dicts with keys that are no strings, nesting 10,000
deep, ints of 5,000 digits, NaN, lone surrogates, NUL characters, long strings. Every
public call must succeed or raise what its docs name (a :class:`~sqlmemory.errors.SqlMemoryError`,
or the ``TypeError`` of a bad argument), never an ``AttributeError``, a ``KeyError``, a
``RecursionError``, a driver's error or a framework's ``ValidationError``; and a refused
write must leave the stored history as it was, on every backend.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    ToolMessage,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from sqlmemory import AsyncSqlStorage, InMemoryStorage, Message, SqlStorage, TextBlock, ToolCall
from sqlmemory.errors import ConversionError, SqlMemoryError
from sqlmemory.integrations.langchain import SqlMemoryChatHistory, from_langchain, to_langchain
from sqlmemory.integrations.openai_agents import SqlMemorySession
from sqlmemory.integrations.pydantic_ai import from_pydantic_ai, to_pydantic_ai
from tests.formats.hostile import LEAVES

pytestmark = pytest.mark.filterwarnings(
    # A changed SDK object warns as pydantic dumps it; the dump is what the tests check.
    "ignore:Pydantic serializer warnings:UserWarning"
)

SESSION = "hostile"
DB_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PURE_SETTINGS = settings(max_examples=150, deadline=None)


def _nested(depth: int, make: Callable[[Any], Any]) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = make(value)
    return value


class _Thing:
    """An object no converter knows."""


SPECIAL: dict[str, Callable[[], Any]] = {
    "huge int": lambda: 10**5000,
    "huge negative int": lambda: -(10**5000),
    "2**70": lambda: 2**70,
    "nan": lambda: float("nan"),
    "inf": lambda: float("inf"),
    "-inf": lambda: -float("inf"),
    "lone surrogate": lambda: "\ud800",
    "reversed surrogates": lambda: "\udfff\ud800",
    "NUL": lambda: "a\x00b",
    "long string": lambda: "x" * 100_000,
    "blank": lambda: " ",
    "deep list": lambda: _nested(10_000, lambda inner: [inner]),
    "deep dict": lambda: _nested(10_000, lambda inner: {"a": inner}),
}
"""Values made on demand, by name: hypothesis prints the strategies that hold values."""


def _special(name: str) -> Any:
    return SPECIAL[name]()


scalars = st.one_of(
    LEAVES,
    st.builds(_Thing),
    st.sampled_from(sorted(SPECIAL)).map(_special),
)
keys = st.one_of(
    st.text(max_size=5), st.integers(), st.none(), st.just(("a", 1)), st.just("\ud800")
)
hostile = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(keys, inner, max_size=3),
        st.frozensets(st.integers(), max_size=2),
        st.tuples(inner),
    ),
    max_leaves=8,
)


def _allowed(exc: BaseException, *also: type[BaseException]) -> bool:
    """Whether ``exc`` is one a public call may raise: sqlmemory's, or one of ``also``
    as raised by sqlmemory itself (a framework's ``ValidationError`` is a ``ValueError``
    too, and is not allowed)."""
    if isinstance(exc, SqlMemoryError):
        return True
    return type(exc) in also


def _check(exc: BaseException, *also: type[BaseException]) -> None:
    assert _allowed(exc, *also), f"{type(exc).__module__}.{type(exc).__name__}: {exc}"[:500]


def _wrote(write: Callable[[], object], engine: sa.Engine) -> bool:
    """Run ``write`` (warnings ignored): ``True`` when it wrote; when it raised, check the
    error is allowed and the session is as it was, and give ``False``."""
    stored = SqlStorage(engine).load(SESSION)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            write()
        except Exception as exc:
            _check(exc)
            assert SqlStorage(engine).load(SESSION) == stored
            return False
    return True


def _changed(obj: Any, **fields: Any) -> Any:
    """``obj`` with ``fields`` set past the framework's validation, as code may do."""
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
    return obj


# -- OpenAI Agents SDK ---------------------------------------------------------------------

BASE_ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "6 x 7?"},
    {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    {"type": "function_call", "call_id": "c1", "name": "mul", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "42"},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "42.", "annotations": []}],
    },
]


@st.composite
def spoiled_items(draw: st.DrawFn) -> dict[Any, Any]:
    """A Responses item with one field replaced, or one field added, by a hostile value."""
    item: dict[Any, Any] = dict(draw(st.sampled_from(BASE_ITEMS)))
    key = draw(st.sampled_from([*item, "id", "status"]) | keys)
    item[key] = draw(hostile)
    return item


def _sdk_items() -> list[Callable[[], Any]]:
    text = ResponseOutputText(text="42.", type="output_text", annotations=[])
    return [
        lambda: ResponseFunctionToolCall(
            arguments="{}", call_id="c1", name="mul", type="function_call"
        ),
        lambda: ResponseOutputMessage(
            id="m1", content=[text], role="assistant", status="completed", type="message"
        ),
        lambda: ResponseReasoningItem(id="rs_1", summary=[], type="reasoning"),
    ]


@st.composite
def spoiled_sdk_items(draw: st.DrawFn) -> Any:
    """An SDK output item with a field set, past validation, to a hostile value."""
    item = draw(st.sampled_from(_sdk_items()))()
    field = draw(st.sampled_from(sorted(type(item).model_fields)))
    return _changed(item, **{field: draw(hostile)})


agents_items = st.one_of(
    hostile,
    st.lists(
        st.one_of(spoiled_items(), spoiled_sdk_items(), st.sampled_from(BASE_ITEMS), hostile),
        max_size=4,
    ),
)
limits = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(["2**70", "nan", "inf"]).map(_special),
    st.sampled_from([-(2**70), 1.5, "3", b"1", (2,)]),
)


@pytest.fixture(params=["async", "sync"])
def agents_storage(
    request: pytest.FixtureRequest, engine: sa.Engine, backend: str, databases: Any
) -> Iterator[tuple[BlockingPortal, AsyncSqlStorage | SqlStorage]]:
    """A portal (an event loop in a thread) and the session's storage: an
    ``AsyncSqlStorage`` whose engine lives on that loop, or a ``SqlStorage``."""
    with start_blocking_portal("asyncio") as portal:
        if request.param == "sync":
            yield portal, SqlStorage(engine)
            return
        async_engine = portal.call(_create_async_engine, databases.async_url(backend))
        try:
            yield portal, AsyncSqlStorage(async_engine)
        finally:
            portal.call(async_engine.dispose)


async def _create_async_engine(url: str) -> Any:
    from sqlalchemy.ext.asyncio import create_async_engine

    return create_async_engine(url)


def _seeded(portal: BlockingPortal, session: SqlMemorySession) -> list[Any]:
    portal.call(session.clear_session)
    portal.call(session.add_items, [BASE_ITEMS[0], BASE_ITEMS[2], BASE_ITEMS[3]])
    return portal.call(session.get_items)


@DB_SETTINGS
@given(items=agents_items)
def test_add_items_stores_all_or_refuses_with_a_conversion_error(
    agents_storage: tuple[BlockingPortal, Any], engine: sa.Engine, items: Any
) -> None:
    portal, storage = agents_storage
    session = SqlMemorySession(SESSION, storage)
    before = _seeded(portal, session)
    if not _wrote(lambda: portal.call(session.add_items, items), engine):
        return
    after = portal.call(session.get_items)
    assert after[: len(before)] == before
    popped = portal.call(session.pop_item)
    assert popped == after[-1]


@DB_SETTINGS
@given(limit=limits)
def test_get_items_takes_an_int_limit_or_refuses_it_with_a_type_error(
    agents_storage: tuple[BlockingPortal, Any], limit: Any
) -> None:
    portal, storage = agents_storage
    session = SqlMemorySession(SESSION, storage)
    everything = _seeded(portal, session)
    try:
        items = portal.call(session.get_items, limit)
    except Exception as exc:
        _check(exc, TypeError)
        assert isinstance(limit, (bool, float, str, bytes, tuple))
        return
    assert limit is None or (isinstance(limit, int) and not isinstance(limit, bool))
    if limit is None:
        assert items == everything
    else:
        assert items == (everything[max(len(everything) - limit, 0) :] if limit > 0 else [])


@PURE_SETTINGS
@given(
    session_id=st.one_of(hostile, st.text(max_size=300)),
    settings_value=st.one_of(
        hostile, st.fixed_dictionaries({"limit": limits}), st.dictionaries(keys, limits)
    ),
)
def test_the_session_constructor_refuses_bad_arguments_with_type_or_value_errors(
    session_id: Any, settings_value: Any
) -> None:
    try:
        session = SqlMemorySession(session_id, InMemoryStorage(), session_settings=settings_value)
    except Exception as exc:
        _check(exc, TypeError)
        return
    try:
        items = asyncio.run(session.get_items())
    except Exception as exc:  # a SessionSettings whose limit is not an int
        _check(exc, TypeError)
        return
    assert items == []


@pytest.mark.parametrize("field", ["role", "status"])
@pytest.mark.parametrize("value", ["huge int", "deep dict"])
def test_add_items_refuses_an_item_with_a_value_json_cannot_show(field: str, value: str) -> None:
    session = SqlMemorySession(SESSION, InMemoryStorage())
    sdk_item = _changed(_sdk_items()[1](), **{field: _special(value)})
    in_summary = _changed(_sdk_items()[2](), summary=[_Thing()])
    for item in (sdk_item, {**BASE_ITEMS[0], field: _special(value)}, in_summary):
        with pytest.raises(ConversionError, match="item 0"):
            asyncio.run(session.add_items([item]))
    assert asyncio.run(session.get_items()) == []


@pytest.mark.parametrize("storage", [None, 1, "sqlite:///x.db", object()])
def test_the_session_refuses_what_is_no_storage(storage: Any) -> None:
    with pytest.raises(TypeError, match="storage must be a sqlmemory storage"):
        SqlMemorySession(SESSION, storage)


# -- LangChain -----------------------------------------------------------------------------

LC_FIELDS = [
    "content",
    "additional_kwargs",
    "response_metadata",
    "name",
    "id",
    "tool_calls",
    "invalid_tool_calls",
    "usage_metadata",
    "tool_call_id",
    "status",
    "artifact",
    "role",
    "type",
]


def _lc_bases() -> list[Callable[[], BaseMessage]]:
    return [
        lambda: HumanMessage("hi"),
        lambda: HumanMessage([{"type": "text", "text": "hi"}, "there"]),
        lambda: AIMessage("", tool_calls=[{"name": "mul", "args": {"a": 6}, "id": "c1"}]),
        lambda: ToolMessage("42", tool_call_id="c1"),
        lambda: ChatMessage("hi", role="developer"),
    ]


@st.composite
def lc_messages(draw: st.DrawFn) -> BaseMessage:
    """A LangChain message made with a hostile field, or changed to hold one after."""
    message = draw(st.sampled_from(_lc_bases()))()
    field = draw(st.sampled_from([f for f in LC_FIELDS if hasattr(message, f)]))
    value = draw(
        st.one_of(
            hostile,
            st.lists(st.dictionaries(st.sampled_from(["type", "text", "id", "args"]), hostile)),
        )
    )
    try:
        return type(message).model_validate({**message.model_dump(), field: value})
    except Exception:  # LangChain refuses it (in its own ways): change it after
        return _changed(message, **{field: value})


lc_inputs = st.one_of(hostile, st.lists(st.one_of(lc_messages(), hostile), max_size=3))


@DB_SETTINGS
@given(messages=lc_inputs)
def test_a_chat_history_stores_all_or_refuses_with_a_conversion_error(
    storage: Any, engine: sa.Engine, messages: Any
) -> None:
    history = SqlMemoryChatHistory(SESSION, storage)
    history.clear()
    history.add_messages([HumanMessage("hi"), AIMessage("hello")])
    if not _wrote(lambda: history.add_messages(messages), engine):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read = history.messages
    assert [m.content for m in read[:2]] == ["hi", "hello"]


@pytest.mark.parametrize("value", ["huge int", "deep list", "NUL"])
@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: ChatMessage("hi", role="user"), "role"),
        (lambda: HumanMessage("hi"), "type"),
        (lambda: AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}]), "tool_calls"),
    ],
)
def test_from_langchain_names_a_bad_field_without_showing_its_value(
    make: Callable[[], BaseMessage], field: str, value: str
) -> None:
    message = _changed(make(), **{field: _special(value)})
    with pytest.raises(ConversionError, match="message 0"):
        from_langchain([message])


@PURE_SETTINGS
@given(messages=lc_inputs)
def test_from_langchain_converts_or_raises_a_conversion_error(messages: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            converted = from_langchain(messages)
        except Exception as exc:
            _check(exc)
            return
        assert len(to_langchain(converted)) == len(converted)


@st.composite
def hand_made_messages(draw: st.DrawFn, key: str, fields: list[str]) -> Message:
    """A sqlmemory message whose adapter extras (``extras[key]``) were written by hand."""
    own = draw(st.dictionaries(st.sampled_from(fields), hostile, max_size=3))
    make = draw(
        st.sampled_from(
            [
                lambda e: Message.user("hi", extras=e),
                lambda e: Message.system("be brief", extras=e),
                lambda e: Message.tool("c1", "42", extras=e),
                lambda e: Message.assistant("42", extras=e),
                lambda e: Message.assistant([TextBlock("a", extras=e)]),
                lambda e: Message.assistant(tool_calls=[ToolCall("c1", "mul", {}, extras=e)]),
            ]
        )
    )
    try:
        return make({key: own})
    except SqlMemoryError:  # extras that are no JSON: a Message never holds them
        return make({key: {}})


@PURE_SETTINGS
@given(
    messages=st.lists(
        hand_made_messages(
            "langchain", [*LC_FIELDS, "type", "invalid", "in_content", "plain", "args"]
        ),
        max_size=3,
    )
)
def test_to_langchain_of_hand_made_extras_converts_or_raises_a_conversion_error(
    messages: list[Message],
) -> None:
    try:
        to_langchain(messages)
    except Exception as exc:
        _check(exc)


@pytest.mark.parametrize(
    "own",
    [{"additional_kwargs": None}, {"additional_kwargs": 5}, {"name": 5}, {"usage_metadata": "x"}],
)
def test_to_langchain_refuses_extras_langchain_refuses(own: dict[str, Any]) -> None:
    with pytest.raises(ConversionError, match="message 0: langchain refuses it"):
        to_langchain([Message.assistant("42", extras={"langchain": own})])


@pytest.mark.parametrize("value", [None, 1, "hi", b"hi", {"a": 1}, _Thing()])
@pytest.mark.parametrize(
    "convert", [to_langchain, from_langchain, to_pydantic_ai, from_pydantic_ai]
)
def test_what_is_no_list_of_messages_is_refused(value: Any, convert: Any) -> None:
    with pytest.raises(ConversionError, match="must be a list of messages"):
        convert(value)


@pytest.mark.parametrize(
    "make", [lambda: None, lambda: 1, lambda: AsyncSqlStorage.from_url("sqlite+aiosqlite://")]
)
def test_a_chat_history_refuses_what_is_no_sync_storage(make: Callable[[], Any]) -> None:
    with pytest.raises(TypeError, match="must be a sync sqlmemory storage"):
        SqlMemoryChatHistory(SESSION, make())


# -- Pydantic AI ---------------------------------------------------------------------------

PA_FIELDS = ["content", "args", "tool_name", "tool_call_id", "part_kind", "model_name"]


def _pa_bases() -> list[Callable[[], Any]]:
    return [
        lambda: SystemPromptPart("be brief"),
        lambda: UserPromptPart("hi"),
        lambda: UserPromptPart(["hi"]),
        lambda: ToolReturnPart("mul", "42", "c1"),
        lambda: TextPart("42"),
        lambda: ThinkingPart("hmm"),
        lambda: ToolCallPart("mul", {"a": 6}, "c1"),
    ]


PART_KINDS = ["system-prompt", "user-prompt", "tool-return", "retry-prompt", "text", "tool-call"]


@st.composite
def pa_messages(draw: st.DrawFn) -> Any:
    """A request or a response holding a part with a hostile field."""
    part = draw(st.sampled_from(_pa_bases()))()
    field = draw(st.sampled_from([f for f in PA_FIELDS if hasattr(part, f)]))
    value = draw(hostile | st.sampled_from(PART_KINDS))
    _changed(part, **{field: value})
    response = isinstance(part, (TextPart, ThinkingPart, ToolCallPart))
    message = ModelResponse([part]) if response else ModelRequest([part])
    if draw(st.booleans()):
        _changed(message, parts=draw(hostile))
    return message


pa_inputs = st.one_of(hostile, st.lists(st.one_of(pa_messages(), hostile), max_size=3))


@DB_SETTINGS
@given(messages=pa_inputs)
def test_a_pydantic_ai_history_stores_all_or_refuses_with_a_conversion_error(
    storage: Any, engine: sa.Engine, messages: Any
) -> None:
    storage.clear(SESSION)
    storage.append(SESSION, Message.user("hi"))
    if not _wrote(lambda: storage.append(SESSION, *from_pydantic_ai(messages)), engine):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            to_pydantic_ai(storage.load(SESSION))
        except Exception as exc:
            _check(exc)


@PURE_SETTINGS
@given(
    messages=st.lists(
        hand_made_messages(
            "pydantic_ai",
            ["request", "response", "part", "args", "content", "part_kind", "tool_name"],
        ),
        max_size=3,
    )
)
def test_to_pydantic_ai_of_hand_made_extras_converts_or_raises_a_conversion_error(
    messages: list[Message],
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            to_pydantic_ai(messages)
        except Exception as exc:
            _check(exc)
