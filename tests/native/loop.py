"""A small native tool-calling agent loop, for the suite's own tests.

It has the shape of LangChain's, the OpenAI Agents SDK's or the Vercel AI SDK's loops (none of
their code): the model is called with the messages so far and the tool declarations; a reply with
tool calls runs them (several in one reply, in order) and appends each result as a tool message; a
reply with no tool call is the final answer. There is no signature and no extraction call. On the
step cap the run returns normally, flagged `max_steps` (the default), or raises `MaxStepsError`,
whose `partial_final_answer` one tool-less model call writes. It proves that a scenario written once
judges a native loop, and its broken variants (tests/native/broken.py) that it catches what such
loops get wrong.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Raw argument text longer than this is refused before parsing.
MAX_ARGS_CHARS = 100_000
#: Arguments nested deeper than this are refused before parsing.
MAX_ARGS_DEPTH = 64
#: Consecutive similar tool failures (same tool, same error kind) that stop the run.
REPEATED_ERRORS = 3
#: How many tool errors a run keeps.
ERROR_HISTORY = 10

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


@dataclass(frozen=True)
class ToolDef:
    """A tool: its name, description and JSON schema, and the function it calls with the args."""

    name: str
    description: str
    schema: dict[str, Any]
    function: Callable[..., Any]

    def declaration(self) -> dict[str, Any]:
        """The tool as the model is told of it (an OpenAI-style function declaration)."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.schema}}


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call of a model reply: its id, the tool's name and the raw argument text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """What the model answers: text, and the tool calls it makes (none: the final answer)."""

    content: str
    tool_calls: tuple[ToolCallRequest, ...] = ()


#: A person's answer to a call that needs approval: True runs it, False rejects it, text rejects it
#: with that message, and `{"name": ..., "args": {...}}` runs that call instead.
Answer = bool | str | dict[str, Any]
#: The approval callback: the tool's name, its args and the call's id in, the person's answer out.
Approve = Callable[[str, dict[str, Any], str], Answer]

#: The model: the messages so far and the tool declarations in (None: a call that may choose no
#: tool), a reply out.
Model = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], Reply]


@dataclass
class Result:
    """What one run hands back. The caller owns it: nothing in it is shared with the agent."""

    output: str | None
    stop_reason: str
    steps_used: int
    messages: list[dict[str, Any]]
    steps: list[dict[str, Any]] = field(default_factory=list)
    message: str | None = None
    tool_errors: list[str] = field(default_factory=list)


class MaxStepsError(RuntimeError):
    """Raised on the step cap in raise mode, with what the run did."""

    def __init__(self, cap: int, steps: list[dict[str, Any]], partial_final_answer: str | None) -> None:
        super().__init__(f"the step limit of {cap} was reached without a final answer")
        self.iterations = self.max_iterations = cap
        self.tools_used = list(dict.fromkeys(s["tool_name"] for s in steps if not s["failed"]))
        self.history = copy.deepcopy(steps)
        self.last_observation = steps[-1]["observation"] if steps else None
        self.partial_final_answer = partial_final_answer


class ArgsError(ValueError):
    """The model's tool arguments cannot be given to the tool."""


class NotRun(Exception):
    """A call that did not run: its tool is unknown, or the person did not approve it."""


class Agent:
    """The loop. `run` is one call with its own budget and its own error tracking."""

    def __init__(self, tools: Sequence[ToolDef], model: Model, *, max_steps: int = 10,
                 instructions: str = "", on_cap: str = "return",
                 needs_approval: frozenset[str] = frozenset(), approve: Approve | None = None) -> None:
        self.tools = {t.name: t for t in tools}
        self.needs_approval, self.approve = needs_approval, approve
        self.model = model
        self.max_steps = max_steps
        self.instructions = instructions
        self.on_cap = on_cap
        self.repeated = REPEATED_ERRORS
        self.max_args_chars, self.max_args_depth = MAX_ARGS_CHARS, MAX_ARGS_DEPTH

    def run(self, user: str, *, max_steps: int | None = None) -> Result:
        """Run the loop on `user`'s message until a final answer, the step cap or repeated errors."""
        cap = self.max_steps if max_steps is None else max_steps
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.instructions}] * bool(
            self.instructions) + [{"role": "user", "content": user}]
        declarations = [t.declaration() for t in self.tools.values()]
        steps: list[dict[str, Any]] = []
        errors: list[tuple[str, str, str]] = []  # (tool, kind, message), oldest first
        streak: list[tuple[str, str]] = []
        tried: Counter[str] = Counter()
        completed = 0
        for step in range(1, cap + 1):
            reply = self.model(copy.deepcopy(messages), copy.deepcopy(declarations))
            messages.append({"role": "assistant", "content": reply.content,
                             "tool_calls": [vars(c) for c in reply.tool_calls]})
            if not reply.tool_calls:
                return self._result(reply.content, "finish", step, messages, steps, errors)
            for call in reply.tool_calls:
                observation, args, error = self.execute(call)
                ran = call.name in self.tools and not isinstance(error, ArgsError | NotRun)
                tried[call.name] += ran
                completed += error is None
                steps.append({"thought": reply.content, "tool_name": call.name, "tool_args": args,
                              "observation": observation, "failed": error is not None,
                              "call_id": call.id})
                messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
                if error is None:
                    streak = []
                if error is None or not ran:  # only a tool that ran and raised is a tool error
                    continue
                kind = (call.name, type(error).__name__)
                errors.append((call.name, kind[1], str(error)))
                streak = [*streak, kind] if streak and streak[-1] == kind else [kind]
                if len(streak) >= self.repeated:
                    message = (f"I stopped: the tool {call.name} failed {len(streak)} times in a row "
                               f"({error}). Please check its input, or try rephrasing the request.")
                    return self._result(None, "repeated_tool_errors", step, messages, steps, errors,
                                        message)
        if self.on_cap == "raise":
            # The partial answer is the model's own, from one call that may choose no tool.
            partial = self.model(copy.deepcopy(messages), None).content if steps else None
            raise MaxStepsError(cap, steps, partial)
        summary = ", ".join(f"ran {name} {n}×" for name, n in tried.items() if n) or "ran no tool"
        message = f"I reached the step cap ({cap} steps) without an answer: {summary}."
        if errors:
            message += f" The last tool error: {errors[-1][2]}."
        if not completed:
            message += " No tool completed."
        return self._result(None, "max_steps", cap, messages, steps, errors, message)

    def execute(self, call: ToolCallRequest) -> tuple[str, Any, Exception | None]:
        """Run one tool call: its observation, the args as parsed (or the raw text), any error;
        a call of a tool that needs approval runs only once the person approves it."""
        return self.run_call(call, approved=False)

    def run_call(self, call: ToolCallRequest, approved: bool) -> tuple[str, Any, Exception | None]:
        """`execute`, with the person's approval given (`approved`) or still to ask."""
        tool = self.tools.get(call.name)
        if tool is None:
            error: Exception = NotRun(f"Error: unknown tool {call.name!r}; the tools are "
                                      f"{sorted(self.tools)}")
            return str(error), call.arguments, error
        try:
            args = self.parse_args(tool, call.arguments)
        except ArgsError as exc:
            return f"Error: invalid arguments for {tool.name}: {exc}", call.arguments, exc
        if tool.name in self.needs_approval and not approved:
            if self.approve is None:
                raise RuntimeError(f"the tool {tool.name} needs approval, and no one approves calls")
            answer = self.approve(tool.name, copy.deepcopy(args), call.id)
            if isinstance(answer, dict):  # an edited call, validated as the model's would be
                return self.run_call(ToolCallRequest(call.id, answer.get("name", ""), json.dumps(
                    answer.get("args"))), approved=True)
            if answer is not True:
                said = f": {answer}" if isinstance(answer, str) else ""
                return (f"Error: the person rejected the call of {tool.name}; it did not run{said}",
                        args, NotRun(tool.name))
        try:
            result = tool.function(**args)
        except Exception as exc:
            return f"Error executing {tool.name}: {exc}", args, exc
        return (result if isinstance(result, str) else json.dumps(result)), args, None

    def parse_args(self, tool: ToolDef, text: str) -> dict[str, Any]:
        """The argument text as a JSON object that fits the tool's schema, or an ArgsError."""
        if len(text) > self.max_args_chars:
            raise ArgsError(f"the arguments are too large ({len(text)} characters; the limit is "
                            f"{self.max_args_chars})")
        if _depth(text) > self.max_args_depth:
            raise ArgsError(f"the arguments are nested too deep (more than {self.max_args_depth} "
                            "levels)")
        try:
            args = json.loads(text)
        except ValueError as exc:  # JSONDecodeError, and integers past the int-string limit
            raise ArgsError(f"the arguments are not valid JSON ({exc})") from exc
        if not isinstance(args, dict):
            raise ArgsError(f"the arguments must be a JSON object, not {type(args).__name__}")
        properties: dict[str, Any] = tool.schema.get("properties", {})
        for name in tool.schema.get("required", []):
            if name not in args:
                raise ArgsError(f"the field {name!r} is missing")
        for name, value in args.items():
            if name not in properties:
                raise ArgsError(f"the field {name!r} is not an argument of {tool.name}")
            expected = properties[name].get("type")
            if expected in _JSON_TYPES and not _JSON_TYPES[expected](value):
                raise ArgsError(f"the field {name!r} must be of type {expected}, not "
                                f"{type(value).__name__}")
        return args

    def _result(self, output: str | None, reason: str, steps_used: int,
                messages: list[dict[str, Any]], steps: list[dict[str, Any]],
                errors: list[tuple[str, str, str]], message: str | None = None) -> Result:
        return Result(output=output, stop_reason=reason, steps_used=steps_used,
                      messages=copy.deepcopy(messages), steps=copy.deepcopy(steps), message=message,
                      tool_errors=[f"{t}: {k}: {m}" for t, k, m in errors[-ERROR_HISTORY:]])


def _depth(text: str) -> int:
    """How deep brackets nest in JSON text, outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
