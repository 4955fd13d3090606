"""Helpers for what every binding translates: a tool's function and a call's step cap for the
library, the scripted answer at a seam, and what the library hands back (its tool calls and their
results, a pause, its step-cap error, its stream) as the contract's data.

`render` writes what the model says in the library's formats; this module reads the library back.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue

from conformance._tools import _PY_TYPES
from conformance.binding import (
    AgentSpec,
    CallRequest,
    ErrorInfo,
    Event,
    ExtractTurn,
    FaultTurn,
    FinalTurn,
    LMCall,
    Outcome,
    SignatureSpec,
    Step,
    StepTurn,
)
from conformance.render import json_value, reply_outputs

if TYPE_CHECKING:
    from conformance._model import ScriptedModel
    from conformance._tools import SuiteTool

__all__ = [
    "ARGS5_DEEP",
    "PYTHON_TYPES",
    "Approval",
    "NativeCall",
    "aanswer",
    "annotated_function",
    "answer",
    "approval",
    "areported",
    "built",
    "capped",
    "documented_function",
    "done_event",
    "finished",
    "interrupt",
    "max_iterations",
    "paused",
    "raised",
    "reported",
    "serving",
    "serving_model",
    "shown",
    "signature_class",
    "step",
    "step_cap",
    "step_event",
    "step_events",
    "steps",
    "streamed",
    "tool_args",
]

#: The Python type of each field and parameter type the contract names (`FieldSpec.type`).
PYTHON_TYPES: Mapping[str, type] = _PY_TYPES

#: A tool call as a binding reads it from the library: (call id, thought, tool name, args).
NativeCall = tuple[str | None, str | None, str, Any]

#: The test ids of ARGS-5's deeply nested cases, for a binding whose library fails those (and not
#: the long string) to name them in its known failures.
ARGS5_DEEP: tuple[str, ...] = tuple(
    f"test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why[store-{case}]"
    for case in ("an object nested 100000 levels deep", "an object nested 5000 levels deep",
                 "an object nested 5000 levels deep after an escaped quote",
                 "arrays nested 5000 levels deep inside its object",
                 "arrays nested 5000 levels deep, each beside an empty one"))

_Built = TypeVar("_Built")

#: The running call's model (`serving`): a contextvar, so each run and each async task sees its own.
_SERVING: ContextVar[ScriptedModel | None] = ContextVar("conformance_serving_model", default=None)


def documented_function(tool: SuiteTool) -> Callable[..., Any]:
    """`tool.as_function()` with each argument's description in a Google-style `Args:` docstring."""
    function = tool.as_function()
    args = "".join(f"\n    {p.name}: {p.description}" for p in tool.spec.parameters if p.description)
    function.__doc__ = tool.spec.description + (f"\n\nArgs:{args}\n" if args else "")
    return function


def annotated_function(tool: SuiteTool) -> Callable[..., Any]:
    """`tool.as_function()` with each described parameter annotated `Annotated[type, description]`,
    the form Semantic Kernel and AutoGen read a parameter's description in."""
    from typing import Annotated

    function = tool.as_function()
    for parameter in tool.spec.parameters:
        if parameter.description:
            function.__annotations__[parameter.name] = Annotated[PYTHON_TYPES[parameter.type],
                                                                 parameter.description]
    return function


def signature_class(spec: SignatureSpec, base: type, input_field: Callable[[str], Any],
                    output_field: Callable[[str], Any]) -> type:
    """The signature's class form (SIG-2): a subclass of `base` whose docstring is the instructions
    and whose fields are annotated with their types and made by `input_field(description)` or
    `output_field(description)`."""
    namespace: dict[str, Any] = {
        "__doc__": spec.instructions,
        "__annotations__": {f.name: PYTHON_TYPES[f.type] for f in (*spec.inputs, *spec.outputs)},
        **{f.name: input_field(f.description) for f in spec.inputs},
        **{f.name: output_field(f.description) for f in spec.outputs},
    }
    return type("ScenarioSignature", (base,), namespace)


def built(make: Callable[[], _Built]) -> _Built | ErrorInfo:
    """What `make()` builds for `Binding.build`, or the library's refusal (what it raised) as ErrorInfo."""
    try:
        return make()
    except Exception as exc:
        return ErrorInfo.from_exception(exc)


def step_cap(spec: AgentSpec, call: CallRequest) -> int:
    """The step cap of this call: its own (`call.max_steps`, LOOP-4), else the agent's."""
    return spec.max_steps if call.max_steps is None else call.max_steps


def answer(model: ScriptedModel, call: LMCall) -> StepTurn | FinalTurn | ExtractTurn:
    """`model.answer(call)` at a seam above every transport, which cannot fail as a client would:
    a scripted transport fault (scripted only for `lm-retry`) raises ConnectionError."""
    turn = model.answer(call)
    if isinstance(turn, FaultTurn):
        raise ConnectionError(f"a scripted transport fault ({turn.fault}) reached a seam above the "
                              "transport: serve such a script through the library's own client")
    return turn


async def aanswer(model: ScriptedModel, call: LMCall) -> StepTurn | FinalTurn | ExtractTurn:
    """`answer` for an async seam: it yields to the event loop first, as a network call would, so
    that overlapping runs interleave (ASYNC-*)."""
    import asyncio  # only async runs need it: a sync run's start-up does not pay its import

    await asyncio.sleep(0)
    return answer(model, call)


@contextmanager
def serving(model: ScriptedModel) -> Iterator[ScriptedModel]:
    """`model` answers the requests made in this context (`serving_model()`), per run and async task."""
    token = _SERVING.set(model)
    try:
        yield model
    finally:
        _SERVING.reset(token)


def serving_model() -> ScriptedModel:
    """The model `serving` installed for the running call (its thread or async task)."""
    model = _SERVING.get()
    if model is None:
        raise RuntimeError("no scripted model is serving this call: make it inside translate.serving(model)")
    return model


def shown(role: str, content: str | None, calls: Iterable[tuple[str, Any]] = ()) -> dict[str, JsonValue]:
    """A message as the model is shown it (for `LMCall.messages`): its text, then a line
    `call name(args)` for each tool call `(name, args)` it made, args as the model wrote them."""
    text = "" if content is None else content
    for name, args in calls:
        text += f"\ncall {name}({args if isinstance(args, str) else json.dumps(args)})"
    return {"role": role, "content": text}


def tool_args(value: Any) -> JsonValue:
    """Tool-call args as the model wrote them: a JSON text's data, or the text itself where it is
    not JSON (malformed, or nested too deep to parse); anything else as JSON data."""
    if not isinstance(value, str):
        data: JsonValue = json_value(value)
        return data
    try:
        data = json_value(json.loads(value))
    except (json.JSONDecodeError, RecursionError):
        return value
    return data


def step(tool_name: Any, tool_args: Any = None, observation: Any = None, thought: Any = None, *,
         is_error: bool | None = None, call_id: str | None = None) -> Step:
    """A Step from the values a library keeps: the tool name and thought as text (a None thought stays
    None), the args and observation as JSON data, the library's own error flag and call id as given."""
    return Step(thought=None if thought is None else str(thought), tool_name=str(tool_name),
                tool_args=json_value(tool_args), observation=json_value(observation),
                is_error=is_error, call_id=call_id)


def steps(calls: Iterable[NativeCall], results: Mapping[str, Any],
          errors: Mapping[str, bool] | None = None) -> list[Step]:
    """One Step per tool call `(call id, thought, tool name, args)`, in order, its observation the
    result filed under its call id (None while it has none), bound to the call by that id.

    `errors` holds the library's own error flag of each result by call id, for a library that has
    one: a call without a result yet has no flag (None); without `errors` every flag is None."""
    return [Step(thought=thought or None, tool_name=name, tool_args=tool_args(args),
                 observation=json_value(results.get(call_id or "")), call_id=call_id or None,
                 is_error=None if errors is None else errors.get(call_id or ""))
            for call_id, thought, name, args in calls]


def step_event(model: ScriptedModel, step: Step | None) -> Event:
    """A stream's step event, with the model calls made by the time it arrived (STREAM-1)."""
    return Event(kind="step", model_calls=len(model.calls), step=step)


def step_events(model: ScriptedModel, events: list[Event], trajectory: Sequence[Step]) -> None:
    """Append to `events` a step event for each step of `trajectory` (the run so far) that has its
    observation and no event yet: for a stream read by re-reading the run's messages as they grow."""
    done = [step for step in trajectory if step.observation is not None]
    events.extend(step_event(model, step) for step in done[sum(e.kind == "step" for e in events):])


def done_event(model: ScriptedModel, outputs: dict[str, JsonValue] | None,
               stop_reason: str | None = None) -> Event:
    """A stream's final `done` event, with the model calls made by the time it arrived."""
    return Event(kind="done", model_calls=len(model.calls), outputs=outputs, stop_reason=stop_reason)


def streamed(model: ScriptedModel, events: list[Event] | None, outcome: Outcome) -> Outcome:
    """`outcome` of a run that returned, with its stream's `events` (None: not a stream) ended by a
    `done` event carrying the outcome's outputs and stop reason."""
    if events is None:
        return outcome
    done = done_event(model, outcome.outputs, outcome.stop_reason)
    return outcome.model_copy(update={"events": [*events, done]})


def reported(model: ScriptedModel, mode: str, report: Callable[[Any], Outcome],
             failed: Callable[[Exception], Outcome], *, sync: Callable[[], Any] | None = None,
             asynchronous: Callable[[], Any] | None = None,
             stream: Callable[[list[Event]], Any] | None = None) -> Outcome:
    """The library called in the form `mode` names, and what it returned or let escape, reported.

    `sync()`, `asynchronous()` or `stream(events)` (which appends the step events) makes the call; a
    coroutine it returns runs on a new event loop. Its result goes through `report` (a stream's events
    ended by `streamed`), an exception through `failed` (with the events the stream had sent).
    """
    forms: dict[str, Callable[..., Any] | None] = {"sync": sync, "async": asynchronous, "stream": stream}
    form = forms.get(mode)
    if form is None:
        raise NotImplementedError(f"the binding gives no {mode!r} form of the call")
    events: list[Event] | None = [] if mode == "stream" else None
    try:
        result = form() if events is None else form(events)
        if isinstance(result, Coroutine):
            import asyncio  # only async runs need it: a sync run's start-up does not pay its import

            result = asyncio.run(result)
    except Exception as exc:
        return failed(exc).model_copy(update={"events": events})
    return streamed(model, events, report(result))


async def areported(result: Awaitable[Any], report: Callable[[Any], Outcome],
                    failed: Callable[[Exception], Outcome]) -> Outcome:
    """`reported` for `arun`: the library's async form (`result`) awaited on the running event loop."""
    try:
        value = await result
    except Exception as exc:
        return failed(exc)
    return report(value)


def finished(signature: SignatureSpec, reply: Any, trajectory: list[Step], iterations: int | None,
             stop_reason: str = "finish") -> Outcome:
    """A native loop's run that returned: its last reply that called no tool is the final answer.

    The reply becomes the outputs (`render.reply_outputs`) with `stop_reason`; a run that ended on no
    such reply (None) has neither. The trajectory and step count are the library's.
    """
    if reply is None:
        return Outcome(trajectory=trajectory, iterations=iterations)
    return Outcome(outputs=reply_outputs(signature, reply), trajectory=trajectory,
                   stop_reason=stop_reason, iterations=iterations)


def max_iterations(exc: BaseException, **fields: JsonValue) -> ErrorInfo:
    """The library's step-cap error, with the structured fields it carries (EXH-2), if any."""
    return ErrorInfo(type=type(exc).__name__, message=str(exc), kind="max-iterations", fields=fields)


def capped(exc: BaseException, trajectory: list[Step], iterations: int, cap: int | None,
           tools: Iterable[str]) -> Outcome:
    """A run stopped by its step-cap error `exc` whose partial run the binding read through the
    library's documented API (`PARITY["partial_run"]`): the error with the contract's fields, filled
    from `trajectory` (a call of a name not in `tools` ran no tool), `iterations` and the cap the
    binding gave (`cap`, None where it gave none), and `stop_reason` max_steps."""
    own = set(tools)
    seen = [s for s in trajectory if s.observation is not None]
    fields: dict[str, JsonValue] = {
        "iterations": iterations, "tools_used": [s.tool_name for s in seen if s.tool_name in own],
        "history": [s.model_dump(mode="json") for s in trajectory],
        "last_observation": seen[-1].observation if seen else None}
    if cap is not None:
        fields["max_iterations"] = cap
    return Outcome(trajectory=trajectory, iterations=iterations, stop_reason="max_steps",
                   error=max_iterations(exc, **fields))


def raised(exc: BaseException, cap_error: type[BaseException]) -> ErrorInfo:
    """An exception the library let escape: its step-cap error `cap_error`, which carries no fields,
    as `max_iterations(exc)`; any other as `ErrorInfo.from_exception(exc)`."""
    return max_iterations(exc) if isinstance(exc, cap_error) else ErrorInfo.from_exception(exc)


def interrupt(type: str, message: str, *, interrupt_id: str, question: str | None,
              tool: str | None, args: Any = None, call_id: str | None = None,
              trajectory: Sequence[Step] = (), iteration: int | None = None,
              inputs: Any = None) -> ErrorInfo:
    """A pause for a person (`kind="human-in-the-loop"`) with the fields the contract names: the
    pending call of `tool` (None: the agent asked a question) and the context it paused in."""
    return ErrorInfo(type=type, message=message, kind="human-in-the-loop", fields={
        "question": question,
        "interrupt_id": interrupt_id,
        "tool_call": None if tool is None else {"name": tool, "args": tool_args(args), "call_id": call_id},
        "context": {"trajectory": [s.model_dump(mode="json") for s in trajectory],
                    "iteration": iteration, "input_args": json_value(inputs)},
    })


def paused(type: str, message: str, *, interrupt_id: str, tool: str, args: Any, call_id: str | None,
           trajectory: list[Step], iterations: int, inputs: Any) -> Outcome:
    """A run paused before its call of `tool`, for approval: its steps so far, and the pause (no
    question: the call is what is asked about), `interrupt(...)`, in them."""
    return Outcome(trajectory=trajectory, iterations=iterations, error=interrupt(
        type, message, interrupt_id=interrupt_id, question=None, tool=tool, args=args,
        call_id=call_id, trajectory=trajectory, iteration=iterations, inputs=inputs))


class Approval(BaseModel):
    """A person's answer to a pause (`ResumeRequest.response`), read as a decision."""

    model_config = ConfigDict(frozen=True)
    #: yes/y approves, no/n rejects, `{"edit": {...}}` edits the call, anything else is a message.
    decision: Literal["approve", "reject", "edit", "message"]
    #: The response as the person gave it.
    text: str
    #: An edit's tool name (None: it names none) and args.
    name: str | None = None
    args: JsonValue = None


def approval(response: str) -> Approval:
    """Read `ResumeRequest.response`: `yes`/`y`, `no`/`n` (any case), an edit, or free text."""
    word = response.strip().lower()
    if word in ("yes", "y", "no", "n"):
        return Approval(decision="approve" if word.startswith("y") else "reject", text=response)
    try:
        edit = json.loads(response)
    except (json.JSONDecodeError, RecursionError):
        edit = None
    edit = edit.get("edit") if isinstance(edit, dict) else None
    if isinstance(edit, dict):
        name = edit.get("name")
        return Approval(decision="edit", text=response, name=name if isinstance(name, str) else None,
                        args=json_value(edit.get("args")))
    return Approval(decision="message", text=response)
