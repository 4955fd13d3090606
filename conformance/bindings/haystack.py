"""The binding for Haystack's `Agent` (haystack-ai 3.4, `haystack.components.agents.Agent`).

Seam: Haystack's own `OpenAIChatGenerator`, whose documented `http_client_kwargs` give its httpx
clients an in-memory transport that answers from the script (`translate.serving`: a contextvar, so
one agent serves concurrent runs, each with its own model); in the `http` profile a clone of the
agent (`Agent.clone`) has a generator at `CallRequest.base_url`. Haystack's `MockChatGenerator`
sits above the OpenAI client: serving the script beneath it runs Haystack's own request building,
tool-call parsing (`_convert_chat_completion_to_chat_message`, the streaming chunk parser) and the
client's retries (Haystack's default `max_retries=5`, `timeout=30`), as a user's run does. Tools are
`create_tool_from_function` over the suite tool's typed function, the documented route. The Agent's
defaults: `exit_conditions=["text"]` (a reply with no tool call ends the run), and
`raise_on_tool_invocation_failure=False` (a raising or unknown tool's error goes back to the model
as a tool message); the calls of one reply run in a thread pool, their results in call order.

Step cap: `max_agent_steps=N`. A step is one chat-generator call plus the tools it asked for
(agent.py `Agent.run`: `while counter < max_agent_steps`), so N steps are N model calls, a final
answer on call N is accepted, and after N tool steps the run returns normally with
`exit_reason="max_agent_steps"` (`max-steps-return`). `Agent.run` takes no cap of its own: the cap
is an `__init__` parameter only, so a call's own cap (LOOP-4) is not passed (a known failure).
Streaming is `Agent.run(streaming_callback=...)`: a step event for each chunk carrying a tool result.
Approval (`approval_form = "callback"`): the documented `ConfirmationHook` at `before_tool`, with a
`BlockingConfirmationStrategy(AlwaysAskPolicy(), ui)` for each interruptible tool; `ui` is a
`ConfirmationUI` whose `get_user_confirmation` asks the running call's `ScriptedModel.approve`. The
UI is given the tool's name, description and params, not the call id (strategies.py,
`BlockingConfirmationStrategy.run`), so the approval request carries none.

Telemetry: importing haystack creates its posthog `Telemetry` (it writes ~/.haystack/config.yaml);
events are sent only by `Pipeline.run` (telemetry/_telemetry.py `pipeline_running`), never by a
bare `Agent.run`, so no run here reaches out (checked with every socket connect refused). The
documented opt-out `HAYSTACK_TELEMETRY_ENABLED=False` is set (unless the environment says
otherwise) before the import, so nothing is written or queued; it changes nothing the suite observes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar, Literal

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, Outcome, Step
from conformance.render import json_value, user_message

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.hooks.human_in_the_loop import (
    AlwaysAskPolicy,
    BlockingConfirmationStrategy,
    ConfirmationHook,
    ConfirmationUIResult,
)
from haystack.tools import create_tool_from_function
from haystack.utils import Secret

#: Every request is a step: the Agent makes no tool-less extraction call.
_CALL_FOR = partial(server.native_call, kind="step")
#: Haystack's exit reasons (agent.py `_EXIT_REASON_*`) as the contract's stop reasons.
_STOP_REASONS = {"text": "finish", "max_agent_steps": "max_steps"}
_ARGS4 = "test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value"
_UNVALIDATED = ("Tool.invoke calls the function with the model's args unvalidated (tools/tool.py): a wrong "
                "type reaches the tool; only a missing or extra arg fails, as the call's TypeError")
_PER_CALL = ("Agent.run takes no step cap: max_agent_steps is an __init__ parameter only, and a "
             "max_agent_steps keyword given to run is taken for State data and dropped (agent.py "
             "Agent.run, _initialize_fresh_execution)")
_NO_STOP = ("a failing tool's ToolInvocationError goes back to the model every time (agents/"
            "tool_calling.py _finalize_tool_result): no count of repeated failures, no stop, no error "
            "history; the run goes on until max_agent_steps")
_KNOWN: dict[str, str] = {
    "ARGS-2": "the generator keeps non-object JSON args (chat_message.py _parse_openai_tool_call_arguments), "
              "and preparing the call fails outside the tool's error handling: TypeError or AttributeError "
              "escapes Agent.run (agents/tool_calling.py _prepare_tool_args, _inject_state_args)",
    "ARGS-3": "OpenAIChatGenerator drops a call whose args are not JSON, with a logged warning "
              "(generators/chat/openai.py _convert_chat_completion_to_chat_message); the reply's text "
              "then ends the run as its final answer (agent.py _get_model_exit_reason): the model is "
              "never told",
    **{f"{_ARGS4}[{row}]": _UNVALIDATED for row in (
        '{"amount": "fifty", "recipient": "Ann"}-amount', '{"amount": "50", "recipient": "Ann"}-amount',
        '{"amount": 50, "recipient": ["Ann", "Bob"]}-recipient',
        '{"amount": 50.5, "recipient": "Ann"}-amount',
        '{"amount": null, "recipient": "Ann"}-amount')},
    **dict.fromkeys(translate.ARGS5_DEEP,
                    "json.loads of the args raises RecursionError, which "
                    "_convert_chat_completion_to_chat_message (generators/chat/openai.py) does not catch "
                    "(only JSONDecodeError): it escapes Agent.run"),
    "An interruptible tool does not run before approval":
        "BlockingConfirmationStrategy.run hands its ConfirmationUI the tool's name, description and "
        "params, not the tool_call_id it was given (hooks/human_in_the_loop/strategies.py): the "
        "person's approval request carries no call id",
}


def _generator(base_url: str | None) -> OpenAIChatGenerator:
    """Haystack's OpenAI chat generator with its defaults: at `base_url`, or in memory."""
    kwargs: dict[str, Any] = {"api_base_url": server.IN_MEMORY_URL,
                              "http_client_kwargs": {"transport": server.ServingTransport(_CALL_FOR)}}
    if base_url is not None:
        kwargs = {"api_base_url": base_url}
    return OpenAIChatGenerator(api_key=Secret.from_token(server.API_KEY), model="scripted", **kwargs)


class _PersonUI:
    """A `ConfirmationUI` whose person is the running call's `ScriptedModel.approve`."""

    def get_user_confirmation(self, tool_name: str, tool_description: str,
                              tool_params: dict[str, Any]) -> ConfirmationUIResult:
        answer = translate.approval(translate.serving_model().approve(
            tool_name, json_value(tool_params), None))  # the UI is given no call id
        if answer.decision == "edit" and answer.name not in (None, tool_name):
            # ConfirmationUIResult's "modify" takes new params only: the person is told here.
            raise ValueError(f"haystack's ConfirmationUIResult can modify the params of {tool_name}; "
                             f"it cannot make the call run another tool ({answer.name!r})")
        if answer.decision == "edit":
            params = answer.args if isinstance(answer.args, dict) else {}
            return ConfirmationUIResult(action="modify", new_tool_params=params)
        if answer.decision == "approve":
            return ConfirmationUIResult(action="confirm")
        return ConfirmationUIResult(action="reject",
                                    feedback=answer.text if answer.decision == "message" else None)

    def to_dict(self) -> dict[str, Any]:
        return {"type": f"{__name__}._PersonUI", "init_parameters": {}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> _PersonUI:
        return cls()


@dataclass
class _Agent:
    """A built haystack `Agent`, its spec, and the messages its last call handed out."""

    agent: Agent
    spec: AgentSpec
    last: list[ChatMessage] = field(default_factory=list)


class HaystackBinding(Binding):
    """Runs the suite against Haystack's `Agent`, with its defaults."""

    name = "haystack"
    dependencies = ("haystack-ai", "openai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-return", "tool-approval", "approval-edit", "async",
                              "streaming", "parallel-tool-calls", "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: Agent takes a system prompt, messages and tools, "
                     "no signature",
        "max-steps-error": "on max_agent_steps the run returns with exit_reason 'max_agent_steps' "
                           "(agent.py Agent.run); it never raises",
        "max-steps-extract": "on max_agent_steps the run returns its messages as they are: no "
                             "tool-less final call (agent.py Agent.run)",
        "ask-user": "no built-in tool for asking the person a question: its human in the loop "
                    "(ConfirmationHook) only confirms, edits or rejects tool calls",
        "adapters": "no pluggable format-and-parse layer: each chat generator owns its wire "
                    "format (components/generators/chat/openai.py)",
        "per-call-cap": _PER_CALL,
        "cap-summary": "on max_agent_steps the run returns its messages, exit_reason "
                       "'max_agent_steps' and tool_call_counts, but no message for the user: the last "
                       "message is the last tool result (agent.py Agent.run)",
        "repeated-error-stop": _NO_STOP,
        "durable-approvals": "approval is a ConfirmationUI called inside the run (hooks/"
                             "human_in_the_loop/strategies.py): there is no pause to keep or replay",
    }
    approval_form: ClassVar[Literal["pause", "callback"]] = "callback"
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "library: the result's exit_reason, 'text' or 'max_agent_steps' "
                       "(components/agents/agent.py Agent.run)",
        "iterations": "library: the result's step_count, one per chat-generator call "
                      "(components/agents/agent.py Agent.run)",
        "max_iterations": "none: on max_agent_steps the Agent raises nothing; it returns with "
                          "exit_reason 'max_agent_steps' (components/agents/agent.py Agent.run)",
        "partial_run": "none: on max_agent_steps the Agent raises nothing; the result holds its messages",
        "concurrency": "shared",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN

    @property
    def version(self) -> str:
        return version("haystack-ai")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        gated = [t.name for t in tools if t.spec.interruptible]
        hooks = {"before_tool": [ConfirmationHook(confirmation_strategies={
            name: BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(),
                                               confirmation_ui=_PersonUI()) for name in gated})]}
        return translate.built(lambda: _Agent(Agent(
            chat_generator=_generator(None), system_prompt=spec.signature.instructions or None,
            tools=[create_tool_from_function(t.as_function(), name=t.name, description=t.spec.description)
                   for t in tools],
            max_agent_steps=spec.max_steps, **({"hooks": hooks} if gated else {})), spec))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target = _target(agent, call)
        messages = [ChatMessage.from_user(user_message(call.inputs))]
        with translate.serving(model):
            return translate.reported(model, call.mode, partial(_outcome, agent), partial(_failed, agent),
                                      sync=lambda: target.run(messages),
                                      asynchronous=lambda: target.run_async(messages),
                                      stream=lambda events: _stream(target, messages, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        messages = [ChatMessage.from_user(user_message(call.inputs))]
        with translate.serving(model):
            return await translate.areported(_target(agent, call).run_async(messages),
                                             partial(_outcome, agent), partial(_failed, agent))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            for call in message.tool_calls:
                if isinstance(call.arguments, dict):
                    call.arguments[marker] = marker
        agent.last.append(ChatMessage.from_user(marker))
        return [f"result['messages'] ({held} messages)"] if held else []

def _target(agent: _Agent, call: CallRequest) -> Agent:
    """The agent to run: the built one, or (http) its clone with a generator at the call's base URL."""
    if call.base_url is None:
        return agent.agent
    return agent.agent.clone(chat_generator=_generator(call.base_url))


def _stream(target: Agent, messages: list[ChatMessage], model: ScriptedModel, events: list[Event]) -> Any:
    """`Agent.run` with a streaming callback: a step event for each tool-result chunk, its thought
    the text the model streamed before it in the same reply."""
    thought: list[str] = []

    def received(chunk: StreamingChunk) -> None:
        result = chunk.tool_call_result
        if result is not None:
            origin = result.origin
            events.append(translate.step_event(model, translate.step(
                origin.tool_name, origin.arguments, result.result, "".join(thought) or None,
                is_error=result.error, call_id=origin.id)))
        elif chunk.finish_reason == "tool_call_results":  # the end of a step's tool results
            thought.clear()
        else:
            thought.append(chunk.content)

    return target.run(messages, streaming_callback=received)


def _trajectory(messages: Sequence[ChatMessage]) -> list[Step]:
    """One Step per tool call the assistant messages made, its observation the tool message's result."""
    answers = [r for m in messages for r in m.tool_call_results]
    results = {r.origin.id or "": r.result for r in answers}
    errors = {r.origin.id or "": r.error for r in answers}  # ToolCallResult's own error flag
    return translate.steps([(c.id, m.text, c.tool_name, c.arguments) for m in messages
                            for c in m.tool_calls], results, errors)


def _outcome(agent: _Agent, result: dict[str, Any]) -> Outcome:
    messages: list[ChatMessage] = result["messages"]
    agent.last = messages
    reason = result["exit_reason"]
    stop = _STOP_REASONS.get(reason, reason)
    trajectory, steps = _trajectory(messages), result["step_count"]
    if stop != "finish":
        return Outcome(trajectory=trajectory, iterations=steps, stop_reason=stop)
    return translate.finished(agent.spec.signature, result["last_message"].text, trajectory, steps)


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    """An exception the Agent let escape: it carries no messages, step count or exit reason."""
    agent.last = []
    return Outcome(error=ErrorInfo.from_exception(exc))
