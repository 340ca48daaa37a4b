"""A griffe extension that renders the library's docstrings as the docs site needs.

- Sphinx cross-reference roles (``:class:`~a.B```, ``:meth:`x```, ...) become code spans
  (`B`, `x`): mkdocstrings reads docstrings as Markdown, where a role would show as is.
- A reStructuredText literal-block marker (a paragraph ending in ``::``) becomes one
  colon; the indented block after it is a code block in Markdown too.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|data|mod|attr|exc|obj|const):`(~?)([^`]+)`")
_LITERAL = re.compile(r"(?<=\S)::(?=\n\s*\n)")


def _role(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


class RstRoles(Extension):
    """Rewrite each docstring once its object is loaded."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = _ROLE.sub(_role, obj.docstring.value)
            obj.docstring.value = _LITERAL.sub(":", text)
