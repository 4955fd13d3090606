"""The binding for Google's Agent Development Kit (google-adk 2.13): an `LlmAgent` run by its `Runner`.

Seam: ADK's model interface, a `BaseLlm` subclass (models/base_llm.py; the interface its Gemini,
LiteLlm, Anthropic and OpenAI classes implement and `LLMRegistry` registers); ADK ships no test
model. Each request (`LlmRequest`: its contents and the tools' `FunctionDeclaration`s) is logged, and the
scripted turn comes back as a `LlmResponse` whose content has a text part (the thought) and one
`function_call` part per call, as Gemini's API returns them: args are an object there, so args that
are not a JSON object come back as Gemini answers a malformed call, a response with no content and
`finish_reason=MALFORMED_FUNCTION_CALL` (`LlmResponse.create` turns that into its `error_code`).
ADK's own `Gemini` over a google-genai client on an in-memory transport does the same: such a
response ends the run after one model call, and args nested 5000 deep raise RecursionError in
google-genai's json.loads of the body (genai/models.py), as the stand-in's parse raises it. (ADK's
`OpenAILlm` differs: args that are not JSON become `{}`, a JSON non-object fails FunctionCall's
validation; integrations/openai/_openai_llm.py `_tool_call_parts`.)
`translate.serving` (a contextvar; `Runner.run` copies the context into its thread) gives each run
its model. Tools are plain functions, which the agent wraps in `FunctionTool`.

Transport (`lm-retry`, `http`): the scripted `BaseLlm` sits above every client, so a script holding
a transport fault, and every `http` call, runs on ADK's own `OpenAILlm` (integrations/openai, the
`google-adk[openai]` extra): at `CallRequest.base_url` with an API key, as its docs set it, or over
an in-memory transport given as its documented `client` (an `AsyncOpenAI` with the client's default
retries: 2, with backoff, honouring Retry-After). The same agent, tools and runner services are
rebuilt around that model for the call.

Runs: a session per call in the runner's session service; `Runner.run` (sync: the async run on a
thread of its own), `Runner.run_async`, whose events are also the stream (a step event per
function-response event). The step cap is `RunConfig(max_llm_calls=N)`, per call (the agent has no
cap of its own, so the spec's cap is passed on every run): the N+1-th model call raises
`LlmCallsLimitExceededError` (agents/invocation_context.py `increment_llm_call_count`) before it
reaches the model. The error carries its message only; the run's events, which the session also
keeps (`session_service.get_session`, the documented API), give the partial run, and the caller's
own `RunConfig` the limit.

Approval: an interruptible tool is `FunctionTool(func, require_confirmation=True)`. Its call pauses
the run: ADK answers it with a placeholder and adds a long-running `adk_request_confirmation` call
holding the original call (flows/llm_flows/tools/_functions.py), the pause reported with that
request's id. The person answers as ADK documents, with a `FunctionResponse` to the request holding
a `ToolConfirmation` (`confirmed`; free text declines, as its `payload`: ADK takes no message), sent
by a new `Runner.run` of the paused session, with the run's own `RunConfig`; a resumed run's steps
are the session's. A pause is its session's events, in the runner's session store: the agents with a
tool needing confirmation keep them in ADK's `SqliteSessionService`, one SQLite file per binding that
their runners share (InMemoryRunner's other services), each agent an app of its own named as the
agent is, as ADK's own api_server runs each agent it serves over one session service
(cli/api_server.py `_create_runner`), each run in a session of its own; every answer reads the pause
back from its serialised form (`durable-approvals`). The other agents run in `InMemoryRunner`, the
quick-start default (fifty concurrent runs of one agent in one SQLite file end in sqlite3's "database
is locked"). Pauses are kept here by id for every agent: answered through another agent, its runner
looks the session up in the shared store under its own app, and whether it refuses the answer is
ADK's part.

`google-adk+reflect-retry` is the documented opt-in `ReflectAndRetryToolPlugin()` on the runner:
a raising tool's exception goes back to the model instead of ending the run.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import tempfile
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from importlib.metadata import version
from typing import Any, ClassVar

from google.adk.agents import LlmAgent, RunConfig
from google.adk.agents.invocation_context import LlmCallsLimitExceededError
from google.adk.artifacts import InMemoryArtifactService
from google.adk.events import Event as AdkEvent
from google.adk.integrations.openai import OpenAILlm
from google.adk.memory import InMemoryMemoryService
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.plugins import ReflectAndRetryToolPlugin
from google.adk.runners import InMemoryRunner, Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.adk.tools import FunctionTool
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types
from pydantic import JsonValue

from conformance import ResumeRequest, render, server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, LMCall, Outcome, Step

_USER = "user"
#: The function call ADK adds to ask the person to confirm a call (utils/_function_call_names.py).
_CONFIRM = "adk_request_confirmation"
_ARGS4 = "test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value"
_MALFORMED = ("Gemini answers a call it cannot parse with finish_reason MALFORMED_FUNCTION_CALL and no "
              "content; ADK's Gemini (models/google_llm.py, LlmResponse.create) yields that as an event with "
              "its error_code and, with no function call in it, the run ends (flows/llm_flows/"
              "base_llm_flow.py): the model is never told or asked again")
_NO_EDIT = ("a ToolConfirmation carries confirmed and a payload (tools/tool_confirmation.py); "
            "FunctionTool.run_async (tools/function_tool.py) runs a confirmed call with the model's args, "
            "and _resolve_confirmation_targets (flows/llm_flows/tools/_confirmation.py) refuses a call whose "
            "args differ from the session's: a pending call cannot be edited")
_UNCHECKED = ("FunctionTool.run_async (tools/function_tool.py) calls the function with the model's args "
              "unvalidated: ")
#: Known failures of the defaults and of the opt-in alike.
_SHARED: dict[str, str] = {
    "ARGS-2": _MALFORMED,
    "ARGS-3": _MALFORMED,
    **{f"{_ARGS4}[{row}]": _UNCHECKED + why for row, why in (
        ('{"amount": "fifty", "recipient": "Ann"}-amount', "'fifty' reaches an int parameter"),
        ('{"amount": 50, "recipient": ["Ann", "Bob"]}-recipient', "a list reaches a str parameter"),
        ('{"amount": "50", "recipient": "Ann"}-amount', "the text '50' reaches an int parameter"),
        ('{"amount": 50.5, "recipient": "Ann"}-amount', "50.5 reaches an int parameter"),
        ('{"amount": null, "recipient": "Ann"}-amount', "None reaches an int parameter"))},
    **dict.fromkeys(translate.ARGS5_DEEP, "Gemini's args are an object inside its JSON response, which "
                    "google-genai parses with json.loads (genai/models.py AsyncModels._generate_content): "
                    "the RecursionError escapes ADK's Gemini.generate_content_async and the run"),
    "An argument the schema does not declare is refused, naming it, not dropped":
        "FunctionTool._prepare_invocation_args (tools/function_tool.py) keeps only the signature's "
        "parameters: 'memo' is dropped and the tool runs",
    "Free text is fed back to the agent as the user's answer":
        "a ToolConfirmation takes no message for the model: FunctionTool.run_async (tools/function_tool.py) "
        "answers a call that was not confirmed with its fixed {'error': 'This tool call is rejected.'}, and "
        "the confirmation's payload (the person's text) never reaches the model",
    **dict.fromkeys(("Resuming keeps the budget the steps before the pause used",
                     "Resuming keeps the step cap given to the call and the steps used before the pause"),
        "a resume is a new Runner.run, whose InvocationContext counts max_llm_calls from zero "
        "(agents/invocation_context.py _InvocationCostManager): the steps before the pause are not counted, "
        "and the resumed run asks the model past the cap"),
    **dict.fromkeys(("A step cap of zero is refused at configuration, or raises before any model call",
                     "A step cap of zero given to one call is refused, or raises before any model call"),
        "a max_llm_calls of 0 or less means no limit at all (agents/run_config.py validate_max_llm_calls "
        "warns; invocation_context.py increment_and_enforce_llm_calls_limit enforces only a positive one), "
        "whether configured or given to one call: the run goes on"),
}
_KNOWN: dict[str, str] = {
    **_SHARED,
    "ERR-1": "a tool's exception propagates out of the run unless an on_tool_error callback or plugin "
             "answers it (flows/llm_flows/tools/_caller.py _call_tool_async re-raises it)",
}

_KNOWN_OPT_IN: dict[str, str] = {**_SHARED}


class _Scripted(BaseLlm):  # type: ignore[misc]
    """ADK's model interface answering from the running call's scripted model."""

    model: str = "scripted"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        model = translate.serving_model()
        declared = [d for t in (llm_request.config.tools or []) for d in (getattr(t, "function_declarations",
                                                                                  None) or [])]
        tools: list[JsonValue] = [{"type": "function", "function": {
            "name": d.name, "description": d.description, "parameters": _schema(d)}} for d in declared]
        call = LMCall(kind="step" if tools or not self.has_tools else "extract", adapter="native",
                      messages=[_shown(c) for c in llm_request.contents], tools=tools or None)
        turn = await translate.aanswer(model, call)
        message = render.openai_message(turn, len(model.calls))
        parts = [types.Part(text=message["content"])] if message["content"] else []
        for c in message.get("tool_calls", []):
            args = json.loads(c["function"]["arguments"]) if _is_object(c["function"]["arguments"]) else None
            if args is None:  # as Gemini's API answers a call it cannot parse
                yield LlmResponse(error_code="MALFORMED_FUNCTION_CALL", finish_reason=
                                  types.FinishReason.MALFORMED_FUNCTION_CALL,
                                  error_message=f"Malformed function call: {c['function']['arguments']}")
                return
            parts.append(types.Part(function_call=types.FunctionCall(id=c["id"], name=c["function"]["name"],
                                                                     args=args)))
        yield LlmResponse(content=types.Content(role="model", parts=parts))

    has_tools: bool = True


def _is_object(text: str) -> bool:
    """Whether the args text is a JSON object (RecursionError escapes, as from google-genai's json.loads
    of Gemini's response body, genai/models.py AsyncModels._generate_content)."""
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def _schema(declaration: types.FunctionDeclaration) -> Any:
    if declaration.parameters_json_schema is not None:
        return declaration.parameters_json_schema
    return None if declaration.parameters is None else declaration.parameters.model_dump(
        mode="json", exclude_none=True)


def _shown(content: types.Content) -> dict[str, Any]:
    """A content as the model is shown it: its text, its calls, its function responses."""
    parts = content.parts or []
    text = "".join(p.text or "" for p in parts)
    text += "".join(json.dumps(p.function_response.response) for p in parts if p.function_response)
    calls = [(p.function_call.name or "", json.dumps(p.function_call.args)) for p in parts if p.function_call]
    return translate.shown(content.role or "user", text, calls)


@dataclass
class _Agent:
    """A built `LlmAgent`, its runner (over a session store of its own) and spec, and the events its
    last call handed out."""

    runner: Runner
    spec: AgentSpec
    #: The same agent (tools, instruction, runner's plugins and services) with another model.
    with_model: Callable[[BaseLlm], Runner]
    last: list[AdkEvent] = field(default_factory=list)


@dataclass(frozen=True)
class _Run:
    """A run's session (None: a new one), its own `RunConfig` cap, and the endpoint its model is at
    (the http profile; None in memory). A pause keeps its run's, in the paused agent's session store,
    and the person's resuming run is given them again."""

    session: str | None
    cap: int
    base_url: str | None


#: Every pause a run reported, by its `adk_request_confirmation` call's id, whichever agent paused: a
#: person's answer may reach another agent than the paused one (HITL-6), and refusing it is ADK's
#: part, not ours.
_PAUSES: dict[str, _Run] = {}
#: Each binding's SQLite session store is a file under this directory.
_STORE = tempfile.TemporaryDirectory(prefix="conformance-adk-", ignore_cleanup_errors=True)
_STORES = itertools.count(1)


class GoogleADKBinding(Binding):
    """Runs the suite against ADK's `LlmAgent` under its `Runner`, with its defaults."""

    name = "google-adk"
    dependencies = ("google-adk", "google-genai", "openai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-error", "per-call-cap", "tool-approval", "durable-approvals",
                              "async", "streaming", "parallel-tool-calls", "lm-retry", "http"})
    approval_form = "pause"
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: LlmAgent takes an instruction and tools, no signature",
        "adapters": "no pluggable prompt format: each model class writes its provider's request",
        "max-steps-extract": "max_llm_calls raises LlmCallsLimitExceededError (invocation_context.py): "
                             "no tool-less final call",
        "max-steps-return": "max_llm_calls raises LlmCallsLimitExceededError; the run never returns "
                            "flagged as capped",
        "cap-summary": "the cap raises; there is no message for the user of what was tried",
        "repeated-error-stop": "no count of repeated tool failures",
        "ask-user": "no built-in tool that asks the person on by default",
        "approval-edit": _NO_EDIT,
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "library: LlmCallsLimitExceededError, raised before the call after "
                       "max_llm_calls (agents/invocation_context.py increment_llm_call_count), is the "
                       "cap stop; a run that ends has its final-response event",
        "iterations": "derived: counted from the run's events, one per model response (ADK counts "
                      "its llm calls in the InvocationContext, which the caller never sees)",
        "max_iterations": "derived: the max_llm_calls the binding gave RunConfig; "
                          "LlmCallsLimitExceededError carries its message only",
        "partial_run": "library: the events Runner.run_async yielded before the error, which the "
                       "session also keeps (session_service.get_session)",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return version("google-adk")

    def plugins(self) -> list[Any]:
        """The runner's plugins in this configuration (none: the defaults)."""
        return []

    @cached_property
    def paused_sessions(self) -> SqliteSessionService:
        """The application's one session store for the agents whose tools need confirmation (a
        SQLite file per binding), configured once and shared by their runners, as one application's
        runners share it; each run its own session."""
        return SqliteSessionService(f"{_STORE.name}/sessions-{next(_STORES)}.db")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        def made() -> _Agent:
            functions = [_tool(t) for t in tools]

            # The agent and its app are both named as the spec names the agent, as ADK's api_server
            # makes each agent it serves an app of its own (cli/api_server.py): a session belongs to
            # its app, and another app's runner refuses it (runners.py Runner._get_or_create_session,
            # SessionNotFoundError). Two agents in one app would share its sessions: a resume goes to
            # the agent that authored the paused call, else to the root agent (agents/_agent_router.py
            # find_agent_to_run), whose _resolve_confirmation_targets (flows/llm_flows/tools/
            # _confirmation.py) skips a confirmation another agent asked for: the call stays pending,
            # nothing is raised, and the root agent asks its model again.
            def agent_with(llm: BaseLlm) -> LlmAgent:
                return LlmAgent(name=spec.name, model=llm, instruction=spec.signature.instructions or "",
                                tools=functions)

            scripted = agent_with(_Scripted(has_tools=bool(tools)))
            if not any(t.spec.interruptible for t in tools):
                runner: Runner = InMemoryRunner(agent=scripted, app_name=spec.name, plugins=self.plugins())
            else:  # InMemoryRunner's services, but its sessions in the application's SQLite store.
                runner = Runner(agent=scripted, app_name=spec.name, plugins=self.plugins(),
                                session_service=self.paused_sessions,
                                artifact_service=InMemoryArtifactService(),
                                memory_service=InMemoryMemoryService())

            def with_model(llm: BaseLlm) -> Runner:
                return Runner(agent=agent_with(llm), app_name=spec.name, plugins=self.plugins(),
                              session_service=runner.session_service,
                              artifact_service=runner.artifact_service, memory_service=runner.memory_service)

            return _Agent(runner, spec, with_model)

        return translate.built(made)

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        return _call(agent, model, call.mode, _Run(None, translate.step_cap(agent.spec, call), call.base_url),
                     _said(call))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        """The person's answer as ADK's documented resume: a `FunctionResponse` to the pause's
        `adk_request_confirmation` call, holding a `ToolConfirmation`, sent by a new run of the same
        session, through the agent given."""
        assert isinstance(agent, _Agent)
        pause = _PAUSES[request.interrupt_id]
        answer = translate.approval(request.response)
        if answer.decision == "edit":
            return Outcome(error=ErrorInfo(type="NotSupported", message=_NO_EDIT))
        # Free text declines the call, the text as the confirmation's payload: ADK takes no message.
        confirmation = ToolConfirmation(confirmed=answer.decision == "approve",
                                        payload=answer.text if answer.decision == "message" else None)
        message = types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            id=request.interrupt_id, name=_CONFIRM, response=confirmation.model_dump(by_alias=True,
                                                                                     exclude_none=True)))])
        return _call(agent, model, request.mode, pause, message)

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        run = _Run(None, translate.step_cap(agent.spec, call), call.base_url)
        seen: list[AdkEvent] = []
        with translate.serving(model):
            return await translate.areported(
                _play(_runner(agent, model, run.base_url), run, _said(call), seen, model, None),
                partial(_outcome, agent, seen, run), partial(_failed, agent, seen, run.cap))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for event in agent.last:
            for part in (event.content.parts or []) if event.content else []:
                if part.function_response is not None:
                    part.function_response.response = {"result": marker}
        agent.last.append(AdkEvent(author="user", content=types.Content(role="user", parts=[
            types.Part(text=marker)])))
        return [f"the run's events ({held} events)"] if held else []

class GoogleADKReflectRetryBinding(GoogleADKBinding):
    """The documented opt-in `ReflectAndRetryToolPlugin()`: a tool's exception goes back to the model
    as a `ToolFailureResponse` with guidance, and after `max_retries` (3) consecutive failures of one
    tool the exception is raised (plugins/reflect_retry_tool_plugin.py)."""

    name = "google-adk+reflect-retry"
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN_OPT_IN
    not_claimed: ClassVar[Mapping[str, str]] = {
        **GoogleADKBinding.not_claimed,
        "repeated-error-stop": "after max_retries consecutive failures of a tool the plugin re-raises its "
                               "exception (reflect_retry_tool_plugin.py): no stop reason, suggestion or "
                               "error history",
    }

    def plugins(self) -> list[Any]:
        return [ReflectAndRetryToolPlugin()]


def _said(call: CallRequest) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=render.user_message(call.inputs))])


def _call(agent: _Agent, model: ScriptedModel, mode: str, run: _Run, message: types.Content) -> Outcome:
    """`message` sent to the agent's runner in `run` (a new session, or the paused one), in the form
    `mode` names: `Runner.run`, `Runner.run_async`, or that as a stream."""
    runner = _runner(agent, model, run.base_url)
    seen: list[AdkEvent] = []
    with translate.serving(model):
        return translate.reported(
            model, mode, partial(_outcome, agent, seen, run), partial(_failed, agent, seen, run.cap),
            sync=lambda: _sync(runner, run, message, seen),
            asynchronous=lambda: _play(runner, run, message, seen, model, None),
            stream=lambda events: _play(runner, run, message, seen, model, events))


def _runner(agent: _Agent, model: ScriptedModel, base_url: str | None) -> Runner:
    """The agent's runner for one call: with the scripted `BaseLlm`, or (the http profile, or a
    script holding a transport fault) with ADK's own `OpenAILlm`, whose AsyncOpenAI client retries,
    at `base_url` or over a transport answering from the script beneath those retries."""
    if base_url is not None:
        return agent.with_model(OpenAILlm(model="scripted", base_url=base_url, api_key=server.API_KEY))
    if not model.holds_a_fault():
        return agent.runner
    # Every request is a step: ADK makes no tool-less extraction call.
    client = server.openai_client(model, partial(server.native_call, kind="step"))
    return agent.with_model(OpenAILlm(model="scripted", client=client))


def _tool(tool: SuiteTool) -> Any:
    """The suite's tool as a plain function, which the agent wraps in `FunctionTool`; an
    interruptible one as `FunctionTool(func, require_confirmation=True)`, ADK's documented
    confirmation."""
    function = translate.documented_function(tool)
    return FunctionTool(function, require_confirmation=True) if tool.spec.interruptible else function


def _arguments(session: str, message: types.Content, run: _Run) -> dict[str, Any]:
    return {"user_id": _USER, "session_id": session, "new_message": message,
            "run_config": RunConfig(max_llm_calls=run.cap)}


def _sync(runner: Runner, run: _Run, message: types.Content, seen: list[AdkEvent]
          ) -> tuple[str, list[AdkEvent]]:
    """`Runner.run` in the run's session (None: a new one): its events into `seen` as they arrive;
    the session's whole history once it ends."""
    session = asyncio.run(_session(runner, run))
    for event in runner.run(**_arguments(session, message, run)):
        seen.append(event)
    return session, asyncio.run(_history(runner, session))


async def _play(runner: Runner, run: _Run, message: types.Content, seen: list[AdkEvent],
                model: ScriptedModel, events: list[Event] | None) -> tuple[str, list[AdkEvent]]:
    """`Runner.run_async` in the run's session (None: a new one): its events into `seen`, and when
    streaming a step event per function response; the session's whole history once it ends."""
    session = await _session(runner, run)
    async for event in runner.run_async(**_arguments(session, message, run)):
        seen.append(event)
        if events is not None and event.get_function_responses():
            translate.step_events(model, events, _trajectory(seen))
    return session, await _history(runner, session)


async def _session(runner: Runner, run: _Run) -> str:
    """The run's session, or a new one in the runner's session service, under the runner's app."""
    if run.session is None:
        new: str = (await runner.session_service.create_session(app_name=runner.app_name, user_id=_USER)).id
        return new
    return run.session


async def _history(runner: Runner, session: str) -> list[AdkEvent]:
    """The session's events, as its store keeps them (`get_session`, the documented API): a resumed
    run's trajectory begins before the pause."""
    found = await runner.session_service.get_session(app_name=runner.app_name, user_id=_USER,
                                                      session_id=session)
    assert found is not None, f"ADK lost the session {session} it just ran"
    return list(found.events)


def _trajectory(events: Sequence[AdkEvent]) -> list[Step]:
    """One Step per function call the model made, its thought the text beside it, its observation
    the last response to its call id (a confirmed call's result replaces the pause's placeholder).
    ADK's own `adk_request_confirmation` calls are the pause, not the model's steps."""
    calls: list[translate.NativeCall] = []
    results: dict[str, Any] = {}
    for event in events:
        parts = (event.content.parts or []) if event.content else []
        thought = "".join(p.text or "" for p in parts) or None
        calls += [(c.id, thought, c.name or "", c.args) for c in event.get_function_calls()
                  if c.name != _CONFIRM]
        results.update({r.id or "": r.response for r in event.get_function_responses()})
    return translate.steps(calls, results)


def _model_calls(events: Sequence[AdkEvent]) -> int:
    """The model responses among the events: a response with content, or one that carries the
    model's finish reason (a malformed call's, which has none); not the event a failure leaves, nor
    the confirmation request ADK adds."""
    return sum(1 for e in events if not e.partial and not _requests(e) and (e.finish_reason is not None or (
        e.content is not None and e.content.role == "model")))


def _requests(event: AdkEvent) -> list[types.FunctionCall]:
    """The confirmations the event asks the person for: its long-running `adk_request_confirmation`
    calls (flows/llm_flows/tools/_functions.py generate_request_confirmation_event)."""
    return [c for c in event.get_function_calls()
            if c.name == _CONFIRM and c.id in (event.long_running_tool_ids or ())]


def _outcome(agent: _Agent, seen: list[AdkEvent], run: _Run, ended: tuple[str, list[AdkEvent]]) -> Outcome:
    """A run that returned: its final reply, or the confirmation it ended on (the call it holds
    back, `originalFunctionCall`, the pause kept by the request's id); its steps, the session's
    (`ended`: the session's id and its events)."""
    agent.last = seen
    session, history = ended
    trajectory, calls = _trajectory(history), _model_calls(history)
    request = next((c for e in seen for c in _requests(e)), None)
    if request is None:
        final = next((e for e in reversed(seen) if e.is_final_response() and e.content), None)
        reply = "".join(p.text or "" for p in final.content.parts or []) if final and final.content else None
        return translate.finished(agent.spec.signature, reply, trajectory, calls)
    args = request.args or {}
    original = types.FunctionCall.model_validate(args.get("originalFunctionCall") or {})
    _PAUSES[request.id or ""] = _Run(session, run.cap, run.base_url)
    inputs = next(("".join(p.text or "" for p in e.content.parts or []) for e in history
                   if e.author == "user" and e.content), None)
    return translate.paused("ToolConfirmation", str((args.get("toolConfirmation") or {}).get("hint", "")),
                            interrupt_id=request.id or "", tool=original.name or "", args=original.args,
                            call_id=original.id, trajectory=trajectory, iterations=calls, inputs=inputs)


def _failed(agent: _Agent, seen: list[AdkEvent], cap: int, exc: Exception) -> Outcome:
    """An exception the run let escape, with the events it yielded before."""
    agent.last = seen
    trajectory, calls = _trajectory(seen), _model_calls(seen)
    if not isinstance(exc, LlmCallsLimitExceededError):
        return Outcome(error=ErrorInfo.from_exception(exc), trajectory=trajectory, iterations=calls)
    own = {t.name for t in agent.spec.tools}
    done = [s for s in trajectory if s.observation is not None and s.tool_name in own]
    return Outcome(trajectory=trajectory, iterations=calls, stop_reason="max_steps",
                   error=translate.max_iterations(
                       exc, iterations=calls, max_iterations=cap,
                       tools_used=[s.tool_name for s in done],
                       history=[s.model_dump() for s in trajectory],
                       last_observation=done[-1].observation if done else None))
