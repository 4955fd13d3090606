"""The binding for BeeAI's `RequirementAgent` (beeai-framework 0.1, `beeai_framework.agents.requirement`).

Seam: BeeAI's own `OpenAIChatModel` (adapters/openai/backend/chat.py, over LiteLLM), given through its
documented provider `settings` the `client` LiteLLM hands each request to: an `openai.AsyncOpenAI`
over an in-memory transport that answers from the script (`translate.serving`: a contextvar, so one
agent serves concurrent runs); in the `http` profile a client at `CallRequest.base_url`. So BeeAI's
request building (`LiteLLMChatModel._transform_input`), LiteLLM's reply parsing and BeeAI's own
retries (`ChatModel.run`'s `max_retries`, the run's `max_retries_per_step`) run as in a user's run.
The scripted model is no model LiteLLM knows, so the chat model is told it calls tools natively
(`model_supports_tool_calling=True`, the documented setting), as a user of such a model does. No
`base_url` is given to the chat model: it then keeps OpenAI's `tool_choice: "required"` (with one it
drops it and falls back to a JSON response format, adapters/openai/backend/chat.py), as with OpenAI.

Tools are BeeAI's `@tool` over the suite tool's function (its docstring the description, the
signature the pydantic input model). The agent ends a run by calling its own `final_answer` tool
(`FinalAnswerTool`, `{"response": ...}`): the seam renders the script's final answer as that call
(a reply that calls no tool is turned into one by the agent too, `_create_final_answer_tool_call`).

Loop (agents/requirement/_runner.py): each iteration asks the model once (`tool_choice: "required"`),
runs its tool calls and adds them to the run's memory, until `final_answer` is called. The step cap
is `run(max_iterations=N)` (default 20), checked before each iteration: the (N+1)-th raises
`AgentError('Agent was not able to resolve the task in N+1 iterations.')` (`max-steps-error`); it is
an argument of `run`, so the per-call cap is native. The error carries no state: the partial run is
the state the run's last `success` event handed over (`Run.on("success", ...)`, one per iteration,
BeeAI's documented way to observe a run), which the binding watches in every run.

The agent's memory keeps the conversation across runs, as documented; a run's own messages are
those its state's memory holds past the ones the agent remembered before it. Each step is read from
those messages (the call's id, its thought, args and result) and from the state's `steps`
(`RequirementAgentRunStateStep.error`, its error flag), the `final_answer` call left out.

Forms: `run` is async (a `Run` awaited; BeeAI has no sync form, its examples run it with
`asyncio.run`, as the sync form does here); its stream is the run's events (those `success` events),
a step event for each tool result as its iteration succeeds.

Approval (`approval_form = "callback"`): BeeAI's `AskPermissionRequirement(include=[tools],
handler=...)` asks the handler before each call of those tools; the handler asks the running call's
`ScriptedModel.approve`. It answers yes or no: a declined call's result is the fixed 'This tool is
not allowed to be used.'.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar, Literal

import httpx
import openai
from beeai_framework.adapters.openai import OpenAIChatModel
from beeai_framework.agents.errors import AgentError
from beeai_framework.agents.requirement import RequirementAgent
from beeai_framework.agents.requirement.requirements.ask_permission import AskPermissionRequirement
from beeai_framework.agents.requirement.types import RequirementAgentOutput, RequirementAgentRunState
from beeai_framework.backend import AssistantMessage, ToolMessage
from beeai_framework.tools import tool

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, LMCall, Outcome, Step
from conformance.render import user_message

#: The agent's own final-answer tool (agents/requirement/utils/_tool.py FinalAnswerTool) and its field.
_FINAL = "final_answer"
_CAP_ERROR = "Agent was not able to resolve the task in"
_CYCLE = ("max_iterations counts iterations, and an iteration whose tool call repeats an earlier one "
          "(ToolCallChecker, on by default: agents/requirement/_runner.py _run) asks the model again within "
          "the same iteration: a cap of N lets more than N model calls through; max_iterations=0 is no cap "
          "at all (_increment_iteration tests it for truth)")
_KNOWN: dict[str, str] = {
    "LOOP-3": _CYCLE,
    "LOOP-6": "the chat model refuses a reply that calls several tools unless "
              "allow_parallel_tool_calls=True: "
              "ChatModelError('The model produced more than one tool call, but parallel tool calls are "
              "disabled.') escapes the run (backend/chat.py)",
    "ARGS-2": "args that are JSON but not an object end the run: a string, a number or null fails "
              "ChatModelOutput.is_valid, and LiteLLMChatModel._create (adapters/litellm/chat.py) raises "
              "ChatModelError('Response could not be produced because it is invalid.'); an array reaches "
              "Tool.run, whose ToolErrorEvent refuses it, and FrameworkError escapes (tools/tool.py)",
    "ARGS-3": "args that are not JSON fail ChatModelOutput.is_valid: LiteLLMChatModel._create "
              "(adapters/litellm/chat.py) raises ChatModelError('Response could not be produced because it "
              "is invalid.') out of the run",
    **dict.fromkeys(translate.ARGS5_DEEP,
                    "a reply whose args are nested too deep to parse fails in the chat model, and "
                    "ChatModel.run's Retryable (backend/chat.py) asks the model again with the same "
                    "messages: the call is dropped and the model is never told why"),
    "An argument the schema does not declare is refused, naming it, not dropped":
        "@tool's input model (tools/tool.py, pydantic's create_model) ignores undeclared fields: 'memo' is "
        "dropped and the tool runs",
    "Mutating a returned trajectory changes neither the agent nor its next run":
        "RequirementAgent.run (agents/requirement/agent.py) fills the agent's memory with the very message "
        "objects of the state it returns (memory.add_many(final_state.memory.messages)): a caller's change "
        "to a returned tool result is sent to the model in the next run",
    "EXH-1": "the cap's error is the generic AgentError, 'Agent was not able to resolve the task in N+1 "
             "iterations.' (agents/requirement/_runner.py _increment_iteration): it says no limit was "
             "reached, and counts the iteration it refused",
    "An interruptible tool does not run before approval":
        "AskPermissionRequirement calls its handler with the tool and its input (requirements/"
        "ask_permission.py _ask): no call id reaches the person",
    "Free text is fed back to the agent as the user's answer":
        "AskPermissionRequirement's handler answers allowed or not: a declined call's result is the fixed "
        "'This tool is not allowed to be used.' (requirements/ask_permission.py _ask), never the person's "
        "words",
    "NET-1": "ChatModel.run (backend/chat.py) retries every error, a 400 or 401 too, up to "
             "max_retries_per_step (3), through Retryable with factor=0: 0 ** n seconds between tries, no "
             "backoff and no Retry-After; the error that ends it is ChatModelError('Chat Model error'), "
             "which names no status",
}


@dataclass
class _Agent:
    """A built `RequirementAgent`, its spec and tools, and what its last call handed out."""

    agent: RequirementAgent
    spec: AgentSpec
    tools: Sequence[SuiteTool]
    last: list[Any] = field(default_factory=list)


class BeeAIBinding(Binding):
    """Runs the suite against BeeAI's `RequirementAgent`, with its defaults."""

    name = "beeai-framework"
    dependencies = ("beeai-framework", "litellm", "openai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-error", "per-call-cap", "tool-approval", "async", "streaming",
                              "parallel-tool-calls", "lm-retry", "http"})
    approval_form: ClassVar[Literal["pause", "callback"]] = "callback"
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: RequirementAgent takes instructions, a prompt and tools, "
                     "no signature",
        "adapters": "no pluggable prompt format: each chat model adapter writes its provider's request",
        "max-steps-extract": "past max_iterations the run raises AgentError (agents/requirement/_runner.py "
                             "_increment_iteration): no tool-less final call",
        "max-steps-return": "past max_iterations the run raises AgentError: it never returns capped",
        "cap-summary": "the cap raises AgentError, whose message names only the iteration count",
        "repeated-error-stop": "tool errors count toward total_max_retries (20), one budget for every "
                               "error of the run, and max_retries_per_step (3) within one iteration "
                               "(_runner.py RetryCounter): no stop after repeated similar failures",
        "ask-user": "no built-in tool for asking the person a question",
        "approval-edit": "AskPermissionRequirement's handler answers allowed or not (requirements/"
                         "ask_permission.py _ask): no edit of the call",
        "durable-approvals": "approval is a handler called inside the run: there is no pause to serialise",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "library: AgentError 'Agent was not able to resolve the task in N iterations' "
                       "(agents/requirement/_runner.py _increment_iteration) is the cap stop; a run that "
                       "returns has called final_answer",
        "iterations": "library: RequirementAgentRunState.iteration, of the run's output or of its last "
                      "'success' event before the cap's AgentError",
        "max_iterations": "derived: the max_iterations the binding passed to RequirementAgent.run; "
                          "AgentError carries no fields",
        "partial_run": "library: the run's state (steps, memory, iteration) as its last 'success' event "
                       "handed it (Run.on, context.py; RequirementAgentSuccessEvent); AgentError carries "
                       "none",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return version("beeai-framework")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return translate.built(lambda: _Agent(_agent(spec, tools, None), spec, tools))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        watch = _watch(agent, call)
        task = user_message(call.inputs)
        with translate.serving(model):
            return translate.reported(
                model, call.mode, partial(_outcome, agent, watch), partial(_failed, agent, watch),
                sync=lambda: _respond(watch, task), asynchronous=lambda: _respond(watch, task),
                stream=lambda events: _respond(watch, task, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        watch = _watch(agent, call)
        with translate.serving(model):
            return await translate.areported(_respond(watch, user_message(call.inputs)),
                                             partial(_outcome, agent, watch), partial(_failed, agent, watch))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            if isinstance(message, ToolMessage):
                for content in message.content:
                    content.result = marker
        agent.last.append(marker)
        return [f"output.state.memory ({held} messages)"] if held else []


def _agent(spec: AgentSpec, tools: Sequence[SuiteTool], base_url: str | None) -> RequirementAgent:
    """The agent with its defaults; approval for the tools that need it."""
    gated = [t.name for t in tools if t.spec.interruptible]
    beeai_tools = [tool(translate.documented_function(t), name=t.name, description=t.spec.description)
                   for t in tools]
    requirements = [AskPermissionRequirement([t for t in beeai_tools if t.name in gated], handler=_ask)] \
        if gated else None
    return RequirementAgent(llm=_llm(base_url, bool(tools)), tools=beeai_tools, requirements=requirements,
                            name=spec.name, instructions=spec.signature.instructions or None)


async def _ask(asked: Any, run_input: Any) -> bool:
    """AskPermissionRequirement's handler, handed the tool's run input (its args under `input`, and
    its options): the person's answer through the running call's model."""
    arguments = run_input.get("input") if isinstance(run_input, dict) else run_input
    answer = translate.approval(translate.serving_model().approve(asked.name, arguments, None))
    return answer.decision == "approve"


class _FinalAnswerTransport(httpx.AsyncBaseTransport):
    """The endpoint (`inner`: in memory, or the network), its final answer rendered in the agent's
    form: the suite renders it as a `final_answer` call with `{"answer": ...}`; BeeAI's
    FinalAnswerTool takes `{"response": ...}`."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if response.status_code != 200 or not response.headers.get("content-type", "").startswith(
                "application/json"):
            return response
        body = json.loads(await response.aread())
        for choice in body.get("choices", []):
            for call in choice.get("message", {}).get("tool_calls") or []:
                function = call["function"]
                if function["name"] == _FINAL:
                    args = json.loads(function["arguments"])
                    function["arguments"] = json.dumps({"response": args.get("answer")})
        return httpx.Response(200, json=body)


def _llm(base_url: str | None, has_tools: bool) -> OpenAIChatModel:
    """BeeAI's OpenAI chat model, its LiteLLM client at `base_url` or in memory."""

    def call_for(body: dict[str, Any]) -> LMCall:
        return server.native_call(body, "step")

    inner = server.ServingTransport(call_for) if base_url is None else httpx.AsyncHTTPTransport()
    client = openai.AsyncOpenAI(base_url=base_url or server.IN_MEMORY_URL, api_key=server.API_KEY,
                                http_client=httpx.AsyncClient(transport=_FinalAnswerTransport(inner)))
    return OpenAIChatModel("scripted", api_key=server.API_KEY, settings={"client": client},
                           model_supports_tool_calling=True)


def _target(agent: _Agent, base_url: str | None) -> RequirementAgent:
    """The agent to run: the built one, or (http) one like it whose client is at the endpoint."""
    return agent.agent if base_url is None else _agent(agent.spec, agent.tools, base_url)


@dataclass
class _Watch:
    """One run of `target`: its cap, how many messages the agent remembered before it, and the run's
    state as its last `success` event (one per iteration, `Run.on`, the documented way to observe a
    run) handed it: the run's state reaches the caller no other way when the cap raises."""

    target: RequirementAgent
    cap: int
    before: int
    state: RequirementAgentRunState | None = None
    #: The iterations done by the last `success` event (the state's count goes on to the one refused).
    iterations: int = 0


def _watch(agent: _Agent, call: CallRequest) -> _Watch:
    target = _target(agent, call.base_url)
    return _Watch(target, translate.step_cap(agent.spec, call), len(target.memory.messages))


async def _respond(watch: _Watch, task: str, model: ScriptedModel | None = None,
                   events: list[Event] | None = None) -> RequirementAgentOutput:
    """The run, watched; for a stream (`events`), a step event for each tool result as its iteration
    succeeds."""

    def succeeded(data: Any, _: Any) -> None:
        state = getattr(data, "state", None)
        if isinstance(state, RequirementAgentRunState):
            watch.state, watch.iterations = state, state.iteration
            if model is not None and events is not None:
                translate.step_events(model, events, _trajectory(state, watch.before))

    output: RequirementAgentOutput = await watch.target.run(task, max_iterations=watch.cap).on(
        "success", succeeded)
    return output


def _trajectory(state: RequirementAgentRunState, before: int) -> list[Step]:
    """One Step per tool call of this run (its messages past the `before` the agent remembered), the
    final_answer call left out; each result's error flag from the state's steps, in call order."""
    messages = list(state.memory.messages)[before:]
    calls: list[translate.NativeCall] = []
    results: dict[str, Any] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            thought = "".join(t.text for t in message.get_text_messages()) or None
            calls += [(c.id, thought, c.tool_name, c.args) for c in message.get_tool_calls()]
        elif isinstance(message, ToolMessage):
            results.update({c.tool_call_id: c.result for c in message.content})
    flags = [s.error is not None for s in state.steps if s.tool is None or s.tool.name != _FINAL]
    own = [c for c in calls if c[2] != _FINAL]
    errors = {str(c[0]): flag for c, flag in zip(own, flags, strict=False)}
    return translate.steps(own, results, errors)


def _outcome(agent: _Agent, watch: _Watch, output: RequirementAgentOutput) -> Outcome:
    """A run that returned: it called final_answer."""
    state = output.state
    agent.last = list(state.memory.messages)[watch.before:]
    answer = state.answer.text if state.answer is not None else None
    return translate.finished(agent.spec.signature, answer, _trajectory(state, watch.before), state.iteration)


def _failed(agent: _Agent, watch: _Watch, exc: Exception) -> Outcome:
    """An exception the run let escape: the cap's AgentError, which carries no state (its partial run
    is the state the run's last `success` event handed over), or another."""
    agent.last = []
    if not (isinstance(exc, AgentError) and _CAP_ERROR in str(exc)):
        return Outcome(error=ErrorInfo.from_exception(exc))
    if watch.state is None:
        return Outcome(stop_reason="max_steps", error=translate.max_iterations(exc, max_iterations=watch.cap))
    trajectory = _trajectory(watch.state, watch.before)
    agent.last = list(watch.state.memory.messages)[watch.before:]
    return translate.capped(exc, trajectory, watch.iterations, watch.cap,
                            [t.name for t in agent.tools])
