"""The binding for CrewAI's `Agent` run on its own (crewai 1.15, `crewai.Agent.kickoff`).

Entry point: `Agent.kickoff(messages)` (and `kickoff_async`), CrewAI's documented way to run one
agent without a Crew or a Task: it builds an `AgentExecutor` for the call (agent/core.py
`_prepare_kickoff`) and runs that executor's tool loop, nothing else (no crew, no process, no
delegation). A `Crew` of one `Task` would add the task's prompt and a crew's orchestration around
the same executor.

Seam: CrewAI's own `LLM(model="openai/scripted")`, which routes to its native OpenAI provider
(llms/providers/openai/completion.py `OpenAICompletion`, over the `openai` client; no LiteLLM).
CrewAI takes no client nor transport for it (its `interceptor` wraps httpx's network transport), so
the clients it built are replaced by `openai` clients made from its own client parameters
(`_get_client_params`: its `max_retries=2`, its timeout) over an in-memory transport answering from
the script (`server.ServingTransport`, so one agent serves concurrent runs). CrewAI's request
building, reply parsing and the client's retries all run. In the `http` profile the `LLM` has
`base_url=CallRequest.base_url`. Tools are `@tool` from `crewai.tools`, its documented primary form.

Step cap: `max_iter=N`, an Agent field: each model call that may choose a tool is one iteration;
when N are used, `ensure_force_final_answer` (agents/agent_executor.py) makes one more call without
tools that sees the whole conversation (`handle_max_iterations_exceeded`, utilities/agent_utils.py),
and its reply is the run's answer (`max-steps-extract`). The `LiteAgentOutput` does not say that the
cap ended the run; its `messages` hold the model's final reply only when the model gave it in the
loop, so a run whose messages end otherwise after all N steps is reported stopped by the cap
(`max_steps`, binding.PARITY), and otherwise with no stop reason.

Approval (`approval_form = "callback"`): CrewAI's documented `before_tool_call` hook (hooks/
tool_hooks.py), registered once, asks the running call's `ScriptedModel.approve` for the tools
that need it: returning False blocks the call, and an edit changes `tool_input` in place, as the
hook's docs say. Its context carries no call id.

No documented option of CrewAI addresses a failure listed here, so there is no `crewai+<opt-in>`:
`tool_failure_policy` ('ignore', 'warn', 'raise') only decides whether a failed tool call is recorded
or aborts the run (tools/tool_failure.py), and nothing keeps the text beside a tool call, reports a
stop reason, lets an approval hook word its refusal or validates undeclared or deeply nested args.

Telemetry and tracing: CrewAI's documented opt-outs `CREWAI_DISABLE_TELEMETRY` / `OTEL_SDK_DISABLED`
(crewai_core/telemetry.py `_is_telemetry_disabled`) and `CREWAI_TRACING_ENABLED=false` (execution.py
`_tracing_disabled`) are set, unless the environment says otherwise, before the import.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar, Literal

import httpx

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Outcome, Step
from conformance.render import json_value, reply_outputs, user_message

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

import openai
from crewai import LLM, Agent
from crewai.hooks import register_before_tool_call_hook
from crewai.hooks.tool_hooks import ToolCallHookContext
from crewai.lite_agent_output import LiteAgentOutput
from crewai.tools import tool

_ARGS5 = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
_DEEP = ("json.loads of deeply nested tool args raises RecursionError, which parse_tool_call_args "
         "(utilities/agent_utils.py) does not catch (only JSONDecodeError): it escapes kickoff")
_NOT_OBJECT = ("args that are JSON but not an object go on as the call's args: ToolUsageStartedEvent("
               "tool_args=...) refuses them with a pydantic ValidationError that escapes kickoff "
               "(agents/agent_executor.py _execute_single_native_tool_call)")
_KNOWN: dict[str, str] = {
    "An interruptible tool does not run before approval":
        "the before_tool_call hook's context carries the tool's name and input, no call id "
        "(hooks/tool_hooks.py ToolCallHookContext)",
    "Free text is fed back to the agent as the user's answer":
        "a before_tool_call hook can only block a call (return False): the agent is shown the fixed "
        "'Tool execution blocked by hook. Tool: <name>' (agents/agent_executor.py "
        "_execute_single_native_tool_call), never the person's words",
    **dict.fromkeys(("Each step prompt shows the trajectory so far",
                     "The last step call of a long run shows the whole trajectory"),
                    "the model's text beside its tool calls is dropped: execute_native_tool keeps "
                    "the assistant message with content None (agents/agent_executor.py)"),
    "An argument the schema does not declare is refused, naming it, not dropped":
        "an undeclared arg is dropped silently: the tool's pydantic args_schema ignores extra fields "
        "and model_dump() passes the declared ones on (tools/base_tool.py _validate_kwargs)",
    **{f"{_ARGS5}[store-{row}]": _DEEP for row in (
        "an object nested 100000 levels deep", "an object nested 5000 levels deep",
        "an object nested 5000 levels deep after an escaped quote",
        "arrays nested 5000 levels deep inside its object",
        "arrays nested 5000 levels deep, each beside an empty one")},
    **{f'test_tool_args_that_are_json_but_not_an_object_never_reach_the_tool[{row}]': _NOT_OBJECT
       for row in ('[50, "Ann"]', "50")},
}
_NOT_CLAIMED = {
    "signature": "a native tool-calling loop: an Agent has a role, a goal and tools, no signature",
    "adapters": "no adapter layer: the LLM provider class formats and parses its own API",
    "max-steps-error": "on max_iter the executor makes one forced tool-less call and returns its answer "
                       "(agents/agent_executor.py ensure_force_final_answer); it never raises",
    "max-steps-return": "on max_iter the run returns the forced final call's answer "
                        "(ensure_force_final_answer), never the partial run flagged as capped",
    "cap-summary": "on max_iter the answer is the model's reply to the forced call: CrewAI writes no "
                   "message of what was tried",
    "per-call-cap": "kickoff takes no limit (agent/core.py Agent.kickoff): max_iter is an Agent field",
    "repeated-error-stop": "no stop after repeated tool failures: check_repeated_tool_call "
                           "(utilities/agent_utils.py) stops only the 5th identical call with an "
                           "identical result, failing or not",
    "ask-user": "no ask-the-user tool: human_input asks the console for feedback on a final answer "
                "(AgentExecutor._handle_human_feedback), not a tool the model calls",
    "durable-approvals": "approval is a before_tool_call hook run inside the call: no pause to keep",
    "streaming": "Agent.kickoff has no stream: stream=True is a Crew's and a Flow's option (crew.py); "
                 "a lone Agent only emits events on the global crewai_event_bus",
}

#: The tools that need approval, by the CrewAI agent's id (its `id` field).
_APPROVALS: dict[str, frozenset[str]] = {}


def _approve(context: ToolCallHookContext) -> bool | None:
    """The documented approval hook: None lets the call run, False blocks it."""
    agent = getattr(context.agent, "id", None)
    if context.tool_name not in _APPROVALS.get(str(agent), frozenset()):
        return None
    answer = translate.approval(translate.serving_model().approve(
        context.tool_name, json_value(context.tool_input), None))  # the hook is given no call id
    if answer.decision == "edit" and answer.name in (None, context.tool_name):
        # In place, as the hook's docs require: the executor runs the tool with this very dict.
        context.tool_input.clear()
        context.tool_input.update(answer.args if isinstance(answer.args, dict) else {})
        return None
    return None if answer.decision == "approve" else False


register_before_tool_call_hook(_approve)


def _llm(has_tools: bool, base_url: str | None) -> LLM:
    """CrewAI's LLM with its defaults: at `base_url`, or its clients answered in memory."""
    if base_url is not None:
        return LLM(model="openai/scripted", api_key=server.API_KEY, base_url=base_url)
    llm = LLM(model="openai/scripted", api_key=server.API_KEY, base_url=server.IN_MEMORY_URL)
    call_for = server.native_call_for(has_tools)
    params = llm._get_client_params()
    llm._client = openai.OpenAI(**params, http_client=httpx.Client(
        transport=server.ServingTransport(call_for)))
    llm._async_client = openai.AsyncOpenAI(**params, http_client=httpx.AsyncClient(
        transport=server.ServingTransport(call_for)))
    return llm


@dataclass
class _Agent:
    """A built CrewAI `Agent`, its spec and tools, and the messages its last call handed out."""

    agent: Agent
    spec: AgentSpec
    tools: list[Any]
    last: list[dict[str, Any]] = field(default_factory=list)


def _agent(spec: AgentSpec, tools: list[Any], base_url: str | None) -> Agent:
    agent = Agent(role="assistant", goal=spec.signature.instructions or "Answer the user's request.",
                  backstory="", llm=_llm(bool(tools), base_url), tools=tools, max_iter=spec.max_steps)
    _APPROVALS[str(agent.id)] = frozenset(t.name for t in spec.tools if t.interruptible)
    return agent


class CrewAIBinding(Binding):
    """Runs the suite against CrewAI's `Agent.kickoff`, with its defaults."""

    name = "crewai"
    dependencies = ("crewai", "openai", "pydantic", "httpx")
    contract_version = 3
    capabilities = frozenset({"max-steps-extract", "tool-approval", "approval-edit", "async",
                              "parallel-tool-calls", "lm-retry", "http"})
    approval_form: ClassVar[Literal["pause", "callback"]] = "callback"
    not_claimed: ClassVar[Mapping[str, str]] = _NOT_CLAIMED
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: max_steps when LiteAgentOutput.messages hold max_iter tool-calling "
                       "turns and no final reply: the forced tool-less call is made on a copy of them "
                       "(agents/agent_executor.py ensure_force_final_answer); CrewAI flags no stop",
        "iterations": "derived: counted from LiteAgentOutput.messages, one assistant turn per model "
                      "call in the loop (agent/core.py _build_output_from_result)",
        "max_iterations": "none: on max_iter CrewAI raises nothing; it forces a final answer and "
                          "returns it (utilities/agent_utils.py handle_max_iterations_exceeded)",
        "partial_run": "none: on max_iter CrewAI raises nothing; the run returns with its messages",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return version("crewai")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        functions = [tool(translate.documented_function(t)) for t in tools]
        return translate.built(lambda: _Agent(_agent(spec, functions, None), spec, functions))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target, message = _target(agent, call), user_message(call.inputs)
        with translate.serving(model):
            return translate.reported(model, call.mode, partial(_outcome, agent), partial(_failed, agent),
                                      sync=lambda: target.kickoff(message),
                                      asynchronous=lambda: target.kickoff_async(message))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        with translate.serving(model):
            return await translate.areported(_target(agent, call).kickoff_async(user_message(call.inputs)),
                                             partial(_outcome, agent), partial(_failed, agent))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = marker
        agent.last.append({"role": "user", "content": marker})
        return [f"the run's messages ({held} messages)"] if held else []

def _target(agent: _Agent, call: CallRequest) -> Agent:
    """The agent to run: the built one, or (http) one whose LLM is at the call's base URL."""
    return agent.agent if call.base_url is None else _agent(agent.spec, agent.tools, call.base_url)


def _trajectory(messages: Sequence[dict[str, Any]]) -> list[Step]:
    """One Step per tool call of the assistant messages, its observation the tool message answering
    that call's id (CrewAI flags no tool message as an error)."""
    results = {str(m.get("tool_call_id")): m.get("content") for m in messages if m.get("role") == "tool"}
    calls = [(c.get("id"), m.get("content"), c.get("function", {}).get("name"),
              c.get("function", {}).get("arguments"))
             for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    return translate.steps(calls, results)


def _outcome(agent: _Agent, result: LiteAgentOutput) -> Outcome:
    messages = list(result.messages)
    agent.last = messages
    trajectory = _trajectory(messages)
    steps = sum(m.get("role") == "assistant" for m in messages)
    errors: list[Any] = [json_value(f.model_dump(mode="json")) for f in result.tool_failures]
    last = messages[-1] if messages else {}
    if last.get("role") == "assistant" and not last.get("tool_calls"):  # the model's answer, in the loop
        outcome = translate.finished(agent.spec.signature, result.raw, trajectory, steps)
    else:  # the answer of the forced call on max_iter (its record ends before that call: it is
        # made on a copy of the messages, agent_executor.py ensure_force_final_answer), which CrewAI
        # does not flag: the record showing every step of the cap used is the cap stop (PARITY)
        outcome = Outcome(outputs=reply_outputs(agent.spec.signature, result.raw), trajectory=trajectory,
                          iterations=steps,
                          stop_reason="max_steps" if steps >= agent.spec.max_steps else None)
    return outcome.model_copy(update={"tool_errors": errors})


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    """An exception the Agent let escape."""
    agent.last = []
    return Outcome(error=ErrorInfo.from_exception(exc))
