"""The binding for `reference`, the suite's own ReAct: the worked example of a binding.

The scripted model is served through the reference's real HTTP client (`reference.LM`) over an
in-memory httpx transport, so transport faults and retries are exercised by the same code a user
runs, with no socket and no sleeping: the client's retry waits pass on the scripted model's
clock (`ScriptedModel.sleep`), where the suite measures the backoff. Async calls go through the
reference's own async forms (`aforward`, `aresume`) on an event loop, streaming calls through
`stream`.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, ClassVar, get_args

from pydantic import JsonValue

import reference
from conformance import translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Event,
    FaultTurn,
    Outcome,
    ResumeRequest,
    SignatureSpec,
    Step,
)
from conformance.render import json_value
from conformance.translate import PYTHON_TYPES

if TYPE_CHECKING:
    # httpx and the endpoint are imported by the first call: loading the binding (as an xdist
    # controller does, which runs nothing) then costs no HTTP client.
    import httpx

_ADAPTERS: dict[AdapterName, type[reference.Adapter]] = {
    "chat": reference.ChatAdapter, "json": reference.JSONAdapter,
}
_STOP_REASONS = {"max_iters": "max_steps"}


#: Every interrupt a call reported, by id, whichever agent raised it: a person's answer may reach
#: another agent than the paused one (HITL-6), and refusing it is the library's part, not ours.
_INTERRUPTS: dict[str, reference.HumanInTheLoopRequired] = {}


class _Agent:
    """A built agent and what its last call handed out."""

    def __init__(self, react: reference.ReAct) -> None:
        self.react = react
        self.last: (reference.Prediction | reference.MaxIterationsError
                    | reference.HumanInTheLoopRequired | None) = None


class ReferenceBinding(Binding):
    """Runs the suite against `reference.ReAct`."""

    name = "reference"
    dependencies = ("pydantic", "httpx")
    contract_version = 3
    capabilities = frozenset({"signature", "adapters", "max-steps-extract", "max-steps-error",
                              "cap-summary", "per-call-cap", "repeated-error-stop", "ask-user",
                              "tool-approval", "approval-edit", "durable-approvals", "async",
                              "streaming", "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "max-steps-return": "on the cap ReAct extracts its outputs or raises MaxIterationsError "
                            "(on_max_iters); it never returns without outputs",
        "parallel-tool-calls": "one tool call per step: the step signature has one next_tool_name",
    }
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "library: Prediction.stop_reason (reference/react.py, ReAct._loop)",
        "iterations": "library: Prediction.iterations and MaxIterationsError.iterations "
                      "(reference/react.py)",
        "max_iterations": "library: MaxIterationsError.max_iterations (reference/react.py)",
        "partial_run": "library: MaxIterationsError.history, tools_used, last_observation "
                       "(reference/react.py)",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        try:
            return version("react-conformance")
        except PackageNotFoundError:
            return "unknown"

    def configure(self, *, adapter: AdapterName | None) -> None:
        reference.configure(adapter=_ADAPTERS[adapter]() if adapter else None)

    def global_adapter(self) -> AdapterName | None:
        current = reference.settings().adapter
        return next((n for n, cls in _ADAPTERS.items() if type(current) is cls), None)

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        # The defaults are the library's: a plain tool is built without `interruptible=`, and
        # `enable_ask_to_user=` and `on_max_iters=` are passed only when the scenario says.
        defaults: dict[str, Any] = {}
        if spec.enable_ask_to_user is not None:
            defaults["enable_ask_to_user"] = spec.enable_ask_to_user
        if spec.on_max_steps is not None:  # "return" is not claimed: never asked for
            defaults["on_max_iters"] = "raise" if spec.on_max_steps == "raise" else "extract"
        try:
            react = reference.ReAct(
                _signature(spec.signature),
                [reference.Tool(t.as_function(), interruptible=True) if t.spec.interruptible
                 else reference.Tool(t.as_function()) for t in tools],
                max_iters=spec.max_steps,
                adapter=_ADAPTERS[spec.adapter]() if spec.adapter else None,
                **defaults,
            )
        except Exception as exc:
            return ErrorInfo.from_exception(exc)
        return _Agent(react)

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        if call.mode == "async":
            return asyncio.run(self.arun(agent, call, model))
        events: list[tuple[reference.Event, int]] = []  # each event, and the model calls made by then
        with self._serving(model, call.base_url):
            try:
                if call.mode == "stream":
                    events.extend((event, len(model.calls)) for event in agent.react.stream(**call.kwargs()))
                    prediction = events[-1][0].prediction
                    assert prediction is not None, "a reference stream ends with its done event"
                else:
                    prediction = agent.react.forward(**call.kwargs())
            except Exception as exc:
                return _failed(agent, exc, events if call.mode == "stream" else None)
        return _succeeded(agent, prediction, events if call.mode == "stream" else None)

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        # Through its serialised form, as a pause kept across processes is (durable-approvals).
        interrupt = pickle.loads(pickle.dumps(_INTERRUPTS[request.interrupt_id]))
        with self._serving(model):
            try:
                if request.mode == "async":
                    prediction = asyncio.run(agent.react.aresume(request.response, interrupt))
                else:
                    prediction = agent.react.resume(request.response, interrupt)
            except Exception as exc:
                return _failed(agent, exc)
        return _succeeded(agent, prediction)

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        with self._serving(model, call.base_url):
            try:
                prediction = await agent.react.aforward(**call.kwargs())
            except Exception as exc:
                return _failed(agent, exc)
        return _succeeded(agent, prediction)

    def lm(self, model: ScriptedModel, base_url: str | None, client: httpx.Client) -> reference.LM:
        """The reference's own client, as a user configures it, over `client`."""
        from conformance import server

        if base_url is not None:
            # As a user configures it: a key (which the cassettes must not keep) and no backoff.
            return reference.LM("scripted", base_url=base_url, api_key=server.API_KEY, backoff=0.0,
                                http_client=client)
        # Its waits pass on the model's clock, so that backoff is measured without waiting.
        return reference.LM("scripted", base_url=server.IN_MEMORY_URL, sleep=model.sleep,
                            http_client=client)

    def _serving(self, model: ScriptedModel, base_url: str | None = None) -> Any:
        """reference.LM answering from `model`, for this thread or task only: over an in-memory
        transport, or (http profile) over real HTTP from the endpoint at `base_url`."""
        import httpx

        client = httpx.Client() if base_url is not None else httpx.Client(
            transport=httpx.MockTransport(_serve(model)))
        return _serving_lm(self.lm(model, base_url, client), client)

    def step_tool_names(self, agent: object) -> list[str] | None:
        assert isinstance(agent, _Agent)
        return list(get_args(agent.react.step.signature.outputs["next_tool_name"].annotation))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        last = agent.last
        if isinstance(last, reference.HumanInTheLoopRequired):
            steps, where = last.context["trajectory"], "pause.context['trajectory']"
        elif isinstance(last, reference.Prediction):
            steps, where = last.trajectory, "prediction.trajectory"
        elif last is not None:
            steps, where = last.history, f"{type(last).__name__}.history"
        else:
            return None
        held = len(steps)
        for step in steps:
            step.thought = step.observation = marker
        steps.append(reference.Step(thought=marker, tool_name=marker, tool_args={}, observation=marker))
        return [f"{where} ({held} steps)"]


def _signature(spec: SignatureSpec) -> Any:
    if spec.form == "string":
        return spec.arrow()
    if spec.form == "value":
        return reference.Signature(inputs={f.name: PYTHON_TYPES[f.type] for f in spec.inputs},
                                   outputs={f.name: PYTHON_TYPES[f.type] for f in spec.outputs},
                                   instructions=spec.instructions)
    return translate.signature_class(spec, reference.Signature, lambda text: reference.InputField(desc=text),
                                     lambda text: reference.OutputField(desc=text))


@contextmanager
def _serving_lm(lm: reference.LM, client: httpx.Client) -> Iterator[None]:
    with client, reference.context(lm=lm):
        yield


def _succeeded(agent: _Agent, prediction: reference.Prediction,
               events: list[tuple[reference.Event, int]] | None = None) -> Outcome:
    agent.last = prediction
    return Outcome(
        outputs=_outputs(agent, prediction),
        trajectory=[_step(s) for s in prediction.trajectory],
        stop_reason=_stop_reason(prediction.stop_reason),
        iterations=prediction.iterations,
        fallback=prediction.fallback,
        tool_errors=[e.model_dump(mode="json") for e in prediction.tool_errors],
        events=None if events is None else [_event(agent, *e) for e in events],
    )


def _failed(agent: _Agent, exc: Exception,
            events: list[tuple[reference.Event, int]] | None = None) -> Outcome:
    if isinstance(exc, reference.MaxIterationsError):
        agent.last = exc
        error = _max_iterations(exc)
    elif isinstance(exc, reference.HumanInTheLoopRequired):
        agent.last = exc
        _INTERRUPTS[exc.interrupt_id] = exc
        error = _interrupt(exc)
    else:
        error = ErrorInfo.from_exception(exc)
    return Outcome(error=error, events=None if events is None else [_event(agent, *e) for e in events])


def _outputs(agent: _Agent, prediction: reference.Prediction) -> dict[str, JsonValue]:
    return {name: json_value(getattr(prediction, name)) for name in agent.react.signature.outputs}


def _stop_reason(reason: str | None) -> str | None:
    return _STOP_REASONS.get(reason or "", reason)


def _event(agent: _Agent, event: reference.Event, model_calls: int) -> Event:
    if event.kind == "step":
        assert event.step is not None
        return Event(kind="step", model_calls=model_calls, step=_step(event.step))
    assert event.prediction is not None
    return Event(kind="done", model_calls=model_calls, stop_reason=_stop_reason(event.stop_reason),
                 outputs=_outputs(agent, event.prediction))


def _serve(model: ScriptedModel) -> Any:
    """An httpx handler that answers chat-completion requests from the script, as the endpoint does."""
    import httpx

    from conformance import server

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        call = server.request_call(body)
        turn = model.answer(call)
        if isinstance(turn, FaultTurn):
            return server.fault_response(turn, request, model)
        content_type, payload = server.completion(body, call, turn, len(model.calls))
        return httpx.Response(200, headers={"Content-Type": content_type}, content=payload)

    return handle


def _step(step: reference.Step) -> Step:
    return Step(thought=step.thought, tool_name=step.tool_name, tool_args=json_value(step.tool_args),
                observation=json_value(step.observation))


def _interrupt(exc: reference.HumanInTheLoopRequired) -> ErrorInfo:
    call = exc.tool_call
    return ErrorInfo(
        type=type(exc).__name__,
        message=str(exc),
        kind="human-in-the-loop",
        fields={
            "question": exc.question,
            "interrupt_id": exc.interrupt_id,
            "tool_call": None if call is None else json_value(call.model_dump(mode="json")),
            "context": {
                "trajectory": [_step(s).model_dump(mode="json") for s in exc.context["trajectory"]],
                "iteration": exc.context["iteration"],
                "input_args": json_value(exc.context["input_args"]),
            },
        },
    )


def _max_iterations(exc: reference.MaxIterationsError) -> ErrorInfo:
    return ErrorInfo(
        type=type(exc).__name__,
        message=str(exc),
        kind="max-iterations",
        fields={
            "iterations": exc.iterations,
            "max_iterations": exc.max_iterations,
            "tools_used": list(exc.tools_used),
            "history": [_step(s).model_dump(mode="json") for s in exc.history],
            "last_observation": json_value(exc.last_observation),
            "partial_final_answer": json_value(exc.partial_final_answer),
        },
    )

