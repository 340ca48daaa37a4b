"""Provider formats: messages to and from OpenAI Chat, OpenAI Responses and Anthropic.

Pure Python; the provider SDKs are never imported (they are test dependencies). Each
format is a module of its own; what they share is in :mod:`sqlmemory.formats._converting`.
The contract is ``docs/providers.md``.
"""

from sqlmemory.formats._converting import DroppedContentWarning
from sqlmemory.formats.anthropic import from_anthropic, to_anthropic
from sqlmemory.formats.openai_chat import from_openai_chat, to_openai_chat
from sqlmemory.formats.openai_responses import from_openai_responses, to_openai_responses

__all__ = [
    "DroppedContentWarning",
    "from_anthropic",
    "from_openai_chat",
    "from_openai_responses",
    "to_anthropic",
    "to_openai_chat",
    "to_openai_responses",
]
