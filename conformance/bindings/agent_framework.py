"""The binding for Microsoft Agent Framework's `Agent` (agent-framework-core 1.23, `agent_framework`).

Seam: the framework's primary OpenAI client, `OpenAIChatClient` (agent-framework-openai), which
speaks the OpenAI Responses API ("Use `OpenAIChatClient` for new work unless you specifically need
the Chat Completions API": the package's README; `OpenAIChatCompletionClient` is there "mainly for
compatibility"), given (its documented `async_client`) an `openai.AsyncOpenAI` over an in-memory
transport that answers from the script (`translate.serving`: a contextvar, so one agent serves
concurrent runs); in the `http` profile a client pointed at `CallRequest.base_url`. So the client's
request building, its tool-call parsing and openai's retries (2, with backoff) run as in a user's
run. The client stores each response on the service by default (`STORES_BY_DEFAULT`,
_chat_client.py) and continues a run from the last one (its next request names only
`previous_response_id` and the new items), which the suite's endpoint serves. Tools are the
framework's `@tool` over the suite tool's function, its parameters `Annotated` with their
descriptions (the form its docs show): the decorator builds the pydantic model that validates the
model's args.

Loop: the chat client's function-invocation layer (_tools.py, `_get_response_with_function_invocation`)
makes up to `function_invocation_configuration["max_iterations"]` (default 40) requests, runs each
reply's function calls (concurrently by default), and returns the first reply that calls none.
After that many requests that all called functions it makes one more request with `tool_choice:
"none"` ("Phase 3") and returns its reply: the step cap is `max_iterations=N` on the client
(`max-steps-extract`), and a run that went through that request is reported as stopped by the cap.
The cap is the client's configuration: `Agent.run` takes none. After three consecutive failing
batches (`max_consecutive_errors_per_request`, default 3) the loop stops calling functions: its
next request has `tool_choice: "none"`.

Forms: `Agent.run` (async; the framework has no sync form, its samples run it with `asyncio.run`,
as the sync form does here) and `Agent.run(stream=True)`, whose updates are fragments the framework
merges (`AgentResponse.from_updates`: the Responses client sends a function call once per arguments
delta and again when they are done); an update that carries a function result is a step event. Each
run gets a fresh `AgentSession` (`agent.create_session()`). As the service keeps the history, the
agent adds no `InMemoryHistoryProvider` (_agents.py, where it is auto-injected only when the client
does not store), so the session holds only the last response's id and a resumed run's response only
that run's messages: the binding, as the application, keeps each session's responses, and the
trajectory is read from them (function-call and function-result contents, bound by call id; a
result's `exception` is its error flag).

Approval (`approval_form = "pause"`): `@tool(approval_mode="always_require")` makes the run return
`function_approval_request` contents (`AgentResponse.user_input_requests`) instead of running the
call. The session is where the framework keeps the pending request (and, once answered, that it
was settled): the binding is the application's session store, saving each session after every run
in its documented serialised form (`AgentSession.to_dict`), so an answer resumes from the session as
last saved. An answer is `request.to_function_approval_response(approved)`, sent in a user message to
`Agent.run` with the session restored (`AgentSession.from_dict`); the response takes a yes or a no
only, so free text declines the call.

`agent-framework+detailed-errors` is the documented opt-in `include_detailed_errors=True`
(`FunctionInvocationConfiguration`), which shows the model the exception's text of a failing
function and the validation error of args that break its schema.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar, Literal

import httpx
import openai
from agent_framework import Agent, AgentResponse, AgentResponseUpdate, AgentSession, Content, Message, tool
from agent_framework.openai import OpenAIChatClient

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

_ARGS3 = "test_malformed_json_tool_args_never_reach_a_tool_that_takes_no_arguments"
_ARGS4 = "test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value"
_JOINED = ("AgentResponse.text (_types.py), the run's answer in the framework's docs, joins the text of "
           "every message of the response: the text the model wrote beside its function calls comes first")
_REDACTED = ("_function_execution_error_result (_tools.py) answers a function that raised with the fixed "
             "'Error: Function failed.' unless include_detailed_errors=True "
             "(FunctionInvocationConfiguration): the exception's message is kept on the result's "
             "`exception`, never shown to the model")
_UNNAMED = ("_function_argument_validation_error_result (_tools.py) answers args that fail the tool's "
            "pydantic model with the fixed 'Error: Argument parsing failed.' unless "
            "include_detailed_errors=True: it names no field")
_RAW = ("Content.parse_arguments (_types.py) turns args that are not JSON into {'raw': <the text>}, and the "
        "input model @tool builds (_tools.py FunctionTool.input_model, pydantic's create_model) ignores the "
        "undeclared 'raw': a tool that takes no arguments runs on the guess")
_NO_REASON = ("max_consecutive_errors_per_request (default 3) only sets tool_choice 'none' for the next "
              "request (_tools.py _update_consecutive_error_count, _apply_batch_limit_decision): the "
              "response carries no stop reason, no suggestion and no error history")
_ANY_ERROR = ("_update_consecutive_error_count (_tools.py) counts every failing batch, whatever the tool or "
              "the error: three failures of different kinds stop the function calls too")
_KNOWN: dict[str, str] = {
    "The answer is the final reply alone, not joined with the text beside earlier tool calls": _JOINED,
    "ERR-4": _REDACTED,
    **{f"{_ARGS3}[{row}]": _RAW for row in ("{", "{,}", "not json at all")},
    **{f"{_ARGS4}[{row}]": _UNNAMED for row in (
        '{"amount": 50}-recipient', '{"amount": "fifty", "recipient": "Ann"}-amount',
        '{"amount": 50, "recipient": ["Ann", "Bob"]}-recipient',
        '{"amount": 50.5, "recipient": "Ann"}-amount', '{"amount": null, "recipient": "Ann"}-amount')},
    "An argument the schema does not declare is refused, naming it, not dropped":
        "the input model @tool builds (_tools.py FunctionTool.input_model, pydantic's create_model) ignores "
        "undeclared fields: 'memo' is dropped and the tool runs",
    **dict.fromkeys(translate.ARGS5_DEEP,
                    "Content.parse_arguments (_types.py) json.loads the args and catches only "
                    "JSONDecodeError and TypeError: the RecursionError escapes _auto_invoke_function "
                    "(_tools.py) and Agent.run"),
    "Three similar failures in a row stop the retries with a suggestion": _NO_REASON,
    "The error history keeps the last ten errors": _NO_REASON,
    "Failures of different kinds do not count as similar": _ANY_ERROR,
    "Free text is fed back to the agent as the user's answer":
        "a function_approval_response carries approved true or false only (_types.py "
        "Content.to_function_approval_response): a declined call is answered with the fixed 'Error: Tool "
        "call invocation was rejected by user.' (_tools.py), never the person's words",
    "Resuming keeps the budget the steps before the pause used":
        "a resume is a new Agent.run, whose function-invocation loop starts its max_iterations budget from "
        "zero (_tools.py _get_response_with_function_invocation: the budget is restored from the session "
        "only for a deferred mixed pause batch): the resumed run asks the model for steps past the cap",
    "A pause answered through another agent is refused":
        "the pending approval lives in the AgentSession's state (_tools.py "
        "_store_pending_approval_requests), bound to no agent: any agent run with that session and the "
        "approval response runs the call",
}


@dataclass
class _Pause:
    """A run paused for approval: its session's id, the pending `function_approval_request` (as
    `Content.to_dict` serialised it), and where the run's model lives."""

    session_id: str
    request: dict[str, Any]
    base_url: str | None


@dataclass
class _Agent:
    """A built `Agent`, its spec and tools, and the messages its last call handed out."""

    agent: Agent[Any]
    spec: AgentSpec
    tools: Sequence[SuiteTool]
    settings: Mapping[str, Any]
    last: list[Message] = field(default_factory=list)


#: Every pause a run reported, by its id, whichever agent made it: an answer may reach another agent
#: (HITL-6), and whether that agent's run refuses it is the framework's part.
_PAUSES: dict[str, _Pause] = {}
#: The application's session store: each session as `AgentSession.to_dict` serialised it after its
#: last run, by its id, so an answer resumes from the session as last saved.
_SESSIONS: dict[str, dict[str, Any]] = {}
#: The messages of each session's runs so far (`Message.to_dict`), by its id: the Responses client
#: keeps a run's history in the service's stored responses, so the session holds only the last
#: response's id and a resumed run's response only its own messages.
_HISTORY: dict[str, list[dict[str, Any]]] = {}


class AgentFrameworkBinding(Binding):
    """Runs the suite against Microsoft Agent Framework's `Agent`, with its defaults."""

    name = "agent-framework"
    dependencies = ("agent-framework-core", "agent-framework-openai", "openai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-extract", "repeated-error-stop", "tool-approval",
                              "durable-approvals", "async", "streaming", "parallel-tool-calls", "lm-retry",
                              "http"})
    approval_form: ClassVar[Literal["pause", "callback"]] = "pause"
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: Agent takes instructions, messages and tools, no "
                     "signature",
        "adapters": "no pluggable prompt format: each chat client writes its provider's request",
        "max-steps-error": "after max_iterations the loop makes one request with tool_choice 'none' and "
                           "returns its reply (_tools.py, Phase 3 of the function-invocation loop): it "
                           "never raises",
        "max-steps-return": "on the cap the loop always makes its tool-less final request; nothing "
                            "returns the run as it stands, flagged as capped",
        "cap-summary": "on the cap the run returns the model's reply to its tool-less request, or the "
                       "fixed 'Function invocation limit reached before a final answer could be "
                       "produced.' when it is empty (_tools.py): no account of the tools tried",
        "per-call-cap": "max_iterations is the chat client's function_invocation_configuration; "
                        "Agent.run takes no cap",
        "ask-user": "no built-in tool for asking the person a question",
        "approval-edit": "a function_approval_response carries approved true or false only "
                         "(_types.py Content.to_function_approval_response): no edit of the call",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: max_steps when the response holds max_iterations function-calling "
                       "replies: the loop then made its one request with tool_choice 'none' (_tools.py, "
                       "Phase 3); the response flags no stop",
        "iterations": "derived: counted from the response's messages, one per function-calling reply, "
                      "plus the final reply of a run the cap did not stop",
        "max_iterations": "none: on the cap the loop raises nothing; it makes one request without "
                          "tools and returns its reply",
        "partial_run": "none: on the cap the loop raises nothing; the run returns its response",
        "concurrency": "shared",
    }
    #: FunctionInvocationConfiguration settings of this binding's configuration (none: the defaults).
    settings: ClassVar[Mapping[str, Any]] = {}

    @property
    def version(self) -> str:
        return version("agent-framework-core")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return translate.built(lambda: _Agent(_agent(spec, tools, None, self.settings), spec, tools,
                                              self.settings))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target = _target(agent, call.base_url)
        session = target.create_session()
        task = user_message(call.inputs)
        report = partial(_outcome, agent, session, call.base_url)
        with translate.serving(model):
            return translate.reported(model, call.mode, report, partial(_failed, agent),
                                      sync=lambda: target.run(task, session=session),
                                      asynchronous=lambda: target.run(task, session=session),
                                      stream=lambda events: _stream(target, task, session, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target = _target(agent, call.base_url)
        session = target.create_session()
        with translate.serving(model):
            return await translate.areported(target.run(user_message(call.inputs), session=session),
                                             partial(_outcome, agent, session, call.base_url),
                                             partial(_failed, agent))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        pause = _PAUSES[request.interrupt_id]
        answer = translate.approval(request.response)
        if answer.decision == "edit":
            return Outcome(error=ErrorInfo(
                type="NotSupported", message="a function_approval_response carries approved true or "
                "false only (_types.py Content.to_function_approval_response): no edit of the call"))
        target = _target(agent, pause.base_url)
        session = AgentSession.from_dict(_SESSIONS[pause.session_id])
        pending = Content.from_dict(pause.request)
        # The response takes a yes or a no: free text has nowhere to go, so it declines.
        approved = answer.decision == "approve"
        reply = Message(role="user", contents=[pending.to_function_approval_response(approved)])
        with translate.serving(model):
            return translate.reported(model, "async", partial(_outcome, agent, session, pause.base_url),
                                      partial(_failed, agent),
                                      asynchronous=lambda: target.run(reply, session=session))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            for item in message.contents:
                if item.type == "function_result":
                    item.result = marker
        agent.last.append(Message(role="user", contents=[Content.from_text(marker)]))
        return [f"response.messages ({held} messages)"] if held else []


class AgentFrameworkDetailedErrorsBinding(AgentFrameworkBinding):
    """The documented opt-in `include_detailed_errors=True` (FunctionInvocationConfiguration), which shows
    the model the exception's text of a failing function and of args that fail validation."""

    name = "agent-framework+detailed-errors"
    settings: ClassVar[Mapping[str, Any]] = {"include_detailed_errors": True}
    known_failures: ClassVar[Mapping[str, str]] = {k: v for k, v in _KNOWN.items()
                                                   if v not in (_REDACTED, _UNNAMED)}


def _agent(spec: AgentSpec, tools: Sequence[SuiteTool], base_url: str | None,
           settings: Mapping[str, Any]) -> Agent[Any]:
    """The agent with its defaults (and `settings`), its cap the spec's, its client at `base_url` or in
    memory."""
    return Agent(client=_client(base_url, bool(tools), {**settings, "max_iterations": spec.max_steps}),
                 name=spec.name,
                 instructions=spec.signature.instructions or None,
                 tools=[tool(translate.annotated_function(t), name=t.name, description=t.spec.description,
                             approval_mode="always_require" if t.spec.interruptible else None)
                        for t in tools])


def _client(base_url: str | None, has_tools: bool, settings: Mapping[str, Any]) -> OpenAIChatClient:
    """The framework's Responses API client, configured with `settings` (the cap its
    `max_iterations`). A request that offers no function (`tool_choice: "none"`) is the extraction
    where the agent has some."""
    if base_url is None:
        http = httpx.AsyncClient(transport=server.ServingTransport(server.native_call_for(has_tools)))
        client = openai.AsyncOpenAI(base_url=server.IN_MEMORY_URL, api_key=server.API_KEY, http_client=http)
    else:
        client = openai.AsyncOpenAI(base_url=base_url, api_key=server.API_KEY)
    return OpenAIChatClient(model="scripted", async_client=client,
                            function_invocation_configuration=dict(settings))


def _target(agent: _Agent, base_url: str | None) -> Agent[Any]:
    """The agent to run: the built one, or (http) one like it whose client is at the endpoint."""
    return agent.agent if base_url is None else _agent(agent.spec, agent.tools, base_url, agent.settings)


async def _stream(target: Agent[Any], task: str, session: AgentSession, model: ScriptedModel,
                  events: list[Event]) -> AgentResponse[Any]:
    """`Agent.run(stream=True)`: a step event for each function result as its update arrives.

    An update is a fragment, not a message: the Responses client sends a function call once per
    arguments delta (`merge_mode="append"`) and again when its arguments are done
    (`merge_mode="replace"`), so the run so far is the updates merged as the framework merges them
    (`AgentResponse.from_updates`)."""
    stream = target.run(task, session=session, stream=True)
    seen: list[AgentResponseUpdate] = []
    async for update in stream:
        seen.append(update)
        if any(item.type == "function_result" for item in update.contents):
            translate.step_events(model, events, _trajectory(AgentResponse.from_updates(seen).messages))
    response: AgentResponse[Any] = await stream.get_final_response()
    return response


def _trajectory(messages: Sequence[Message]) -> list[Step]:
    """One Step per function call, its thought its message's text, its observation the result filed
    under its call id, flagged an error where the result carries the exception."""
    calls: list[translate.NativeCall] = []
    results: dict[str, Any] = {}
    errors: dict[str, bool] = {}
    for message in messages:
        for item in message.contents:
            if item.type == "function_call":
                calls.append((item.call_id, message.text or None, item.name, item.arguments))
            elif item.type == "function_result":
                results[item.call_id or ""] = item.result
                errors[item.call_id or ""] = item.exception is not None
    return translate.steps(calls, results, errors)


def _rounds(messages: Sequence[Message]) -> int:
    """The function-calling replies among `messages`: one per step that chose a tool."""
    return sum(1 for m in messages if any(i.type == "function_call" for i in m.contents))


def _outcome(agent: _Agent, session: AgentSession, base_url: str | None,
             response: AgentResponse[Any]) -> Outcome:
    """A run that returned: paused on an approval request, or capped iff `max_iterations` replies all
    called functions, else finished on its last reply."""
    messages = list(response.messages)
    agent.last = messages
    _SESSIONS[session.session_id] = session.to_dict()
    history = [*(Message.from_dict(m) for m in _HISTORY.get(session.session_id, [])), *messages]
    _HISTORY[session.session_id] = [m.to_dict() for m in history]
    trajectory = _trajectory(history)
    rounds = _rounds(history)
    requests = [r for r in response.user_input_requests if r.type == "function_approval_request"]
    if requests:
        pending = requests[0]
        call = pending.function_call
        assert call is not None
        pause_id = f"{call.call_id}#{len(_PAUSES) + 1}"
        _PAUSES[pause_id] = _Pause(session.session_id, pending.to_dict(), base_url)
        return translate.paused("function_approval_request", f"the call of {call.name} needs approval",
                                interrupt_id=pause_id, tool=str(call.name), args=call.arguments,
                                call_id=call.call_id, trajectory=trajectory, iterations=rounds,
                                inputs=None)
    capped = _rounds(messages) >= agent.spec.max_steps
    return translate.finished(agent.spec.signature, response.text, trajectory,
                              rounds if capped else rounds + 1, "max_steps" if capped else "finish")


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    """An exception the run let escape: it carries no messages."""
    agent.last = []
    return Outcome(error=ErrorInfo.from_exception(exc))
