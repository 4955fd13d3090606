"""The binding for `dspy.ReAct` (dspy 3.4).

The scripted model is a dspy custom engine (an object with `complete(Request) -> Response`) behind a
real `dspy.LM(..., engine=..., cache=False)`, installed per call with `dspy.context(lm=...)` (which
dspy documents as usable from any thread or async task): dspy's adapters format every request and
parse every reply, and dspy's own execution layer runs the call. The step cap is `max_iters`: one
iteration is one step call (a JSON-adapter re-ask of a reply the chat adapter could not parse is
inside the same iteration); on the cap dspy always extracts (`max-steps-extract`).

Transport faults (`lm-retry`) are raised by the engine as the lm15 errors dspy's engine contract
names (a custom engine makes one attempt and raises them): dspy's own retry loop above the engine
(clients/execution.py `execute`, `num_retries`, default 3) judges and retries them. Its backoff
(`_delay`: a provider's Retry-After, else 1 s, 2 s, 4 s) has no public setting, so those scenarios
take the real waits: about 1 s per retried fault, 7 s when retries run out. dspy's error carries the
HTTP status as `LMError.status`, reported in `ErrorInfo.fields["status"]`.

Over HTTP (`http`) the agent runs on `dspy.LM("openai/...", api_base=call.base_url, ...)` with dspy's
default engine (its vendored lm15), the same retries above it. That engine writes HTTP on raw
sockets, which vcrpy can neither record nor replay, so dspy has no cassettes: its http scenarios run
live against the loopback endpoint. The model metadata dspy fetches on first use is kept local
(`LITELLM_LOCAL_MODEL_COST_MAP`, which dspy honours; clients/model_metadata).

Async calls go through `ReAct.acall` (its `aforward`). Streaming goes through `dspy.streamify`, whose
stream holds status messages and ends with the Prediction. A `StatusMessageProvider`, dspy's public
way to choose what those messages say, writes each tool call and each tool result as JSON; a step
event is a tool-start message and the tool-end message after it. dspy has no human in the loop.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, get_args

import dspy
from dspy import lm15
from pydantic import JsonValue

from conformance import render, server, translate
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
from conformance.translate import PYTHON_TYPES

_ADAPTERS: dict[AdapterName, Any] = {"chat": dspy.ChatAdapter, "json": dspy.JSONAdapter}
#: What dspy's engine contract says a custom engine raises for each transport fault.
_FAULTS: dict[str, tuple[Any, int | None]] = {
    "timeout": (lm15.TimeoutError, None), "connection": (lm15.TransportError, None),
    "429": (lm15.RateLimitError, 429), "500": (lm15.ServerError, 500), "503": (lm15.ServerError, 503),
    "400": (lm15.InvalidRequestError, 400), "401": (lm15.AuthError, 401),
}
#: The read timeout of dspy's default engine (lm15 `Timeouts`), which a hung request ends in.
_READ_TIMEOUT: float = lm15.Timeouts().read
_SIG5 = "test_a_malformed_signature_string_fails_at_construction_with_a_clear_error"
_ARGS3 = "test_malformed_json_tool_args_never_crash_the_run"
_REPAIRED = "adapters/utils.py parse_value repairs malformed JSON (json_repair): the tool gets the repair"
_LITERALS = "test_python_literals_in_tool_args_are_malformed_json_never_guessed_at"
_SIG6 = "test_the_error_names_exactly_the_missing_input_not_one_the_call_gave"
_CALLS_ANYWAY = ("Predict logs 'Not all input fields were provided' (predict.py _forward_preprocess) "
                 "and calls the model anyway")
_NO_ADAPTER = "dspy.ReAct(signature, tools, max_iters) has no adapter parameter (predict/react.py __init__)"
_NO_STOP = ("ReAct.forward has no repeated-failure stop: it calls the failing tool until max_iters "
            "(predict/react.py)")


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
        if isinstance(turn, FaultTurn) and turn.fault == "hang":
            # A custom engine owns its connection and dspy refuses a timeout for it (clients/lm.py), so
            # the request's timeout is the one dspy's default engine gives it: lm15's read timeout.
            self.model.hang(_READ_TIMEOUT)
            raise lm15.TimeoutError(f"no reply within the {_READ_TIMEOUT:g} s read timeout", status=None,
                                    retry_after=None)
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
        await asyncio.sleep(0)  # a request yields to the event loop, so overlapping runs interleave
        return self.engine.complete(request)

    async def stream(self, request: Any) -> Any:
        for event in self.engine.stream(request):
            yield event

    async def aclose(self) -> None:
        """Nothing to release."""


class DSPyBinding(Binding):
    """Runs the suite against `dspy.ReAct`."""

    name = "dspy"
    dependencies = ("dspy", "litellm", "pydantic")
    contract_version = 3
    capabilities = frozenset({"signature", "adapters", "max-steps-extract", "per-call-cap", "async",
                              "streaming", "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "cap-summary": "on the cap ReAct.forward extracts the outputs from the trajectory "
                       "(predict/react.py): nothing tells the user which tools were tried",
        "repeated-error-stop": "a failing tool's 'Execution error in <tool>: ...' observation goes "
                               "back to the model every time (predict/react.py forward): no count of "
                               "repeated errors, no stop",
        "max-steps-error": "ReAct.forward always extracts on the cap (predict/react.py); it raises no "
                           "max-iterations error and has no option to",
        "max-steps-return": "ReAct.forward always makes the extraction call on the cap (predict/react.py); "
                            "it never returns without outputs",
        "ask-user": "dspy.ReAct adds only the finish tool (predict/react.py __init__): no ask_to_user",
        "tool-approval": "dspy.Tool and dspy.ReAct have no approval or pause: every chosen tool runs "
                         "(predict/react.py forward)",
        "approval-edit": "no approval to edit: every chosen tool runs (predict/react.py forward)",
        "durable-approvals": "no pause to serialise: every chosen tool runs (predict/react.py forward)",
        "parallel-tool-calls": "one tool call per step: the step signature has one next_tool_name "
                               "(predict/react.py)",
    }
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: from Prediction.trajectory, which holds one tool_name_<i> per step "
                       "call: a last `finish` is the answer, max_iters steps without it the cap stop "
                       "(predict/react.py ReAct.forward)",
        "iterations": "derived: counted from Prediction.trajectory's tool_name_<i> entries "
                      "(predict/react.py ReAct.forward)",
        "max_iterations": "none: on max_iters ReAct raises nothing; it extracts the outputs "
                          "(predict/react.py ReAct.forward)",
        "partial_run": "none: on max_iters ReAct raises nothing; the Prediction holds the trajectory",
        "concurrency": "shared",
    }
    known_failures: ClassVar[Mapping[str, str]] = {
        "ADP-2": _NO_ADAPTER,
        "A streaming run emits its steps in order and ends with one done event":
            "streamify's status callback skips the finish tool (streaming/messages.py on_tool_start), "
            "so the finish step has no step event",
        _SIG5 + "[-> answer-input]":
            "dspy accepts a signature without inputs: signature.py _parse_signature only needs one '->'",
        _SIG5 + "[question ->-output]":
            "dspy accepts a signature without outputs: signature.py _parse_signature only needs one '->'",
        _SIG5 + "[question, question -> answer-question]":
            "signature.py _parse_signature collects the fields into a dict: a repeated name merges silently",
        "A signature value whose input and output share a name fails at construction":
            "Signature.append/insert rebuild fields as dict(inputs + outputs): the output replaces the input",
        "A call that lacks a required input fails before any model call": _CALLS_ANYWAY,
        _SIG6 + '[{"question": "What is 2 + 3?"}-context-question]': _CALLS_ANYWAY,
        _SIG6 + '[{"context": "Arithmetic."}-question-context]': _CALLS_ANYWAY,
        "A call that lacks every input fails naming one of them": _CALLS_ANYWAY,
        "A call with a misspelled input fails naming the input it lacks": _CALLS_ANYWAY,
        _ARGS3 + '[{"amount": 50, "recipient": "Ann"]': _REPAIRED,
        _ARGS3 + "[{amount: 50, recipient: Ann}]": _REPAIRED,
        _ARGS3 + "[{'amount': 50, 'recipient': 'Ann'}]": _REPAIRED,
        _ARGS3 + '[{"amount": 50, "recipient": "Ann",}]': _REPAIRED,
        **dict.fromkeys(
            ["test_malformed_json_tool_args_never_reach_a_tool_that_takes_no_arguments[{]",
             "test_malformed_json_tool_args_never_reach_a_tool_that_takes_no_arguments[{,}]"],
            "adapters/utils.py parse_value repairs '{' and '{,}' to {} (json_repair): the tool that "
            "takes no arguments runs on the repair"),
        _LITERALS + '[{"recipient": "Ann", "urgent": True}]': _REPAIRED + " (True read as true)",
        _LITERALS + "[{'recipient': 'Ann', 'urgent': False}]": _REPAIRED + " (quotes and False read as JSON)",
        _LITERALS + '[{"recipient": "Ann", "urgent": true,}]': _REPAIRED + " (trailing comma dropped)",
        **dict.fromkeys(
            ["test_a_step_reply_without_its_tool_args_never_crashes_the_run_in_either_adapter[json]"],
            "JSONAdapter.parse raises AdapterParseError when next_tool_args is missing "
            "(adapters/json_adapter.py); it is not the ValueError ReAct.forward catches "
            "(predict/react.py): the run crashes"),
        "The agent is told that the tool it chose does not exist":
            "on a next_tool_name that is not a tool, ChatAdapter.__call__ re-asks with JSONAdapter "
            "(adapters/chat_adapter.py) sending the same inputs and trajectory: nothing names the "
            "unknown tool",
        **dict.fromkeys(
            translate.ARGS5_DEEP,
            "parse_value's json_repair raises RecursionError on args nested thousands deep "
            "(adapters/utils.py), which neither the adapter nor ReAct.forward catches: the run crashes"),
        "Under the JSON adapter, tool args that are JSON but not an object never reach the tool":
            "JSONAdapter.parse raises AdapterParseError when next_tool_args is not an object "
            "(adapters/json_adapter.py); it is not the ValueError ReAct.forward catches "
            "(predict/react.py): the run crashes",
        "test_under_the_json_adapter_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_"
        "refused_saying_why[store-an object nested 100000 levels deep]":
            "JSONAdapter.parse json_repair.loads the whole reply (adapters/json_adapter.py): the "
            "100k-deep reply raises RecursionError there, which ReAct.forward does not catch: the run "
            "crashes",
        "An unknown tool name never crashes the run, also when it is the last step":
            "ChatAdapter.__call__ re-asks a step whose next_tool_name is not a tool with JSONAdapter "
            "(adapters/chat_adapter.py): a third step call under a cap of 2; when the model names it "
            "again, AdapterParseError (a DSPyError, not the ValueError ReAct.forward catches, "
            "predict/react.py) escapes and the run crashes",
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
        return translate.built(lambda: _Agent(dspy.ReAct(
            _signature(spec.signature), [dspy.Tool(t.as_function()) for t in tools], max_iters=spec.max_steps,
            **override)))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """`ReAct.__call__`, `acall` or `dspy.streamify`, with `model` in a dspy.context of this call."""
        assert isinstance(agent, _Agent)
        with dspy.context(lm=_lm(model, call.base_url)):
            return translate.reported(model, call.mode, partial(_outcome, agent, _cap(agent, call)), _failed,
                                      sync=lambda: agent.react(**call.kwargs()),
                                      asynchronous=lambda: agent.react.acall(**call.kwargs()),
                                      stream=lambda events: _astream(agent, call, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """`ReAct.acall`, with `model` in a dspy.context of this task only."""
        assert isinstance(agent, _Agent)
        with dspy.context(lm=_lm(model, call.base_url)):
            return await translate.areported(agent.react.acall(**call.kwargs()),
                                             partial(_outcome, agent, _cap(agent, call)), _failed)

    def step_tool_names(self, agent: object) -> list[str] | None:
        assert isinstance(agent, _Agent)
        annotation = agent.react.react.signature.output_fields["next_tool_name"].annotation
        return [str(name) for name in get_args(annotation)]

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        if agent.last is None:
            return None
        trajectory: dict[str, Any] = agent.last.trajectory
        held = len(trajectory)
        for key in list(trajectory):
            if key.startswith(("thought_", "observation_")):
                trajectory[key] = marker
        index = len(trajectory)
        trajectory.update({f"thought_{index}": marker, f"tool_name_{index}": marker,
                           f"tool_args_{index}": {}, f"observation_{index}": marker})
        return [f"prediction.trajectory ({held} keys)"] if held else []

class _StepMessages(dspy.streaming.StatusMessageProvider):  # type: ignore[misc]
    """Status messages that carry what dspy hands the provider: the tool call, then its result."""

    def tool_start_status_message(self, instance: Any, inputs: dict[str, Any]) -> str:
        return json.dumps({"tool": instance.name, "args": inputs.get("kwargs")}, default=str)

    def tool_end_status_message(self, outputs: Any) -> str:
        return json.dumps({"observation": outputs}, default=str)


def _lm(model: ScriptedModel, base_url: str | None = None) -> Any:
    """The scripted engine behind a `dspy.LM`, or (http) dspy's default engine at `base_url`."""
    if base_url is not None:
        # dspy reads this documented switch when it first loads model metadata: no network fetch.
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        return dspy.LM("openai/scripted", api_base=base_url, api_key=server.API_KEY, cache=False)
    engine = _Engine(model)
    return dspy.LM("scripted/model", engine=engine, async_engine=_AsyncEngine(engine), cache=False)


def _failed(exc: Exception) -> Outcome:
    """An exception dspy let escape; a model-call error (`dspy.LMError`) with the HTTP status it carries."""
    status = getattr(exc, "status", None)
    if isinstance(exc, dspy.LMError) and isinstance(status, int):
        return Outcome(error=ErrorInfo.from_exception(exc, status=status))
    return Outcome(error=ErrorInfo.from_exception(exc))


def _cap(agent: _Agent, call: CallRequest) -> int:
    """The max_iters the binding gave ReAct for this call: the call's own, else the agent's."""
    return int(agent.react.max_iters) if call.max_steps is None else call.max_steps


def _outcome(agent: _Agent, cap: int, prediction: Any) -> Outcome:
    """The Prediction, its stop reason and step count derived from its trajectory (binding.PARITY):
    ReAct.forward (predict/react.py) records one tool_name_<i> per step call and breaks on `finish`,
    so a last step `finish` is the final answer and `cap` steps without it the cap stop; a loop it
    broke otherwise (a step it could not parse, which it does not record) gets neither."""
    agent.last = prediction
    trajectory = prediction.trajectory
    names = [trajectory[key] for key in trajectory if key.startswith("tool_name_")]
    stop = ("finish" if names and names[-1] == "finish"
            else "max_steps" if len(names) >= cap else None)
    return Outcome(outputs=_outputs(agent, prediction), trajectory=_steps(trajectory),
                   stop_reason=stop, iterations=len(names) if stop else None)


def _outputs(agent: _Agent, prediction: Any) -> dict[str, JsonValue]:
    return {name: json_value(getattr(prediction, name, None)) for name in agent.react.signature.output_fields}


async def _astream(agent: _Agent, call: CallRequest, model: ScriptedModel, events: list[Event]) -> Any:
    """`dspy.streamify(react)`: each tool-start message and the tool-end message after it are one
    step event; the Prediction that ends the stream is the result (dspy reports no stop reason)."""
    stream = dspy.streamify(agent.react, status_message_provider=_StepMessages())
    started: dict[str, Any] = {}
    prediction: Any = None
    async for value in stream(**call.kwargs()):
        if isinstance(value, dspy.streaming.StatusMessage):
            message = json.loads(value.message)
            if "tool" in message:
                started = message
            else:
                events.append(translate.step_event(model, translate.step(
                    started.get("tool"), started.get("args"), message["observation"])))
        elif isinstance(value, dspy.Prediction):
            prediction = value
    return prediction


def _signature(spec: SignatureSpec) -> Any:
    if spec.form == "string":
        return spec.arrow()
    if spec.form == "class":
        return translate.signature_class(spec, dspy.Signature, lambda text: dspy.InputField(desc=text),
                                         lambda text: dspy.OutputField(desc=text))
    # A value: built field by field with dspy's own builder, so that dspy sees every field given.
    value = dspy.Signature({}, spec.instructions)
    for f in spec.inputs:
        value = value.append(f.name, dspy.InputField(desc=f.description), type_=PYTHON_TYPES[f.type])
    for f in spec.outputs:
        value = value.append(f.name, dspy.OutputField(desc=f.description), type_=PYTHON_TYPES[f.type])
    return dspy.Signature(value.fields, spec.instructions or None)


def _steps(trajectory: dict[str, Any]) -> list[Step]:
    """dspy's flat trajectory (`thought_i`, `tool_name_i`, `tool_args_i`, `observation_i`) as Steps."""
    indices = sorted(int(k.removeprefix("tool_name_")) for k in trajectory if k.startswith("tool_name_"))
    return [translate.step(trajectory[f"tool_name_{i}"], trajectory.get(f"tool_args_{i}"),
                           trajectory.get(f"observation_{i}"), trajectory.get(f"thought_{i}"))
            for i in indices]
