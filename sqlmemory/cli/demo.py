"""``sqlmemory demo``: store a short conversation and print the windows policies pick."""

from __future__ import annotations

import io
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from sqlmemory._urls import redact
from sqlmemory.cli._command import Command, open_engine, open_storage, url_option
from sqlmemory.cli.render import Shown, message_columns, table

if TYPE_CHECKING:
    from sqlmemory.types import Message

__all__ = ["demo"]


def _demo_png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.linear_gradient("L").resize((64, 64)).convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def _demo_conversation() -> list[Message]:
    from sqlmemory.types import ImageBlock, Message, TextBlock, ToolCall

    question = "I took this photo in Oslo. What is the weather there now?"
    weather = ToolCall("call_1", "get_weather", {"city": "Oslo", "unit": "celsius"})
    return [
        Message.system("You are a concise travel assistant. Use tools for live data."),
        Message.user([TextBlock(question), ImageBlock(data=_demo_png(), media_type="image/png")]),
        Message.assistant("Checking.", tool_calls=[weather]),
        Message.tool("call_1", '{"temperature": 7, "unit": "celsius", "sky": "light rain"}'),
        Message.assistant("It is 7 °C in Oslo with light rain: take a jacket."),
        Message.user("Will it be dry tomorrow?"),
    ]


def _positions(numbers: Sequence[int]) -> str:
    return ", ".join(str(n) for n in numbers) if numbers else "none"


@click.command(cls=Command)
@url_option
@click.option("--keep", is_flag=True, help="Keep the demo session (by default it is deleted).")
def demo(url: str, keep: bool) -> None:
    """Store a sample conversation and show windows.

    Migrates the database, stores a short conversation, and prints what the window
    policies pick. The conversation has a tool call and an image; the output shows each message's
    estimated tokens, the atomic groups, and what FixedWindow and TokenWindow keep.
    """
    from sqlmemory import migrate
    from sqlmemory.policy import FixedWindow, Policy, TokenWindow, estimate_tokens, groups

    engine = open_engine(url, read_only=False)
    try:
        migrate.upgrade(engine)
        revision = migrate.current(engine)
    finally:
        engine.dispose()
    shown = redact(engine.url)
    click.echo(f"{shown}: sqlmemory schema at revision {revision}")

    with open_storage(url, read_only=False) as storage:
        session_id = f"demo-{uuid.uuid4().hex[:8]}"
        storage.append(session_id, *_demo_conversation())
        history = storage.load(session_id)
        seq = {message.id: number for number, message in enumerate(history, start=1)}
        tokens = {message.id: estimate_tokens(message) for message in history}

        click.echo(f"\nSession {session_id}: {len(history)} messages stored and loaded back\n")
        rows = [Shown(seq[message.id], message) for message in history]
        for line in table(message_columns(with_time=False), rows):
            click.echo(line)
        grouped = " ".join(
            "[" + " ".join(str(seq[m.id]) for m in group) + "]" for group in groups(history)
        )
        click.echo(f"\nTotal {sum(tokens.values())} tokens (estimated) in groups {grouped}")
        click.echo("A tool call and its results form one group: a window never splits them.\n")

        windows: dict[str, tuple[Policy, str]] = {
            "FixedWindow(2)": (FixedWindow(2), "the 2 newest groups"),
            "TokenWindow(200)": (TokenWindow(200), "the newest groups that fit 200 tokens"),
            "FixedWindow(2, keep_system=True, start_on='user')": (
                FixedWindow(2, keep_system=True, start_on="user"),
                "the system prompt, then the 2 newest groups, starting at a user turn",
            ),
            "TokenWindow(200, keep_system=True)": (
                TokenWindow(200, keep_system=True),
                "the system prompt, then the newest groups that fit what is left",
            ),
        }
        for name, (policy, meaning) in windows.items():
            window = storage.load(session_id, policy=policy)
            numbers = [seq[message.id] for message in window]
            total = sum(tokens[message.id] for message in window)
            click.echo(f"{name}, {meaning}: messages {_positions(numbers)} ({total} tokens)")

        if keep:
            click.echo(f"\nKept session {session_id} (sqlmemory_* tables of {shown}); see it with")
            click.echo(f"  sqlmemory show {session_id} --url {shown}")
        else:
            deleted = storage.clear(session_id)
            click.echo(f"\nCleared session {session_id} ({deleted} messages); --keep keeps it")
