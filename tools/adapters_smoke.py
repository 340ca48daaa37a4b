"""One framework adapter, end to end and offline: run inside a clean virtualenv.

``tools/check_adapters.py`` installs the wheel with one adapter's extra, at the lowest or
the latest framework version supported, and runs this file there, from a directory
outside the checkout, with the extra's name::

    python adapters_smoke.py langchain       # pip install 'sqlmemory[langchain]'
    python adapters_smoke.py pydantic-ai     # pip install 'sqlmemory[pydantic-ai]'
    python adapters_smoke.py openai-agents   # pip install 'sqlmemory[openai-agents]'
    python adapters_smoke.py adk             # pip install 'sqlmemory[adk]'
    python adapters_smoke.py agent-framework # pip install 'sqlmemory[agent-framework]'
    python adapters_smoke.py llama-index     # pip install 'sqlmemory[llama-index]'

Each runs the framework's own offline model twice over a conversation kept in SQLite
(a file in the current directory), the second turn reading the first one back, and checks
what the model was sent and what was stored. It uses only sqlmemory, the framework and
the standard library: nothing else is installed.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from pathlib import Path
from typing import Any

from sqlmemory import FixedWindow, SqlStorage, migrate

URL = f"sqlite:///{Path('adapters-smoke.db').resolve()}"


def langchain() -> None:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.history import RunnableWithMessageHistory

    from sqlmemory.integrations.langchain import SqlMemoryChatHistory

    seen: list[Any] = []

    def record(value: Any) -> Any:
        seen.append(value.to_messages())
        return value

    prompt = ChatPromptTemplate.from_messages(
        [MessagesPlaceholder("history"), ("human", "{question}")]
    )
    model = FakeMessagesListChatModel(responses=[AIMessage("Paris."), AIMessage("2.1 million.")])
    with SqlStorage.from_url(URL) as storage:
        chain = RunnableWithMessageHistory(
            prompt | RunnableLambda(record) | model,
            lambda sid: SqlMemoryChatHistory(sid, storage),
            input_messages_key="question",
            history_messages_key="history",
        )
        config: Any = {"configurable": {"session_id": "smoke-lc"}}
        chain.invoke({"question": "Capital of France?"}, config=config)
        chain.invoke({"question": "Population?"}, config=config)
        assert [m.content for m in seen[1]] == ["Capital of France?", "Paris.", "Population?"]
        history = SqlMemoryChatHistory("smoke-lc", storage, policy=FixedWindow(2))
        history.add_messages(
            [
                AIMessage("", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}]),
                ToolMessage("1", tool_call_id="c1", status="error"),
            ]
        )
        window = history.messages
        assert [type(m) for m in window] == [AIMessage, AIMessage, ToolMessage], window
        assert isinstance(window[2], ToolMessage) and window[2].status == "error"
        assert HumanMessage("x") not in window


def pydantic_ai() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from sqlmemory.integrations.pydantic_ai import from_pydantic_ai, to_pydantic_ai

    seen: list[Any] = []

    def reply(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"It is {last.content}.")])
        call_id = f"call-{len(seen)}"
        return ModelResponse(parts=[ToolCallPart("multiply", {"a": 6, "b": 7}, call_id)])

    agent = Agent(FunctionModel(reply), system_prompt="Use the tool.")

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        return a * b

    with SqlStorage.from_url(URL) as storage:
        for question in ("6 x 7?", "Again?"):
            history = to_pydantic_ai(storage.load("smoke-pa"))
            result = agent.run_sync(question, message_history=history)
            assert result.output == "It is 42.", result.output
            storage.append("smoke-pa", *from_pydantic_ai(result.new_messages()))
        dump = ModelMessagesTypeAdapter.dump_json
        assert dump(to_pydantic_ai(storage.load("smoke-pa"))) == dump(result.all_messages())
        # The second run's first model call was sent the first run's tool result.
        assert any(isinstance(p, ToolReturnPart) for m in seen[2] for p in m.parts), seen[2]


def openai_agents() -> None:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from sqlmemory import AsyncSqlStorage
    from sqlmemory.integrations.openai_agents import SqlMemorySession

    def answer(item_id: str, text: str) -> ResponseOutputMessage:
        content: list[Any] = [ResponseOutputText(type="output_text", text=text, annotations=[])]
        return ResponseOutputMessage(
            id=item_id, type="message", role="assistant", status="completed", content=content
        )

    def call(item_id: str, call_id: str, b: int) -> ResponseFunctionToolCall:
        arguments = f'{{"a": 6, "b": {b}}}'
        return ResponseFunctionToolCall(
            id=item_id, type="function_call", call_id=call_id, name="multiply", arguments=arguments
        )

    class Scripted(Model):
        def __init__(self) -> None:
            self.turns: list[list[Any]] = [
                [call("fc_1", "call_1", 7)],
                [answer("msg_1", "42")],
                [call("fc_2", "call_2", 8)],
                [answer("msg_2", "48")],
            ]
            self.inputs: list[Any] = []

        async def get_response(
            self, system_instructions: Any, input: Any, *a: Any, **k: Any
        ) -> Any:
            self.inputs.append(list(input))
            return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the smoke test does not stream")

    @function_tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    set_tracing_disabled(True)  # offline: no trace export

    async def two_turns() -> None:
        model = Scripted()
        agent = Agent(name="calculator", model=model, tools=[multiply])
        url = URL.replace("sqlite://", "sqlite+aiosqlite://")
        async with AsyncSqlStorage.from_url(url) as storage:
            session = SqlMemorySession("smoke-oa", storage)
            first = await Runner.run(agent, "6 x 7?", session=session)
            second = await Runner.run(agent, "6 x 8?", session=session)
            assert (first.final_output, second.final_output) == ("42", "48")
            items = await session.get_items()
            assert model.inputs[2] == [*items[:4], {"content": "6 x 8?", "role": "user"}]
            assert [i.get("type") for i in items[:4]] == [
                None,
                "function_call",
                "function_call_output",
                "message",
            ]
            assert await session.get_items(limit=2) == items[-2:]
            assert await session.pop_item() == items[-1]

    asyncio.run(two_turns())


def adk() -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions.base_session_service import GetSessionConfig
    from google.genai import types

    from sqlmemory import AsyncSqlStorage
    from sqlmemory.integrations.adk import SqlMemorySessionService

    def call(b: int) -> LlmResponse:
        part = types.Part(function_call=types.FunctionCall(name="multiply", args={"a": 6, "b": b}))
        return LlmResponse(content=types.Content(role="model", parts=[part]))

    def text(words: str) -> LlmResponse:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=words)]))

    script = [call(7), text("42"), call(8), text("48")]
    requests: list[Any] = []

    class Scripted(BaseLlm):
        model: str = "scripted"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            requests.append(llm_request.model_copy(deep=True))
            yield script.pop(0)

    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    async def two_turns() -> None:
        agent = LlmAgent(name="calc", model=Scripted(), tools=[multiply])
        url = URL.replace("sqlite://", "sqlite+aiosqlite://")
        async with AsyncSqlStorage.from_url(url) as storage:
            service = SqlMemorySessionService(storage)
            runner = Runner(app_name="calc", agent=agent, session_service=service)
            session = await service.create_session(app_name="calc", user_id="u1")
            finals = []
            for question in ("6 x 7?", "6 x 8?"):
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for event in runner.run_async(
                    user_id="u1", session_id=session.id, new_message=message
                ):
                    if event.is_final_response():
                        finals.append(event.content.parts[0].text)  # type: ignore[union-attr,index]
            assert finals == ["42", "48"], finals
            assert [c.role for c in requests[2].contents] == [
                "user",
                "model",
                "user",
                "model",
                "user",
            ]
            whole = await service.get_session(app_name="calc", user_id="u1", session_id=session.id)
            tail = await service.get_session(
                app_name="calc",
                user_id="u1",
                session_id=session.id,
                config=GetSessionConfig(num_recent_events=2),
            )
            assert whole is not None and tail is not None
            dumps = [e.model_dump() for e in whole.events]
            assert len(dumps) == 8 and [e.model_dump() for e in tail.events] == dumps[-2:]

    asyncio.run(two_turns())


def agent_framework() -> None:
    from agent_framework import (
        Agent,
        AgentSession,
        BaseChatClient,
        ChatResponse,
        Content,
        FunctionInvocationLayer,
        Message,
        tool,
    )

    from sqlmemory import AsyncSqlStorage
    from sqlmemory.integrations.agent_framework import SqlMemoryHistoryProvider

    def call(b: int) -> ChatResponse:
        content = Content.from_function_call(f"call_{b}", "multiply", arguments={"a": 6, "b": b})
        usage: Any = {"input_token_count": 10, "output_token_count": 2}
        return ChatResponse(messages=[Message("assistant", [content])], usage_details=usage)

    def text(words: str) -> ChatResponse:
        return ChatResponse(messages=[Message("assistant", [words])])

    script = [call(7), text("42"), call(8), text("48")]
    sent: list[list[dict[str, Any]]] = []

    class Scripted(FunctionInvocationLayer[Any], BaseChatClient[Any]):
        async def _reply(self, messages: Any) -> ChatResponse:
            sent.append([m.to_dict() for m in messages])
            return script.pop(0)

        def _inner_get_response(self, *, messages: Any, **kwargs: Any) -> Any:
            return self._reply(messages)

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    async def two_turns() -> None:
        url = URL.replace("sqlite://", "sqlite+aiosqlite://")
        async with AsyncSqlStorage.from_url(url) as storage:
            history = SqlMemoryHistoryProvider(storage)
            agent = Agent(client=Scripted(), tools=[multiply], context_providers=[history])
            session = agent.create_session()
            first = await agent.run("6 x 7?", session=session)
            # The session survives its serialisation: only its id, the history is in SQL.
            session = AgentSession.from_dict(session.to_dict())
            second = await agent.run("6 x 8?", session=session)
            assert (first.text, second.text) == ("42", "48"), (first.text, second.text)
            stored = await history.get_messages(session.session_id)
            assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"] * 2
            # The second run's first model call was sent the first run's four messages.
            roles = ["user", "assistant", "tool", "assistant", "user"]
            assert [m["role"] for m in sent[2]] == roles, sent[2]
            # The run's usage is on its answer where the framework hands it to after_run
            # (not in 1.0.0, whose after_run sees a response without usage).
            usage = (await storage.load(session.session_id))[3].usage
            assert usage is None or usage.input_tokens == 10, usage

    asyncio.run(two_turns())


def llama_index() -> None:
    from llama_index.core.chat_engine import SimpleChatEngine
    from llama_index.core.llms import ChatMessage, MockLLM
    from llama_index.core.memory import ChatMemoryBuffer, Memory

    from sqlmemory.integrations.llama_index import SqlMemoryChatStore, SqlMemoryDBChatStore

    said = [
        ChatMessage(role="user" if n % 2 == 0 else "assistant", content=f"m{n} " * 5)
        for n in range(6)
    ]
    with SqlStorage.from_url(URL) as storage:
        replies = []
        for question in ("Capital of France?", "Population?"):
            memory = ChatMemoryBuffer.from_defaults(
                chat_store=SqlMemoryChatStore(storage), chat_store_key="smoke-li"
            )
            engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)
            replies.append(str(engine.chat(question)))
        # MockLLM echoes its prompt: the second turn was sent the first, read from SQL.
        assert "Capital of France?" in replies[1] and "Population?" in replies[1], replies
        stored = storage.load("smoke-li")
        assert [m.role.value for m in stored] == ["user", "assistant"] * 2
        store = SqlMemoryChatStore(storage)
        assert store.delete_message("smoke-li", 1).content == replies[0]  # type: ignore[union-attr]
        assert [m.content for m in store.get_messages("smoke-li")][::2] == [
            "Capital of France?",
            replies[1],
        ]

        # Memory's store: its archive, directly (every version) and under Memory (which
        # takes another store than its own from llama-index-core 0.14.24 on).
        db_store = SqlMemoryDBChatStore(storage)
        asyncio.run(db_store.add_messages("smoke-db", said))
        archived = asyncio.run(db_store.archive_oldest_messages("smoke-db", 2))
        active = asyncio.run(db_store.get_messages("smoke-db"))
        assert [m.content for m in archived + active] == [m.content for m in said]
        assert len(archived) == 2
        if "chat_store" in inspect.signature(Memory.from_defaults).parameters:
            memory2 = Memory.from_defaults(
                session_id="smoke-mem", chat_store=db_store, token_limit=40, token_flush_size=10
            )
            for message in said * 2:
                memory2.put(message)
            everything, window = memory2.get_all(), memory2.get()
            assert len(everything) == 12 and 0 < len(window) < 12, (len(everything), len(window))
            assert [m.content for m in everything[-len(window) :]] == [m.content for m in window]

    # A tool call and its result round trip, as ToolCallBlock or OpenAI-style kwargs.
    from sqlmemory import Message, ToolCall
    from sqlmemory.integrations.llama_index import from_llama_index, to_llama_index

    call = Message.assistant("", tool_calls=[ToolCall("c1", "multiply", {"a": 6, "b": 7})])
    again = from_llama_index(to_llama_index([call, Message.tool("c1", "42")]))
    calls = [(c.id, c.name, c.arguments) for c in again[0].tool_calls]
    assert calls == [("c1", "multiply", {"a": 6, "b": 7})] and again[1].tool_call_id == "c1"


SMOKES = {
    "langchain": langchain,
    "pydantic-ai": pydantic_ai,
    "openai-agents": openai_agents,
    "adk": adk,
    "agent-framework": agent_framework,
    "llama-index": llama_index,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in SMOKES:
        print(f"usage: adapters_smoke.py {{{','.join(SMOKES)}}}", file=sys.stderr)
        return 2
    migrate.upgrade(URL)
    SMOKES[argv[0]]()
    print(f"{argv[0]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
