"""An ADK event for a message that the ADK adapter did not store (another adapter's, an
import, a hand-written one): its text, thinking, images, documents, calls and results as
parts, authored by ``user`` for a user's message and by ``model`` otherwise; other
providers' opaque items have no ADK part and are left out."""

from __future__ import annotations

import json
from typing import Any

from sqlmemory.types import (
    Block,
    DocumentBlock,
    ImageBlock,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCall,
)
from sqlmemory.types._json import thaw_json

__all__ = ["foreign_event"]


def foreign_event(message: Message, event_class: Any) -> Any:
    """The ADK event of a message stored by other means."""
    user_side = message.role in (Role.USER, Role.TOOL, Role.SYSTEM, Role.DEVELOPER)
    if message.role is Role.TOOL:
        text = message.text_content()
        try:
            response = json.loads(text)
        except ValueError:
            response = None
        if not isinstance(response, dict):
            response = {"output": text}
        parts = [
            {"function_response": {"id": message.tool_call_id, "name": "", "response": response}}
        ]
    else:
        parts = [p for p in (_part(b) for b in message.content) if p is not None]
    stamp = message.recorded_at.timestamp() if message.recorded_at is not None else 0.0
    return event_class.model_validate(
        {
            "id": message.id,
            "author": "user" if message.role is Role.USER else "model",
            "timestamp": stamp,
            "content": {"role": "user" if user_side else "model", "parts": parts},
        }
    )


def _part(block: Block) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"text": block.thinking, "thought": True}
    if isinstance(block, ToolCall):
        args = thaw_json(block.arguments) if block.arguments is not None else {}
        return {"function_call": {"id": block.id, "name": block.name, "args": args}}
    if isinstance(block, (ImageBlock, DocumentBlock)):
        if block.data is not None:
            return {"inline_data": {"data": block.data, "mime_type": block.media_type}}
        if block.url is not None:
            return {"file_data": {"file_uri": block.url, "mime_type": block.media_type}}
    return None
