"""The binding for `dspy.ReAct` (dspy 3.4).

The scripted model is a dspy custom engine (an object with `complete(Request) -> Response`) behind a
real `dspy.LM(..., engine=..., cache=False)`, installed per call with `dspy.context(lm=...)` (which
dspy documents as usable from any thread or async task): dspy's adapters format every request and
parse every reply, and dspy's own execution layer runs the call.

Async calls go through `ReAct.acall` (its `aforward`). Streaming goes through `dspy.streamify`, whose
stream holds status messages and ends with the Prediction. A `StatusMessageProvider`, dspy's public
way to choose what those messages say, writes each tool call and each tool result as JSON; a step
event is a tool-start message and the tool-end message after it. dspy has no human in the loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, get_args

import dspy
from dspy import lm15
from pydantic import JsonValue

from conformance import render
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Event,
    ExtractTurn,
    FaultTurn,
    LMCall,
    Outcome,
    SignatureSpec,
    Step,
)
from conformance.render import json_value

_ADAPTERS: dict[AdapterName, Any] = {"chat": dspy.ChatAdapter, "json": dspy.JSONAdapter}
_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}
#: What dspy's engine contract says a custom engine raises for each transport fault.
_FAULTS: dict[str, tuple[Any, int | None]] = {
    "timeout": (lm15.TimeoutError, None), "connection": (lm15.TransportError, None),
    "429": (lm15.RateLimitError, 429), "500": (lm15.ServerError, 500), "503": (lm15.ServerError, 503),
    "400": (lm15.InvalidRequestError, 400), "401": (lm15.AuthError, 401),
}
_SIG5 = "test_a_malformed_signature_string_fails_at_construction_with_a_clear_error"
_ARGS3 = "test_malformed_json_tool_args_never_crash_the_run"
_REPAIRED = "adapters/utils.py parse_value repairs malformed JSON (json_repair): the tool gets the repair"


class _Agent:
    """A built `dspy.ReAct` and the prediction its last call returned."""

    def __init__(self, react: Any) -> None:
        self.react = react
        self.last: Any = None


class _Engine:
    """A dspy custom engine that answers every request from the scenario's script."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model

    def complete(self, request: Any) -> Any:
        messages: list[dict[str, JsonValue]] = []
        if request.system is not None:
            system = request.system if isinstance(request.system, str) else "".join(
                p.text for p in request.system)
            messages.append({"role": "system", "content": system})
        messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
        system_text = str(messages[0]["content"]) if messages[0]["role"] == "system" else ""
        adapter = render.request_adapter(system_text)
        # Classified on the system message, which declares the output fields: the user message holds
        # the trajectory, where dspy's tool-error tracebacks quote its own `pred.next_tool_name` source.
        kind = render.request_kind(system_text or "\n".join(str(m["content"]) for m in messages))
        turn = self.model.answer(LMCall(kind=kind, adapter=adapter, messages=messages))
        if isinstance(turn, FaultTurn):
            error, status = _FAULTS[turn.fault]
            raise error("scripted transport fault", status=status, retry_after=turn.retry_after)
        # dspy extracts with a ChainOfThought, whose signature starts with a `reasoning` output.
        extra = {"reasoning": "The trajectory has it."} if isinstance(turn, ExtractTurn) else None
        reply = render.json_reply(turn, extra) if adapter == "json" else render.chat_reply(turn, extra)
        message = lm15.Message.assistant([lm15.TextPart(reply)])
        return lm15.Response(id=None, model="scripted", message=message, finish_reason="stop",
                             usage=lm15.Usage(input_tokens=0, output_tokens=0, total_tokens=0))

    def stream(self, request: Any) -> Any:
        """A streamed run (under `dspy.streamify`) asks for the same reply as events."""
        return lm15.response_to_events(self.complete(request))

    def close(self) -> None:
        """Nothing to release."""


class _AsyncEngine:
    """The async counterpart dspy requires for `acall`."""

    def __init__(self, engine: _Engine) -> None:
        self.engine = engine

    async def complete(self, request: Any) -> Any:
        return self.engine.complete(request)

    async def stream(self, request: Any) -> Any:
        for event in self.engine.stream(request):
            yield event

    async def aclose(self) -> None:
        """Nothing to release."""


class DSPyBinding(Binding):
    """Runs the suite against `dspy.ReAct`."""

    name = "dspy"
    capabilities = frozenset({"tool-errors", "tool-args", "max-steps-extract", "async", "streaming"})
    known_failures: ClassVar[Mapping[str, str]] = {
        "ADP-2": "dspy.ReAct(signature, tools, max_iters) has no adapter parameter (predict/react.py)",
        "ADP-3": "dspy.ReAct(signature, tools, max_iters) has no adapter parameter (predict/react.py)",
        "Fifty overlapping async runs share no state":
            "dspy.ReAct(signature, tools, max_iters) has no adapter parameter (predict/react.py): the "
            "agents with an adapter of their own cannot be built",
        "STREAM-1": "streamify ends the stream with the bare Prediction, as ReAct records no stop reason; "
                    "its status callback skips the finish tool (streaming/messages.py on_tool_start)",
        _SIG5 + "[-> answer-input-input]":
            "dspy accepts a signature without inputs: signature.py _parse_signature only needs one '->'",
        _SIG5 + "[question ->-output-output]":
            "dspy accepts a signature without outputs: signature.py _parse_signature only needs one '->'",
        _SIG5 + "[question, question -> answer-question-duplicat|more than once|twice|repeat]":
            "signature.py _parse_signature collects the fields into a dict: a repeated name merges silently",
        "A signature value whose input and output share a name fails at construction":
            "Signature.append/insert rebuild fields as dict(inputs + outputs): the output replaces the input",
        "A call that lacks a required input fails before any model call":
            "Predict logs 'Not all input fields were provided' (predict.py) and calls the model anyway",
        _ARGS3 + '[{"amount": 50, "recipient": "Ann"]': _REPAIRED,
        _ARGS3 + "[{amount: 50, recipient: Ann}]": _REPAIRED,
        "Tool args nested a hundred thousand levels deep fail fast with a clear error":
            "parse_value's json_repair raises RecursionError, which neither the adapter nor ReAct catches",
        "Tool args of several megabytes fail fast with a clear error":
            "dspy puts no size limit on tool args: the 5 MB string reaches the tool",
        "A raising tool becomes an error observation and the loop goes on":
            "ReAct.forward writes 'Execution error in explode: ' plus a traceback, not 'Error executing ...'",
        "Three similar failures in a row stop the retries with a suggestion":
            "ReAct.forward has no repeated-failure stop: it calls the failing tool until max_iters",
        "The error history keeps the last ten errors":
            "dspy.ReAct keeps no tool-error history (predict/react.py)",
        "After repeated tool errors the steps appear in the order they ran, one observation each":
            "ReAct.forward has no repeated-failure stop: it asks the model for a fifth step",
    }

    @property
    def version(self) -> str:
        return str(dspy.__version__)

    def configure(self, *, adapter: AdapterName | None) -> None:
        dspy.configure(adapter=_ADAPTERS[adapter]() if adapter else None)

    def global_adapter(self) -> AdapterName | None:
        current = dspy.settings.adapter
        return next((n for n, cls in _ADAPTERS.items() if type(current) is cls), None)

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        # dspy.ReAct has no adapter parameter: the override is passed as the requirement states it,
        # and dspy's refusal is reported. `on_max_steps` has no parameter either: dspy always extracts.
        override = {"adapter": _ADAPTERS[spec.adapter]()} if spec.adapter else {}
        try:
            react = dspy.ReAct(_signature(spec.signature), [dspy.Tool(t.as_function()) for t in tools],
                               max_iters=spec.max_steps, **override)
        except Exception as exc:
            return ErrorInfo.from_exception(exc)
        return _Agent(react)

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        if call.mode == "async":
            return asyncio.run(self.arun(agent, call, model))
        if call.mode == "stream":
            return asyncio.run(_astream(agent, call, model))
        try:
            with dspy.context(lm=_lm(model)):
                prediction = agent.react(**call.kwargs())
        except Exception as exc:
            return Outcome(error=ErrorInfo.from_exception(exc))
        return _outcome(agent, prediction)

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """`ReAct.acall`, with `model` in a dspy.context of this task only."""
        assert isinstance(agent, _Agent)
        try:
            with dspy.context(lm=_lm(model)):
                prediction = await agent.react.acall(**call.kwargs())
        except Exception as exc:
            return Outcome(error=ErrorInfo.from_exception(exc))
        return _outcome(agent, prediction)

    def step_tool_names(self, agent: object) -> list[str] | None:
        assert isinstance(agent, _Agent)
        annotation = agent.react.react.signature.output_fields["next_tool_name"].annotation
        return [str(name) for name in get_args(annotation)]

    def mutate_last_result(self, agent: object, marker: str) -> None:
        assert isinstance(agent, _Agent)
        if agent.last is None:
            return
        trajectory: dict[str, Any] = agent.last.trajectory
        for key in list(trajectory):
            if key.startswith(("thought_", "observation_")):
                trajectory[key] = marker
        index = len(trajectory)
        trajectory.update({f"thought_{index}": marker, f"tool_name_{index}": marker,
                           f"tool_args_{index}": {}, f"observation_{index}": marker})


class _StepMessages(dspy.streaming.StatusMessageProvider):  # type: ignore[misc]
    """Status messages that carry what dspy hands the provider: the tool call, then its result."""

    def tool_start_status_message(self, instance: Any, inputs: dict[str, Any]) -> str:
        return json.dumps({"tool": instance.name, "args": inputs.get("kwargs")}, default=str)

    def tool_end_status_message(self, outputs: Any) -> str:
        return json.dumps({"observation": outputs}, default=str)


def _lm(model: ScriptedModel) -> Any:
    engine = _Engine(model)
    return dspy.LM("scripted/model", engine=engine, async_engine=_AsyncEngine(engine), cache=False)


def _outcome(agent: _Agent, prediction: Any, events: list[Event] | None = None) -> Outcome:
    agent.last = prediction
    return Outcome(outputs=_outputs(agent, prediction), trajectory=_steps(prediction.trajectory),
                   events=events)


def _outputs(agent: _Agent, prediction: Any) -> dict[str, JsonValue]:
    return {name: json_value(getattr(prediction, name, None)) for name in agent.react.signature.output_fields}


async def _astream(agent: _Agent, call: CallRequest, model: ScriptedModel) -> Outcome:
    """`dspy.streamify(react)`: each tool-start message and the tool-end message after it are one
    step event; the Prediction that ends the stream is the done event (dspy reports no stop reason)."""
    stream = dspy.streamify(agent.react, status_message_provider=_StepMessages())
    events: list[Event] = []
    started: dict[str, Any] = {}
    prediction: Any = None
    try:
        with dspy.context(lm=_lm(model)):
            async for value in stream(**call.kwargs()):
                if isinstance(value, dspy.streaming.StatusMessage):
                    message = json.loads(value.message)
                    if "tool" in message:
                        started = message
                    else:
                        events.append(Event(kind="step", model_calls=len(model.calls), step=Step(
                            tool_name=str(started.get("tool")), tool_args=json_value(started.get("args")),
                            observation=json_value(message["observation"]))))
                elif isinstance(value, dspy.Prediction):
                    prediction = value
                    events.append(Event(kind="done", model_calls=len(model.calls),
                                        outputs=_outputs(agent, value)))
    except Exception as exc:
        return Outcome(error=ErrorInfo.from_exception(exc), events=events)
    return Outcome(events=events) if prediction is None else _outcome(agent, prediction, events)


def _signature(spec: SignatureSpec) -> Any:
    if spec.form == "string":
        return spec.arrow()
    if spec.form == "class":
        namespace: dict[str, Any] = {
            "__doc__": spec.instructions,
            "__annotations__": {f.name: _TYPES[f.type] for f in (*spec.inputs, *spec.outputs)},
            **{f.name: dspy.InputField(desc=f.description) for f in spec.inputs},
            **{f.name: dspy.OutputField(desc=f.description) for f in spec.outputs},
        }
        return type("ScenarioSignature", (dspy.Signature,), namespace)
    # A value: built field by field with dspy's own builder, so that dspy sees every field given.
    value = dspy.Signature({}, spec.instructions)
    for f in spec.inputs:
        value = value.append(f.name, dspy.InputField(desc=f.description), type_=_TYPES[f.type])
    for f in spec.outputs:
        value = value.append(f.name, dspy.OutputField(desc=f.description), type_=_TYPES[f.type])
    return dspy.Signature(value.fields, spec.instructions or None)


def _steps(trajectory: dict[str, Any]) -> list[Step]:
    """dspy's flat trajectory (`thought_i`, `tool_name_i`, `tool_args_i`, `observation_i`) as Steps."""
    indices = sorted(int(k.removeprefix("tool_name_")) for k in trajectory if k.startswith("tool_name_"))
    return [
        Step(
            thought=None if trajectory.get(f"thought_{i}") is None else str(trajectory[f"thought_{i}"]),
            tool_name=str(trajectory[f"tool_name_{i}"]),
            tool_args=json_value(trajectory.get(f"tool_args_{i}")),
            observation=json_value(trajectory.get(f"observation_{i}")),
        )
        for i in indices
    ]
