"""Helpers for bindings: classify a request and render a turn as DSPy-style chat or JSON text."""

from __future__ import annotations

import json
from typing import Any, Literal

from conformance.binding import ExtractTurn, StepTurn

__all__ = ["chat_reply", "json_reply", "json_value", "request_adapter", "request_kind", "step_values"]


def request_kind(system: str) -> Literal["step", "extract"]:
    """A request whose system message asks for `next_tool_name` is a step call, else an extraction.

    Pass the system message only (the output-field declaration): the trajectory in the user
    message may quote `next_tool_name` (in a tool's traceback, say).
    """
    return "step" if "next_tool_name" in system else "extract"


def request_adapter(text: str) -> Literal["chat", "json", "other"]:
    """The reply format a request asks for: DSPy-style chat sections, one JSON object, or neither."""
    if "[[ ## completed ## ]]" in text:
        return "chat"
    return "json" if "JSON object" in text else "other"


def json_value(value: Any) -> Any:
    """`value` as plain JSON data, a copy the library cannot change; what JSON cannot hold, str()."""
    return json.loads(json.dumps(value, default=str))


def step_values(turn: StepTurn) -> dict[str, Any]:
    """The step turn as the output fields of a DSPy-style step signature."""
    return {
        "next_thought": turn.thought,
        "next_tool_name": turn.tool_name,
        "next_tool_args": turn.tool_args,
    }


def _raw_values(turn: StepTurn | ExtractTurn) -> tuple[dict[str, Any], set[str]]:
    if isinstance(turn, ExtractTurn):
        return dict(turn.outputs), set()
    values = step_values(turn)
    if turn.raw_tool_args is None:
        return values, set()
    values["next_tool_args"] = turn.raw_tool_args
    return values, {"next_tool_args"}


def chat_reply(turn: StepTurn | ExtractTurn, extra: dict[str, Any] | None = None) -> str:
    """`[[ ## field ## ]]` sections ending in `[[ ## completed ## ]]`; non-strings as JSON."""
    values, _ = _raw_values(turn)
    values = {**(extra or {}), **values}
    parts = []
    for name, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"[[ ## {name} ## ]]\n{text}")
    parts.append("[[ ## completed ## ]]")
    return "\n\n".join(parts)


def json_reply(turn: StepTurn | ExtractTurn, extra: dict[str, Any] | None = None) -> str:
    """One JSON object keyed by field name; raw tool args are spliced in verbatim."""
    values, raw = _raw_values(turn)
    values = {**(extra or {}), **values}
    members = [
        f"{json.dumps(name)}: {value if name in raw else json.dumps(value)}"
        for name, value in values.items()
    ]
    return "{" + ", ".join(members) + "}"
