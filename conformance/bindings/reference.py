"""The binding for `reference`, the suite's own ReAct: the worked example of a binding.

The scripted model is served through the reference's real HTTP client (`reference.LM`) over an
in-memory httpx transport, so transport faults and retries are exercised by the same code a user
runs, with no socket and no sleeping.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, get_args

import httpx
from pydantic import JsonValue

import reference
from conformance import render
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    FaultTurn,
    LMCall,
    Outcome,
    SignatureSpec,
    Step,
)

_ADAPTERS: dict[AdapterName, type[reference.Adapter]] = {
    "chat": reference.ChatAdapter, "json": reference.JSONAdapter,
}
_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool,
                           "list": list, "dict": dict}
_STOP_REASONS = {"max_iters": "max_steps"}


class _Agent:
    """A built agent and what its last call handed out."""

    def __init__(self, react: reference.ReAct) -> None:
        self.react = react
        self.last: reference.Prediction | reference.MaxIterationsError | None = None


class ReferenceBinding(Binding):
    """Runs the suite against `reference.ReAct`."""

    name = "reference"
    capabilities = frozenset({"tool-errors", "tool-args", "max-steps-extract", "max-steps-error",
                              "stop-reason", "lm-retry"})

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
        try:
            react = reference.ReAct(
                _signature(spec.signature),
                [reference.Tool(t.as_function()) for t in tools],
                max_iters=spec.max_steps,
                adapter=_ADAPTERS[spec.adapter]() if spec.adapter else None,
                on_max_iters=spec.on_max_steps or "extract",
            )
        except Exception as exc:
            return ErrorInfo.from_exception(exc)
        return _Agent(react)

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        client = httpx.Client(transport=httpx.MockTransport(_serve(model)))
        lm = reference.LM("scripted", base_url="http://model.invalid/v1", sleep=lambda _: None,
                          http_client=client)
        kwargs: dict[str, Any] = dict(call.inputs)
        if call.max_steps is not None:
            kwargs["max_iters"] = call.max_steps
        try:
            with client, reference.context(lm=lm):
                prediction = agent.react.forward(**kwargs)
        except reference.MaxIterationsError as exc:
            agent.last = exc
            return Outcome(error=_max_iterations(exc))
        except Exception as exc:
            return Outcome(error=ErrorInfo.from_exception(exc))
        agent.last = prediction
        return Outcome(
            outputs={name: _json(getattr(prediction, name))
                     for name in agent.react.signature.outputs},
            trajectory=[_step(s) for s in prediction.trajectory],
            stop_reason=_STOP_REASONS.get(prediction.stop_reason or "", prediction.stop_reason),
            iterations=prediction.iterations,
            fallback=prediction.fallback,
            tool_errors=[e.model_dump(mode="json") for e in prediction.tool_errors],
        )

    def step_tool_names(self, agent: object) -> list[str] | None:
        assert isinstance(agent, _Agent)
        return list(get_args(agent.react.step.signature.outputs["next_tool_name"].annotation))

    def mutate_last_result(self, agent: object, marker: str) -> None:
        assert isinstance(agent, _Agent)
        last = agent.last
        steps = last.trajectory if isinstance(last, reference.Prediction) else (
            last.history if last is not None else [])
        for step in steps:
            step.thought = step.observation = marker
        steps.append(reference.Step(thought=marker, tool_name=marker, tool_args={}, observation=marker))


def _signature(spec: SignatureSpec) -> Any:
    if spec.form == "string":
        return spec.arrow()
    inputs = {f.name: reference.InputField(desc=f.description) for f in spec.inputs}
    outputs = {f.name: reference.OutputField(desc=f.description) for f in spec.outputs}
    if spec.form == "value":
        types = {f.name: _TYPES[f.type] for f in (*spec.inputs, *spec.outputs)}
        return reference.Signature(
            inputs={n: types[n] for n in inputs}, outputs={n: types[n] for n in outputs},
            instructions=spec.instructions,
        )
    annotations = {f.name: _TYPES[f.type] for f in (*spec.inputs, *spec.outputs)}
    namespace = {"__doc__": spec.instructions, "__annotations__": annotations, **inputs, **outputs}
    return type("ScenarioSignature", (reference.Signature,), namespace)


def _serve(model: ScriptedModel) -> Any:
    """An httpx handler that answers chat-completion requests from the script."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        messages = body["messages"]
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        adapter = "chat" if "[[ ## completed ## ]]" in system else (
            "json" if "JSON object" in system else "other")
        turn = model.answer(LMCall(kind=render.request_kind(system), adapter=adapter,  # type: ignore[arg-type]
                                   messages=messages))
        if isinstance(turn, FaultTurn):
            return _fault(turn, request)
        reply = render.json_reply(turn) if adapter == "json" else render.chat_reply(turn)
        return httpx.Response(200, json={
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}}],
        })

    return handle


def _fault(turn: FaultTurn, request: httpx.Request) -> httpx.Response:
    if turn.fault == "timeout":
        raise httpx.ReadTimeout("scripted timeout", request=request)
    if turn.fault == "connection":
        raise httpx.ConnectError("scripted connection reset", request=request)
    headers = {"Retry-After": str(turn.retry_after)} if turn.retry_after is not None else {}
    return httpx.Response(int(turn.fault), headers=headers, json={"error": {"message": "scripted"}})


def _json(value: Any) -> JsonValue:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value  # type: ignore[no-any-return]


def _step(step: reference.Step) -> Step:
    return Step(thought=step.thought, tool_name=step.tool_name, tool_args=_json(step.tool_args),
                observation=_json(step.observation))


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
            "last_observation": _json(exc.last_observation),
            "partial_final_answer": _json(exc.partial_final_answer),
        },
    )

