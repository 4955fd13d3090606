"""The binding for pydantic-ai's `Agent` (pydantic-ai-slim 2.68).

Seam: pydantic-ai's own test double, `FunctionModel(fn)`, passed per run (`model=...`): `fn` gets
each request's messages and `AgentInfo.function_tools`, logs them as one `LMCall` (every part as
text, the tools as OpenAI-style function declarations) and answers with a `ModelResponse`: the
thought as a `TextPart` and one `ToolCallPart` per call, its args the JSON text the model wrote
(verbatim when malformed), or a `TextPart` with the final answer; pydantic-ai then parses, validates
and runs the tools itself. Tools are `Tool(function, ...)` over the suite tool's typed function, so
pydantic-ai derives the schema and validates every call with it (`Tool.from_schema` would skip
validation, by its docstring).

Step cap: `UsageLimits(request_limit=N)` per run (so per call too): N steps are N model requests,
and the request after the N-th raises `UsageLimitExceeded`, which carries only its message; the
run's messages come from the documented `capture_run_messages`.

Approval: an interruptible tool has `requires_approval=True` and the output type is
`[str, DeferredToolRequests]`: the run ends with the pending calls (an interrupt whose id is the
call's `tool_call_id`); a resume is a new run of the agent given, with the paused result's messages
(through their JSON, `ModelMessagesTypeAdapter`), its usage and `DeferredToolResults`
(`ToolApproved()`, `ToolDenied(text)`, `ToolApproved(override_args=...)`).

Transport (`lm-retry`, `http`): FunctionModel sits above every retry layer, so a script holding a
transport fault, and every `http` call, runs on pydantic-ai's `OpenAIChatModel` and
`OpenAIProvider`, whose AsyncOpenAI client retries by default (2 retries, after about 0.5 s and
1 s or a Retry-After; no public setting zeroes the waits). Streaming is `agent.iter`: a step event
when a model request node carries a call's tool return, `done` after its End node.

Opt-in (`pydantic-ai+tool-errors`): by default only `ModelRetry` and `ToolFailed` raised in a tool
reach the model; the documented agent-wide way to turn any other exception into the call's result
is a capability's `on_tool_execute_error` hook (the `Hooks` capability's `tool_execute_error`),
whose raising `ToolFailed` gives the model a failed tool result without changing any tool.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    Tool,
    ToolApproved,
    ToolDenied,
    ToolFailed,
    capture_run_messages,
)
from pydantic_ai import __version__ as _VERSION
from pydantic_ai.capabilities import AbstractCapability, Hooks
from pydantic_ai.capabilities.abstract import ValidatedToolArgs
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    BaseToolReturnPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import UsageLimits

from conformance import render, server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Event,
    LMCall,
    Outcome,
    ResumeRequest,
    Step,
    StepTurn,
)
from conformance.render import json_value, user_message

_IDS = itertools.count(1)
_CRASH = ("only ModelRetry and ToolFailed raised in a tool go back to the model (tool_manager.py "
          "ToolManager._raw_execute); any other exception escapes Agent.run: the run crashes")
_REPLAY = ("a resume is a new run with message_history and DeferredToolResults, and pydantic-ai keeps "
           "no record of answered approvals (_agent_graph.py _handle_deferred_tool_results): "
           "replaying the same approval runs the tool again")
_KNOWN: dict[str, str] = {
    "ERR-1": _CRASH,
    "HITL-6": _REPLAY,
    "A pause answered through another agent is refused":
        "a pause has no owner: a resume is a new run of whichever agent is given, on the "
        "message_history the caller hands it, and DeferredToolResults approvals are matched by "
        "tool_call_id alone (_agent_graph.py _handle_deferred_tool_results): a second agent with "
        "the same tool takes the approval and runs the call",
    "HITL-8": _REPLAY + ", also from its serialised form (ModelMessagesTypeAdapter)",
    "A pause's trajectory is a snapshot":
        "the paused result hands out its own message list, not a copy (run.py "
        "AgentRunResult.all_messages returns self._state.message_history, the same list on every "
        "call): the caller's mutation of the messages it was shown is in the history the resume "
        "takes from that result",
}


@dataclass
class _Pause:
    """A run that ended with a pending approval: what a pydantic-ai user keeps to resume it (the
    run's result, whose messages and usage the resume takes)."""

    result: AgentRunResult[Any]
    call: ToolCallPart
    limits: UsageLimits
    inputs: dict[str, Any]


#: Every pause by its interrupt id, whichever agent's run made it: a person's answer may reach
#: another agent than the paused one (HITL-6), and refusing it is pydantic-ai's part, not ours.
_PAUSES: dict[str, _Pause] = {}


@dataclass
class _Agent:
    """A built pydantic-ai `Agent` and the messages its last call handed out."""

    agent: Agent[None, Any]
    spec: AgentSpec
    last: list[ModelMessage] = field(default_factory=list)


class PydanticAIBinding(Binding):
    """Runs the suite against pydantic-ai's `Agent`, driven through `FunctionModel`."""

    name = "pydantic-ai"
    dependencies = ("pydantic-ai-slim", "pydantic", "openai", "httpx")
    contract_version = 3
    capabilities = frozenset({"max-steps-error", "per-call-cap", "tool-approval", "approval-edit",
                              "durable-approvals", "async", "streaming", "parallel-tool-calls",
                              "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: Agent takes instructions and tools, no signature",
        "adapters": "no pluggable format-and-parse layer: each Model class (models/openai.py, ...) "
                    "owns its wire format",
        "cap-summary": "the request_limit raises UsageLimitExceeded (usage.py): there is no cap that "
                       "returns, so no message of what was tried",
        "repeated-error-stop": "no stop after repeated tool failures the run reports: a tool's "
                               "`retries` budget counts only ModelRetry and validation retries and "
                               "raises UnexpectedModelBehavior when spent (tool_manager.py "
                               "ToolManager._check_max_retries); no stop reason or error history",
        "max-steps-extract": "on the request_limit the run raises UsageLimitExceeded; it never makes a "
                             "tool-less final call (usage.py UsageLimits.check_before_request)",
        "max-steps-return": "on the request_limit the run raises UsageLimitExceeded; it never returns "
                            "a result flagged as capped (usage.py UsageLimits.check_before_request)",
        "ask-user": "pydantic-ai-slim has no built-in tool for asking the person; its AskUser question "
                    "lives in the separate Pydantic AI Harness package (_deferred.py)",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: max_steps when the run raised UsageLimitExceeded on the request_limit "
                       "(usage.py UsageLimits.check_before_request)",
        "iterations": "derived: the ModelResponse messages capture_run_messages kept (_agent_graph.py)",
        "max_iterations": "derived: the request_limit the binding gave UsageLimits for this call",
        "partial_run": "derived: the messages the documented capture_run_messages() kept; "
                       "UsageLimitExceeded carries only its message (exceptions.py)",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return str(_VERSION)

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        # DeferredToolRequests in the output type is how pydantic-ai lets a run end with pending
        # approvals (deferred-tools docs); without an approval tool the output is plain text.
        output: Any = [str, DeferredToolRequests] if any(t.spec.interruptible for t in tools) else str
        return translate.built(lambda: _Agent(Agent(
            instructions=spec.signature.instructions or None, tools=[_tool(t) for t in tools],
            output_type=output, capabilities=self._capabilities()), spec))

    def _capabilities(self) -> list[AbstractCapability[None]]:
        """The capabilities the agent is built with: none by default."""
        return []

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        return _run(agent, _run_kwargs(agent, call, model), call.mode, model, call.inputs)

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """`Agent.run` on the running event loop."""
        assert isinstance(agent, _Agent)
        kwargs = _run_kwargs(agent, call, model)
        with capture_run_messages() as messages:
            return await translate.areported(agent.agent.run(**kwargs),
                                             partial(_outcome, agent, kwargs, call.inputs),
                                             partial(_failed, agent, messages, kwargs["usage_limits"]))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        pause = _PAUSES[request.interrupt_id]
        answer = _answer(pause.call, request.response)
        if isinstance(answer, ErrorInfo):
            return Outcome(error=answer)
        # Through the messages' JSON, as a pause kept across processes is (durable-approvals);
        # taken when the person answers, from the result the paused run returned.
        messages = ModelMessagesTypeAdapter.validate_json(pause.result.all_messages_json())
        kwargs: dict[str, Any] = {
            "message_history": messages, "usage": pause.result.usage,
            "deferred_tool_results": DeferredToolResults(approvals={pause.call.tool_call_id: answer}),
            "model": _model(model, None), "usage_limits": pause.limits,
        }
        return _run(agent, kwargs, request.mode, model, pause.inputs)

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            for part in message.parts:
                if isinstance(part, TextPart | BaseToolReturnPart | UserPromptPart):
                    part.content = marker
        agent.last.append(ModelRequest(parts=[UserPromptPart(marker)]))
        return [f"result.all_messages() ({held} messages)"] if held else []

def _tool(tool: SuiteTool) -> Tool[None]:
    """The suite tool as a pydantic-ai Tool over its typed function; the Google-style docstring
    gives pydantic-ai each argument's description for the schema it derives."""
    return Tool(translate.documented_function(tool), takes_ctx=False, name=tool.spec.name,
                description=tool.spec.description, requires_approval=tool.spec.interruptible)


def _run_kwargs(agent: _Agent, call: CallRequest, model: ScriptedModel) -> dict[str, Any]:
    # One step is one model request: request_limit=N admits N requests (usage.py).
    return {"user_prompt": user_message(call.inputs), "model": _model(model, call.base_url),
            "usage_limits": UsageLimits(request_limit=translate.step_cap(agent.spec, call))}


def _run(agent: _Agent, kwargs: dict[str, Any], mode: str, model: ScriptedModel,
         inputs: dict[str, Any]) -> Outcome:
    """`Agent.run_sync(**kwargs)`, `Agent.run` on a new event loop or `Agent.iter`, reported; a failed
    run's messages are the ones `capture_run_messages` kept."""
    with capture_run_messages() as messages:
        return translate.reported(model, mode, partial(_outcome, agent, kwargs, inputs),
                                  partial(_failed, agent, messages, kwargs["usage_limits"]),
                                  sync=lambda: agent.agent.run_sync(**kwargs),
                                  asynchronous=lambda: agent.agent.run(**kwargs),
                                  stream=lambda events: _iterate(agent, kwargs, model, events))


async def _iterate(agent: _Agent, kwargs: dict[str, Any], model: ScriptedModel, events: list[Event]) -> Any:
    """`Agent.iter`: each tool call is a step event once a model request node carries its return."""
    async with agent.agent.iter(**kwargs) as run:
        async for node in run:
            pending = [node.request] if Agent.is_model_request_node(node) else []
            translate.step_events(model, events, _trajectory([*run.all_messages(), *pending]))
    return run.result


def _outcome(agent: _Agent, kwargs: dict[str, Any], inputs: dict[str, Any], result: Any) -> Outcome:
    messages: list[ModelMessage] = result.all_messages()
    agent.last = messages
    trajectory = _trajectory(messages)
    iterations = sum(isinstance(m, ModelResponse) for m in messages)
    if not isinstance(result.output, DeferredToolRequests):
        return translate.finished(agent.spec.signature, result.output, trajectory, iterations)
    call = result.output.approvals[0]
    _PAUSES[call.tool_call_id] = _Pause(result, call, kwargs["usage_limits"], inputs)
    # DeferredToolRequests holds the pending calls and no question for the person.
    count = len(result.output.approvals)
    return translate.paused(
        "DeferredToolRequests", f"the run ended with {count} call(s) awaiting approval",
        interrupt_id=call.tool_call_id, tool=call.tool_name, args=call.args, call_id=call.tool_call_id,
        trajectory=trajectory, iterations=iterations, inputs=inputs)


def _failed(agent: _Agent, messages: list[ModelMessage], limits: UsageLimits, exc: Exception) -> Outcome:
    """An exception the run let escape; its trajectory from `capture_run_messages`. On the cap,
    UsageLimitExceeded carries only its message: the partial run is read from the messages the
    documented `capture_run_messages` kept, the cap is the request_limit the binding gave."""
    agent.last = messages
    trajectory = _trajectory(messages)
    iterations = sum(isinstance(m, ModelResponse) for m in messages)
    if not isinstance(exc, UsageLimitExceeded):
        return Outcome(error=ErrorInfo.from_exception(exc), trajectory=trajectory,
                       iterations=iterations)
    own = {t.name for t in agent.spec.tools}
    done = [s for s in trajectory if s.observation is not None and s.tool_name in own]
    seen = [s for s in trajectory if s.observation is not None]
    return Outcome(trajectory=trajectory, iterations=iterations, stop_reason="max_steps",
                   error=translate.max_iterations(
                       exc, iterations=iterations, max_iterations=limits.request_limit,
                       tools_used=[s.tool_name for s in done],
                       history=[s.model_dump() for s in trajectory],
                       last_observation=seen[-1].observation if seen else None))


def _answer(call: ToolCallPart, response: str) -> ToolApproved | ToolDenied | ErrorInfo:
    """A person's answer as pydantic-ai's approval result for the pending call."""
    answer = translate.approval(response)
    if answer.decision == "edit" and answer.name not in (None, call.tool_name):
        return ErrorInfo(type="UnsupportedEdit", message=(
            "pydantic-ai's ToolApproved(override_args=...) changes the args of the pending call; "
            f"it cannot make the call run another tool ({answer.name!r})"))
    if answer.decision == "edit":
        return ToolApproved(override_args=answer.args if isinstance(answer.args, dict) else {})
    if answer.decision == "approve":
        return ToolApproved()
    # A message is what pydantic-ai returns to the model for the denied call.
    return ToolDenied(answer.text) if answer.decision == "message" else ToolDenied()


def _trajectory(messages: Sequence[ModelMessage]) -> list[Step]:
    """One Step per tool call in the messages, its observation the tool return the model was shown."""
    calls: list[translate.NativeCall] = []
    results: dict[str, str] = {}
    errors: dict[str, bool] = {}  # the return's own outcome: 'failed' or 'retried' is an error
    for message in messages:
        if isinstance(message, ModelResponse):
            thought = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            calls += [(p.tool_call_id, thought, p.tool_name, p.args) for p in message.parts
                      if isinstance(p, ToolCallPart)]
        else:
            returns = [p for p in message.parts if isinstance(p, BaseToolReturnPart)]
            results.update({p.tool_call_id: p.model_response_str() for p in returns})
            errors.update({p.tool_call_id: p.outcome in ERROR_OUTCOMES for p in returns})
    return translate.steps(calls, results, errors)


def _lm_call(messages: list[ModelMessage], info: AgentInfo) -> LMCall:
    """A request as the model is shown it: every part as text, the tools as function declarations."""
    shown: list[dict[str, Any]] = []
    if info.instructions:
        shown.append({"role": "system", "content": info.instructions})
    for message in messages:
        if isinstance(message, ModelResponse):
            shown.append(translate.shown("assistant", "\n".join(
                p.content for p in message.parts if isinstance(p, TextPart)), [
                (p.tool_name, p.args_as_json_str()) for p in message.parts if isinstance(p, ToolCallPart)]))
            continue
        for part in message.parts:
            if isinstance(part, BaseToolReturnPart):
                shown.append({"role": "tool", "content": f"{part.tool_name}: {part.model_response_str()}"})
            elif hasattr(part, "model_response"):  # a retry prompt or feedback
                shown.append({"role": "user", "content": part.model_response()})
            elif isinstance(getattr(part, "content", None), str):
                shown.append({"role": "system" if part.part_kind == "system-prompt" else "user",
                              "content": part.content})
    tools: list[Any] = [{"type": "function", "function": {
        "name": t.name, "description": t.description or "", "parameters": t.parameters_json_schema}}
        for t in info.function_tools]
    return LMCall(kind="step", adapter="native", messages=json_value(shown), tools=tools)


def _function_model(model: ScriptedModel) -> FunctionModel:
    async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # A script holding a fault runs on the OpenAI model (see _model), never here.
        turn = await translate.aanswer(model, _lm_call(messages, info))
        if isinstance(turn, StepTurn):
            return ModelResponse(parts=[*([TextPart(turn.thought)] if turn.thought else []), *(
                ToolCallPart(c.tool_name, c.args_text(), tool_call_id=f"call_{next(_IDS)}")
                for c in turn.calls())])
        return ModelResponse(parts=[TextPart(render.openai_message(turn, 0)["content"])])

    return FunctionModel(reply, model_name="scripted")


def _model(model: ScriptedModel, base_url: str | None) -> Model:
    """FunctionModel, or (a scripted fault, or the http profile) pydantic-ai's own OpenAI model."""
    if base_url is not None:
        provider = OpenAIProvider(base_url=base_url, api_key=server.API_KEY)
        return OpenAIChatModel("scripted", provider=provider)
    if not model.holds_a_fault():
        return _function_model(model)
    # A legacy httpx client (pydantic-ai warns it prefers httpx2): server.fault_response raises
    # httpx's timeout and connection errors, which the OpenAI client then meets as a real one would.
    return OpenAIChatModel("scripted", provider=OpenAIProvider(openai_client=server.openai_client(model)))


async def _tool_failed(ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition,
                       args: ValidatedToolArgs, error: Exception) -> Any:
    """The agent's tool-execution error hook: the exception becomes `ToolFailed`, which pydantic-ai
    returns to the model as the call's failed result (outcome 'failed') and the run goes on."""
    raise ToolFailed(str(error))


class PydanticAIToolErrorsBinding(PydanticAIBinding):
    """`Agent` with a `Hooks` capability whose `tool_execute_error` hook raises `ToolFailed`: the
    documented opt-in (hooks docs: an error hook that raises a different exception transforms the
    error; `ToolFailed` may be raised from tool-execution hooks to report a terminal failure to the
    model, exceptions.py) that turns a raising tool into an error observation for every tool of
    the agent, without changing any tool's code."""

    name = "pydantic-ai+tool-errors"
    known_failures: ClassVar[Mapping[str, str]] = {k: v for k, v in _KNOWN.items() if k != "ERR-1"}

    def _capabilities(self) -> list[AbstractCapability[None]]:
        return [Hooks(tool_execute_error=_tool_failed)]
