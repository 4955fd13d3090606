"""The binding for Agno's `Agent` (agno 3.1, `agno.agent.Agent`).

Seam: Agno's own `OpenAIChat` model, given OpenAI clients (its documented `client` and
`async_client` fields) whose in-memory transport answers from the script (`server.ServingTransport`:
one agent serves concurrent runs, each with its own model); in the `http` profile an agent whose
`OpenAIChat` has clients at `CallRequest.base_url` (`server.openai_client`). Beneath the model
class run Agno's own request building, tool-call parsing (`OpenAIChat.parse_provider_response`, the stream's
`parse_provider_response_delta`) and the OpenAI client's retries (its default `max_retries=2`).
Tools are plain Python functions, Agno's documented primary form (it reads the signature and the
docstring). Agno's defaults: no step cap (`tool_call_limit=None`); a run catches every exception and
returns a `RunOutput` with `status=ERROR` and the error's text as its content (agent/_run.py).

Step cap: `tool_call_limit=N`, the only limit Agno has; it counts tool calls, not model calls.
Streaming is `Agent.run(stream=True, stream_events=True, yield_run_output=True)`: a step event for
each `ToolCallCompletedEvent`, the `RunOutput` last.

Approval: `@tool(requires_confirmation=True)` pauses the run (`RunStatus.paused`, its
`active_requirements`). Every agent that can pause has Agno's documented durable store, a db
(`JsonDb`, one for the binding): a pause is kept by id as its run and session ids and its
requirements' JSON, and answered by `continue_run(run_id=..., session_id=..., requirements=...)` on
the agent `resume` is given. Replaying an answer to a completed run forks it (continue_run_dispatch's
auto-fork on COMPLETED): the model is asked again, the tool does not run again.

Telemetry: an Agent run sends a telemetry event to Agno's API unless `telemetry=False` or
`AGNO_TELEMETRY=false` (agent/_telemetry.py `log_agent_telemetry`); the documented opt-out is set
(unless the environment says otherwise) before the import. It changes nothing the suite observes.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

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

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.agent import Agent
from agno.db.json import JsonDb
from agno.models.message import Message
from agno.models.openai import OpenAIChat
from agno.run.agent import RunOutput, ToolCallCompletedEvent
from agno.run.base import RunStatus
from agno.run.requirement import RunRequirement
from agno.tools import tool

#: Every request is a step: the Agent makes no tool-less extraction call.
_CALL_FOR = partial(server.native_call, kind="step")
#: What the run's answer is (checked by running agno directly): every model reply's text, joined.
_PREFIX = ("the answer (RunOutput.content) carries the text of every earlier step as a prefix: "
           "Model._process_model_response appends each assistant message's content to the run's "
           "content (models/base.py)")
#: What Agno's only limit does (checked by running agno directly).
_NO_CAP = ("tool_call_limit, Agno's only limit, counts tool calls and never stops the loop: a call past "
           "it gets a 'Tool call limit reached' error result and the model is asked again "
           "(models/base.py Model.response, Model.run_function_calls)")
_LITERAL = ("args that are not JSON are parsed with ast.literal_eval and the tool runs on the guess "
            "(utils/functions.py get_function_call)")
_STATUS = ("a failed model call ends the run with status ERROR and the provider's message as its "
           "content: the HTTP status stays on the ModelProviderError the run caught (agent/_run.py, "
           "models/openai/chat.py OpenAIChat.invoke)")
_DEEP = ("json.loads fails on the depth and the ast.literal_eval fallback fails too: the observation is "
         "the fallback's error, here with no message, so it never says the args are too deep "
         "(utils/functions.py get_function_call)")
_ELEVEN = ("the step cap, given as tool_call_limit=10 (Agno's only limit), counts tool calls: the 11th call "
           "of one reply is refused with 'Tool call limit reached' (models/base.py Model.run_function_calls)")
_MALFORMED = "test_malformed_json_tool_args_never_crash_the_run"
_LITERALS = "test_python_literals_in_tool_args_are_malformed_json_never_guessed_at"
_SIZES = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
_KNOWN: dict[str, str] = {
    "The answer is the final reply alone, not joined with the text beside earlier tool calls": _PREFIX,
    **dict.fromkeys((
        "A non-transient model failure is not retried and fails the call clearly",
        "When retries run out the caller gets one clear error and no tool runs",
        "Over HTTP, a bad request or a refused key is not retried and fails the call clearly",
        "Over HTTP, when retries run out the caller gets one clear error and the next call starts clean"),
        _STATUS),
    **dict.fromkeys((
        "The step cap stops a loop that never chooses finish",
        "A step cap of one allows exactly one step"), _NO_CAP),
    "A pause answered through another agent is refused": "continue_run(run_id=..., session_id=...) reads "
        "the paused run from the db and continues it through whichever Agent is given, with no check of the "
        "agent it paused on (also when the two agents' ids differ): the tool runs (agent/_run.py "
        "continue_run_dispatch)",
    **dict.fromkeys((
        f"{_MALFORMED}[{{'amount': 50, 'recipient': 'Ann'}}]",
        f'{_MALFORMED}[{{"amount": 50, "recipient": "Ann",}}]',
        f'{_LITERALS}[{{"recipient": "Ann", "urgent": True}}]',
        f"{_LITERALS}[{{'recipient': 'Ann', 'urgent': False}}]"), _LITERAL),
    f"{_SIZES}[store-arrays nested 5000 levels deep, each beside an empty one]": _DEEP,
    "Eleven parallel calls keep the order the model gave them": _ELEVEN,
}
_NOT_CLAIMED = {
    "signature": "a native tool-calling loop: Agent takes instructions, a message and tools, no signature",
    "adapters": "no adapter layer: the model class formats and parses the provider's own API",
    **dict.fromkeys(("max-steps-error", "max-steps-extract", "max-steps-return", "cap-summary"), _NO_CAP),
    "per-call-cap": "Agent.run takes no limit of its own: tool_call_limit is an Agent attribute "
                    "(agent/agent.py Agent.__init__)",
    "repeated-error-stop": "a failing tool's error goes back to the model every time (models/base.py "
                           "Model.run_function_call): no count of repeated failures and no stop",
    "ask-user": "no ask-the-user tool is on by default: UserControlFlowTools (tools/user_control_flow.py, "
                "get_user_input) is a toolkit the user adds",
}


def _model(base_url: str | None) -> OpenAIChat:
    """Agno's OpenAI chat model with its defaults, its clients at `base_url` or answered in memory
    (Agno's own clients at a base URL are the same: models/openai/chat.py OpenAIChat.get_client)."""
    return OpenAIChat(id="scripted", api_key=server.API_KEY,
                      client=server.openai_client(None, _CALL_FOR, asynchronous=False, base_url=base_url),
                      async_client=server.openai_client(None, _CALL_FOR, base_url=base_url))


@dataclass
class _Agent:
    """A built Agno `Agent`, its spec and tools, the messages its last call handed out."""

    agent: Agent
    spec: AgentSpec
    tools: list[Any]
    last: list[Message] = field(default_factory=list)


@dataclass(frozen=True)
class _Pause:
    """A paused run as Agno persists it: its ids in the db, its requirements as JSON
    (`RunRequirement.to_dict`), the pending call's id; the call's inputs and where its model lives."""

    run_id: str
    session_id: str
    requirements: str
    call_id: str
    inputs: Any
    base_url: str | None


#: Agno's documented durable form of a pause: a db, here its JSON files (`JsonDb`), shared by every
#: agent that can pause (one with a tool that needs approval) as one application's agents share
#: theirs; continue_run(run_id=...) reads the run back. Other agents keep Agno's default, no db: a
#: db rewrites its file on every run, which would make the suite's later runs slower and slower.
_DIRECTORY = tempfile.TemporaryDirectory(prefix="agno-db-")
_DB = JsonDb(db_path=_DIRECTORY.name)
#: Every pause reported, by interrupt id, for whichever agent is asked to resume it (HITL-6).
_PAUSES: dict[str, _Pause] = {}


def _agent(spec: AgentSpec, tools: list[Any], base_url: str | None) -> Agent:
    return Agent(model=_model(base_url), tools=tools, instructions=spec.signature.instructions or None,
                 tool_call_limit=spec.max_steps, db=_DB if any(t.interruptible for t in spec.tools) else None)


class AgnoBinding(Binding):
    """Runs the suite against Agno's `Agent`, with its defaults."""

    name = "agno"
    dependencies = ("agno", "openai", "pydantic", "httpx")
    contract_version = 3
    capabilities = frozenset({"tool-approval", "approval-edit", "async", "streaming", "parallel-tool-calls",
                              "lm-retry", "http", "durable-approvals"})
    not_claimed: ClassVar[Mapping[str, str]] = _NOT_CLAIMED
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        # Literal text (the parity test reads it from the source): _NO_CAP says why.
        "stop_reason": "none: tool_call_limit, Agno's only limit, never stops the loop (models/base.py "
                       "Model.run_function_calls), so no run is stopped by it; a run ends on a reply "
                       "without tool calls (RunStatus.completed) or on an error",
        "iterations": "derived: the assistant messages of RunOutput.messages",
        "max_iterations": "none: no cap error: tool_call_limit never stops the loop (models/base.py "
                          "Model.run_function_calls)",
        "partial_run": "none: no cap error to carry it (tool_call_limit never stops the loop); every "
                       "run returns its RunOutput with its messages",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return version("agno")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        # A tool that needs approval is declared with Agno's documented @tool(requires_confirmation=True).
        functions = [tool(requires_confirmation=True)(translate.documented_function(t))
                     if t.spec.interruptible else translate.documented_function(t) for t in tools]
        return translate.built(lambda: _Agent(_agent(spec, functions, None), spec, functions))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target = _target(agent, call)
        message = user_message(call.inputs)
        with translate.serving(model):
            return translate.reported(model, call.mode, partial(_outcome, agent, call.inputs, call.base_url),
                                      partial(_failed, agent),
                                      sync=lambda: target.run(message),
                                      asynchronous=lambda: target.arun(message),
                                      stream=lambda events: _stream(target, message, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        with translate.serving(model):
            target = _target(agent, call)
            return await translate.areported(target.arun(user_message(call.inputs)),
                                             partial(_outcome, agent, call.inputs, call.base_url),
                                             partial(_failed, agent))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        pause = _PAUSES.get(request.interrupt_id)
        if pause is None:  # a pause no agent reported: Agno says what it does with the id
            with translate.serving(model):
                return translate.reported(
                    model, request.mode, partial(_outcome, agent, None, None), partial(_failed, agent),
                    sync=lambda: agent.agent.continue_run(run_id=request.interrupt_id),
                    asynchronous=lambda: agent.agent.acontinue_run(run_id=request.interrupt_id))
        # The answer is given on requirements read back from their JSON, to the run in the db, through
        # the agent given (at the pause's model): what Agno then does with it is the verdict.
        requirements = [RunRequirement.from_dict(r) for r in json.loads(pause.requirements)]
        for requirement in requirements:
            if requirement.tool_execution and requirement.tool_execution.tool_call_id == pause.call_id:
                _decide(requirement, request.response)
        target = agent.agent if pause.base_url is None else _agent(agent.spec, agent.tools, pause.base_url)
        ids = {"run_id": pause.run_id, "session_id": pause.session_id, "requirements": requirements}
        with translate.serving(model):
            return translate.reported(
                model, request.mode, partial(_outcome, agent, pause.inputs, pause.base_url),
                partial(_failed, agent), sync=lambda: target.continue_run(**ids),
                asynchronous=lambda: target.acontinue_run(**ids))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            for call in message.tool_calls or []:
                call["function"]["arguments"] = marker
            if isinstance(message.tool_args, dict):
                message.tool_args[marker] = marker
        agent.last.append(Message(role="user", content=marker))
        return [f"run messages ({held} messages)"] if held else []

def _decide(requirement: Any, response: str) -> None:
    """The person's answer on Agno's requirement: confirm, reject (with a message as its note), or
    confirm with the edited args."""
    answer = translate.approval(response)
    if answer.decision == "edit" and answer.name in (None, requirement.tool_execution.tool_name):
        requirement.tool_execution.tool_args = answer.args if isinstance(answer.args, dict) else {}
        requirement.confirm()
    elif answer.decision == "approve":
        requirement.confirm()
    else:
        requirement.reject(answer.text if answer.decision in ("message", "edit") else None)


def _target(agent: _Agent, call: CallRequest) -> Agent:
    """The agent to run: the built one, or (http) one whose model is at the call's base URL."""
    return agent.agent if call.base_url is None else _agent(agent.spec, agent.tools, call.base_url)


def _stream(target: Agent, message: str, model: ScriptedModel, events: list[Event]) -> Any:
    """The run's event stream: a step event per completed tool call; the RunOutput it ends with."""
    result = None
    stream: Iterator[Any] = target.run(message, stream=True, stream_events=True, yield_run_output=True)
    for event in stream:
        if isinstance(event, ToolCallCompletedEvent) and event.tool is not None:
            tool = event.tool
            events.append(translate.step_event(model, Step(
                tool_name=tool.tool_name or "", tool_args=translate.tool_args(tool.tool_args),
                observation=json_value(tool.result), is_error=tool.tool_call_error,
                call_id=tool.tool_call_id)))
        elif isinstance(event, RunOutput):
            result = event
    return result


def _trajectory(messages: Sequence[Message]) -> list[Step]:
    """One Step per tool call of the assistant messages, its observation the tool message answering
    that call's id, with Agno's own error flag."""
    answers = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    trajectory = []
    for message in messages:
        if message.role != "assistant":
            continue
        thought = message.content if isinstance(message.content, str) and message.content else None
        for call in message.tool_calls or []:
            answer = answers.get(call.get("id"))
            function = call.get("function", {})
            trajectory.append(Step(
                thought=thought, tool_name=str(function.get("name")),
                tool_args=translate.tool_args(function.get("arguments")),
                observation=None if answer is None else json_value(answer.content),
                is_error=None if answer is None else answer.tool_call_error, call_id=call.get("id")))
    return trajectory


def _outcome(agent: _Agent, inputs: Any, base_url: str | None, result: RunOutput | None) -> Outcome:
    if result is None:
        agent.last = []
        return Outcome()
    messages = list(result.messages or [])
    agent.last = messages
    trajectory = _trajectory(messages)
    steps = sum(m.role == "assistant" for m in messages)
    pending = [r.tool_execution for r in result.active_requirements if r.tool_execution is not None]
    if result.status == RunStatus.paused and pending:
        call = pending[0]
        pause_id = f"{result.run_id}/{call.tool_call_id}"
        _PAUSES[pause_id] = _Pause(
            run_id=result.run_id or "", session_id=result.session_id or "", call_id=call.tool_call_id or "",
            requirements=json.dumps([r.to_dict() for r in result.requirements or []]), inputs=inputs,
            base_url=base_url)
        return translate.paused(
            "RunOutput(status=PAUSED)", f"{call.tool_name} requires confirmation",
            interrupt_id=pause_id, tool=call.tool_name or "", args=call.tool_args,
            call_id=call.tool_call_id, trajectory=[s for s in trajectory if s.call_id != call.tool_call_id],
            iterations=steps, inputs=inputs)
    if result.status == RunStatus.error:  # what Agno caught and returned in place of raising
        return Outcome(trajectory=trajectory, iterations=steps, error=ErrorInfo(
            type=f"RunOutput(status={result.status.value})", message=str(result.content)))
    return translate.finished(agent.spec.signature, result.content, trajectory, steps)


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    """An exception the Agent let escape."""
    agent.last = []
    return Outcome(error=ErrorInfo.from_exception(exc))
