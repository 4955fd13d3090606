"""ReAct: reason, pick a tool, observe, repeat; then extract the outputs from the trajectory.

Read top to bottom: `ReAct.forward` is the loop; each step is one call of the step predictor and at
most one tool call; the loop ends on `finish`, on the step cap, or on repeated tool failures; then
one extraction call turns the inputs plus the trajectory into the signature's outputs.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from reference._adapters import Adapter, AdapterParseError
from reference._args import ToolArgsError
from reference._predict import Predict, Prediction, check_inputs
from reference._signature import Signature, SignatureError
from reference._tool import Tool

#: Three similar failures in a row (same tool, same exception type) stop the loop (ERR-2).
REPEATED_FAILURES = 3
#: How many tool errors a run keeps (ERR-2).
ERROR_HISTORY = 10
_RESERVED = {"trajectory", "next_thought", "next_tool_name", "next_tool_args", "max_iters"}


class Step(BaseModel):
    """One step of the trajectory."""

    thought: str
    tool_name: str
    tool_args: dict[str, Any]
    observation: Any


class ToolErrorRecord(BaseModel):
    """A tool call that raised."""

    tool: str
    kind: str
    message: str


class MaxIterationsError(RuntimeError):
    """The step cap ran out before `finish` (raise mode), with what the run had gathered.

    `partial_final_answer` is the last non-empty thought, the closest thing to an answer the loop
    produced; None when no step had a thought.
    """

    def __init__(self, *, iterations: int, max_iterations: int, tools_used: list[str],
                 history: list[Step], partial_final_answer: str | None) -> None:
        super().__init__(f"Maximum iterations reached: {iterations} of {max_iterations} steps used "
                         "without finishing")
        self.iterations = iterations
        self.max_iterations = max_iterations
        self.tools_used = tools_used
        self.history = history
        self.last_observation: Any = history[-1].observation if history else None
        self.partial_final_answer = partial_final_answer


@dataclass
class _Run:
    """One call's state; never stored on the agent, so calls share nothing."""

    inputs: dict[str, Any]
    budget: int
    steps: list[Step] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the trajectory as text, appended per step
    stop_reason: str | None = None
    tools_used: list[str] = field(default_factory=list)
    completed: int = 0
    errors: deque[ToolErrorRecord] = field(default_factory=lambda: deque(maxlen=ERROR_HISTORY))
    streak: tuple[str, str, int] = ("", "", 0)  # (tool, exception type, consecutive failures)

    def observe(self, step: Step) -> None:
        i = len(self.steps)
        self.steps.append(step)
        self.lines.append(
            f"thought_{i}: {step.thought}\ntool_name_{i}: {step.tool_name}\n"
            f"tool_args_{i}: {json.dumps(step.tool_args)}\nobservation_{i}: {_text(step.observation)}\n"
        )

    def trajectory(self) -> str:
        return "\n".join(self.lines)


class ReAct:
    """A tool-using agent: `ReAct("question -> answer", [search])(question=...)`."""

    def __init__(self, signature: object, tools: Sequence[Tool | Callable[..., Any]], *,
                 max_iters: int = 10, adapter: Adapter | None = None,
                 on_max_iters: Literal["extract", "raise"] = "extract") -> None:
        if on_max_iters not in ("extract", "raise"):
            raise ValueError(f"on_max_iters must be 'extract' or 'raise', not {on_max_iters!r}")
        self.signature = Signature.coerce(signature)
        clash = sorted(_RESERVED & {*self.signature.inputs, *self.signature.outputs})
        if clash:
            raise SignatureError(f"field {clash[0]!r} is reserved by ReAct; rename it")
        self.tools: dict[str, Tool] = {}
        for tool in (t if isinstance(t, Tool) else Tool(t) for t in tools):
            if tool.name == "finish" or tool.name in self.tools:
                raise ValueError(f"tool name {tool.name!r} is reserved or used twice")
            self.tools[tool.name] = tool
        self.max_iters = max_iters
        self.adapter = adapter
        self.on_max_iters = on_max_iters
        self.step = Predict(self._step_signature(), adapter=adapter)
        self.extract = Predict(self.signature.extended(inputs={"trajectory": str}), adapter=adapter)

    def _step_signature(self) -> Signature:
        names = (*self.tools, "finish")
        outputs = ", ".join(f"`{n}`" for n in self.signature.outputs)
        lines = [self.signature.instructions, "",
                 "You are an agent. In each step, think, then pick the next tool and its arguments. "
                 "The tools are:"]
        lines += [f"({i}) {t.name}: {t.description} Arguments: {json.dumps(t.args_schema)}"
                  for i, t in enumerate(self.tools.values(), 1)]
        lines += [f"({len(self.tools) + 1}) finish: call this when you have everything needed to "
                  f"produce {outputs}. Arguments: {{}}",
                  "next_tool_args must be a valid JSON object of the tool's arguments."]
        return self.signature.extended(
            inputs={"trajectory": str},
            outputs={"next_thought": str, "next_tool_name": Literal[names],
                     "next_tool_args": dict},
            instructions="\n".join(lines),
        )

    def __call__(self, **inputs: Any) -> Prediction:
        return self.forward(**inputs)

    def forward(self, *, max_iters: int | None = None, **inputs: Any) -> Prediction:
        """Run the loop over `inputs`; `max_iters` caps this call only."""
        check_inputs(self.signature, inputs)
        run = _Run(inputs=inputs, budget=self.max_iters if max_iters is None else max_iters)
        while run.stop_reason is None and len(run.steps) < run.budget:
            self._take_step(run)
        if run.stop_reason is None:
            run.stop_reason = "max_iters"
            if self.on_max_iters == "raise":
                raise _exhausted(run)
        return self._extract(run)

    def _take_step(self, run: _Run) -> None:
        try:
            choice = self.step(**run.inputs, trajectory=run.trajectory())
        except AdapterParseError as exc:
            run.observe(Step(thought="", tool_name="", tool_args={},
                             observation=f"Error: could not parse the step: {exc}"))
            return
        thought, name, args = choice.next_thought, choice.next_tool_name, choice.next_tool_args
        if name == "finish":
            run.observe(Step(thought=thought, tool_name=name, tool_args={}, observation="Completed."))
            run.stop_reason = "finish"
            return
        tool = self.tools[name]
        try:
            valid = tool.validate(args)
        except ToolArgsError as exc:
            run.observe(Step(thought=thought, tool_name=name, tool_args=args,
                             observation=f"Error: invalid arguments for {name}: {exc}"))
            return
        run.tools_used.append(name)
        try:
            result = tool.func(**valid)
        except Exception as exc:
            run.observe(Step(thought=thought, tool_name=name, tool_args=args,
                             observation=f"Error executing {name}: {exc}"))
            self._failed(run, ToolErrorRecord(tool=name, kind=type(exc).__name__, message=str(exc)))
            return
        run.completed += 1
        run.streak = ("", "", 0)
        run.observe(Step(thought=thought, tool_name=name, tool_args=args, observation=result))

    def _failed(self, run: _Run, error: ToolErrorRecord) -> None:
        run.errors.append(error)
        tool, kind, count = run.streak
        count = count + 1 if (tool, kind) == (error.tool, error.kind) else 1
        run.streak = (error.tool, error.kind, count)
        if count >= REPEATED_FAILURES:
            run.stop_reason = "repeated_tool_errors"

    def _extract(self, run: _Run) -> Prediction:
        outputs = self.extract(**run.inputs, trajectory=run.trajectory()).outputs()
        return Prediction(
            outputs,
            trajectory=[s.model_copy(deep=True) for s in run.steps],
            stop_reason=run.stop_reason,
            iterations=len(run.steps),
            fallback=_fallback(run),
            tool_errors=list(run.errors),
        )


def _fallback(run: _Run) -> str | None:
    """What the user is told when the loop did not finish by itself (EXH-5, ERR-2)."""
    if run.stop_reason == "repeated_tool_errors":
        last = run.errors[-1]
        return (f"I stopped: {last.tool} failed {REPEATED_FAILURES} times in a row with "
                f"{last.kind}: {last.message}. Check what {last.tool} needs, or try another approach.")
    if run.stop_reason != "max_iters":
        return None
    tried = ", ".join(f"ran {name} {n}×" for name, n in Counter(run.tools_used).items())
    parts = [tried] if tried else []
    if run.errors:
        parts.append(f'last attempt errored with "{run.errors[-1].message}"')
    if run.completed == 0:
        parts.append("no tool completed")
    return (f"I used all {run.budget} steps without finishing: {'; '.join(parts) or 'nothing ran'}. "
            "Try rephrasing the question or allowing more steps.")


def _exhausted(run: _Run) -> MaxIterationsError:
    thoughts = [s.thought for s in run.steps if s.thought]
    return MaxIterationsError(
        iterations=len(run.steps), max_iterations=run.budget, tools_used=list(run.tools_used),
        history=[s.model_copy(deep=True) for s in run.steps],
        partial_final_answer=thoughts[-1] if thoughts else None,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
