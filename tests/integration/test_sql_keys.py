"""Keys compare exactly on every backend: case, and LIKE's special characters."""

from __future__ import annotations

from typing import Any

from sqlmemory import Message


def test_session_prefix_is_case_sensitive_on_every_backend(storage: Any) -> None:
    for sid in ("abc-1", "ABC-2", "Abc-3", "abd"):
        storage.append(sid, Message.user("hi"))
    assert storage.sessions("abc") == ["abc-1"]
    assert storage.sessions("ABC") == ["ABC-2"]
    assert storage.sessions("a") == ["abc-1", "abd"]
    assert storage.sessions() == ["ABC-2", "Abc-3", "abc-1", "abd"]
