"""The binding for AutoGen's `AssistantAgent` (autogen-agentchat 0.7, `autogen_agentchat.agents`).

Seam: autogen-ext's own `OpenAIChatCompletionClient`, whose config passes `http_client` on to its
`openai.AsyncOpenAI`: an httpx client over an in-memory transport that answers from the script
(`translate.serving`: a contextvar, so one agent serves concurrent runs); in the `http` profile a
client at `CallRequest.base_url`. So the client's request building, its tool-call parsing (the text
beside tool calls becomes the result's `thought`) and openai's retries (2, with backoff) run as in
a user's run. `model_info` declares function calling for the scripted model name, as autogen-ext
asks of any model it does not know. Tools are plain functions, which the agent wraps in
`FunctionTool` (its schema and pydantic validation of the args), their parameters `Annotated` with
their descriptions.

Loop: `max_tool_iterations=N` (default 1) is the step cap (agents/_assistant_agent.py
`_process_model_result`): each iteration runs one reply's tool calls at once (`asyncio.gather`) and
asks the model again, until a reply calls no tool (the final answer, a `TextMessage`). After N
iterations that all called tools the run returns a `ToolCallSummaryMessage` of the last results
(`max-steps-return`), or, with `reflect_on_tool_use=True` (`on_max_steps="extract"`), the model's
reply to one more request without tools (`max-steps-extract`). The cap is a constructor argument
only: `run` takes none. Each tool result is a `FunctionExecutionResult` with its `call_id` and its
own `is_error` flag.

Forms: `run` (async; AutoGen has no sync form, its docs run it with `asyncio.run`, as the sync form
does here) and `run_stream`, a step event for each `ToolCallExecutionEvent`. The agent keeps its
conversation (`model_context`) across runs, as documented: a later run of the same agent continues
it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

import httpx
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import TaskResult
from autogen_agentchat.messages import (
    ThoughtEvent,
    ToolCallExecutionEvent,
    ToolCallRequestEvent,
    ToolCallSummaryMessage,
)
from autogen_ext.models.openai import OpenAIChatCompletionClient

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, Outcome, Step
from conformance.render import user_message

#: What autogen-ext asks to know of a model it has no entry for (models/openai/_model_info.py).
_MODEL_INFO = {"vision": False, "function_calling": True, "json_output": False, "family": "unknown",
               "structured_output": False}
_ARGS5 = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
_HANG = ("_execute_tool_call (agents/_assistant_agent.py) catches only JSONDecodeError from json.loads of "
         "the args: the RecursionError ends the _execute_tool_calls task before it queues its end marker, "
         "and _process_model_result waits on stream.get() for ever: the run hangs")
_KNOWN: dict[str, str] = {
    **{f"{_ARGS5}[store-{row}]": _HANG for row in (
        "an object nested 100000 levels deep", "an object nested 5000 levels deep",
        "an object nested 5000 levels deep after an escaped quote",
        "arrays nested 5000 levels deep inside its object",
        "arrays nested 5000 levels deep, each beside an empty one")},
    "An argument the schema does not declare is refused, naming it, not dropped":
        "FunctionTool validates the args with a pydantic model built by create_model "
        "(autogen_core/_function_utils.py args_base_model_from_signature), which ignores undeclared "
        "fields: 'memo' is dropped and the tool runs (tools/_base.py BaseTool.run_json)",
    "Mutating a returned trajectory changes neither the agent nor its next run":
        "_process_model_result (agents/_assistant_agent.py) puts the same FunctionExecutionResult objects "
        "in the ToolCallExecutionEvent the caller gets and in the agent's model_context: a caller's "
        "change to a returned result is sent to the model in the next run",
}


@dataclass
class _Agent:
    """A built `AssistantAgent`, its spec, and the messages its last call handed out."""

    agent: AssistantAgent
    spec: AgentSpec
    tools: Sequence[SuiteTool]
    last: list[Any] = field(default_factory=list)


class AutoGenBinding(Binding):
    """Runs the suite against AutoGen's `AssistantAgent`, with its defaults."""

    name = "autogen"
    dependencies = ("autogen-agentchat", "autogen-core", "autogen-ext", "openai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-return", "max-steps-extract", "async", "streaming",
                              "parallel-tool-calls", "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: AssistantAgent takes a system message, a task and "
                     "tools, no signature",
        "adapters": "no pluggable prompt format: each model client writes its provider's request",
        "max-steps-error": "on max_tool_iterations the run returns a ToolCallSummaryMessage, or a "
                           "reflection with reflect_on_tool_use (_assistant_agent.py "
                           "_process_model_result): it never raises",
        "cap-summary": "on the cap the ToolCallSummaryMessage is the last iteration's tool results, "
                       "formatted by tool_call_summary_format: no account of the tools tried before",
        "per-call-cap": "max_tool_iterations is a constructor argument; run and run_stream take no cap",
        "repeated-error-stop": "a failing tool's FunctionExecutionResult (is_error=True) goes back to the "
                               "model each time: no count of repeated failures, no stop",
        "ask-user": "no built-in tool for asking the person: a person takes part as a UserProxyAgent "
                    "in a team",
        "tool-approval": "no approval option on a tool: every call the model makes runs "
                         "(_assistant_agent.py _execute_tool_call)",
        "approval-edit": "no approval (see tool-approval), so no edit of a pending call",
        "durable-approvals": "no approval (see tool-approval), so no pause to serialise",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: max_steps when TaskResult.messages hold max_tool_iterations "
                       "ToolCallRequestEvents and the run returned (a ToolCallSummaryMessage, or the "
                       "reflection under reflect_on_tool_use; _assistant_agent.py _process_model_result)",
        "iterations": "derived: the ToolCallRequestEvents of TaskResult.messages, plus the final reply",
        "max_iterations": "none: no cap error: on max_tool_iterations the run returns, never raises "
                          "(_assistant_agent.py _process_model_result)",
        "partial_run": "none: no cap error to carry it: on max_tool_iterations the run returns its "
                       "TaskResult with every message",
        "concurrency": "per-run: AssistantAgent's docstring (agents/_assistant_agent.py): 'The "
                       "assistant agent is not thread-safe or coroutine-safe. It should not be shared "
                       "between multiple tasks or coroutines'",
    }

    @property
    def version(self) -> str:
        return version("autogen-agentchat")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return translate.built(lambda: _Agent(_assistant(spec, tools, None), spec, tools))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        target, task = _target(agent, call), user_message(call.inputs)
        with translate.serving(model):
            return translate.reported(
                model, call.mode, partial(_outcome, agent), partial(_failed, agent),
                sync=lambda: target.run(task=task), asynchronous=lambda: target.run(task=task),
                stream=lambda events: _stream(target, task, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        with translate.serving(model):
            return await translate.areported(_target(agent, call).run(task=user_message(call.inputs)),
                                             partial(_outcome, agent), partial(_failed, agent))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            if isinstance(message, ToolCallExecutionEvent):
                for result in message.content:
                    result.content = marker
        agent.last.append(marker)
        return [f"result.messages ({held} messages)"] if held else []

def _assistant(spec: AgentSpec, tools: Sequence[SuiteTool], base_url: str | None) -> AssistantAgent:
    """The agent with its defaults, its cap the spec's, reflecting on the cap only when asked to."""
    instructions = spec.signature.instructions
    options: dict[str, Any] = {"system_message": instructions} if instructions else {}
    if spec.on_max_steps == "extract":
        options["reflect_on_tool_use"] = True
    return AssistantAgent("agent", model_client=_client(base_url, bool(tools)),
                          tools=[translate.annotated_function(t) for t in tools],
                          max_tool_iterations=spec.max_steps, **options)


def _client(base_url: str | None, has_tools: bool) -> OpenAIChatCompletionClient:
    """autogen-ext's OpenAI client: at `base_url`, or over the in-memory transport."""
    http = None if base_url is not None else httpx.AsyncClient(
        transport=server.ServingTransport(server.native_call_for(has_tools)))
    return OpenAIChatCompletionClient(model="scripted", base_url=base_url or server.IN_MEMORY_URL,
                                      api_key=server.API_KEY, http_client=http, model_info=_MODEL_INFO)


def _target(agent: _Agent, call: CallRequest) -> AssistantAgent:
    """The agent to run: the built one, or (http) one like it whose client is at the call's endpoint."""
    return agent.agent if call.base_url is None else _assistant(agent.spec, agent.tools, call.base_url)


async def _stream(target: AssistantAgent, task: str, model: ScriptedModel, events: list[Event]) -> TaskResult:
    """`run_stream`: a step event for each batch of tool results; the TaskResult it ends with."""
    seen: list[Any] = []
    async for item in target.run_stream(task=task):
        if isinstance(item, TaskResult):
            return item
        seen.append(item)
        if isinstance(item, ToolCallExecutionEvent):
            translate.step_events(model, events, _trajectory(seen))
    raise RuntimeError("run_stream ended without a TaskResult")


def _trajectory(messages: Sequence[Any]) -> list[Step]:
    """One Step per function call, its thought the ThoughtEvent before it, its observation the result
    answering its call id, with the result's own is_error flag."""
    calls: list[translate.NativeCall] = []
    results: dict[str, Any] = {}
    errors: dict[str, bool] = {}
    thought = None
    for message in messages:
        if isinstance(message, ThoughtEvent):
            thought = message.content
        elif isinstance(message, ToolCallRequestEvent):
            calls += [(c.id, thought, c.name, c.arguments) for c in message.content]
            thought = None
        elif isinstance(message, ToolCallExecutionEvent):
            results.update({r.call_id: r.content for r in message.content})
            errors.update({r.call_id: r.is_error for r in message.content})
    return translate.steps(calls, results, errors)


def _outcome(agent: _Agent, result: TaskResult) -> Outcome:
    """A run that returned: capped iff max_tool_iterations replies all called tools."""
    messages = list(result.messages)
    agent.last = messages
    rounds = sum(isinstance(m, ToolCallRequestEvent) for m in messages)
    trajectory, last = _trajectory(messages), messages[-1]
    if rounds >= agent.spec.max_steps:
        if isinstance(last, ToolCallSummaryMessage):
            return Outcome(trajectory=trajectory, iterations=rounds, stop_reason="max_steps")
        return translate.finished(agent.spec.signature, last.content, trajectory, rounds, "max_steps")
    return translate.finished(agent.spec.signature, last.content, trajectory, rounds + 1)


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    """An exception the run let escape: it carries no messages."""
    agent.last = []
    return Outcome(error=ErrorInfo.from_exception(exc))
