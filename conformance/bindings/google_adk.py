"""The binding for Google's Agent Development Kit (google-adk 2.13): an `LlmAgent` run by its `Runner`.

Seam: ADK's model interface, a `BaseLlm` subclass (models/base_llm.py; the interface its Gemini,
LiteLlm and Anthropic classes implement and `LLMRegistry` registers). ADK ships no test model, and
its OpenAI-compatible route (`LiteLlm`) needs litellm, which google-adk does not install. Each
request (`LlmRequest`: its contents and the tools' `FunctionDeclaration`s) is logged, and the
scripted turn comes back as a `LlmResponse` whose content has a text part (the thought) and one
`function_call` part per call, as Gemini's API returns them: args are an object there, so args that
are not a JSON object come back as Gemini answers a malformed call, a response with no content and
`finish_reason=MALFORMED_FUNCTION_CALL` (`LlmResponse.create` turns that into its `error_code`).
`translate.serving` (a contextvar; `Runner.run` copies the context into its thread) gives each run
its model. Tools are plain functions, which the agent wraps in `FunctionTool`.

Runs: a session per call in the `InMemoryRunner`'s session service; `Runner.run` (sync: the async
run on a thread of its own), `Runner.run_async`, whose events are also the stream (a step event per
function-response event). The step cap is `RunConfig(max_llm_calls=N)`, per call (the agent has no
cap of its own, so the spec's cap is passed on every run): the N+1-th model call raises
`LlmCallsLimitExceededError` (agents/invocation_context.py `increment_llm_call_count`) before it
reaches the model. The error carries its message only; the run's events, which the session also
keeps (`session_service.get_session`, the documented API), give the partial run, and the caller's
own `RunConfig` the limit.

`google-adk+reflect-retry` is the documented opt-in `ReflectAndRetryToolPlugin()` on the runner:
a raising tool's exception goes back to the model instead of ending the run.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

from google.adk.agents import LlmAgent, RunConfig
from google.adk.agents.invocation_context import LlmCallsLimitExceededError
from google.adk.events import Event as AdkEvent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.plugins import ReflectAndRetryToolPlugin
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydantic import JsonValue

from conformance import render, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, LMCall, Outcome, Step

_APP, _USER = "conformance", "user"
_ARGS4 = "test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value"
_ARGS5 = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
_MALFORMED = ("Gemini answers a call it cannot parse with finish_reason MALFORMED_FUNCTION_CALL and no "
              "content; ADK yields that as an event with its error_code and, with no function call in it, "
              "ends the run (flows/llm_flows/base_llm_flow.py): the model is never told or asked again")
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
    **{f"{_ARGS5}[store-{row}]": "the args come inside the model's JSON response, whose parse (json.loads, "
                                 "as google-genai's client parses Gemini's body) raises RecursionError, and "
                                 "ADK lets it escape the run" for row in (
        "an object nested 100000 levels deep", "an object nested 5000 levels deep",
        "an object nested 5000 levels deep after an escaped quote",
        "arrays nested 5000 levels deep inside its object",
        "arrays nested 5000 levels deep, each beside an empty one")},
    "An argument the schema does not declare is refused, naming it, not dropped":
        "FunctionTool._prepare_invocation_args (tools/function_tool.py) keeps only the signature's "
        "parameters: 'memo' is dropped and the tool runs",
    "A step cap of zero is refused at configuration, or raises before any model call":
        "a max_llm_calls of 0 or less means no limit at all (agents/run_config.py validate_max_llm_calls "
        "warns; invocation_context.py enforces only a positive one): the run goes on",
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
    """Whether the args text is a JSON object (RecursionError escapes, as from the API's JSON parse)."""
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
    """A built `LlmAgent`, its runner and spec, and the events its last call handed out."""

    runner: InMemoryRunner
    spec: AgentSpec
    last: list[AdkEvent] = field(default_factory=list)


class GoogleADKBinding(Binding):
    """Runs the suite against ADK's `LlmAgent` under its `Runner`, with its defaults."""

    name = "google-adk"
    dependencies = ("google-adk", "google-genai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-error", "per-call-cap", "async", "streaming", "parallel-tool-calls"})
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
        "tool-approval": "not bound yet: FunctionTool(require_confirmation=True) pauses a call for a "
                         "ToolConfirmation, which this binding does not drive",
        "approval-edit": "not bound yet (see tool-approval)",
        "durable-approvals": "not bound yet (see tool-approval)",
        "lm-retry": "not bound: the binding drives ADK's BaseLlm interface; retries live in the model "
                    "classes' clients (Gemini's google-genai HttpRetryOptions), beneath it",
        "http": "not bound: ADK's HTTP model classes speak Gemini's API (google_llm.py Gemini) or need "
                "litellm (lite_llm.py), which google-adk does not install",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN

    @property
    def version(self) -> str:
        return version("google-adk")

    def plugins(self) -> list[Any]:
        """The runner's plugins in this configuration (none: the defaults)."""
        return []

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return translate.built(lambda: _Agent(InMemoryRunner(agent=LlmAgent(
            name="agent", model=_Scripted(has_tools=bool(tools)),
            instruction=spec.signature.instructions or "",
            tools=[translate.documented_function(t) for t in tools]), app_name=_APP,
            plugins=self.plugins()), spec))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        seen: list[AdkEvent] = []
        with translate.serving(model):
            return translate.reported(
                model, call.mode, partial(_outcome, agent, seen), partial(_failed, agent, seen, call),
                sync=lambda: _sync(agent, call, seen),
                asynchronous=lambda: _play(agent, call, seen, model, None),
                stream=lambda events: _play(agent, call, seen, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        seen: list[AdkEvent] = []
        with translate.serving(model):
            return await translate.areported(
                _play(agent, call, seen, model, None), partial(_outcome, agent, seen),
                partial(_failed, agent, seen, call))

    def mutate_last_result(self, agent: object, marker: str) -> None:
        assert isinstance(agent, _Agent)
        for event in agent.last:
            for part in (event.content.parts or []) if event.content else []:
                if part.function_response is not None:
                    part.function_response.response = {"result": marker}
        agent.last.append(AdkEvent(author="user", content=types.Content(role="user", parts=[
            types.Part(text=marker)])))


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


def _arguments(agent: _Agent, call: CallRequest, session: str) -> dict[str, Any]:
    text = types.Part(text=render.user_message(call.inputs))
    return {"user_id": _USER, "session_id": session, "new_message": types.Content(role="user", parts=[text]),
            "run_config": RunConfig(max_llm_calls=translate.step_cap(agent.spec, call))}


def _session(agent: _Agent) -> str:
    return str(agent.runner.session_service.create_session_sync(app_name=_APP, user_id=_USER).id)


def _sync(agent: _Agent, call: CallRequest, seen: list[AdkEvent]) -> None:
    """`Runner.run`: its events into `seen` as they arrive."""
    for event in agent.runner.run(**_arguments(agent, call, _session(agent))):
        seen.append(event)


async def _play(agent: _Agent, call: CallRequest, seen: list[AdkEvent], model: ScriptedModel,
                events: list[Event] | None) -> None:
    """`Runner.run_async`: its events into `seen`; when streaming, a step event per function response."""
    session = await agent.runner.session_service.create_session(app_name=_APP, user_id=_USER)
    async for event in agent.runner.run_async(**_arguments(agent, call, session.id)):
        seen.append(event)
        if events is not None and event.get_function_responses():
            translate.step_events(model, events, _trajectory(seen))


def _trajectory(events: Sequence[AdkEvent]) -> list[Step]:
    """One Step per function call, its thought the text beside it, its observation the response to
    its call id."""
    calls: list[translate.NativeCall] = []
    results: dict[str, Any] = {}
    for event in events:
        parts = (event.content.parts or []) if event.content else []
        thought = "".join(p.text or "" for p in parts) or None
        calls += [(c.id, thought, c.name or "", c.args) for c in event.get_function_calls()]
        results.update({r.id or "": r.response for r in event.get_function_responses()})
    return translate.steps(calls, results)


def _model_calls(events: Sequence[AdkEvent]) -> int:
    """The model responses among the events: a response with content, or one that carries the
    model's finish reason (a malformed call's, which has none); not the event a failure leaves."""
    return sum(1 for e in events if not e.partial and (e.finish_reason is not None or (
        e.content is not None and e.content.role == "model")))


def _outcome(agent: _Agent, seen: list[AdkEvent], result: None) -> Outcome:
    agent.last = seen
    final = next((e for e in reversed(seen) if e.is_final_response() and e.content), None)
    reply = "".join(p.text or "" for p in final.content.parts or []) if final and final.content else None
    return translate.finished(agent.spec.signature, reply, _trajectory(seen), _model_calls(seen))


def _failed(agent: _Agent, seen: list[AdkEvent], call: CallRequest, exc: Exception) -> Outcome:
    """An exception the run let escape, with the events it yielded before (the session's)."""
    agent.last = seen
    trajectory, calls = _trajectory(seen), _model_calls(seen)
    if not isinstance(exc, LlmCallsLimitExceededError):
        return Outcome(error=ErrorInfo.from_exception(exc), trajectory=trajectory, iterations=calls)
    own = {t.name for t in agent.spec.tools}
    done = [s for s in trajectory if s.observation is not None and s.tool_name in own]
    return Outcome(trajectory=trajectory, iterations=calls, stop_reason="max_steps",
                   error=translate.max_iterations(
                       exc, iterations=calls, max_iterations=translate.step_cap(agent.spec, call),
                       tools_used=[s.tool_name for s in done],
                       history=[s.model_dump() for s in trajectory],
                       last_observation=done[-1].observation if done else None))
