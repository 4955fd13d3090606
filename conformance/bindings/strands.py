"""The binding for Strands Agents' `Agent` (strands-agents 1.62, `strands.Agent`).

Seam: Strands' own `OpenAIModel`, given a pre-configured OpenAI client (its documented `client`
argument) whose in-memory transport answers from the script (`server.ServingTransport`: one agent
serves concurrent runs, each with its own model); in the `http` profile an agent whose model's
client is at `CallRequest.base_url` (`server.openai_client`). Beneath the model class run Strands' own request
building and stream parsing (`OpenAIModel.stream`, `format_chunk`), the OpenAI client's retries (its
default `max_retries=2`) and Strands' own retry of a throttled model call (event_loop/_retry.py
`ModelRetryStrategy`). Tools are `@tool`-decorated functions, Strands' documented primary form (it
validates each call's input against a pydantic model of the signature).

Step cap: `limits={"turns": N}` given to each call, the documented per-invocation cap: one turn is
one model call plus the tools it asked for; on the cap the call returns with
`stop_reason="limit_turns"` (event_loop/event_loop.py). There is no agent-wide cap, so the agent's
cap is passed with each call. An Agent keeps its conversation across calls (`agent.messages`); the
trajectory of a call is what it added. Streaming is `Agent.stream_async`: a step event for each
tool-result message, the `AgentResult` last.

Approval: a `BeforeToolCallEvent` hook raises an interrupt (`event.interrupt`), the call returns with
`stop_reason="interrupt"`, and a call with an `interruptResponse` resumes it. Every agent keeps its
state in Strands' documented durable form, a session manager (`FileSessionManager`, a session per
agent, all in one storage directory as one application configures it), which stores the interrupt
state with the messages. A pause is kept by id on the binding, with its session; the answer goes to
the agent `resume` is given, built on that session (`Agent(session_manager=...)`), as Strands has an
application resume a pause across requests, so a replayed answer meets the state as stored, and an
answer to another agent's pause reaches the session it is in.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

from strands import Agent, tool
from strands.agent.agent_result import AgentResult
from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from strands.models.openai import OpenAIModel
from strands.session.file_session_manager import FileSessionManager

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
from conformance.render import json_value, user_message

#: Every request is a step: the Agent makes no tool-less extraction call.
_CALL_FOR = partial(server.native_call, kind="step")
#: Strands' stop reasons (types/event_loop.py `StopReason`) as the contract's.
_STOP_REASONS = {"end_turn": "finish", "limit_turns": "max_steps"}
_ARGS5 = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
_KNOWN: dict[str, str] = {
    "ARGS-6": "an undeclared arg is dropped silently: the tool's pydantic input model ignores extra fields "
              "and model_dump() passes the declared ones on (tools/decorator.py validate_input)",
    **dict.fromkeys(
        ["Resuming keeps the budget the steps before the pause used",
         "Resuming keeps the step cap given to the call and the steps used before the pause"],
        "a resumed call is a new invocation, and limits={'turns': N} bound one invocation only: the "
        "turns before the pause are not counted (types/agent.py Limits)"),
    "Malformed JSON tool args never reach a tool that takes no arguments":
        "on tool input that is not JSON, event_loop/streaming.py handle_content_block_stop logs "
        "'failed to parse tool input json, defaulting to empty dict' and runs the tool on {}",
    "A pause answered through another agent is refused":
        "an Agent built on the paused agent's session reads back the stored state of its agent_id "
        "('default' unless set), interrupt state included (session/repository_session_manager.py "
        "RepositorySessionManager.initialize, types/session.py SessionAgent.initialize_internal_state): "
        "nothing in it names the Agent that paused, so the other agent takes the answer and the paused "
        "call runs",
    "Mutating a returned trajectory changes neither the agent nor its next run":
        "the AgentResult's message is the very dict the loop appended to agent.messages "
        "(event_loop/event_loop.py event_loop_cycle: `_append_messages(message)`, agent/agent.py "
        "Agent._append_messages): a caller that changes the returned message changes the "
        "conversation the next call sends",
    **{f"{_ARGS5}[store-{row}]": "json.loads of deeply nested tool input raises RecursionError, which "
       "handle_content_block_stop (event_loop/streaming.py) does not catch (only ValueError): it escapes "
       "the call" for row in ("an object nested 100000 levels deep", "an object nested 5000 levels deep",
                               "an object nested 5000 levels deep after an escaped quote",
                               "arrays nested 5000 levels deep inside its object",
                               "arrays nested 5000 levels deep, each beside an empty one")},
}
_NOT_CLAIMED = {
    "signature": "a native tool-calling loop: Agent takes a system prompt, a message and tools, no signature",
    "adapters": "no adapter layer: the model provider class formats and parses its own API",
    "max-steps-error": "on limits={'turns': N} the call returns with stop_reason 'limit_turns' "
                       "(event_loop/event_loop.py); it never raises",
    "max-steps-extract": "on the turns limit the call returns as it is: no tool-less final call",
    "cap-summary": "on the turns limit the result carries stop_reason 'limit_turns' and the last message, "
                   "no message for the user of what was tried",
    "repeated-error-stop": "a failing tool's error result goes back to the model every time: no count of "
                           "repeated failures and no stop",
    "ask-user": "no ask-the-user tool is on by default: handoff_to_user (vended_tools/handoff_to_user) is "
                "a tool the user adds",
}


def _model(base_url: str | None) -> OpenAIModel:
    """Strands' OpenAI model with its defaults, given (its documented `client`) a client at
    `base_url` or answered in memory."""
    return OpenAIModel(client=server.openai_client(None, _CALL_FOR, base_url=base_url), model_id="scripted")


class _Approvals(HookProvider):  # type: ignore[misc]
    """Strands' documented approval: a `BeforeToolCallEvent` hook raises an interrupt for a call of a
    tool that needs approval; the person's answer (given when the call is resumed) approves it,
    edits its input, or cancels it with a message the model is shown."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.ask)

    def ask(self, event: BeforeToolCallEvent) -> None:
        use = event.tool_use
        if use["name"] not in self.names:
            return
        pending = {"name": use["name"], "input": use["input"], "toolUseId": use["toolUseId"]}
        answer = translate.approval(str(event.interrupt("approval", reason=pending)))
        if answer.decision == "edit" and answer.name in (None, use["name"]):
            use["input"] = answer.args if isinstance(answer.args, dict) else {}
        elif answer.decision == "edit":
            event.cancel_tool = f"the person's edit names {answer.name!r}, not the pending {use['name']!r}"
        elif answer.decision != "approve":
            event.cancel_tool = answer.text if answer.decision == "message" else True


@dataclass
class _Agent:
    """A built Strands `Agent` (as last read back from its session), its spec and tools, its
    session's id, and the messages its last call added."""

    agent: Agent
    spec: AgentSpec
    tools: list[Any]
    session_id: str
    last: list[dict[str, Any]] = field(default_factory=list)
    #: What the last call returned (None when it raised): what TRJ-2's caller mutates.
    result: AgentResult | None = None


@dataclass(frozen=True)
class _Call:
    """A call: its agent's session, its inputs, step cap, first message and model's base URL (a pause
    keeps the one of the call that paused)."""

    session_id: str
    inputs: Any
    cap: int
    start: int
    base_url: str | None


#: Strands' documented durable form of an agent's state, interrupts included: a session manager, here
#: `FileSessionManager` (JSON files), one session per built agent, in one storage directory.
_DIRECTORY = tempfile.TemporaryDirectory(prefix="strands-sessions-")
#: Every pause reported, by interrupt id and then session, for whichever agent is asked to resume it
#: (HITL-6). Strands derives an interrupt's id from its call, so two agents' pauses may share one.
_PAUSES: dict[str, dict[str, _Call]] = {}


def _agent(spec: AgentSpec, tools: list[Any], base_url: str | None, session_id: str) -> Agent:
    """An Agent of `spec` on the session `session_id`: a new one, or the one stored, read back."""
    approvals = frozenset(t.name for t in spec.tools if t.interruptible)
    return Agent(model=_model(base_url), tools=tools, system_prompt=spec.signature.instructions or None,
                 callback_handler=None, hooks=[_Approvals(approvals)] if approvals else None,
                 session_manager=FileSessionManager(session_id=session_id, storage_dir=_DIRECTORY.name))


class StrandsBinding(Binding):
    """Runs the suite against Strands Agents' `Agent`, with its defaults."""

    name = "strands-agents"
    dependencies = ("strands-agents", "openai", "pydantic", "httpx")
    contract_version = 3
    capabilities = frozenset({"max-steps-return", "per-call-cap", "tool-approval", "approval-edit", "async",
                              "streaming", "parallel-tool-calls", "lm-retry", "http", "durable-approvals"})
    not_claimed: ClassVar[Mapping[str, str]] = _NOT_CLAIMED
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "library: AgentResult.stop_reason ('end_turn' finish, 'limit_turns' max_steps; "
                       "event_loop/event_loop.py)",
        "iterations": "library: the cycles of AgentResult.metrics.latest_agent_invocation "
                      "(telemetry/metrics.py AgentInvocation)",
        "max_iterations": "none: no cap error: on limits={'turns': N} the call returns with stop_reason "
                          "'limit_turns', no exception is raised (agent/agent.py Agent.__call__)",
        "partial_run": "none: no cap error to carry it: on the turns limit the call returns, its steps "
                       "in agent.messages",
        "concurrency": "per-run: Agent.__call__/invoke_async (agent/agent.py): 'Raises: "
                       "ConcurrencyException: If another invocation is already in progress on this "
                       "agent instance' (concurrent_invocation_mode 'throw' by default)",
    }

    @property
    def version(self) -> str:
        return version("strands-agents")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        functions = [tool(translate.documented_function(t)) for t in tools]
        session = uuid.uuid4().hex
        return translate.built(lambda: _Agent(_agent(spec, functions, None, session), spec, functions,
                                              session))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target, prompt = _target(agent, call), user_message(call.inputs)
        cap = translate.step_cap(agent.spec, call)
        return _call(agent, target, prompt, call.mode, model, _Call(agent.session_id, call.inputs, cap,
                                                                      len(target.messages), call.base_url))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target, cap = _target(agent, call), translate.step_cap(agent.spec, call)
        report = partial(_outcome, agent, target, _Call(agent.session_id, call.inputs, cap,
                                                        len(target.messages), call.base_url))
        with translate.serving(model):
            return await translate.areported(
                target.invoke_async(user_message(call.inputs), limits={"turns": cap}),
                report, partial(_failed, agent, target, len(target.messages)))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        # The answer goes to the agent given, on the session the pause is stored in, read back (at
        # the pause's model) as Strands has an application resume one: another agent's pause is
        # handed over by its session, and whether Strands refuses it is the verdict.
        pauses = _PAUSES.get(request.interrupt_id, {})
        found = pauses.get(agent.session_id) or next(iter(pauses.values()), None)
        session = agent.session_id if found is None else found.session_id
        base_url = None if found is None else found.base_url
        target = _agent(agent.spec, agent.tools, base_url, session)
        if base_url is None and session == agent.session_id:
            agent.agent = target
        # A pause no run reported is answered in the agent's own session, with its own cap.
        pause = found or _Call(session, None, agent.spec.max_steps, len(target.messages), None)
        prompt = [{"interruptResponse": {"interruptId": request.interrupt_id, "response": request.response}}]
        return _call(agent, target, prompt, request.mode, model, pause)

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        """What the call returned is its AgentResult (agent/agent_result.py): its last message and,
        on a pause, its interrupts, whose reason is the pending call. `agent.messages` is the
        agent's own live conversation, documented as editable: no result, so never mutated."""
        assert isinstance(agent, _Agent)
        result, changed = agent.result, []
        if result is None:
            return None
        content = result.message.get("content", [])
        for block in content:
            if "text" in block:
                block["text"] = marker
            if "toolUse" in block and isinstance(block["toolUse"].get("input"), dict):
                block["toolUse"]["input"][marker] = marker
        changed.append(f"result.message ({len(content)} content blocks)")
        content.append({"text": marker})
        for index, pause in enumerate(result.interrupts or []):
            if isinstance(pause.reason, dict) and isinstance(pause.reason.get("input"), dict):
                pause.reason["input"][marker] = marker
                changed.append(f"result.interrupts[{index}].reason['input'] (the pending call)")
        return changed


def _call(agent: _Agent, target: Agent, prompt: Any, mode: str, model: ScriptedModel, call: _Call
          ) -> Outcome:
    """`target` called with `prompt` in the form `mode` names, with `call`'s step cap; what it did
    since `call.start` (a resumed call's: where the call it resumes began)."""
    limits = {"turns": call.cap}
    with translate.serving(model):
        return translate.reported(
            model, mode, partial(_outcome, agent, target, call), partial(_failed, agent, target, call.start),
            sync=lambda: target(prompt, limits=limits),
            asynchronous=lambda: target.invoke_async(prompt, limits=limits),
            stream=lambda events: _stream(target.stream_async(prompt, limits=limits), model, events))


def _target(agent: _Agent, call: CallRequest) -> Agent:
    """The agent to run: the built one, or (http) the same agent's session with its model at the
    call's base URL."""
    return agent.agent if call.base_url is None else _agent(agent.spec, agent.tools, call.base_url,
                                                            agent.session_id)


async def _stream(stream: AsyncIterator[dict[str, Any]], model: ScriptedModel, events: list[Event]) -> Any:
    """The run's event stream: a step event per tool result of each tool-result message; the
    AgentResult it ends with."""
    result = None
    calls: dict[str, tuple[str | None, dict[str, Any]]] = {}
    async for event in stream:
        message = event.get("message")
        if isinstance(message, dict):
            for step in _trajectory([message], calls):
                events.append(translate.step_event(model, step))
        if isinstance(event.get("result"), AgentResult):
            result = event["result"]
    return result


def _trajectory(messages: Sequence[dict[str, Any]], calls: dict[str, tuple[str | None, dict[str, Any]]]
                ) -> list[Step]:
    """One Step per tool result, in order, with the call (`calls`, filled from the assistant messages
    as they come: thought and toolUse) it answers, and Strands' own `status` flag."""
    trajectory = []
    for message in messages:
        blocks = message.get("content", [])
        texts = "".join(b["text"] for b in blocks if "text" in b) or None
        for block in blocks:
            if "toolUse" in block:
                calls[block["toolUse"]["toolUseId"]] = (texts, block["toolUse"])
            elif "toolResult" in block:
                result = block["toolResult"]
                thought, use = calls.get(result["toolUseId"], (None, {}))
                trajectory.append(Step(
                    thought=thought, tool_name=str(use.get("name")),
                    tool_args=translate.tool_args(use.get("input")),
                    observation=json_value("".join(c.get("text", "") for c in result.get("content", []))),
                    is_error=result.get("status") == "error", call_id=result["toolUseId"]))
    return trajectory


def _outcome(agent: _Agent, target: Agent, call: _Call, result: AgentResult | None) -> Outcome:
    added = list(target.messages[call.start:])
    agent.last, agent.result = added, result
    trajectory = _trajectory(added, {})
    if result is None:
        return Outcome(trajectory=trajectory)
    invocation = result.metrics.latest_agent_invocation
    steps = len(invocation.cycles) if invocation else None
    if result.stop_reason == "interrupt" and result.interrupts:
        pause = result.interrupts[0]
        _PAUSES.setdefault(pause.id, {})[call.session_id] = call
        use = pause.reason  # the pending call, as the approval hook put it
        return translate.paused("Interrupt", f"interrupt {pause.name!r} of {use['name']!r}",
                                interrupt_id=pause.id, tool=use["name"], args=use["input"],
                                call_id=use["toolUseId"], trajectory=trajectory, iterations=steps or 0,
                                inputs=call.inputs)
    stop = _STOP_REASONS.get(result.stop_reason, result.stop_reason)
    if stop != "finish":
        return Outcome(trajectory=trajectory, iterations=steps, stop_reason=stop)
    text = "".join(b.get("text", "") for b in result.message.get("content", []))
    return translate.finished(agent.spec.signature, text, trajectory, steps)


def _failed(agent: _Agent, target: Agent, start: int, exc: Exception) -> Outcome:
    """An exception the Agent let escape, with the steps it had taken."""
    added = list(target.messages[start:])
    agent.last, agent.result = added, None
    return Outcome(trajectory=_trajectory(added, {}), error=ErrorInfo.from_exception(exc))
