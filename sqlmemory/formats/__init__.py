"""Provider formats: messages to and from OpenAI Chat, OpenAI Responses and Anthropic.

Pure Python; the provider SDKs are never imported (they are test dependencies). Each
format is a module of its own; what they share is in :mod:`sqlmemory.formats._common`.
The contract is ``docs/providers.md``.
"""

from sqlmemory.formats._common import DroppedContentWarning
from sqlmemory.formats.anthropic import from_anthropic, to_anthropic

__all__ = ["DroppedContentWarning", "from_anthropic", "to_anthropic"]
