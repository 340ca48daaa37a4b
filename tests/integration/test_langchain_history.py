"""LangChain on every backend: ``RunnableWithMessageHistory`` over ``SqlMemoryChatHistory``.

The chat model is LangChain's own offline fake, answering from a script; a recorder in front
of it keeps what each call was sent, so the test sees the history the model got. The
``storage`` fixture runs every test on ``SqlStorage`` and on ``AsyncSqlStorage``.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from sqlmemory import FixedWindow, Message, Storage
from sqlmemory.integrations.langchain import SqlMemoryChatHistory, from_langchain, to_langchain
from tests.unit.test_langchain_convert import corpus

# LangChain deprecates RunnableWithMessageHistory for LangGraph; code that uses it is who
# SqlMemoryChatHistory is for.
pytestmark = pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")


def _chain(
    storage: Storage, replies: list[BaseMessage], seen: list[list[BaseMessage]], **kw: Any
) -> Any:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are terse."), MessagesPlaceholder("history"), ("human", "{question}")]
    )

    def record(value: Any) -> Any:
        seen.append(list(value.to_messages()))
        return value

    model = FakeMessagesListChatModel(responses=replies)
    return RunnableWithMessageHistory(
        prompt | RunnableLambda(record) | model,  # type: ignore[arg-type]
        lambda session_id: SqlMemoryChatHistory(session_id, storage, **kw),
        input_messages_key="question",
        history_messages_key="history",
    )


def test_two_turns_keep_the_conversation_in_sql(storage: Storage) -> None:
    seen: list[list[BaseMessage]] = []
    chain = _chain(storage, [AIMessage("Paris."), AIMessage("About 2.1 million.")], seen)
    config = {"configurable": {"session_id": "lc-1"}}

    first = chain.invoke({"question": "Capital of France?"}, config=config)
    second = chain.invoke({"question": "Population?"}, config=config)

    assert (first.content, second.content) == ("Paris.", "About 2.1 million.")
    # The second call was sent the first turn, read back from the database.
    assert [m.content for m in seen[1]] == [
        "You are terse.",
        "Capital of France?",
        "Paris.",
        "Population?",
    ]
    stored = storage.load("lc-1")
    assert [(m.role.value, m.text_content()) for m in stored] == [
        ("user", "Capital of France?"),
        ("assistant", "Paris."),
        ("user", "Population?"),
        ("assistant", "About 2.1 million."),
    ]
    assert stored[1].id == first.id  # the model's message id is the idempotency key


def test_a_window_never_sends_a_tool_result_without_its_call(storage: Storage) -> None:
    history = SqlMemoryChatHistory("lc-2", storage)
    history.add_messages(
        [
            HumanMessage("Weather in Oslo?"),
            AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "c1"}]),
            ToolMessage("-3 C", tool_call_id="c1"),
            AIMessage("It is -3 C."),
        ]
    )
    seen: list[list[BaseMessage]] = []
    chain = _chain(storage, [AIMessage("Wear a coat.")], seen, policy=FixedWindow(2))
    chain.invoke({"question": "And so?"}, config={"configurable": {"session_id": "lc-2"}})

    sent = seen[0][1:-1]  # between the system prompt and the new question
    assert [type(m).__name__ for m in sent] == ["AIMessage", "ToolMessage", "AIMessage"]
    assert isinstance(sent[0], AIMessage) and sent[0].tool_calls[0]["id"] == "c1"
    assert storage.count("lc-2") == 6


def test_every_message_comes_back_equal_after_storage(storage: Storage) -> None:
    history = SqlMemoryChatHistory("lc-3", storage)
    messages = corpus()
    history.add_messages(messages)
    assert history.messages == messages
    # Adding what was read back is a no-op: ids are the idempotency keys.
    storage.append("lc-3", *from_langchain([m for m in messages if m.id is not None]))
    assert storage.count("lc-3") == len(messages)


def test_messages_stored_by_other_code_are_read(storage: Storage) -> None:
    storage.append("lc-4", Message.user("hi"), Message.assistant("hello"))
    history = SqlMemoryChatHistory("lc-4", storage)
    assert [m.content for m in history.messages] == ["hi", "hello"]
    assert to_langchain(storage.load("lc-4")) == history.messages
    history.clear()
    assert history.messages == []
    assert storage.count("lc-4") == 0
