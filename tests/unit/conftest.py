"""A scripted language model for the reference's unit tests: no network, no sleeping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import reference


class ScriptedLM:
    """Answers each `complete` call with the next reply; records every message list it got."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.requests: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]]) -> str:
        self.requests.append(messages)
        assert self.replies, f"unexpected model call #{len(self.requests)}"
        return self.replies.pop(0)

    def text(self, call: int) -> str:
        """Everything model call number `call` (0-based) showed."""
        return "\n".join(m["content"] for m in self.requests[call])


def step(thought: str, tool: str, args: dict[str, Any] | str = "{}") -> str:
    """A chat-format step reply."""
    text = args if isinstance(args, str) else json.dumps(args)
    return (f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
            f"[[ ## next_tool_args ## ]]\n{text}\n\n[[ ## completed ## ]]")


def answer(text: str, field: str = "answer") -> str:
    """A chat-format extraction reply."""
    return f"[[ ## {field} ## ]]\n{text}\n\n[[ ## completed ## ]]"


@pytest.fixture
def lm() -> Iterator[ScriptedLM]:
    """A ScriptedLM installed with reference.context for the test; fill `lm.replies`."""
    model = ScriptedLM()
    with reference.context(lm=model):
        yield model
    assert not model.replies, f"scripted replies left unused: {model.replies}"
