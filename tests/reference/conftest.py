"""A scripted language model and reply helpers for the reference's tests: no network, no sleep."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import reference


class ScriptedLM:
    """Answers each `complete` call with the next scripted reply; records every message list."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.requests: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]]) -> str:
        self.requests.append(messages)
        if not self.replies:
            raise AssertionError(f"unexpected model call #{len(self.requests)}: {messages!r}")
        return self.replies.pop(0)

    def system(self, call: int) -> str:
        """The system message of model call number `call` (0-based)."""
        return self.requests[call][0]["content"]

    def user(self, call: int) -> str:
        """The user message of model call number `call` (0-based)."""
        return self.requests[call][-1]["content"]

    def text(self, call: int) -> str:
        """Everything model call number `call` (0-based) showed."""
        return "\n".join(m["content"] for m in self.requests[call])


def step(thought: str, tool: str, args: dict[str, Any] | str = "{}") -> str:
    """A ChatAdapter step reply; `args` as a dict (sent as JSON) or as raw text."""
    text = args if isinstance(args, str) else json.dumps(args)
    return (f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
            f"[[ ## next_tool_args ## ]]\n{text}\n\n[[ ## completed ## ]]")


def answer(**fields: str) -> str:
    """A ChatAdapter extraction reply."""
    return "\n\n".join([*(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()),
                        "[[ ## completed ## ]]"])


def json_step(thought: str, tool: str, args: dict[str, Any]) -> str:
    """A JSONAdapter step reply."""
    return json.dumps({"next_thought": thought, "next_tool_name": tool, "next_tool_args": args})


@pytest.fixture(autouse=True)
def _clean_settings() -> Iterator[None]:
    """Every test starts and ends with no global adapter."""
    reference.configure(adapter=None)
    yield
    reference.configure(adapter=None)


@pytest.fixture
def lm() -> Iterator[ScriptedLM]:
    """A ScriptedLM installed with reference.context for the test; append to `lm.replies`."""
    model = ScriptedLM()
    with reference.context(lm=model):
        yield model
    assert not model.replies, f"scripted replies left unused: {model.replies}"
