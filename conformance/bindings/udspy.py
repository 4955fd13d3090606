"""The binding for `udspy.ReAct` (udspy 0.1.8).

The scripted model is served to udspy's own model client, `OpenAILM(client=AsyncOpenAI(...))`, over
an in-memory httpx transport, installed per call with `udspy.settings.context(lm=...)` so concurrent
runs never share it: udspy's own adapter formats every request and parses every reply, and transport
faults go through the retries a user gets by default, in two layers: the openai client's (2 retries
of 408/409/429/5xx, timeouts and dropped connections, after about 0.5 s and 1 s, or a Retry-After)
inside `OpenAILM.acomplete`'s tenacity retry of any `APIError` (3 attempts, 1 s then 2 s apart;
lm/openai.py). Neither offers a public setting that zeroes its waits and keeps its retry count, so
those scenarios take the real waits: about 3 s for a refused request, 7 s when retries run out. A
request the script did not expect is answered 400, as the loopback endpoint answers it, so udspy
sends it three times before the scenario fails.

What udspy 0.1.8 sends (module/react.py, adapter.py) is not native tool calling: the step call (a
`Predict` over `next_thought`, `next_tool_name`, `next_tool_args`) and the extraction call (a
`ChainOfThought` over `reasoning` plus the outputs) both pass an empty `tools` list and ask for one
JSON object in the message content. Both are therefore "json" requests, answered in that format.

After a reply it cannot parse, udspy asks again after a real 1 s wait (tenacity on Predict._aforward);
it offers no public setting for that wait, so such a scenario takes about a second.

Async calls go through `ReAct.aforward`, each on its own task with its own `settings.context` (a
contextvar: udspy's per-call model seam). Streaming goes through `ReAct.astream`: the prediction
each step call emits (thought, tool name and args, before the tool runs) is a step event, the
ReAct's final Prediction the done event. Tool approval is udspy's confirmation: a tool with
`require_confirmation=True` raises `ConfirmationRequired`, answered with `ReAct.resume` / `aresume`
as the ReAct docstring shows (`await react.aresume("yes", e)`).

The step cap is `max_iters`: one iteration is one step call (plus udspy's own re-ask of a reply it
cannot parse, inside the same iteration); on the cap udspy always extracts (`max-steps-extract`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, get_args

import httpx
import openai
import udspy
from pydantic import JsonValue
from udspy.confirmation import ConfirmationRequired
from udspy.lm import OpenAILM

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Event,
    Outcome,
    ResumeRequest,
    SignatureSpec,
    Step,
)
from conformance.render import json_value
from conformance.translate import PYTHON_TYPES

#: Seconds the in-memory endpoint takes to answer, as a fast network would (see `_lm`).
_NETWORK_LATENCY = 0.02

_SIG5 = "test_a_malformed_signature_string_fails_at_construction_with_a_clear_error"
_EXTRACT_DOC = ("react.py _build_extract_signature gives the extraction fixed instructions ('Extract the "
                "final answer from the trajectory'): the signature's own reach only the step calls")
_SAME_NAME = "make_signature keeps the fields in one dict (signature.py): the output replaces the input"
_NO_STOP = "ReAct.aexecute has no repeated-failure stop: it asks for another step until max_iters (react.py)"
_NO_RESUME = ("ReAct does not implement aresume, so Module.aresume raises NotImplementedError "
              "(module/base.py), though the ReAct docstring shows `await react.aresume('yes', e)`")
_RETRIES_4XX = ("OpenAILM.acomplete retries any openai APIError, 400 and 401 included (tenacity, 3 attempts, "
                "lm/openai.py): the refused request is sent three times")
_RETRY_ERROR = ("when OpenAILM.acomplete's tenacity retry runs out it raises tenacity's "
                "RetryError[<Future ...>] (no reraise, lm/openai.py), which does not name the 500")
_KNOWN: dict[str, str] = {
    "ADP-1": "udspy.settings has no adapter to set or read back (settings.py); its one adapter, "
             "ChatAdapter, asks for and parses a JSON object (adapter.py)",
    "test_the_agents_own_adapter_wins_over_the_global_one_for_every_internal_call[json-chat]":
        "udspy has no adapter for chat replies: its one adapter, ChatAdapter, asks for and parses a JSON "
        "object (adapter.py format_output_instructions, parse_outputs)",
    "ADP-3": "udspy.settings has no global adapter to set or read back (settings.py: lm, callbacks, kwargs)",
    "A signature class gives the agent its fields and its instructions": _EXTRACT_DOC,
    "A signature value built in code works like the string form": _EXTRACT_DOC,
    _SIG5 + "[question, question -> answer-question]":
        "Signature.from_string collects the input names in a dict (signature.py): a repeat merges silently",
    _SIG5 + "[question -> question-question]": _SAME_NAME,
    "A signature value whose input and output share a name fails at construction": _SAME_NAME,
    **dict.fromkeys(
        ["An arrow string's outputs hold the types it declares",
         "Several inputs and typed outputs in string form reach the prediction as declared"],
        "Signature.from_string splits each side on commas only (signature.py): `count: int` becomes a "
        "text field named 'count: int', so the prediction never holds a typed `count`"),
    "An unknown tool name is never run, and the loop goes on":
        "react.py _execute_iteration raises ValueError on an unknown tool name; aexecute records an error "
        "episode and breaks out of the loop to extraction",
    "An argument the schema does not declare is refused, naming it, not dropped":
        "Tool.parse_and_validate_args validates with a pydantic create_model that ignores extra fields "
        "(tool/tool.py): memo is dropped and the tool runs",
    **dict.fromkeys(
        translate.ARGS5_DEEP,
        "ChatAdapter.parse_outputs json.loads the reply, catching only JSONDecodeError (adapter.py): the "
        "RecursionError is not retried and escapes ReAct"),
    "A text output the model writes as a JSON number is that number's text":
        "ChatAdapter.parse_outputs keeps a value that is not a string as it is, whatever the field's "
        "type (adapter.py: 'Value is already correct type'): the str output holds the integer 42",
    "A typed output that does not parse is asked for again or refused, naming the field":
        "ChatAdapter.parse_outputs catches parse_value's ValueError for 'four' as an int and keeps "
        "the text (adapter.py: 'Fallback: keep original value'): the int output holds 'four'",
    "test_under_the_json_adapter_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_"
    "refused_saying_why[store-an object nested 100000 levels deep]":
        "udspy has no global adapter, so its JSON-replying ChatAdapter runs: parse_outputs json.loads "
        "the 100k-deep reply catching only JSONDecodeError (adapter.py): the RecursionError escapes ReAct",
    "Two pauses for the same tool call get different ids":
        "confirmation.py names a confirmation by the md5 of tool name and args: two pauses for the "
        "same call share one id",
    "An interruptible tool does not run before approval":
        "check_tool_confirmation asks 'Confirm execution of <tool> with args: <args>? "
        "(yes/no/feedback/edit)' and builds its ToolCall without a call id (confirmation.py)",
    "A signature class's field descriptions reach the model":
        "ReAct._build_react_signature and _build_extract_signature rebuild the signature with "
        "make_signature from the field annotations only (module/react.py): the descriptions are dropped",
    "The agent is told that the tool it chose does not exist":
        "_execute_iteration raises a ValueError that lists the tools but not the one chosen; aexecute "
        "records it as an error episode and goes straight to the extraction call (module/react.py)",
    # The resumes of HITL-5..8, TRJ-2's pause, ASYNC-1's async resume and HITL-7's edits are
    # blocked by HITL-4: a resume that fails whatever the answer is HITL-4's one cause.
    "HITL-4": _NO_RESUME,
    "Fifty overlapping async runs of one agent share no state":
        "ReAct.aexecute keeps the running call's trajectory and inputs on the agent (self._context, "
        "react.py): calls overwrite each other's, and once one ends the others raise RuntimeError",
    "A non-transient model failure is not retried and fails the call clearly": _RETRIES_4XX,
    "Over HTTP, a bad request or a refused key is not retried and fails the call clearly": _RETRIES_4XX,
    "When retries run out the caller gets one clear error and no tool runs": _RETRY_ERROR,
    "Over HTTP, when retries run out the caller gets one clear error and the next call starts clean":
        _RETRY_ERROR,
    "A streaming run emits its steps in order and ends with one done event":
        "ReAct.astream emits each step's prediction (thought, tool, args) before the tool runs, and no "
        "event with its observation (react.py)",
}


#: Every ConfirmationRequired a call raised, by its id, whichever agent raised it: an answer may
#: reach another agent (HITL-6), and whether that agent's resume refuses it is udspy's part.
_PAUSES: dict[str, ConfirmationRequired] = {}


class _Agent:
    """A built `udspy.ReAct` and the trajectory its last call handed out."""

    def __init__(self, react: Any) -> None:
        self.react = react
        self.last: list[dict[str, Any]] | None = None


class UdspyBinding(Binding):
    """Runs the suite against `udspy.ReAct`."""

    name = "udspy"
    dependencies = ("udspy", "openai", "tenacity", "pydantic")
    contract_version = 3
    capabilities = frozenset({"signature", "adapters", "max-steps-extract", "per-call-cap", "lm-retry",
                              "async", "streaming", "tool-approval", "approval-edit",
                              "durable-approvals", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "cap-summary": "on the cap ReAct.aexecute extracts the outputs from the trajectory "
                       "(module/react.py): nothing tells the user which tools were tried",
        "repeated-error-stop": _NO_STOP,
        "max-steps-error": "ReAct.aexecute always extracts on the cap (react.py); it raises no "
                           "max-iterations error and has no option to",
        "max-steps-return": "ReAct.aexecute always makes the extraction call on the cap (react.py); it "
                            "never returns without outputs",
        "ask-user": "udspy.ReAct has no ask_to_user tool (react.py _add_builtin_tools adds only finish)",
        "parallel-tool-calls": "one tool call per step: the step signature has one next_tool_name "
                               "(react.py _build_react_signature)",
    }
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: from Prediction.trajectory, one episode per step call: a last `finish` "
                       "episode is the answer, max_iters tool episodes without it the cap stop "
                       "(module/react.py ReAct.aexecute, _execute_iteration)",
        "iterations": "derived: counted from Prediction.trajectory's episodes (module/react.py "
                      "ReAct.aexecute), as udspy keeps no count",
        "max_iterations": "none: on max_iters ReAct raises nothing; it extracts the outputs "
                          "(module/react.py ReAct.aexecute)",
        "partial_run": "none: on max_iters ReAct raises nothing; the Prediction holds the trajectory",
        "concurrency": "shared",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN

    @property
    def version(self) -> str:
        return str(udspy.__version__)

    def configure(self, *, adapter: AdapterName | None) -> None:
        # udspy.settings holds an LM, callbacks and completion kwargs (settings.py): there is no
        # global adapter to set, so there is nothing to do; each Predict builds its own ChatAdapter.
        return None

    def global_adapter(self) -> AdapterName | None:
        return None

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        # ReAct passes unknown keywords on to its internal Predict and ChainOfThought, both of which
        # take `adapter`: that is a udspy agent's own adapter. udspy's only adapter, ChatAdapter,
        # replies in JSON, so it stands for "json"; udspy has nothing for "chat", so none is passed.
        extra: dict[str, Any] = {"adapter": udspy.ChatAdapter()} if spec.adapter == "json" else {}
        # Not passed, as 0.1.8 has neither: `enable_ask_to_user` (there is no ask_to_user tool; an
        # unknown keyword would be forwarded to every LM call) and `on_max_steps` (it always extracts).
        return translate.built(lambda: _Agent(udspy.ReAct(
            _signature(spec.signature),
            [udspy.Tool(t.as_function(), require_confirmation=t.spec.interruptible) for t in tools],
            max_iters=spec.max_steps, **extra,
        )))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """`ReAct.__call__`, `aforward` or `astream`, with `model` in a settings.context of this call."""
        assert isinstance(agent, _Agent)
        agent.last = None
        with udspy.settings.context(lm=_lm(model, call.base_url)):
            return translate.reported(model, call.mode, partial(_outcome, agent, _cap(agent, call)),
                                      partial(_failed, agent), sync=lambda: agent.react(**call.kwargs()),
                                      asynchronous=lambda: agent.react.aforward(**call.kwargs()),
                                      stream=lambda events: _astream(agent, call, model, events))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        interrupt = _PAUSES[request.interrupt_id]
        with udspy.settings.context(lm=_lm(model)):
            outcome = partial(_outcome, agent, int(agent.react.max_iters))
            return translate.reported(model, request.mode, outcome, partial(_failed, agent),
                                      sync=lambda: agent.react.resume(request.response, interrupt),
                                      asynchronous=lambda: agent.react.aresume(request.response, interrupt))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """`ReAct.aforward`, with `model` in a settings.context of this task only."""
        assert isinstance(agent, _Agent)
        agent.last = None
        with udspy.settings.context(lm=_lm(model, call.base_url)):
            outcome = partial(_outcome, agent, _cap(agent, call))
            return await translate.areported(agent.react.aforward(**call.kwargs()), outcome,
                                             partial(_failed, agent))

    def step_tool_names(self, agent: object) -> list[str] | None:
        assert isinstance(agent, _Agent)
        annotation = agent.react.react_signature.model_fields["next_tool_name"].annotation
        return [str(name) for name in get_args(annotation)]

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        if agent.last is None:
            return None
        held = len(agent.last)
        for episode in agent.last:
            episode["thought"] = episode["observation"] = marker
        agent.last.append({"thought": marker, "tool_name": marker, "tool_args": {}, "observation": marker})
        return [f"prediction.trajectory ({held} episodes)"] if held else []

async def _astream(agent: _Agent, call: CallRequest, model: ScriptedModel, events: list[Event]) -> Any:
    """`ReAct.astream`: the step predictor's predictions are step events; the ReAct's own Prediction,
    which aexecute emits before it returns (react.py), is the result."""
    prediction: Any = None
    async for event in agent.react.astream(**call.kwargs()):
        if not isinstance(event, udspy.Prediction):
            continue
        if event.module is agent.react.react_module:
            events.append(translate.step_event(model, translate.step(
                event.get("next_tool_name"), event.get("next_tool_args"), thought=event.get("next_thought"))))
        elif event.module is agent.react:
            prediction = event
    return prediction


def _outputs(agent: _Agent, prediction: Any) -> dict[str, JsonValue]:
    return {name: json_value(prediction.get(name)) for name in agent.react.signature.get_output_fields()}


def _cap(agent: _Agent, call: CallRequest) -> int:
    """The max_iters the binding gave ReAct for this call: the call's own, else the agent's."""
    return int(agent.react.max_iters) if call.max_steps is None else call.max_steps


def _outcome(agent: _Agent, cap: int, prediction: Any) -> Outcome:
    """The Prediction, its stop reason and step count derived from its trajectory (binding.PARITY):
    ReAct.aexecute (module/react.py) appends one episode per step call and breaks on `finish`, so a
    last `finish` episode is the final answer and `cap` episodes without it the cap stop; a loop it
    broke on an unknown tool (an error episode, tool_name None) gets neither."""
    trajectory = prediction["trajectory"]
    agent.last = trajectory
    last = trajectory[-1].get("tool_name") if trajectory else None
    capped = last is not None and len(trajectory) >= cap
    stop = "finish" if last == "finish" else "max_steps" if capped else None
    return Outcome(outputs=_outputs(agent, prediction), trajectory=[_step(episode) for episode in trajectory],
                   stop_reason=stop, iterations=len(trajectory) if stop else None)


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    if isinstance(exc, ConfirmationRequired):
        agent.last = exc.context.get("trajectory")
        _PAUSES[exc.confirmation_id] = exc
        return Outcome(error=_interrupt(exc))
    return Outcome(error=ErrorInfo.from_exception(exc))


def _lm(model: ScriptedModel, base_url: str | None = None) -> Any:
    """udspy's own OpenAI-compatible LM: over an in-memory transport answering from `model`, or
    (http profile) at `base_url`, where its AsyncOpenAI client makes real HTTP requests."""
    if base_url is not None:
        return udspy.LM(model="scripted", base_url=base_url, api_key=server.API_KEY)
    answer = server.async_handler(model)

    async def over_the_network(request: httpx.Request) -> httpx.Response:
        # A real model request takes milliseconds: ReAct.astream hands a step's event to the
        # caller from a queue its running task fills, so an endpoint that answers in no time at
        # all lets the task's next request overtake the event (STREAM-1 then flips with the
        # scheduler's timing), which no provider's network does.
        await asyncio.sleep(_NETWORK_LATENCY)
        return await answer(request)

    client = openai.AsyncOpenAI(base_url=server.IN_MEMORY_URL, api_key=server.API_KEY,
                                http_client=httpx.AsyncClient(transport=httpx.MockTransport(over_the_network)))
    return OpenAILM(client=client, default_model="scripted")


def _signature(spec: SignatureSpec) -> Any:
    if spec.form == "string":
        return spec.arrow()
    if spec.form == "value":
        # udspy's programmatic builder: a Signature class made from two dicts of field types.
        return udspy.make_signature({f.name: PYTHON_TYPES[f.type] for f in spec.inputs},
                                    {f.name: PYTHON_TYPES[f.type] for f in spec.outputs}, spec.instructions)
    return translate.signature_class(spec, udspy.Signature,
                                     lambda text: udspy.InputField(description=text or None),
                                     lambda text: udspy.OutputField(description=text or None))



def _step(episode: Mapping[str, Any]) -> Step:
    """One udspy episode (`thought`, `tool_name`, `tool_args`, `observation`) as a Step."""
    # An unknown tool name leaves an error episode whose tool_name is None (react.py aexecute).
    return translate.step(episode.get("tool_name") or "", episode.get("tool_args"),
                          episode.get("observation"), episode.get("thought"))


def _interrupt(exc: ConfirmationRequired) -> ErrorInfo:
    """udspy's ConfirmationRequired (its human-in-the-loop interrupt) with its structured fields."""
    tool_call = exc.tool_call
    return ErrorInfo(
        type=type(exc).__name__, message=str(exc), kind="human-in-the-loop",
        fields={
            "question": exc.question,
            "interrupt_id": exc.confirmation_id,
            "tool_call": None if tool_call is None else {
                "name": tool_call.name, "args": json_value(tool_call.args), "call_id": tool_call.call_id},
            "context": json_value(exc.context),
        },
    )
