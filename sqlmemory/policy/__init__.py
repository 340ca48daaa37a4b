"""Groups, token estimates and the read-time window policies.

Pure Python, no SQLAlchemy. Groups are in :mod:`sqlmemory.policy.groups`, token costs in
:mod:`sqlmemory.policy.tokens` (the seed heuristic) and :mod:`sqlmemory.policy.providers`
(OpenAI's and Anthropic's rules), the policies in :mod:`sqlmemory.policy.windows`; a new
policy goes beside them there. The contract is ``docs/contract/windows.md``.
"""

from sqlmemory.policy.groups import Entry, groups
from sqlmemory.policy.providers import (
    anthropic_image_tokens,
    anthropic_tokenizer,
    openai_image_tokens,
    openai_tokenizer,
)
from sqlmemory.policy.tokens import Tokenizer, estimate_tokens
from sqlmemory.policy.windows import (
    FixedWindow,
    NoOp,
    Policy,
    RecentWindow,
    TailPolicy,
    TokenWindow,
)

__all__ = [
    "Entry",
    "FixedWindow",
    "NoOp",
    "Policy",
    "RecentWindow",
    "TailPolicy",
    "TokenWindow",
    "Tokenizer",
    "anthropic_image_tokens",
    "anthropic_tokenizer",
    "estimate_tokens",
    "groups",
    "openai_image_tokens",
    "openai_tokenizer",
]
