"""The bindings for LangChain 1.x `create_agent` (a LangGraph graph: model node, tools node,
middleware), with its defaults and with the opt-in `ToolErrorMiddleware` (`langchain+tool-errors`).

Seam: `_ScriptedChat`, a `BaseChatModel` subclass (the documented way to plug in a chat model); its
`bind_tools` keeps the tool declarations as OpenAI function dicts, and `translate.serving` (a
contextvar) gives each run its `ScriptedModel`, so one agent serves concurrent runs. A step turn
becomes an `AIMessage` exactly as langchain-openai's `_convert_dict_to_message` builds one: each call
through langchain-core's `parse_tool_call`, any exception it raises (malformed JSON, RecursionError)
making the call an `invalid_tool_call`, and the AIMessage validated as built (non-object args raise).
A step's error flag is its ToolMessage's `status == "error"`; its call id the tool call's id.

Step cap: LangGraph's recursion limit counts graph super-steps, not model calls. A step is one
super-step per node of the loop: the model node, one per `before_model`/`after_model` middleware
hook, and the tools node (k = 2, or 3 with `HumanInTheLoopMiddleware`); so N steps are
`recursion_limit = N * k`: the N-th model call still answers, the (N+1)-th step raises
`GraphRecursionError` (checked by a direct run: no off-by-one). It is set per `invoke`, so the
per-call cap (LOOP-4) is the library's own. `on_max_steps="return"` is the library's other cap,
`ModelCallLimitMiddleware(run_limit=N, exit_behavior="end")`, which ends the run with an AIMessage.

Checkpointer: every agent has langgraph's `InMemorySaver` (as the docs build one:
`create_agent(..., checkpointer=InMemorySaver())`), one per binding, which all the agents it builds
share as one application's agents share its checkpointer, and each run has a thread of its own
(`config={"configurable": {"thread_id": ...}}`), so no run sees another's messages. GraphRecursionError
carries only its message; the partial run is the thread's state, read through the documented
`graph.get_state(config)` (its messages up to the last super-step that completed).

Approval: `HumanInTheLoopMiddleware(interrupt_on={tool: True})` under that checkpointer; paused runs
are resumed with `Command(resume={interrupt id: {"decisions": [...]}})` on the graph of the agent
`resume` is given, in the paused run's thread.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolErrorMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.output_parsers.openai_tools import make_invalid_tool_call, parse_tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt.tool_node import TOOL_CALL_ERROR_TEMPLATE
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, create_model

from conformance import render, translate
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
)
from conformance.translate import PYTHON_TYPES

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_LIMIT_TEXT = "Model call limits exceeded"  # ModelCallLimitMiddleware's end-of-run AIMessage


_RAISES = ("a raising tool's exception escapes invoke: ToolNode's default handler re-raises all but "
           "argument errors (langgraph/prebuilt/tool_node.py, _default_handle_tool_errors)")
_ENDS = ("create_agent ignores an invalid_tool_call: no tool_calls routes to the end, so the run ends "
         "silently with the thought as its answer (langchain/agents/factory.py, "
         "_make_model_to_tools_edge)")
#: Known failures of every configuration (each checked by a direct run of create_agent).
_COMMON: dict[str, str] = {
    "Resuming keeps the budget the steps before the pause used":
        "a resume (Command(resume=...)) is a new invoke whose recursion limit counts afresh from the "
        "checkpoint (langgraph/pregel/_loop.py, SyncPregelLoop.__enter__: stop = step + "
        "recursion_limit + 1): the steps before the pause do not count",
    "A pause answered through another agent is refused":
        "a graph given Command(resume=...) in the thread of another graph on the same checkpointer "
        "loads that thread's checkpoint and resumes it (langgraph/pregel/_loop.py, PregelLoop._first: "
        "the checkpoint is found by thread_id alone, and nothing in it names the graph that paused): "
        "the paused call runs",
    **dict.fromkeys([
        f"test_tool_args_that_are_json_but_not_an_object_never_reach_the_tool[{case}]"
        for case in ('[50, "Ann"]', '"amount=50, recipient=Ann"', "50")],
        "parse_tool_call keeps non-object JSON and AIMessage rejects it (tool_calls.args must be "
        "a dict): ValidationError escapes the model call and the run, as it does from "
        "langchain-openai's _convert_dict_to_message (langchain_core/messages/ai.py); null becomes {}"),
    "ARGS-3": "args that are not JSON make parse_tool_call raise, and langchain-openai's "
              "_convert_dict_to_message keeps the call as an invalid_tool_call; " + _ENDS,
    **dict.fromkeys(translate.ARGS5_DEEP,
                    "args nested thousands deep make parse_tool_call's json.loads raise RecursionError, "
                    "and langchain-openai's _convert_dict_to_message keeps the call as an "
                    "invalid_tool_call; " + _ENDS),
}


class _ScriptedChat(BaseChatModel):  # type: ignore[misc]
    """A chat model answering from the running call's ScriptedModel."""

    declared: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.model_copy(update={"declared": [convert_to_openai_tool(t) for t in tools]})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        model = translate.serving_model()
        call = LMCall(kind="step", adapter="native", messages=[_shown(m) for m in messages],
                      tools=list(self.declared) or None)
        turn = translate.answer(model, call)  # lm-retry is not claimed: never a fault
        return ChatResult(generations=[ChatGeneration(message=_reply(turn, len(model.calls)))])

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: Any = None, **kwargs: Any) -> ChatResult:
        await asyncio.sleep(0)  # as a network call would: let concurrent runs interleave
        return self._generate(messages, stop, **kwargs)


def _reply(turn: Any, number: int) -> AIMessage:
    """A turn as the provider's AIMessage: tool calls through langchain-core's own parser."""
    message = render.openai_message(turn, number)
    raw = message.get("tool_calls", [])
    parsed, invalid = [], []
    for call in raw:
        try:  # any exception, as langchain-openai's _convert_dict_to_message catches
            parsed.append(parse_tool_call(call, return_id=True))
        except Exception as exc:
            invalid.append(make_invalid_tool_call(call, str(exc)))
    return AIMessage(content=message["content"], tool_calls=parsed, invalid_tool_calls=invalid,
                     additional_kwargs={"tool_calls": raw} if raw else {})


def _shown(message: BaseMessage) -> dict[str, Any]:
    """A message as the model is shown it, as text (tool calls included)."""
    text = message.text if isinstance(message.content, list) else str(message.content)
    calls = [(c["name"], c["args"]) for c in _calls(message)] if isinstance(message, AIMessage) else []
    return translate.shown(_ROLES.get(message.type, message.type), text, calls)


def _calls(message: AIMessage) -> list[Any]:
    """The tool calls an AIMessage made, valid or not (malformed args are `invalid_tool_calls`)."""
    return [*message.tool_calls, *message.invalid_tool_calls]


def _tool(tool: SuiteTool) -> StructuredTool:
    """The suite tool as a StructuredTool whose pydantic args schema is `spec.json_schema()`."""
    fields: dict[str, Any] = {
        p.name: (PYTHON_TYPES[p.type], Field(description=p.description)) for p in tool.spec.parameters
    }
    schema: type[BaseModel] = create_model(  # additionalProperties: false
        f"{tool.name}_args", __config__=ConfigDict(extra="forbid"), **fields)
    return StructuredTool.from_function(func=tool.as_function(), name=tool.name,
                                        description=tool.spec.description, args_schema=schema)


@dataclass
class _Agent:
    graph: Any
    spec: AgentSpec
    nodes_per_step: int
    last: list[BaseMessage] = field(default_factory=list)


#: interrupt id -> (thread id, the call's inputs, the interrupt's value), whichever agent paused: an
#: answer may reach another agent (HITL-6), and whether it refuses is the library's part.
_PAUSES: dict[str, tuple[str, dict[str, Any], Any]] = {}


class LangChainBinding(Binding):
    """Runs the suite against `langchain.agents.create_agent`, with its defaults."""

    name = "langchain"
    dependencies = ("langchain", "langchain-core", "langgraph")
    contract_version = 3
    capabilities = frozenset({"max-steps-error", "max-steps-return", "per-call-cap", "tool-approval",
                              "approval-edit", "durable-approvals", "async", "streaming",
                              "parallel-tool-calls"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: no signature, step predictor or adapters",
        "adapters": "no pluggable format-and-parse layer: the chat model integration owns the wire "
                    "format (langchain_core/language_models/chat_models.py, BaseChatModel)",
        "cap-summary": "ModelCallLimitMiddleware, the cap that returns, ends the run with a canned "
                       "'Model call limits exceeded: run limit (N/N)' naming no tool tried "
                       "(langchain/agents/middleware/model_call_limit.py, before_model)",
        "repeated-error-stop": "nothing counts repeated tool errors or stops on them: no middleware "
                               "of langchain.agents.middleware keeps an error history",
        "max-steps-extract": "no cap behaviour makes a final tool-less call: GraphRecursionError "
                             "or ModelCallLimitMiddleware's canned AIMessage",
        "ask-user": "no built-in ask-the-user tool (HumanInTheLoopMiddleware only gates tools)",
        "lm-retry": "create_agent has no model-client retry by default (ModelRetryMiddleware is an "
                    "opt-in; transport retries live in provider packages such as langchain-openai)",
        "http": "create_agent ships no HTTP client; the provider packages own it",
    }
    known_failures: ClassVar[Mapping[str, str]] = {"ERR-1": _RAISES, **_COMMON}
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: max_steps when the run raised GraphRecursionError on the recursion "
                       "limit the binding gave (langgraph/pregel/_loop.py, PregelLoop.tick)",
        "iterations": "derived: the AIMessages of the run's messages (the result's, or the thread's "
                      "state after GraphRecursionError)",
        "max_iterations": "derived: the step cap the binding gave as recursion_limit (N steps are "
                          "N * k super-steps, k the graph's nodes per step)",
        "partial_run": "derived: the thread's messages read through the documented "
                       "graph.get_state(config) of the agent's InMemorySaver; GraphRecursionError "
                       "carries only its message (langgraph/errors.py)",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return version("langchain")

    def _middleware(self) -> list[AgentMiddleware[Any, Any, Any]]:
        return []

    def __init__(self) -> None:
        #: The application's one checkpointer: every agent it builds keeps its paused runs here, each
        #: in a thread of its own (HITL-6 asks whether a graph refuses another graph's thread).
        self.checkpointer = InMemorySaver()

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        middleware = self._middleware()
        gated = {t.name: True for t in tools if t.spec.interruptible}
        if gated:
            middleware.append(HumanInTheLoopMiddleware(interrupt_on=gated))
        if spec.on_max_steps == "return":
            middleware.append(ModelCallLimitMiddleware(run_limit=spec.max_steps, exit_behavior="end"))
        hooks = sum(_overrides(m, "before_model") + _overrides(m, "after_model") for m in middleware)
        return translate.built(lambda: _Agent(create_agent(
            _ScriptedChat(), [_tool(t) for t in tools], system_prompt=spec.signature.instructions or None,
            middleware=middleware, checkpointer=self.checkpointer), spec, 2 + hooks))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        return _invoke(agent, _payload(call), call, uuid.uuid4().hex, model, call.mode)

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        thread = uuid.uuid4().hex
        config = _config(agent, call, thread)
        running = agent.graph.ainvoke(_payload(call), config)
        with translate.serving(model):
            return await translate.areported(running, partial(_finished, agent, call, thread),
                                             partial(_failed, agent, config))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        thread, inputs, value = _PAUSES[request.interrupt_id]
        decision = _decision(translate.approval(request.response))
        decisions = [decision for _ in value.get("action_requests", [])]
        command = Command(resume={request.interrupt_id: {"decisions": decisions}})
        return _invoke(agent, command, CallRequest(inputs=inputs), thread, model, request.mode)

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            message.content = marker
        agent.last.append(AIMessage(content=marker))
        return [f"result['messages'] ({held} messages)"] if held else []

def _invoke(agent: _Agent, payload: Any, call: CallRequest, thread: str, model: ScriptedModel,
            mode: str) -> Outcome:
    """The graph run on `payload` in thread `thread`: `invoke`, `ainvoke` on a new event loop, or
    `stream`, reported."""
    config = _config(agent, call, thread)
    with translate.serving(model):
        return translate.reported(model, mode, partial(_finished, agent, call, thread),
                                  partial(_failed, agent, config),
                                  sync=lambda: agent.graph.invoke(payload, config),
                                  asynchronous=lambda: agent.graph.ainvoke(payload, config),
                                  stream=lambda events: _stream(agent, payload, config, model, events))


def _failed(agent: _Agent, config: dict[str, Any], exc: Exception) -> Outcome:
    """An exception the graph let escape. GraphRecursionError, its step cap, carries only its
    message: the partial run is the thread's state, read through the documented `get_state`."""
    if not isinstance(exc, GraphRecursionError):
        return Outcome(error=ErrorInfo.from_exception(exc))
    messages: list[BaseMessage] = list(agent.graph.get_state(config).values.get("messages", []))
    agent.last = messages
    limit = config.get("recursion_limit")
    return translate.capped(exc, _trajectory(messages), sum(isinstance(m, AIMessage) for m in messages),
                            None if limit is None else limit // agent.nodes_per_step,
                            (t.name for t in agent.spec.tools))


def _payload(call: CallRequest) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": render.user_message(call.inputs)}]}


def _config(agent: _Agent, call: CallRequest, thread: str) -> dict[str, Any]:
    config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    if agent.spec.on_max_steps != "return" or call.max_steps is not None:
        config["recursion_limit"] = translate.step_cap(agent.spec, call) * agent.nodes_per_step
    return config


def _stream(agent: _Agent, payload: Any, config: dict[str, Any], model: ScriptedModel,
            events: list[Event]) -> Any:
    """`graph.stream`: a step event once a ToolMessage answers a call; the last values state."""
    state: Any = None
    seen: list[BaseMessage] = []
    for mode, chunk in agent.graph.stream(payload, config, stream_mode=["updates", "values"]):
        if mode == "values":
            state = chunk
            continue
        for update in chunk.values():
            seen += update.get("messages", []) if isinstance(update, dict) else []
        translate.step_events(model, events, _trajectory(seen))
    return state


def _overrides(middleware: AgentMiddleware[Any, Any, Any], hook: str) -> int:
    """1 if the middleware has its own `hook` (a graph node per step), else 0."""
    own = getattr(type(middleware), hook, None)
    return int(own is not None and own is not getattr(AgentMiddleware, hook, None))


def _decision(answer: translate.Approval) -> dict[str, Any]:
    """A person's answer as a HumanInTheLoopMiddleware decision."""
    if answer.decision == "edit":
        return {"type": "edit", "edited_action": {"name": answer.name, "args": answer.args}}
    if answer.decision == "message":
        return {"type": "reject", "message": answer.text}
    return {"type": answer.decision}


def _trajectory(messages: Sequence[BaseMessage]) -> list[Step]:
    """One Step per tool call the AIMessages made (valid or not), with its ToolMessage's content."""
    answers = [m for m in messages if isinstance(m, ToolMessage)]
    results = {m.tool_call_id: m.content for m in answers}
    errors = {m.tool_call_id: m.status == "error" for m in answers}
    return translate.steps([(c["id"], m.text, str(c["name"]), c["args"]) for m in messages
                            if isinstance(m, AIMessage) for c in _calls(m)], results, errors)


def _finished(agent: _Agent, call: CallRequest, thread: str, state: Any) -> Outcome:
    messages: list[BaseMessage] = list(state.get("messages", []))
    agent.last = messages
    trajectory = _trajectory(messages)
    answers = [m for m in messages if isinstance(m, AIMessage)]
    interrupts = state.get("__interrupt__") or []
    if interrupts:
        pause = _interrupt(interrupts[0], call, thread, answers, trajectory)
        return Outcome(trajectory=trajectory, error=pause)
    # The run's last reply, if it called no tool: the final answer, or the call limit's canned one.
    reply = answers[-1].text if answers and not answers[-1].tool_calls else None
    if reply is not None and reply.startswith(_LIMIT_TEXT):
        return Outcome(trajectory=trajectory, iterations=len(answers) - 1, stop_reason="max_steps",
                       fallback=reply)
    return translate.finished(agent.spec.signature, reply, trajectory, len(answers))


def _interrupt(interrupt: Any, call: CallRequest, thread: str, answers: list[AIMessage],
               trajectory: list[Step]) -> ErrorInfo:
    """HumanInTheLoopMiddleware's pause, kept by its id for the resume: its first action request,
    whose call id is that of the same call among the last reply's tool calls."""
    value = interrupt.value
    _PAUSES[interrupt.id] = (thread, dict(call.inputs), value)
    request = (value.get("action_requests") or [{}])[0]
    ids = [c["id"] for c in (answers[-1].tool_calls if answers else [])
           if c["name"] == request.get("name") and c["args"] == request.get("args")]
    return translate.interrupt(
        "Interrupt", str(request.get("description", "")), interrupt_id=interrupt.id,
        question=request.get("description"), tool=request.get("name"), args=request.get("args"),
        call_id=ids[0] if ids else None, trajectory=trajectory, iteration=len(answers), inputs=call.inputs)


def _tool_error(exc: Exception, request: Any) -> str:
    """The error text of langgraph's own `handle_tool_errors=True` (ToolNode's documented opt-in,
    which create_agent does not expose): the library's wording, not the suite's."""
    return str(TOOL_CALL_ERROR_TEMPLATE).format(error=repr(exc))


class LangChainToolErrorsBinding(LangChainBinding):
    """`create_agent` with `ToolErrorMiddleware`, the documented opt-in that returns a raising tool's
    exception to the model as an error ToolMessage (status="error") instead of ending the run; its
    handler writes what langgraph's own `handle_tool_errors=True` writes."""

    name = "langchain+tool-errors"
    known_failures: ClassVar[Mapping[str, str]] = _COMMON

    def _middleware(self) -> list[AgentMiddleware[Any, Any, Any]]:
        return [ToolErrorMiddleware(_tool_error)]
