"""The bindings for the OpenAI Agents SDK (`openai-agents`, `import agents`): `Agent` + `Runner`.

Seam: the SDK's default model, `OpenAIResponsesModel` (the Responses API, which its default provider
uses unless told otherwise: models/_openai_shared.py `_use_responses_by_default = True`), with an
`AsyncOpenAI` client (its default retries: 2, with backoff) over an in-memory httpx transport that
answers the Responses API from the script (`server.handler`), passed per run as
`RunConfig(model=...)`; in the `http` profile the same client points at `CallRequest.base_url`, whose
`/responses` the endpoint serves. The SDK sends each turn's whole conversation as `input` items (no
`previous_response_id`), which a stateless endpoint answers. The SDK also ships
`agents.testing.ScriptedModel`, but that sits above the openai client, where the retries a user gets
by default live: serving the script beneath the client runs the SDK's own request building, reply
parsing and retry layer, as a user's run does. Tracing is
switched off per run (`RunConfig(tracing_disabled=True)`): there is nowhere to export it.

Tools are the SDK's own `function_tool` over the suite tool's function (schema, lax pydantic
validation and the default `failure_error_function` are the SDK's). Its default `strict_mode=True`
cannot declare a free-form object argument (strict_schema.py, ensure_strict_json_schema refuses
`additionalProperties`), so a tool taking a dict gets the documented `strict_mode=False`; every other
tool keeps the default. A step's call id is its function call's `call_id`; the SDK has no error flag
on a tool's output item (a failed call's output is text), so `is_error` is None. The step cap is `max_turns`:
one turn is one model call (run.py checks `current_turn > max_turns` before each call), so N steps
map to `max_turns=N`, a final answer on call N is accepted, and call N+1 raises `MaxTurnsExceeded`
before reaching the model. It is an argument of `Runner.run`, so the per-call override is native.

Approval: `function_tool(..., needs_approval=True)` pauses the run with `result.interruptions`
(`ToolApprovalItem`s); `result.to_state()` is the pause, answered with `RunState.approve` / `reject`
(`rejection_message` carries free text to the model) and `Runner.run(agent, state)`, the snapshot
restored and run through the agent `resume` is given (which may not be the one that paused). The SDK has no
edit of a pending call. Streaming is `Runner.run_streamed(...).stream_events()`: a step event as
each tool call's output item arrives.

`openai-agents+tool-not-found` is the documented opt-in `RunConfig(tool_not_found_behavior=
"return_error_to_model")`, which answers a call of an unknown tool with an error output instead of
raising `ModelBehaviorError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

from agents import (
    Agent,
    AgentsException,
    ItemHelpers,
    MaxTurnsExceeded,
    MessageOutputItem,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    RunResult,
    RunResultStreaming,
    RunState,
    ToolCallItem,
    ToolCallOutputItem,
    function_tool,
)
from openai.types.responses import ResponseFunctionToolCall

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Event,
    Outcome,
    ResumeRequest,
    Step,
)
from conformance.render import user_message

_GENERIC = ("function_tool's default failure_error_function, default_tool_error_function (tool.py), "
            "answers every failing tool call with the fixed 'An error occurred while running the tool. "
            "Please try again.'")
_NO_STOP = ("the Runner has no repeated-failure stop: it asks the model again after every tool error "
            "until max_turns raises MaxTurnsExceeded (run.py)")
_NO_EDIT = "RunState offers approve and reject only (run_state.py): the SDK cannot edit a pending call"
_REPLAY = ("a RunState snapshot (to_string/from_string, run_state.py) keeps no record that its "
           "approval was used: approving the same pause again runs the tool again")
_UNKNOWN = ("run_internal/turn_resolution.py process_model_response raises ModelBehaviorError('Tool "
            "<name> not found in agent <agent>') out of Runner.run unless tool_not_found_behavior opts out")
_ARGS4 = "test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value"
_KNOWN: dict[str, str] = {
    "ERR-4": _GENERIC + ": the exception's message is redacted by design (its docstring: 'without "
             "exposing the exception to the model')",
    **dict.fromkeys(
        [f"{_ARGS4}[{case}]" for case in (
            '{"amount": 50}-recipient', '{"amount": "fifty", "recipient": "Ann"}-amount',
            '{"amount": 50, "recipient": ["Ann", "Bob"]}-recipient',
            '{"amount": 50.5, "recipient": "Ann"}-amount', '{"amount": null, "recipient": "Ann"}-amount')],
        "function_tool refuses the call with pydantic's ValidationError (tool.py, _on_invoke_tool_impl), "
        "and default_tool_error_function answers it with its fixed 'An error occurred while running "
        "the tool. Please try again.', which names no field"),
    "An argument the schema does not declare is refused, naming it, not dropped":
        "function_tool validates with the function's pydantic model (function_schema.py), which "
        "ignores extra fields: 'memo' is dropped and the tool runs",
    **dict.fromkeys(
        translate.ARGS5_DEEP,
        "before running a call the SDK derives its identity from the args "
        "(run_internal/tool_planning.py, _dedupe_processed_response_invocations, "
        "tool_invocation_identity), recursively: RecursionError escapes Runner.run"),
    "An unknown tool name is never run, and the loop goes on": _UNKNOWN,
    "An unknown tool name never crashes the run, also when it is the last step": _UNKNOWN,
    "The agent is told that the tool it chose does not exist": _UNKNOWN,
    "Resuming the same interrupt twice never runs the tool twice": _REPLAY,
    "Answering a pause again after its resumed run paused again never runs a call twice": _REPLAY,
    "HITL-8": _REPLAY,
}
_KNOWN_OPT_IN: dict[str, str] = {k: v for k, v in _KNOWN.items() if v != _UNKNOWN}


def _strict(tool: SuiteTool) -> bool:
    """function_tool's default strict mode, unless the tool takes a free-form object, which a strict
    schema cannot declare: then the documented `strict_mode=False`."""
    return not any(p.type == "dict" for p in tool.spec.parameters)


@dataclass
class _Pause:
    """A run paused for approval: the SDK's RunState snapshot (`to_string`, the durable form its
    docs call the pause/resume boundary), where the run's model lives, and the max_turns the binding
    gave the paused call (the snapshot carries it to the resumed run, run.py)."""

    snapshot: str
    base_url: str | None
    max_turns: int


@dataclass
class _Agent:
    """A built `agents.Agent`, its spec, what its last call handed out."""

    agent: Agent[Any]
    spec: AgentSpec
    last: list[Any] = field(default_factory=list)


#: Every pause a run reported, by its id, whichever agent made it: an answer may reach another agent
#: (HITL-6), and whether that agent's run refuses it is the SDK's part.
_PAUSES: dict[str, _Pause] = {}


class OpenAIAgentsBinding(Binding):
    """Runs the suite against the OpenAI Agents SDK's `Runner`, with its defaults."""

    name = "openai-agents"
    dependencies = ("openai-agents", "openai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-error", "per-call-cap", "tool-approval", "durable-approvals",
                              "async", "streaming", "parallel-tool-calls", "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: instructions and a user message, no signature",
        "adapters": "no pluggable format-and-parse layer: each Model class (models/"
                    "openai_chatcompletions.py, openai_responses.py) owns its wire format",
        "cap-summary": "the cap raises MaxTurnsExceeded (run.py): there is no cap that returns, so no "
                       "message of what was tried",
        "repeated-error-stop": _NO_STOP,
        "approval-edit": _NO_EDIT,
        "max-steps-extract": "on max_turns the run raises MaxTurnsExceeded (run.py); it makes no "
                             "tool-less final call",
        "max-steps-return": "by default max_turns raises MaxTurnsExceeded; its error_handlers "
                            "(run_error_handlers.py) return only a final output the caller's own "
                            "handler writes, with no flag that the cap stopped the run",
        "ask-user": "the SDK has no built-in tool for asking the person a question",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "library: MaxTurnsExceeded, raised when the turn after max_turns begins "
                       "(run_internal/run_loop.py), is the cap stop; a run that ends has final_output",
        "iterations": "derived: counted from the run's raw_responses, one per model call (result.py "
                      "RunResult; exceptions.py RunErrorDetails on MaxTurnsExceeded.run_data)",
        "max_iterations": "derived: the max_turns the binding passed to Runner.run; MaxTurnsExceeded "
                          "carries it only in its text, 'Max turns (N) exceeded' (run_internal/run_loop.py)",
        "partial_run": "library: MaxTurnsExceeded.run_data.new_items (exceptions.py RunErrorDetails)",
        "concurrency": "shared",
    }
    #: RunConfig settings of this binding's configuration (none: the defaults).
    run_settings: ClassVar[Mapping[str, Any]] = {}

    @property
    def version(self) -> str:
        return version("openai-agents")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return translate.built(lambda: _Agent(Agent(
            name=spec.name,
            instructions=spec.signature.instructions or None,
            tools=[function_tool(translate.documented_function(t), name_override=t.name,
                                 needs_approval=t.spec.interruptible, strict_mode=_strict(t))
                   for t in tools],
        ), spec))

    def _config(self, model: ScriptedModel, base_url: str | None) -> RunConfig:
        return RunConfig(model=_model(model, base_url), tracing_disabled=True, **self.run_settings)

    def _arguments(self, agent: _Agent, call: CallRequest, model: ScriptedModel) -> dict[str, Any]:
        """What `Runner.run`, `run_sync` and `run_streamed` take for `call` (its cap as max_turns)."""
        return {"starting_agent": agent.agent, "input": user_message(call.inputs),
                "max_turns": translate.step_cap(agent.spec, call),
                "run_config": self._config(model, call.base_url)}

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        arguments = self._arguments(agent, call, model)
        cap = arguments["max_turns"]
        return translate.reported(model, call.mode, partial(_outcome, agent, call.base_url, cap),
                                  partial(_failed, agent, cap), sync=lambda: Runner.run_sync(**arguments),
                                  asynchronous=lambda: Runner.run(**arguments),
                                  stream=lambda events: _stream(arguments, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        arguments = self._arguments(agent, call, model)
        cap = arguments["max_turns"]
        return await translate.areported(Runner.run(**arguments),
                                         partial(_outcome, agent, call.base_url, cap),
                                         partial(_failed, agent, cap))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        pause = _PAUSES[request.interrupt_id]
        answer = translate.approval(request.response)
        if answer.decision == "edit":
            return Outcome(error=ErrorInfo(
                type="NotSupported", message="the SDK cannot edit a pending tool call: RunState "
                "offers approve and reject only (run_state.py)"))

        async def resumed() -> RunResult:
            state = await RunState.from_string(agent.agent, pause.snapshot)
            item = state.get_interruptions()[0]
            if answer.decision == "approve":
                state.approve(item)
            else:  # free text is a rejection_message, which the SDK sends to the model as it is
                state.reject(item, rejection_message=None if answer.decision == "reject" else answer.text)
            return await Runner.run(agent.agent, state, run_config=self._config(model, pause.base_url))

        # The snapshot is restored and run on an event loop (RunState.from_string is async), in either mode.
        return translate.reported(model, "async", partial(_outcome, agent, pause.base_url, pause.max_turns),
                                  partial(_failed, agent, pause.max_turns), asynchronous=resumed)

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for item in agent.last:
            if isinstance(item, ToolCallOutputItem) and isinstance(item.raw_item, dict):
                item.raw_item["output"] = marker
                item.output = marker
        agent.last.append(marker)
        return [f"result.new_items ({held} items)"] if held else []

class OpenAIAgentsToolNotFoundBinding(OpenAIAgentsBinding):
    """The documented opt-in `RunConfig(tool_not_found_behavior="return_error_to_model")`."""

    name = "openai-agents+tool-not-found"
    run_settings: ClassVar[Mapping[str, Any]] = {"tool_not_found_behavior": "return_error_to_model"}
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN_OPT_IN


def _model(model: ScriptedModel, base_url: str | None) -> OpenAIResponsesModel:
    """The SDK's default model, the Responses API's: at `base_url`, or over a transport answering
    from `model`."""
    # Every request is a step: the SDK makes no tool-less extraction call.
    client = server.openai_client(model, partial(server.native_call, kind="step"), base_url=base_url)
    return OpenAIResponsesModel(model="scripted", openai_client=client)


async def _stream(arguments: dict[str, Any], model: ScriptedModel, events: list[Event]) -> RunResultStreaming:
    """`Runner.run_streamed`: each `tool_output` run item is a step event; the result once it ends."""
    result = Runner.run_streamed(**arguments)
    seen: list[Any] = []
    async for event in result.stream_events():
        if event.type == "run_item_stream_event":
            seen.append(event.item)
            translate.step_events(model, events, _steps(seen))
    return result


def _steps(items: Sequence[Any]) -> list[Step]:
    """The tool calls among the SDK's run items, in order, each with its output and the text of the
    model reply that made it (its thought)."""
    outputs = {str(i.raw_item.get("call_id")): i.raw_item.get("output") for i in items
               if isinstance(i, ToolCallOutputItem) and isinstance(i.raw_item, dict)}
    calls: list[translate.NativeCall] = []
    thought = None
    for item in items:
        if isinstance(item, MessageOutputItem):
            thought = ItemHelpers.text_message_output(item)
        elif isinstance(item, ToolCallItem) and isinstance(item.raw_item, ResponseFunctionToolCall):
            calls.append((item.raw_item.call_id, thought, item.raw_item.name, item.raw_item.arguments))
        elif isinstance(item, ToolCallOutputItem):
            thought = None
    return translate.steps(calls, outputs)  # no error flag: a failed tool's output is plain text


def _outcome(agent: _Agent, base_url: str | None, max_turns: int,
             result: RunResult | RunResultStreaming) -> Outcome:
    agent.last = result.new_items
    trajectory = _steps(result.new_items)
    iterations = len(result.raw_responses)
    if not result.interruptions:
        return translate.finished(agent.spec.signature, result.final_output, trajectory, iterations)
    item = result.interruptions[0]
    call_id = str(item.call_id)
    pause_id = f"{call_id}#{len(_PAUSES) + 1}"
    _PAUSES[pause_id] = _Pause(result.to_state().to_string(), base_url, max_turns)
    # A ToolApprovalItem carries the call, no question for the person.
    return translate.paused(type(item).__name__, f"the call of {item.tool_name} needs approval",
                            interrupt_id=pause_id, tool=item.tool_name, args=str(item.arguments),
                            call_id=call_id, trajectory=trajectory, iterations=iterations,
                            inputs=result.input)


def _failed(agent: _Agent, max_turns: int, exc: Exception) -> Outcome:
    """An exception the SDK let escape; its run data (items, responses), where it carries any. Its
    MaxTurnsExceeded carries the limit only in its text, so `max_iterations` is the max_turns the
    binding gave the run (binding.PARITY)."""
    data = exc.run_data if isinstance(exc, AgentsException) else None
    agent.last = [] if data is None else data.new_items
    if data is None:
        return Outcome(error=ErrorInfo.from_exception(exc))
    trajectory = _steps(data.new_items)
    iterations = len(data.raw_responses)
    if not isinstance(exc, MaxTurnsExceeded):
        return Outcome(trajectory=trajectory, iterations=iterations, error=ErrorInfo.from_exception(exc))
    # The fields its run_data gives (no partial answer), and the cap given. A call of a name the
    # agent lacks (answered with an error under tool_not_found_behavior) used no tool.
    own = {getattr(tool, "name", None) for tool in data.last_agent.tools}
    seen = [s for s in trajectory if s.observation is not None]
    ran = [s for s in seen if s.tool_name in own]
    return Outcome(trajectory=trajectory, iterations=iterations, stop_reason="max_steps",
                   error=translate.max_iterations(
                       exc, iterations=iterations, max_iterations=max_turns,
                       tools_used=[s.tool_name for s in ran],
                       history=[s.model_dump() for s in trajectory],
                       last_observation=seen[-1].observation if seen else None))
