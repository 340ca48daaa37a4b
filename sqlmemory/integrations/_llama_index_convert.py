"""LlamaIndex chat messages to and from sqlmemory messages, and what both stores share.

:func:`from_llama_index` and :func:`to_llama_index` (re-exported by
:mod:`sqlmemory.integrations.llama_index`), the id reuse that lets ``set_messages`` write
only what changed, and the splice plans of the deletes by position.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from pydantic import TypeAdapter, ValidationError

from sqlmemory._gc import gc_paused
from sqlmemory.errors import ConversionError, InvalidMessageError
from sqlmemory.formats._converting import items_of
from sqlmemory.integrations._llama_index_read import message_of
from sqlmemory.integrations._llama_index_write import dump_of
from sqlmemory.storage.checks import same_content
from sqlmemory.storage.joint import Splice, SplicePlan
from sqlmemory.storage.records import SessionInfo
from sqlmemory.types import Message, OpaqueBlock
from sqlmemory.types._message_checks import copy_unchecked

__all__ = [
    "check_index",
    "delete_all",
    "delete_at",
    "from_llama_index",
    "one",
    "reusing_ids",
    "to_llama_index",
]

_ROLES = frozenset(r.value for r in MessageRole)
_CHAT_MESSAGES = TypeAdapter(list[ChatMessage])
try:
    from llama_index.core.base.llms.types import ToolCallBlock  # noqa: F401

    _TOOL_CALL_BLOCKS = True
    """Whether this llama-index-core has ``ToolCallBlock`` (0.14 on)."""
except ImportError:  # pragma: no cover - older llama-index-core
    _TOOL_CALL_BLOCKS = False


def from_llama_index(messages: Iterable[ChatMessage]) -> list[Message]:
    """sqlmemory messages of LlamaIndex chat messages, ready to store.

    Examples:
        >>> from llama_index.core.llms import ChatMessage
        >>> history = from_llama_index([
        ...     ChatMessage(role="user", content="What is 6 x 7?"),
        ...     ChatMessage(role="assistant", content="42", additional_kwargs={"model": "m1"}),
        ... ])
        >>> [(m.role.value, m.text_content()) for m in history]
        [('user', 'What is 6 x 7?'), ('assistant', '42')]
        >>> to_llama_index(history)[1].additional_kwargs
        {'model': 'm1'}

    Raises:
        ConversionError: a value that is no ``ChatMessage``, one whose
            ``additional_kwargs`` are not JSON, block data that is not base64, or a message
            sqlmemory cannot hold; the message names the index.
    """
    messages = items_of(messages, "messages", single=(ChatMessage,), noun="messages")
    with gc_paused():
        return _from_llama_index(messages)


def _from_llama_index(messages: list[Any]) -> list[Message]:
    out: list[Message] = []
    for index, message in enumerate(messages):
        if not isinstance(message, ChatMessage):
            raise ConversionError(
                f"message {index}: expected a LlamaIndex ChatMessage, got {type(message).__name__}"
            )
        try:
            dump = message.model_dump(mode="json")
            converted = message_of(dump)
        except (ConversionError, InvalidMessageError) as exc:
            raise ConversionError(f"message {index}: {exc}") from None
        except (ValueError, TypeError) as exc:  # pydantic cannot dump it as JSON
            raise ConversionError(f"message {index}: not JSON: {exc}") from None
        if any(isinstance(b, OpaqueBlock) for b in converted.content):
            _readable(converted, index)
        out.append(converted)
    return out


def _readable(message: Message, index: int) -> None:
    """Refuse a message holding a block dump LlamaIndex would not read back (a block
    built without its validation): stored, it would make the history unreadable."""
    try:
        ChatMessage.model_validate(dump_of(message, _TOOL_CALL_BLOCKS))
    except (ValidationError, ValueError, TypeError) as exc:
        raise ConversionError(
            f"message {index}: llama-index would not read it back: {exc}"
        ) from None


def to_llama_index(messages: Iterable[Message]) -> list[ChatMessage]:
    """LlamaIndex chat messages of sqlmemory messages: what :func:`from_llama_index` read,
    equal.

    Messages from other sources get LlamaIndex's blocks; what it has no block for
    (redacted thinking, another provider's opaque items) is dropped with a
    :class:`~sqlmemory.formats.DroppedContentWarning`.

    Examples:
        >>> from sqlmemory import Message, ToolCall
        >>> back = to_llama_index([Message.tool("c1", "42")])
        >>> back[0].role.value, back[0].content, back[0].additional_kwargs
        ('tool', '42', {'tool_call_id': 'c1'})

    Raises:
        ConversionError: ``messages`` is not a list of :class:`~sqlmemory.Message`, or
            LlamaIndex refuses what ``extras["llama_index"]`` holds; the message names the
            index.
    """
    messages = items_of(messages, "messages", single=(Message,), noun="messages")
    with gc_paused():  # a long history: many small objects, no cycles (sqlmemory._gc)
        return _to_llama_index(messages)


def _to_llama_index(messages: list[Any]) -> list[ChatMessage]:
    dumps: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise ConversionError(
                f"message {index}: expected a sqlmemory Message, got {type(message).__name__}"
            )
        try:
            dump = dump_of(message, _TOOL_CALL_BLOCKS)
        except (ValueError, TypeError) as exc:
            raise ConversionError(f"message {index}: llama-index refuses it: {exc}") from None
        if dump["role"] == "developer" and "developer" not in _ROLES:
            dump["role"] = "system"  # before LlamaIndex had the role
        dumps.append(dump)
    try:
        # One call for the list: a third less than one per message.
        return _CHAT_MESSAGES.validate_python(dumps)
    except (ValidationError, ValueError, TypeError):
        pass
    for index, dump in enumerate(dumps):  # which one LlamaIndex refuses, and why
        try:
            ChatMessage.model_validate(dump)
        except (ValidationError, ValueError, TypeError) as exc:
            raise ConversionError(f"message {index}: llama-index refuses it: {exc}") from None
    raise ConversionError("llama-index refuses the messages")  # pragma: no cover


def reusing_ids(new: Sequence[Message], stored: Sequence[Message]) -> list[Message]:
    """``new`` with the ids of the stored messages it starts with, so that ``save`` keeps
    that prefix and writes only what follows."""
    out = list(new)
    for index, (message, old) in enumerate(zip(new, stored, strict=False)):
        candidate = copy_unchecked(Message, message, id=old.id, recorded_at=old.recorded_at)
        if not same_content(candidate, old):
            break
        out[index] = candidate
    return out


def delete_at(idx: int) -> SplicePlan:
    """The splice plan deleting the message at list index ``idx`` (negative: from the end)."""

    def plan(info: SessionInfo | None) -> Splice:
        count = 0 if info is None else info.message_count
        at = idx + count if idx < 0 else idx
        return Splice(at, at + 1, delete=True) if 0 <= at < count else Splice()

    return plan


def delete_all(info: SessionInfo | None) -> Splice:
    return Splice(0, 0 if info is None else info.message_count, delete=True)


def one(messages: list[Message]) -> ChatMessage | None:
    return to_llama_index(messages)[0] if messages else None


def check_index(idx: object) -> int:
    if isinstance(idx, bool) or not isinstance(idx, int):
        raise TypeError(f"idx must be an int, not {type(idx).__name__}")
    return idx
