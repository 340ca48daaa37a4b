"""The ``sqlmemory`` command: run the shipped migrations, inspect them, try a demo.

::

    sqlmemory migrate [--url URL] [--revision REV]   bring the sqlmemory tables to head
    sqlmemory current [--url URL]                    print the database's revision
    sqlmemory check   [--url URL]                    fail when tables and models differ
    sqlmemory demo    [--url URL] [--keep]           store a conversation, show windows

The URL defaults to ``$SQLMEMORY_URL``, else ``sqlite:///sqlmemory.db``. Errors print one
line on stderr (``sqlmemory: error: ...``) and exit with status 1.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

from sqlmemory.errors import SchemaError, SqlMemoryError, missing_driver_message

if TYPE_CHECKING:
    from sqlmemory.types import Message

__all__ = ["DEFAULT_URL", "URL_ENV", "main"]

PROG = "sqlmemory"
URL_ENV = "SQLMEMORY_URL"
DEFAULT_URL = "sqlite:///sqlmemory.db"

_Command = Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sqlmemory`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success, 1 when the command failed (one line on stderr),
        2 for a usage error, 130 when interrupted.
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error that argparse has reported
        return exc.code if isinstance(exc.code, int) else 2
    args.url = args.url or os.environ.get(URL_ENV) or DEFAULT_URL
    command: _Command = args.func
    try:
        return command(args)
    except KeyboardInterrupt:
        return _fail("interrupted", status=130)
    except ModuleNotFoundError as exc:
        return _fail(missing_driver_message(exc))
    except SchemaError as exc:  # already says what is wrong and what to run
        return _fail(f"{_redact(args.url)}: {_one_line(str(exc))}")
    except (SqlMemoryError, SQLAlchemyError) as exc:
        return _fail(f"{args.command} on {_redact(args.url)} failed: {_reason(exc)}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Short-term conversation memory for LLM agents, persisted in SQL.",
        epilog=f"The database URL defaults to ${URL_ENV}, else {DEFAULT_URL}.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, summary: str, func: _Command) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=summary, description=summary)
        command.add_argument(
            "--url",
            help=f"SQLAlchemy database URL (default: ${URL_ENV}, else {DEFAULT_URL})",
        )
        command.set_defaults(func=func)
        return command

    migrate = add("migrate", "bring the sqlmemory tables to the head revision", _migrate)
    migrate.add_argument("--revision", default="head", help="revision to reach (default: head)")
    add("current", "print the database's sqlmemory schema revision", _current)
    add("check", "fail when the sqlmemory tables differ from the models", _check)
    demo = add("demo", "store a short conversation and print the windows policies pick", _demo)
    demo.add_argument("--keep", action="store_true", help="keep the demo session (default: clear)")
    return parser


# -- errors, in one line ----------------------------------------------------------------------


def _fail(message: str, status: int = 1) -> int:
    sys.stdout.flush()
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return status


def _redact(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # unparsable: never echo what looks like a password
        return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def _one_line(text: str) -> str:
    # SQLAlchemy appends the statement, its parameters and a documentation link on lines
    # of their own; the driver's message is what tells the user what went wrong.
    skip = ("[SQL:", "[parameters:", "(Background on this error")
    lines = (line.strip() for line in text.splitlines())
    return " ".join(line for line in lines if line and not line.startswith(skip))


def _reason(exc: BaseException) -> str:
    """Describe ``exc`` in one line: the driver's message when a driver failed."""
    cause: BaseException | None = exc
    for _ in range(10):  # a bounded walk down the __cause__ chain
        if cause is None:
            break
        if isinstance(cause, DBAPIError) and cause.orig is not None:
            return _one_line(f"{type(cause.orig).__name__}: {cause.orig}")
        if isinstance(cause, SQLAlchemyError):
            return _one_line(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__
    return _one_line(str(exc)) or type(exc).__name__


# -- migrate, current, check ------------------------------------------------------------------


def _migrate(args: argparse.Namespace) -> int:
    from sqlmemory import migrate

    before = migrate.current(args.url)
    migrate.upgrade(args.url, args.revision)
    after = migrate.current(args.url)
    if before == after:
        print(f"{_redact(args.url)}: sqlmemory schema already at revision {after or 'base'}")
    else:
        print(f"{_redact(args.url)}: sqlmemory schema upgraded from {before or 'base'} to {after}")
    return 0


def _current(args: argparse.Namespace) -> int:
    from sqlmemory import migrate

    revision, head = migrate.current(args.url), migrate.head()
    if revision is None:
        state = "no sqlmemory schema; run `sqlmemory migrate`"
    elif revision == head:
        state = f"{revision} (head)"
    else:
        state = f"{revision} (head is {head}; run `sqlmemory migrate`)"
    print(f"{_redact(args.url)}: {state}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from sqlmemory import migrate

    migrate.check(args.url)
    print(f"{_redact(args.url)}: sqlmemory schema at head {migrate.head()}, matching the models")
    return 0


# -- demo -------------------------------------------------------------------------------------


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


def _summary(message: Message, width: int = 76) -> str:
    """One line: attachments first (so truncation never hides them), text, tool calls."""
    from sqlmemory.types import DocumentBlock, ImageBlock

    parts: list[str] = []
    if message.tool_call_id is not None:
        parts.append(f"<- [{message.tool_call_id}]")
    for block in message.content:
        if isinstance(block, ImageBlock):
            size = f"{block.width}x{block.height}" if block.width and block.height else None
            source = f"{len(block.data)} bytes" if block.data else block.url or block.file_id
            detail = size or source
            parts.append(f"[{block.media_type} image, {detail}]")
        elif isinstance(block, DocumentBlock):
            source = f"{len(block.data)} bytes" if block.data else block.url or block.file_id
            parts.append(f"[{block.media_type} document, {source}]")
    if message.text_content():
        parts.append(" ".join(message.text_content().split()))
    parts.extend(f"-> [{c.id}] {c.name}({c.arguments_json})" for c in message.tool_calls)
    text = " ".join(parts)
    return text if len(text) <= width else text[: width - 3] + "..."


def _positions(numbers: Sequence[int]) -> str:
    return ", ".join(str(n) for n in numbers) if numbers else "none"


def _demo(args: argparse.Namespace) -> int:
    from sqlmemory import migrate
    from sqlmemory.policy import FixedWindow, Policy, TokenWindow, estimate_tokens, groups
    from sqlmemory.storage.sql import SqlStorage

    url = args.url
    migrate.upgrade(url)
    print(f"{_redact(url)}: sqlmemory schema at revision {migrate.current(url)}")

    session_id = f"demo-{uuid.uuid4().hex[:8]}"
    with SqlStorage.from_url(migrate.sync_url(url)) as storage:
        storage.append(session_id, *_demo_conversation())
        history = storage.load(session_id)
        seq = {message.id: number for number, message in enumerate(history, start=1)}
        tokens = {message.id: estimate_tokens(message) for message in history}

        print(f"\nSession {session_id}: {len(history)} messages stored and loaded back")
        print(f"\n{'seq':>4}  {'role':<9}  {'tokens':>6}  content")
        for message in history:
            role = message.role.value
            print(f"{seq[message.id]:>4}  {role:<9}  {tokens[message.id]:>6}  {_summary(message)}")
        grouped = " ".join(
            "[" + " ".join(str(seq[m.id]) for m in group) + "]" for group in groups(history)
        )
        print(f"\nTotal {sum(tokens.values())} tokens (estimated) in groups {grouped}")
        print("A tool call and its results form one group: a window never splits them.\n")

        windows: dict[str, tuple[Policy, str]] = {
            "FixedWindow(2)": (FixedWindow(2), "the 2 newest groups"),
            "TokenWindow(200)": (TokenWindow(200), "the newest groups that fit 200 tokens"),
        }
        for name, (policy, meaning) in windows.items():
            window = storage.load(session_id, policy=policy)
            numbers = [seq[message.id] for message in window]
            total = sum(tokens[message.id] for message in window)
            print(f"{name}, {meaning}: messages {_positions(numbers)} ({total} tokens)")

        if args.keep:
            print(f"\nKept session {session_id} (sqlmemory_* tables of {_redact(url)})")
        else:
            deleted = storage.clear(session_id)
            print(f"\nCleared session {session_id} ({deleted} messages); --keep keeps it")
    return 0
