"""Helpers for bindings: classify a request and render a turn as DSPy-style chat or JSON text."""

from __future__ import annotations

import json
from typing import Any, Literal

from conformance.binding import ExtractTurn, FinalTurn, SignatureSpec, StepTurn

__all__ = [
    "chat_reply",
    "json_reply",
    "json_value",
    "openai_message",
    "reply_outputs",
    "request_adapter",
    "request_kind",
    "step_values",
    "tool_names",
    "user_message",
]


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


def _raw_values(turn: StepTurn | FinalTurn | ExtractTurn) -> tuple[dict[str, Any], set[str]]:
    if isinstance(turn, ExtractTurn | FinalTurn):
        return dict(turn.outputs), set()
    values = step_values(turn)
    if turn.without_tool_args:
        del values["next_tool_args"]
        return values, set()
    if turn.raw_tool_args is None:
        return values, set()
    values["next_tool_args"] = turn.raw_tool_args
    return values, {"next_tool_args"}


def chat_reply(turn: StepTurn | FinalTurn | ExtractTurn, extra: dict[str, Any] | None = None) -> str:
    """`[[ ## field ## ]]` sections ending in `[[ ## completed ## ]]`; non-strings as JSON."""
    values, _ = _raw_values(turn)
    values = {**(extra or {}), **values}
    parts = []
    for name, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"[[ ## {name} ## ]]\n{text}")
    parts.append("[[ ## completed ## ]]")
    return "\n\n".join(parts)


def json_reply(turn: StepTurn | FinalTurn | ExtractTurn, extra: dict[str, Any] | None = None) -> str:
    """One JSON object keyed by field name; raw tool args are spliced in verbatim."""
    values, raw = _raw_values(turn)
    values = {**(extra or {}), **values}
    members = [
        f"{json.dumps(name)}: {value if name in raw else json.dumps(value)}"
        for name, value in values.items()
    ]
    return "{" + ", ".join(members) + "}"


def user_message(inputs: dict[str, Any]) -> str:
    """A call's inputs as a native loop's user message: the one input's text, or `name: value` lines."""
    if len(inputs) == 1:
        (value,) = inputs.values()
        return value if isinstance(value, str) else json.dumps(value)
    return "\n".join(f"{name}: {v if isinstance(v, str) else json.dumps(v)}" for name, v in inputs.items())


def reply_outputs(signature: SignatureSpec, reply: Any) -> dict[str, Any]:
    """A native loop's final reply as the agent's outputs: the reply under the one output's name.

    With several outputs the reply must be a JSON object of them (what `FinalTurn.reply_text`
    writes); a reply that is not stays whole under the first output's name, for the suite to judge.
    """
    names = [f.name for f in signature.outputs] or ["answer"]
    if len(names) > 1 and isinstance(reply, str):
        try:
            values = json.loads(reply)
        except json.JSONDecodeError:
            values = None
        if isinstance(values, dict):
            return values
    return {names[0]: json_value(reply)}


def tool_names(tools: list[Any] | None) -> list[str]:
    """The names in native tool declarations (`{"name"}`, `{"function": {"name"}}`, ...), in order."""
    names = []
    for tool in tools or []:
        if isinstance(tool, dict):
            inner = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            name = inner.get("name") if isinstance(inner, dict) else None
            if isinstance(name, str):
                names.append(name)
    return names


#: The final-answer tools of libraries that end a run by calling one (smolagents' `final_answer`).
FINAL_ANSWER_TOOLS = ("final_answer",)


def openai_message(turn: StepTurn | FinalTurn | ExtractTurn, number: int,
                   offered: list[str] | None = None) -> dict[str, Any]:
    """A turn as an OpenAI chat-completions assistant message with native tool calls.

    A step's calls become `tool_calls` (ids `call_<number>_<i>`, the thought as the content); a
    final answer or an extraction becomes a reply that calls no tool, or, when the request
    `offered` one of `FINAL_ANSWER_TOOLS`, a call of that tool with `{"answer": <reply>}`.
    """
    final_tool = next((t for t in FINAL_ANSWER_TOOLS if t in (offered or [])), None)
    if final_tool is not None and not isinstance(turn, StepTurn):
        text = (turn if isinstance(turn, FinalTurn) else FinalTurn(outputs=turn.outputs)).reply_text()
        turn = StepTurn(thought="", tool_name=final_tool, tool_args={"answer": text})
    if isinstance(turn, StepTurn):
        return {"role": "assistant", "content": turn.thought, "tool_calls": [
            {"id": f"call_{number}" + (f"_{i}" if i else ""), "type": "function",
             "function": {"name": c.tool_name, "arguments": c.args_text()}}
            for i, c in enumerate(turn.calls())
        ]}
    final = turn if isinstance(turn, FinalTurn) else FinalTurn(outputs=turn.outputs)
    return {"role": "assistant", "content": final.reply_text()}
