"""ReAct: think, pick a tool, observe, repeat; then extract the outputs from the trajectory.

Each iteration is one call of the step predictor and at most one tool call. The loop ends on
`finish`, on three similar tool failures in a row, or when the step budget runs out; then one
extraction call turns the inputs plus the trajectory into the outputs (or, in raise mode, running
out of steps raises MaxIterationsError). Calling `ask_to_user`, or a tool made interruptible,
pauses the run with HumanInTheLoopRequired; `resume` continues it from that step.

The loop is written once, `ReAct._loop`: a generator that yields the effects it needs (a model
call, a tool call) and the steps it completes, and is sent each effect's result. Two drivers run
it: `_events` in the caller's thread (`forward`, `stream`, `resume`) and `_aevents` on an event
loop (`aforward`, `astream`, `aresume`).
"""

from __future__ import annotations

import copy
import inspect
import json
import uuid
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, NamedTuple

from reference._adapters import Adapter, AdapterParseError
from reference._args import ToolArgsError
from reference._interrupt import HumanInTheLoopRequired, Reply, ToolCall, ask_to_user, parse_reply
from reference._predict import Predict, check_inputs
from reference._prediction import Prediction, Step, ToolErrorRecord
from reference._signature import Signature, SignatureError
from reference._tool import Tool

#: Three similar failures in a row (same tool, same exception type) stop the loop (ERR-2).
REPEATED_FAILURES = 3
#: How many tool errors a run keeps (ERR-2).
ERROR_HISTORY = 10
#: The built-in tool through which the agent asks the user (on unless `enable_ask_to_user=False`).
ASK_TO_USER = Tool(ask_to_user)
_RESERVED = {"trajectory", "next_thought", "next_tool_name", "next_tool_args", "max_iters",
             "stop_reason", "iterations", "fallback", "tool_errors"}


class MaxIterationsError(RuntimeError):
    """The step budget ran out before `finish` (raise mode), with what the run had gathered.

    `iterations` and `max_iterations` are the step calls made and allowed; `tools_used` the tools
    that ran, in order (`finish` is not one); `history` the steps, a copy the caller owns;
    `last_observation` the last step's observation, None without steps. `partial_final_answer` is
    the last non-empty thought, the nearest thing to an answer the loop produced, None without one.
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


@dataclass(frozen=True)
class Event:
    """One item of a stream: a `step` event as each step completes, then one `done` event."""

    kind: Literal["step", "done"]
    #: The step, a copy the caller owns (`step` events).
    step: Step | None = None
    #: Why the loop stopped (`done`): "finish", "max_iters" or "repeated_tool_errors".
    stop_reason: str | None = None
    #: The run's prediction (`done`).
    prediction: Prediction | None = None


class _Run:
    """One call's state. Never kept on the agent, so calls share nothing."""

    def __init__(self, inputs: dict[str, Any], budget: int) -> None:
        self.inputs = inputs
        self.budget = budget
        self.steps: list[Step] = []
        self.text = ""  # the trajectory as the model reads it, appended to step by step
        self.tools_used: list[str] = []
        self.completed = 0  # tool calls that returned
        self.errors: deque[ToolErrorRecord] = deque(maxlen=ERROR_HISTORY)
        self.failing: tuple[str, str] | None = None  # (tool, exception type) of the last step
        self.streak = 0  # how many steps in a row failed that way

    def record(self, step: Step, error: ToolErrorRecord | None = None) -> None:
        """Append `step`; count a failure streak, which any other kind of step ends."""
        i = len(self.steps)
        self.steps.append(step)
        self.text += ("\n" if i else "") + (
            f"thought_{i}: {step.thought}\ntool_name_{i}: {step.tool_name}\n"
            f"tool_args_{i}: {json.dumps(step.tool_args)}\n"
            f"observation_{i}: {_text(step.observation)}\n")
        if error is None:
            self.failing, self.streak = None, 0
        else:
            self.errors.append(error)
            same = (error.tool, error.kind) == self.failing
            self.failing, self.streak = (error.tool, error.kind), self.streak + 1 if same else 1


@dataclass
class _Paused:
    """A run paused at a step, before the call it chose: for an approval when `confirm`, else
    for the user's answer to `ask_to_user`."""

    run: _Run
    thought: str
    name: str
    args: dict[str, Any]
    confirm: bool
    agent: str  # the key of the agent that paused it: only that agent resumes it


#: The loop: it yields effects to do (their results are sent back) and completed steps.
_Loop = Generator["_Effect | Step", Any, Prediction]
#: Part of the loop: it yields effects, and returns the stop reason or None to go on.
_Part = Generator["_Effect", Any, "str | None"]


class ReAct:
    """A tool-using agent: `ReAct("question -> answer", [search])(question="...")`.

    `on_max_iters` says what running out of steps does: "extract" the outputs from the partial
    trajectory (with a `fallback` message), or "raise" MaxIterationsError. Unless
    `enable_ask_to_user=False`, the agent may call the built-in `ask_to_user(question)` tool. A tool
    whose `interruptible` is true never runs before a person approves the call.
    """

    def __init__(self, signature: object, tools: Sequence[Tool | Callable[..., Any]], *,
                 max_iters: int = 10, adapter: Adapter | None = None,
                 on_max_iters: Literal["extract", "raise"] = "extract",
                 enable_ask_to_user: bool = True) -> None:
        if on_max_iters not in ("extract", "raise"):
            raise ValueError(f"on_max_iters must be 'extract' or 'raise', not {on_max_iters!r}")
        self.signature = Signature.coerce(signature)
        clash = sorted(_RESERVED & {*self.signature.inputs, *self.signature.outputs})
        if clash:
            raise SignatureError(f"field {clash[0]!r} is reserved by ReAct; rename it")
        self.tools: dict[str, Tool] = {}
        builtin = [ASK_TO_USER] if enable_ask_to_user else []
        for tool in [*(t if isinstance(t, Tool) else Tool(t) for t in tools), *builtin]:
            if tool.name == "finish" or tool.name in self.tools:
                raise ValueError(f"tool name {tool.name!r} is reserved or used twice")
            self.tools[tool.name] = tool
        self.max_iters = max_iters
        self.adapter = adapter
        self.on_max_iters = on_max_iters
        self.step = Predict(self._step_signature(), adapter=adapter)
        self.extract = Predict(self.signature.extended(inputs={"trajectory": str}), adapter=adapter)
        # The ids of the interrupts this agent raised that no resume has used. Kept here, not on
        # the interrupt, so that a copy of an interrupt (deepcopy, pickle) cannot resume again.
        self._key = uuid.uuid4().hex
        self._pending: set[str] = set()

    def __call__(self, **inputs: Any) -> Prediction:
        return self.forward(**inputs)

    def __getstate__(self) -> dict[str, Any]:
        # A copy (copy, deepcopy, pickle) is another agent: it resumes none of this one's pauses,
        # or the two could each run an approved call.
        return {k: v for k, v in self.__dict__.items() if k not in ("_key", "_pending")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _key=uuid.uuid4().hex, _pending=set())

    def forward(self, *, max_iters: int | None = None, **inputs: Any) -> Prediction:
        """Run the loop over `inputs`; `max_iters` caps this call only (each call has a fresh budget)."""
        return _prediction(_events(self._loop(self._start(inputs, max_iters)), snapshots=False))

    async def aforward(self, *, max_iters: int | None = None, **inputs: Any) -> Prediction:
        """`forward` on the running event loop: async tools are awaited, while model calls and
        plain tools run in worker threads, so concurrent runs never block one another."""
        loop = self._loop(self._start(inputs, max_iters))
        return _prediction([event async for event in _aevents(loop, snapshots=False)])

    def stream(self, *, max_iters: int | None = None, **inputs: Any) -> Iterator[Event]:
        """`forward`, as events: one per step as it completes, then one `done` with the prediction."""
        return _events(self._loop(self._start(inputs, max_iters)))

    def astream(self, *, max_iters: int | None = None, **inputs: Any) -> AsyncIterator[Event]:
        """`stream` on the running event loop (see `aforward`)."""
        return _aevents(self._loop(self._start(inputs, max_iters)))

    def resume(self, response: str, interrupt: HumanInTheLoopRequired) -> Prediction:
        """Continue the run `interrupt` paused, from the paused step, with the person's response.

        To a pending call: `yes`/`y` runs it, `no`/`n` rejects it and the agent chooses again,
        `{"edit": {"name": ..., "args": {...}}}` runs that call instead (validated like any other),
        and any other text is fed back as the step's observation. To `ask_to_user`, the response
        is the answer. The run keeps its iteration, trajectory, inputs and budget. An interrupt
        resumes once (a copy of it too), and only on the agent that raised it; one whose
        `tool_call` was altered, or a response that is not text or nests too deep to parse, is
        refused, and leaves the run resumable.
        """
        return _prediction(_events(self._resumed(response, interrupt), snapshots=False))

    async def aresume(self, response: str, interrupt: HumanInTheLoopRequired) -> Prediction:
        """`resume` on the running event loop (see `aforward`)."""
        loop = self._resumed(response, interrupt)
        return _prediction([event async for event in _aevents(loop, snapshots=False)])

    def _start(self, inputs: dict[str, Any], max_iters: int | None) -> _Run:
        check_inputs(self.signature, inputs)
        return _Run(inputs, self.max_iters if max_iters is None else max_iters)

    def _resumed(self, response: str, interrupt: HumanInTheLoopRequired) -> _Loop:
        """The paused run, answered with the parsed response. Every check comes before the
        interrupt is used, so a refused resume leaves the run resumable."""
        paused = interrupt.state()
        if not isinstance(paused, _Paused):
            raise ValueError(f"interrupt {interrupt.interrupt_id} did not pause a ReAct run")
        if paused.agent != self._key:
            raise ValueError(f"interrupt {interrupt.interrupt_id} was raised by another agent; "
                             "resume it with the agent that raised it")
        if not isinstance(response, str):
            raise TypeError(f"the response must be a string, not {type(response).__name__}")
        reply = parse_reply(response) if paused.confirm else response
        try:
            self._pending.remove(interrupt.interrupt_id)  # atomic: of racing resumes, one wins
        except KeyError:
            raise RuntimeError(f"interrupt {interrupt.interrupt_id} was already resumed: a paused "
                               "call runs at most once") from None
        return self._loop(paused.run, (paused, reply))

    def _loop(self, run: _Run, resume: tuple[_Paused, Reply] | None = None) -> _Loop:
        """The loop over `run`, from its paused step answered with a reply if `resume` is given."""
        stop_reason = None
        while stop_reason is None and len(run.steps) < run.budget:
            if resume is None:
                stop_reason = yield from self._iterate(run)
            else:
                stop_reason = yield from self._answer(run, *resume)
                resume = None
            yield run.steps[-1]
        if stop_reason is None:
            stop_reason = "max_iters"
            if self.on_max_iters == "raise":
                raise _exhausted(run)
        extracted = yield _model(self.extract, {**run.inputs, "trajectory": run.text})
        return Prediction(
            extracted.outputs(),
            trajectory=run.steps,  # the run is over: its steps become the caller's
            stop_reason=stop_reason,
            iterations=len(run.steps),
            fallback=_fallback(run, stop_reason),
            tool_errors=list(run.errors),
        )

    def _iterate(self, run: _Run) -> _Part:
        """One step call, then the call it chose."""
        try:
            choice = yield _model(self.step, {**run.inputs, "trajectory": run.text})
        except AdapterParseError as exc:
            run.record(Step(thought="", tool_name="", tool_args={},
                            observation=f"Error: could not parse the step: {exc}"))
            return None
        # Read by key: attribute reads reach Prediction.__getattr__ only after a failed lookup.
        return (yield from self._act(run, choice["next_thought"], choice["next_tool_name"],
                                     choice["next_tool_args"]))

    def _act(self, run: _Run, thought: str, name: str, args: dict[str, Any],
             approved: bool = False) -> _Part:
        """Carry out a chosen call, and record it as a step: finish, pause for a person, or run."""
        if name == "finish":
            run.record(Step(thought=thought, tool_name=name, tool_args={}, observation="Completed."))
            return "finish"
        tool = self.tools.get(name)
        if tool is None:  # only an edit can name one: the step output admits the tools' names
            run.record(Step(thought=thought, tool_name=name, tool_args=args,
                            observation=f"Error: there is no tool {name!r}"))
            return None
        try:
            valid = tool.validate(args)
        except ToolArgsError as exc:
            run.record(Step(thought=thought, tool_name=name, tool_args=args,
                            observation=f"Error: invalid arguments for {name}: {exc}"))
            return None
        if tool is ASK_TO_USER or (tool.interruptible and not approved):
            paused = _Paused(run, thought, name, args, confirm=tool is not ASK_TO_USER, agent=self._key)
            interrupt = _interrupt(run, paused)
            self._pending.add(interrupt.interrupt_id)
            raise interrupt
        run.tools_used.append(name)
        try:
            result = yield _tool(tool.func, valid)
        except Exception as exc:
            error = ToolErrorRecord(tool=name, kind=type(exc).__name__, message=str(exc))
            run.record(Step(thought=thought, tool_name=name, tool_args=args,
                            observation=f"Error executing {name}: {exc}"), error)
            return "repeated_tool_errors" if run.streak >= REPEATED_FAILURES else None
        run.completed += 1
        run.record(Step(thought=thought, tool_name=name, tool_args=args,
                        observation=_observation(result)))
        return None

    def _answer(self, run: _Run, paused: _Paused, reply: Reply) -> _Part:
        """The paused step, done as the person's reply says (see `resume`)."""
        thought, name, args = paused.thought, paused.name, paused.args
        if not paused.confirm:  # the agent asked the user: the response is the answer
            run.record(Step(thought=thought, tool_name=name, tool_args=args, observation=reply))
            return None
        if reply == "yes":
            return (yield from self._act(run, thought, name, args, approved=True))
        if isinstance(reply, ToolCall):
            return (yield from self._act(run, thought, reply.name, reply.args, approved=True))
        said = "the user rejected the call" if reply == "no" else f"the user says: {reply}"
        run.record(Step(thought=thought, tool_name=name, tool_args=args,
                        observation=f"{name} did not run; {said}"))
        return None

    def _step_signature(self) -> Signature:
        """Inputs + trajectory -> next_thought, next_tool_name (tools or finish), next_tool_args."""
        outputs = ", ".join(f"`{n}`" for n in self.signature.outputs)
        lines = [self.signature.instructions, "",
                 "You are an agent. In each step, think, then pick the next tool and its "
                 "arguments; each tool's result is appended to the trajectory. The tools are:"]
        lines += [f"({i}) {t.name}: {t.description} Arguments: {json.dumps(t.args_schema)}"
                  for i, t in enumerate(self.tools.values(), 1)]
        lines += [f"({len(self.tools) + 1}) finish: call this when you have everything needed to "
                  f"produce the outputs: {outputs}. Arguments: {{}}",
                  "next_tool_args must be a valid JSON object of the tool's arguments."]
        names = (*self.tools, "finish")
        return self.signature.extended(
            inputs={"trajectory": str},
            outputs={"next_thought": str, "next_tool_name": Literal[names], "next_tool_args": dict},
            instructions="\n".join(lines),
        )


def _interrupt(run: _Run, paused: _Paused) -> HumanInTheLoopRequired:
    """The interrupt that pauses `run`: the question, a snapshot for the caller, the run to resume."""
    name, args = paused.name, paused.args
    call = ToolCall(name=name, args=copy.deepcopy(args)) if paused.confirm else None
    question = (f"Confirm execution of {name} with args: {json.dumps(args)}? (yes/no)"
                if paused.confirm else str(args["question"]))
    context = {"trajectory": [s.model_copy(deep=True) for s in run.steps],
               "iteration": len(run.steps), "input_args": copy.deepcopy(run.inputs)}
    return HumanInTheLoopRequired(question, tool_call=call, context=context, state=paused)


class _Effect(NamedTuple):  # a tuple: made twice a step, cheaper than a frozen dataclass
    """Something the loop needs done, a model call or a tool call: `run` it, or await `arun()`."""

    run: Callable[[], Any]
    arun: Callable[[], Awaitable[Any]]


def _model(predict: Predict, inputs: dict[str, Any]) -> _Effect:
    """A model call; from async code in a worker thread, so the event loop never waits on it."""
    return _Effect(lambda: predict(**inputs), lambda: _asyncio().to_thread(predict, **inputs))


def _tool(func: Callable[..., Any], args: dict[str, Any]) -> _Effect:
    """A tool call. A coroutine function is awaited (or, from sync code, run to completion); a
    plain function runs in a worker thread from async code."""
    if inspect.iscoroutinefunction(func):
        return _Effect(lambda: _asyncio().run(func(**args)), lambda: func(**args))
    return _Effect(lambda: func(**args), lambda: _asyncio().to_thread(func, **args))


def _asyncio() -> ModuleType:
    """asyncio, imported by the first async call: it would add a quarter to `import reference`."""
    import asyncio

    return asyncio


def _events(loop: _Loop, snapshots: bool = True) -> Iterator[Event]:
    """Drive `loop` in this thread: do each effect it yields; pass on its steps (copies the caller
    owns, unless `snapshots` is false: the caller keeps only the `done` event), then `done`."""
    result, error = None, None
    while True:
        item = _advance(loop, result, error, snapshots)
        result, error = None, None
        if item is None:
            continue
        if isinstance(item, Event):
            yield item
            if item.kind == "done":
                return
            continue
        try:
            result = item.run()
        except Exception as exc:
            error = exc


async def _aevents(loop: _Loop, snapshots: bool = True) -> AsyncIterator[Event]:
    """`_events` on the running event loop: await each effect."""
    result, error = None, None
    while True:
        item = _advance(loop, result, error, snapshots)
        result, error = None, None
        if item is None:
            continue
        if isinstance(item, Event):
            yield item
            if item.kind == "done":
                return
            continue
        try:
            result = await item.arun()
        except Exception as exc:
            error = exc


def _advance(loop: _Loop, result: Any, error: Exception | None,
             snapshots: bool) -> _Effect | Event | None:
    """Send the last effect's result into the loop, or throw its exception in; what comes out
    next: an effect to do, a step event with a copy of the step (None without `snapshots`), or
    (when the loop returns) the `done` event."""
    try:
        item = loop.throw(error) if error else loop.send(result)
    except StopIteration as stop:
        return Event("done", stop_reason=stop.value.stop_reason, prediction=stop.value)
    if isinstance(item, _Effect):  # tested first: isinstance(x, Step) goes through ABCMeta
        return item
    return Event("step", step=item.model_copy(deep=True)) if snapshots else None


def _prediction(events: Iterable[Event]) -> Prediction:
    *_, done = events
    assert done.prediction is not None, "a stream ends with its done event"
    return done.prediction


def _fallback(run: _Run, stop_reason: str) -> str | None:
    """What to tell the user when the loop did not finish by itself (ERR-2, EXH-5)."""
    if stop_reason == "repeated_tool_errors":
        last = run.errors[-1]
        return (f"I stopped: {last.tool} failed {REPEATED_FAILURES} times in a row with "
                f"{last.kind}: {last.message}. Check the inputs {last.tool} needs, or try "
                "another approach.")
    if stop_reason != "max_iters":
        return None
    parts = [", ".join(f"ran {name} {n}×" for name, n in Counter(run.tools_used).items())]
    if run.errors:
        parts.append(f'last attempt errored with "{run.errors[-1].message}"')
    if run.completed == 0:
        parts.append("no tool completed")
    summary = "; ".join(p for p in parts if p)
    return (f"I used all {run.budget} steps without finishing: {summary}. "
            "Try rephrasing the request or allowing more steps.")


def _exhausted(run: _Run) -> MaxIterationsError:
    thoughts = [s.thought for s in run.steps if s.thought]
    return MaxIterationsError(
        iterations=len(run.steps), max_iterations=run.budget, tools_used=list(run.tools_used),
        history=[s.model_copy(deep=True) for s in run.steps],
        partial_final_answer=thoughts[-1] if thoughts else None,
    )


def _observation(result: Any) -> Any:
    """A tool's result as the trajectory keeps it: JSON data as it is (a copy, which the caller
    owns: the tool may keep the original), anything else as str()."""
    if isinstance(result, str | int | float | None):  # JSON, immutable: the common case, kept fast
        return result
    try:
        json.dumps(result)
    except (TypeError, ValueError):
        return str(result)
    return copy.deepcopy(result)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return str(value) if type(value) is int else json.dumps(value)  # the same text; str() is faster
