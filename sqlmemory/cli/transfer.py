"""``sqlmemory export`` and ``import``: sessions as JSON Lines, one message a line.

Each line is ``{"session_id": ..., "message": ...}`` where ``message`` is the wire form
(:meth:`Message.to_dict <sqlmemory.types.Message.to_dict>`), a session's messages in
order. A session with a title, metadata, an owner or a parent has a line
``{"session_id": ..., "session": {"title": ..., "metadata": {...}, "owner": ...}}`` before
them (``owner`` only when it has one; ``parent_id`` and ``forked_at``, its lineage, only
for a fork). Import
appends the messages; a message whose id is already stored with the same content is
skipped, and a record already holding the title and metadata is left alone, so importing
a file twice changes nothing, and an interrupted import is finished by running it again.

Examples:
    >>> from sqlmemory import Message
    >>> line = export_line("chat-1", Message.user("hi", id="m1"))
    >>> record = parse_line(line, "chat.jsonl", 1)
    >>> record.session_id, record.message.id, record.message.text_content()
    ('chat-1', 'm1', 'hi')
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from sqlmemory._urls import redact
from sqlmemory.cli._command import CliError, Command, open_storage, url_option
from sqlmemory.cli.render import count
from sqlmemory.cli.sessions import require_sessions
from sqlmemory.storage.records import UNSET

if TYPE_CHECKING:
    from sqlmemory.storage import SessionInfo, SqlStorage
    from sqlmemory.types import FrozenDict, Message

__all__ = [
    "Record",
    "SessionLine",
    "export",
    "export_line",
    "import_",
    "parse_line",
    "session_line",
]

BATCH_MESSAGES = 100
"""Messages appended in one transaction by ``import`` (fewer when they are large)."""
BATCH_BYTES = 16 * 1024 * 1024
"""Bytes of JSON lines after which ``import`` writes the batch it holds."""


def export_line(session_id: str, message: Message) -> str:
    """One JSON Lines record, newline included.

    U+2028 and U+2029 are escaped: some line readers take them for line breaks.
    """
    record = {"session_id": session_id, "message": message.to_dict()}
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n"


def session_line(info: SessionInfo) -> str | None:
    """The line of a session's title, metadata, owner and lineage (``None`` when it has
    none)."""
    if info.title is None and not info.metadata and info.owner is None and not info.parent_id:
        return None
    fields: dict[str, Any] = {"title": info.title, "metadata": info.metadata}
    if info.owner is not None:
        fields["owner"] = info.owner
    if info.parent_id is not None:
        fields["parent_id"] = info.parent_id
        fields["forked_at"] = info.forked_at
    record = {"session_id": info.session_id, "session": fields}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class Record:
    """One message line of an export file, read back."""

    line: int
    session_id: str
    message: Message
    size: int


@dataclass(frozen=True)
class SessionLine:
    """One session line of an export file (its title, metadata, owner and lineage), read
    back."""

    line: int
    session_id: str
    title: str | None
    metadata: FrozenDict
    owner: str | None = None
    parent_id: str | None = None
    forked_at: str | None = None


_SESSION_FIELDS = {"title", "metadata", "owner", "parent_id", "forked_at"}


def _session_fields(value: object) -> tuple[Any, ...]:
    from sqlmemory.storage.checks import check_session_id
    from sqlmemory.storage.lineage import check_fork
    from sqlmemory.storage.owners import check_owner_filter
    from sqlmemory.storage.records import check_metadata, check_title

    if not isinstance(value, dict) or not set(value) <= _SESSION_FIELDS:
        raise ValueError('"session" must be {"title": ..., "metadata": {...}, "owner": ...}')
    parent = value.get("parent_id")
    forked_at = value.get("forked_at")
    if parent is None and forked_at is not None:
        raise ValueError('"forked_at" needs a "parent_id"')
    if parent is not None:
        parent = check_session_id(parent)
        forked_at = check_fork(parent, parent, forked_at)[2]
    return (
        check_title(value.get("title")),
        check_metadata(value.get("metadata")),
        check_owner_filter(value.get("owner")),
        parent,
        forked_at,
    )


def parse_line(text: str, source: str, number: int) -> Record | SessionLine:
    """Read one line of an export file.

    Raises:
        CliError: the line is not a record; the message names ``source:number``.
    """
    from sqlmemory.storage.checks import check_session_id
    from sqlmemory.types import Message

    where = f"{source}:{number}"
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise CliError(f"{where}: JSON nested too deep") from None
    keys = set(document) if isinstance(document, dict) else set()
    if keys not in ({"session_id", "message"}, {"session_id", "session"}):
        raise CliError(
            f'{where}: expected {{"session_id": ..., "message": ...}} '
            f'or {{"session_id": ..., "session": ...}}'
        )
    try:
        session_id = check_session_id(document["session_id"])
        if "session" in keys:
            return SessionLine(number, session_id, *_session_fields(document["session"]))
        message = Message.from_dict(document["message"])
    except (TypeError, ValueError) as exc:
        raise CliError(f"{where}: {exc}") from None
    return Record(number, session_id, message, len(text))


def _lines(lines: Iterable[str], source: str) -> Iterator[Record | SessionLine]:
    for number, text in enumerate(lines, start=1):
        if text.strip():
            yield parse_line(text, source, number)


def _records(lines: Iterable[str], source: str) -> Iterator[Record]:
    for parsed in _lines(lines, source):
        if isinstance(parsed, Record):
            yield parsed


class _Progress:
    """A progress bar on a terminal (stderr), nothing when the output is piped."""

    def __init__(self, length: int, label: str) -> None:
        self._bar: Any = None
        if length and sys.stderr.isatty():
            self._bar = click.progressbar(length=length, label=label, file=sys.stderr)

    def __enter__(self) -> Callable[[int], None]:
        if self._bar is None:
            return lambda _steps: None
        bar = self._bar.__enter__()
        return bar.update  # type: ignore[no-any-return]

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc_info)


@contextlib.contextmanager
def _output(out: str) -> Iterator[IO[str]]:
    """``out`` opened for writing; a file appears complete, or not at all."""
    if out == "-":
        yield sys.stdout
        return
    target = Path(out)
    if not target.parent.is_dir():
        raise CliError(f"cannot write {out}: no directory {str(target.parent)!r}")
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.", delete=False
    ) as stream:
        try:
            yield stream
        except BaseException:
            stream.close()
            os.unlink(stream.name)
            raise
    os.replace(stream.name, target)


@click.command(cls=Command)
@url_option
@click.argument("session_ids", nargs=-1, metavar="[SID]...")
@click.option("--prefix", help="Export the sessions whose id starts with PREFIX.")
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The JSON Lines file to write ('-' for stdout).",
)
def export(url: str, session_ids: tuple[str, ...], prefix: str | None, out: str) -> None:
    """Write sessions to a JSON Lines file.

    All sessions, those starting with --prefix, or the SIDs given. Each line is
    {"session_id": ..., "message": ...}, the message in its wire form (Message.to_dict()),
    each session's messages oldest first. The file is written under a temporary name and
    renamed when complete. `sqlmemory import` reads it back.
    """
    if session_ids and prefix is not None:
        raise click.UsageError("give session ids or --prefix, not both")
    written = 0
    with open_storage(url, read_only=True) as storage:
        if session_ids:
            require_sessions(storage, session_ids)
            ids = list(dict.fromkeys(session_ids))
        else:
            ids = storage.sessions(prefix)
        with _output(out) as stream, _Progress(len(ids), "Exporting") as advance:
            for sid in ids:
                info = storage.session_info(sid)
                line = None if info is None else session_line(info)
                if line is not None:
                    stream.write(line)
                for message in storage.load(sid):
                    stream.write(export_line(sid, message))
                    written += 1
                advance(1)
    shown = "stdout" if out == "-" else out
    summary = f"Exported {count(written, 'message')} of {count(len(ids), 'session')} to {shown}"
    click.echo(summary, err=out == "-")


@dataclass
class _Plan:
    """What a first reading of the file found: records, sessions, and no conflict."""

    records: int = 0
    sessions: dict[str, None] = field(default_factory=dict)
    digests: dict[tuple[str, str], bytes] = field(default_factory=dict)
    fields: dict[str, SessionLine] = field(default_factory=dict)
    """Each session's title, metadata and owner, as its last session line gives them."""


def _check(lines: Iterable[Record | SessionLine], source: str, max_blob_bytes: int) -> _Plan:
    """Read every line before writing any, so a bad line writes nothing."""
    from sqlmemory.storage.checks import check_messages

    plan = _Plan()
    for record in lines:
        if isinstance(record, SessionLine):
            plan.fields[record.session_id] = record
            plan.sessions.setdefault(record.session_id)
            continue
        where = f"{source}:{record.line}"
        try:
            check_messages([record.message], max_blob_bytes)
        except ValueError as exc:
            raise CliError(f"{where}: {exc}") from None
        wire = json.dumps(record.message.to_dict(), separators=(",", ":")).encode()
        digest = hashlib.blake2b(wire, digest_size=16).digest()
        key = (record.session_id, record.message.id)
        if plan.digests.setdefault(key, digest) != digest:
            raise CliError(
                f"{where}: message id {record.message.id!r} of session "
                f"{record.session_id!r} appears earlier with different content"
            )
        plan.records += 1
        plan.sessions.setdefault(record.session_id)
    return plan


def _batches(records: Iterable[Record]) -> Iterator[list[Record]]:
    """Consecutive records of one session, at most a batch's worth."""
    batch: list[Record] = []
    size = 0
    for record in records:
        if batch and (
            record.session_id != batch[0].session_id
            or len(batch) >= BATCH_MESSAGES
            or size >= BATCH_BYTES
        ):
            yield batch
            batch, size = [], 0
        batch.append(record)
        size += record.size
    if batch:
        yield batch


def _append(storage: SqlStorage, batch: list[Record], source: str) -> None:
    from sqlmemory.errors import DuplicateMessageError

    try:
        storage.append(batch[0].session_id, *(record.message for record in batch))
    except DuplicateMessageError as exc:
        raise CliError(
            f"{source}:{batch[0].line}-{batch[-1].line}: {exc} in session "
            f"{batch[0].session_id!r} of the database; the lines before were imported "
            "(running import again skips them)"
        ) from None


@click.command("import", cls=Command)
@url_option
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
def import_(url: str, file: str) -> None:
    """Append the messages of an exported file.

    FILE is JSON Lines as `sqlmemory export` writes it ('-' for stdin). Every line is
    checked before anything is written. Messages keep their ids and times. A message already
    stored with the same content is skipped, so importing a file twice changes nothing; the
    same id with other content stops the import.
    """
    if file == "-":
        lines: list[str] = list(sys.stdin)
        source = "stdin"

        def reread() -> Iterable[str]:
            return lines

    else:
        source = file

        def reread() -> Iterable[str]:
            with open(file, encoding="utf-8") as stream:
                yield from stream

    with open_storage(url, read_only=True) as storage:
        plan = _check(_lines(reread(), source), source, storage.max_blob_bytes)
        before = {sid: storage.count(sid) for sid in plan.sessions}
        with _Progress(plan.records, "Importing") as advance:
            for batch in _batches(_records(reread(), source)):
                _append(storage, batch, source)
                advance(len(batch))
        titled = sum(_set_fields(storage, fields) for fields in plan.fields.values())
        new = sum(storage.count(sid) - count for sid, count in before.items())
        shown = redact(storage.engine.url)
    records = f", {count(titled, 'title')} or metadata set" if titled else ""
    click.echo(
        f"Imported {source} into {shown}: {count(plan.records, 'message')} of "
        f"{count(len(plan.sessions), 'session')}, {new} new, "
        f"{plan.records - new} already stored{records}"
    )


def _set_fields(storage: SqlStorage, fields: SessionLine) -> bool:
    """Give the session the line's title, metadata and owner, unless it holds them already.

    An owner is set only when the line gives one: a line without it leaves the session's
    owner as it is.
    """
    info = storage.session_info(fields.session_id)
    lineage = (fields.parent_id, fields.forked_at)
    if (
        info is not None
        and (info.title, info.metadata) == (fields.title, fields.metadata)
        and fields.owner in (None, info.owner)
        and (fields.parent_id is None or (info.parent_id, info.forked_at) == lineage)
    ):
        return False
    owner = UNSET if fields.owner is None else fields.owner
    storage.update_session(
        fields.session_id, title=fields.title, metadata=fields.metadata, owner=owner
    )
    if fields.parent_id is not None:
        storage._set_lineage(fields.session_id, *lineage)
    return True
