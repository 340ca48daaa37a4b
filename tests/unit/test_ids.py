"""Message and tool-call ids are keys: control characters are refused when built."""

from __future__ import annotations

import pytest

from sqlmemory import InvalidMessageError, Message, ToolCall


@pytest.mark.parametrize("bad", ["nul\x00", "\x00", "tab\there", "esc\x1b", "del\x7f"], ids=repr)
def test_control_characters_in_ids_are_refused(bad: str) -> None:
    with pytest.raises(InvalidMessageError, match="control character"):
        Message.user("hi", id=bad)
    with pytest.raises(InvalidMessageError, match="control character"):
        ToolCall(bad, "f")
    with pytest.raises(InvalidMessageError, match="control character"):
        Message.tool(bad, "result")


def test_unknown_role_names_the_field() -> None:
    with pytest.raises(InvalidMessageError, match=r"Message\.role"):
        Message("robot", "beep")
