"""Text token counts: a ``tiktoken`` encoding when the ``[tiktoken]`` extra is installed and
the encoding loads, else 4 bytes per token (``docs/contract/windows.md``).

``tiktoken`` downloads an encoding's BPE file the first time it is used (and caches it on
disk, in ``$TIKTOKEN_CACHE_DIR`` or a temporary directory). Each encoding is loaded once
per process, and a failure is remembered too, so an offline process does not retry the
download for every message.
"""

from __future__ import annotations

import functools
import warnings
from typing import Protocol, Union

__all__ = ["DEFAULT_ENCODING", "Encoding", "count_text", "encoding_for_model", "load_encoding"]

DEFAULT_ENCODING = "o200k_base"
"""The encoding of the GPT-4o family, used when ``tiktoken`` does not know a model."""
BYTES_PER_TOKEN = 4


class Encoding(Protocol):
    """What the estimators use of a ``tiktoken.Encoding``."""

    @property
    def name(self) -> str: ...

    def encode_ordinary(self, text: str) -> list[int]: ...


EncodingChoice = Union[str, Encoding, None]  # noqa: UP007 - runtime alias on 3.10
"""An encoding's name, an encoding object, or ``None`` for the provider's default."""


def encoding_for_model(model: str) -> str:
    """The name of the ``tiktoken`` encoding of an OpenAI ``model`` (no download)."""
    try:
        import tiktoken
    except ImportError:
        return DEFAULT_ENCODING
    try:
        return tiktoken.encoding_name_for_model(model)
    except KeyError:
        return DEFAULT_ENCODING


@functools.cache
def load_encoding(name: str) -> Encoding | None:
    """The ``tiktoken`` encoding called ``name``, loaded once; ``None`` if it cannot be.

    ``None`` without a word when ``tiktoken`` is not installed (the documented fallback);
    with a ``RuntimeWarning`` when it is but the encoding does not load (offline, an
    unknown name), once per name and process.
    """
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # a download error, an unknown name: anything tiktoken raises
        warnings.warn(
            f"tiktoken could not load the encoding {name!r} ({type(exc).__name__}: {exc}); "
            f"text is counted as {BYTES_PER_TOKEN} bytes per token",
            RuntimeWarning,
            stacklevel=2,
        )
        return None


def resolve(choice: EncodingChoice, default: str) -> Encoding | None:
    """The encoding to count with: ``choice`` itself, the one it names, or ``default``'s."""
    if choice is None:
        return load_encoding(default)
    if isinstance(choice, str):
        return load_encoding(choice)
    return choice


def count_text(encoding: Encoding | None, text: str) -> int:
    """Tokens of ``text``: the encoding's count, else UTF-8 bytes / 4 rounded up."""
    if not text:
        return 0
    if encoding is None:
        return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)
    # encode_ordinary: text that spells a special token ("<|endoftext|>") is plain text.
    return len(encoding.encode_ordinary(text))
