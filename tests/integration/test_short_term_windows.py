"""``AsyncShortTermMemory`` and ``ShortTermMemory`` reading windows that keep the system
prompt, through the SQL storages of every backend (docs/contract/windows.md,
docs/contract/storage.md)."""

from __future__ import annotations

from typing import Any

import pytest

from sqlmemory import (
    AsyncShortTermMemory,
    AsyncSqlStorage,
    FixedWindow,
    Message,
    ShortTermMemory,
    TokenWindow,
    ToolCall,
)

SID = "agent"


def conversation() -> list[Message]:
    messages = [Message.system("You are terse.", id="sys")]
    for k in range(8):
        messages += [
            Message.user(f"question {k}", id=f"q{k}"),
            Message.assistant(tool_calls=[ToolCall(f"c{k}", "search")], id=f"call{k}"),
            Message.tool(f"c{k}", f"found {k}", id=f"res{k}"),
            Message.assistant(f"answer {k}", id=f"ans{k}"),
        ]
    # the turn being written: the call is stored, its result is not yet
    messages.append(Message.user("question 8", id="q8"))
    messages.append(Message.assistant(tool_calls=[ToolCall("c8", "search")], id="call8"))
    return messages


WINDOWS: list[tuple[Any, list[str]]] = [
    (FixedWindow(3, keep_system=True), ["sys", "call7", "res7", "ans7", "q8"]),
    (FixedWindow(3, keep_system=True, start_on="user"), ["sys", "q8"]),
    (
        FixedWindow(4, keep_system=True, start_on="user"),
        ["sys", "q7", "call7", "res7", "ans7", "q8"],
    ),
    (
        TokenWindow(40, keep_system=True, start_on="user"),
        ["sys", "q7", "call7", "res7", "ans7", "q8"],
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("policy", "expected"), WINDOWS)
async def test_async_short_term_memory_keeps_the_system_prompt(
    async_storage: AsyncSqlStorage, policy: Any, expected: list[str]
) -> None:
    memory = AsyncShortTermMemory(async_storage, SID, policy)
    await memory.append(*conversation())
    window = await memory.messages()
    assert [m.id for m in window] == expected
    assert window == policy.apply(await async_storage.load(SID))


@pytest.mark.parametrize(("policy", "expected"), WINDOWS)
def test_short_term_memory_keeps_the_system_prompt(
    storage: Any, policy: Any, expected: list[str]
) -> None:
    memory = ShortTermMemory(storage, SID, policy)
    memory.append(*conversation())
    assert [m.id for m in memory.messages()] == expected
