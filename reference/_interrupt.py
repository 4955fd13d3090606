"""Human in the loop: the interrupt that pauses a ReAct run, and what a person may answer it with."""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference._args import MAX_DEPTH, too_deep


class ToolCall(BaseModel):
    """A tool call waiting for a person's approval: the tool, its arguments, and the call's id."""

    name: str
    args: dict[str, Any]
    call_id: str = Field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")


class HumanInTheLoopRequired(Exception):
    """The run paused for a person: answer `question` with `agent.resume(response, interrupt)`.

    `interrupt_id` is unique. `tool_call` is the call awaiting approval, or None when the agent
    asked the user a question. `context` is a snapshot of the paused run: `trajectory` (the steps
    so far), `iteration` (the paused step's index, from 0) and `input_args` (the call's inputs).
    """

    def __init__(self, question: str, *, tool_call: ToolCall | None = None,
                 context: dict[str, Any] | None = None, state: object = None) -> None:
        super().__init__(question)
        self.question = question
        self.interrupt_id = uuid.uuid4().hex
        self.tool_call = tool_call
        self.context: dict[str, Any] = context or {}
        self._asked = tool_call.model_copy(deep=True) if tool_call else None
        self._state = state  # the paused run; the agent that raised the interrupt allows one resume

    def state(self) -> object:
        """The paused run; an interrupt altered since it was raised is refused."""
        if self.tool_call != self._asked:
            raise ValueError(
                f"interrupt {self.interrupt_id} was altered: it asked about {self._asked!r}, it "
                f"now holds {self.tool_call!r}; answer with an edit to change a call")
        return self._state


def ask_to_user(question: str) -> str:
    """Ask the user a question, when you need a clarification or a detail only they can give."""
    raise RuntimeError("ask_to_user is answered by a person, through ReAct.resume")


Reply = Literal["yes", "no"] | ToolCall | str


def parse_reply(response: str) -> Reply:
    """A person's answer to a pending call: "yes" (`yes`, `y`), "no" (`no`, `n`), an edited call
    (`{"edit": {"name": ..., "args": {...}}}`), or else the text itself, as feedback. A response
    nested too deep to parse is a ValueError."""
    if too_deep(response, MAX_DEPTH + 2):  # an edit's args sit two levels down
        raise ValueError(f"the response nests deeper than {MAX_DEPTH + 2} levels; answer yes, no, "
                         "an edit or plain text")
    word = response.strip().lower()
    if word in ("yes", "y", "no", "n"):
        return "yes" if word.startswith("y") else "no"
    try:
        edit = json.loads(response)["edit"]
        return ToolCall(name=edit["name"], args=edit["args"])
    except (ValueError, TypeError, KeyError):
        return response
