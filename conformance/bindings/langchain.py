"""The binding for LangChain 1.x `create_agent` (a LangGraph graph: model node, tools node, middleware).

Seam: `_ScriptedChat`, a `BaseChatModel` subclass (the documented way to plug in any chat model).
`create_agent` binds it with `bind_tools` (a copy that keeps the tool declarations as OpenAI
function dicts); each run's `ScriptedModel` is found through a contextvar, so one built agent serves
concurrent runs. A step turn becomes an `AIMessage` parsed by langchain-core's own tool-call parser
(`parse_tool_call`, as the OpenAI integration does), so malformed arguments become
`invalid_tool_calls` exactly as they would from a provider.

Step cap. `create_agent` compiles its graph with `recursion_limit=9_999`: LangGraph counts graph
super-steps, not model calls. One step is one super-step per node of the loop: the model node, one
node per `before_model`/`after_model` middleware hook, and the tools node (2 without middleware, 3
with `HumanInTheLoopMiddleware`'s `after_model`). So a cap of N steps is `recursion_limit = N * k`
with k nodes per step: the N-th model call may still answer (super-step N*k - k + 1), the (N+1)-th
step's first node would be super-step N*k + 1 and raises `GraphRecursionError` (checked by a direct
run: N model calls, N tool runs, no off-by-one). It is set per `invoke` (`config`), so the per-call
cap (LOOP-4) is the library's own. `on_max_steps="return"` uses the library's other cap,
`ModelCallLimitMiddleware(run_limit=N, exit_behavior="end")`, which ends the run with an AIMessage
saying the limit was exceeded.

Approval: `HumanInTheLoopMiddleware(interrupt_on={tool: True})` plus an `InMemorySaver`; each run is
its own thread; an interrupt is resumed with `Command(resume={interrupt id: {"decisions": [...]}})`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, ClassVar

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolErrorMiddleware,
)
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.output_parsers.openai_tools import make_invalid_tool_call, parse_tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, create_model

from conformance import render
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    Event,
    FaultTurn,
    LMCall,
    Outcome,
    ResumeRequest,
    Step,
    StepTurn,
)

_MODEL: ContextVar[ScriptedModel | None] = ContextVar("langchain_scripted_model", default=None)
_TYPES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_LIMIT_TEXT = "Model call limits exceeded"  # ModelCallLimitMiddleware's end-of-run AIMessage


_RAISES = ("a raising tool's exception escapes invoke: ToolNode's default handler re-raises all but "
           "argument errors (langgraph/prebuilt/tool_node.py, _default_handle_tool_errors)")
_CAP = ("GraphRecursionError carries no fields (no count, history, tools used, last observation) and "
        "the run's messages are lost (langgraph/pregel/main.py, Pregel.stream)")
#: Known failures of every configuration (each checked by a direct run of create_agent).
_COMMON: dict[str, str] = {
    "Resuming keeps the budget the steps before the pause used":
        "a resume (Command(resume=...)) is a new invoke, whose recursion limit counts afresh from "
        "the checkpoint's step (langgraph/pregel/_loop.py, SyncPregelLoop.__enter__: stop = step + "
        "recursion_limit + 1): the steps before the pause do not count, so the model is called again",
    "EXH-2": _CAP,
    "EXH-3": _CAP + "; a cap of 0 steps is recursion_limit=0, refused with ValueError "
                    "(langgraph/pregel/main.py, Pregel._defaults)",
    "A run stopped by the step cap reports that the cap stopped it": _CAP,
    "After the step cap the steps appear in the order they ran, one observation each": _CAP,
    "EXH-5": "ModelCallLimitMiddleware ends the run with the canned AIMessage 'Model call limits "
             "exceeded: run limit (N/N)': no tools tried, no last error, and no extraction call "
             "(langchain/agents/middleware/model_call_limit.py, before_model)",
    **dict.fromkeys(
        [f"test_tool_args_that_are_json_but_not_an_object_never_reach_the_tool[{a}]"
         for a in ('[50, "Ann"]', '"amount=50, recipient=Ann"', "50")],  # null becomes {}: passes
        "parse_tool_call keeps non-object JSON and AIMessage rejects it (tool_calls.args must be a "
        "dict): ValidationError escapes the model call and the run (langchain_core/messages/ai.py)"),
    "ARGS-3": "malformed JSON becomes an invalid_tool_call that create_agent ignores: no tool_calls "
              "routes to the end, so the run ends silently with the thought as its answer "
              "(langchain/agents/factory.py, _make_model_to_tools_edge)",
    'test_tool_args_that_break_the_tools_schema_never_reach_it_and_the_error_names_the_field'
    '[{"amount": "50", "recipient": "Ann"}-amount]':
        "tool args are validated by pydantic in lax mode: '50' is coerced to 50 and the tool runs "
        "(langchain_core/tools/base.py, BaseTool._parse_input)",
    "ARGS-5": "no size or depth limit on tool args: megabytes reach the tool, and 100k-deep nesting "
              "raises RecursionError out of parse_tool_call's json.loads "
              "(langchain_core/output_parsers/openai_tools.py)",
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
        model = _MODEL.get()
        assert model is not None, "no scripted model installed for this run"
        call = LMCall(kind="step", adapter="native", messages=[_shown(m) for m in messages],
                      tools=list(self.declared) or None)
        turn = model.answer(call)
        if isinstance(turn, FaultTurn):  # never scripted: lm-retry is not claimed
            raise ConnectionError(f"scripted {turn.fault}")
        return ChatResult(generations=[ChatGeneration(message=_reply(turn, len(model.calls)))])

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: Any = None, **kwargs: Any) -> ChatResult:
        await asyncio.sleep(0)  # as a network call would: let concurrent runs interleave
        return self._generate(messages, stop, **kwargs)


def _reply(turn: Any, number: int) -> AIMessage:
    """A turn as the provider's AIMessage: tool calls through langchain-core's own parser."""
    if not isinstance(turn, StepTurn):
        return AIMessage(content=render.openai_message(turn, number)["content"])
    raw = render.openai_message(turn, number)["tool_calls"]
    parsed, invalid = [], []
    for call in raw:
        try:
            parsed.append(parse_tool_call(call, return_id=True))
        except OutputParserException as exc:
            invalid.append(make_invalid_tool_call(call, str(exc)))
    return AIMessage(content=turn.thought, tool_calls=parsed, invalid_tool_calls=invalid,
                     additional_kwargs={"tool_calls": raw})


def _shown(message: BaseMessage) -> dict[str, Any]:
    """A message as the model is shown it, as text (tool calls included)."""
    text = message.text if isinstance(message.content, list) else str(message.content)
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        calls = [{"name": c["name"], "args": c["args"]} for c in message.tool_calls]
        calls += [{"name": c["name"], "args": c["args"]} for c in message.invalid_tool_calls]
        text = f"{text}\n{json.dumps(calls)}"
    return {"role": _ROLES.get(message.type, message.type), "content": text}


def _tool(tool: SuiteTool) -> StructuredTool:
    """The suite tool as a StructuredTool whose pydantic args schema is `spec.json_schema()`."""
    fields: dict[str, Any] = {
        p.name: (_TYPES[p.type], Field(description=p.description)) for p in tool.spec.parameters
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
    #: interrupt id -> (thread id, the call's inputs, the interrupt's value)
    interrupts: dict[str, tuple[str, dict[str, Any], Any]] = field(default_factory=dict)


class LangChainBinding(Binding):
    """Runs the suite against `langchain.agents.create_agent`, with its defaults."""

    name = "langchain"
    contract_version = 2
    capabilities = frozenset({"max-steps-error", "max-steps-return", "tool-approval", "async",
                              "streaming", "parallel-tool-calls"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: no signature, step predictor or adapters",
        "max-steps-extract": "no cap behaviour makes a final tool-less call: GraphRecursionError "
                             "or ModelCallLimitMiddleware's canned AIMessage",
        "ask-user": "no built-in ask-the-user tool (HumanInTheLoopMiddleware only gates tools)",
        "lm-retry": "create_agent has no model-client retry by default (ModelRetryMiddleware is an "
                    "opt-in; transport retries live in provider packages such as langchain-openai)",
        "http": "create_agent ships no HTTP client; the provider packages own it",
    }
    known_failures: ClassVar[Mapping[str, str]] = {
        "ERR-1": _RAISES,
        "An async call shows a raising tool's error to the agent as a sync call does": _RAISES,
        "ERR-2": _RAISES + "; nothing counts repeated tool errors or keeps their history",
        "After repeated tool errors the steps appear in the order they ran, one observation each":
            _RAISES,
        **_COMMON,
        "An edit that names no tool never runs anything, and the agent sees an error":
            "an edit naming an unknown tool raises ValueError out of the resumed run "
            "(langchain/agents/middleware/human_in_the_loop.py, HumanInTheLoopMiddleware._apply_edit)",
    }

    @property
    def version(self) -> str:
        return version("langchain")

    def _middleware(self) -> list[AgentMiddleware[Any, Any, Any]]:
        return []

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        middleware = self._middleware()
        gated = {t.name: True for t in tools if t.spec.interruptible}
        if gated:
            middleware.append(HumanInTheLoopMiddleware(interrupt_on=gated))
        if spec.on_max_steps == "return":
            middleware.append(ModelCallLimitMiddleware(run_limit=spec.max_steps, exit_behavior="end"))
        hooks = sum(_overrides(m, "before_model") + _overrides(m, "after_model") for m in middleware)
        try:
            graph = create_agent(_ScriptedChat(), [_tool(t) for t in tools],
                                 system_prompt=spec.signature.instructions or None,
                                 middleware=middleware, checkpointer=InMemorySaver() if gated else None)
        except Exception as exc:
            return ErrorInfo.from_exception(exc)
        return _Agent(graph, spec, nodes_per_step=2 + hooks)

    def _config(self, agent: _Agent, call: CallRequest, thread: str) -> dict[str, Any]:
        config: dict[str, Any] = {"configurable": {"thread_id": thread}}
        if agent.spec.on_max_steps != "return" or call.max_steps is not None:
            cap = agent.spec.max_steps if call.max_steps is None else call.max_steps
            config["recursion_limit"] = cap * agent.nodes_per_step
        return config

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        if call.mode == "async":
            return asyncio.run(self.arun(agent, call, model))
        thread = uuid.uuid4().hex
        config = self._config(agent, call, thread)
        payload = {"messages": [{"role": "user", "content": render.user_message(call.inputs)}]}
        token = _MODEL.set(model)
        events: list[Event] = []
        try:
            if call.mode == "stream":
                state = self._stream(agent, payload, config, model, events)
            else:
                state = agent.graph.invoke(payload, config)
        except Exception as exc:
            return _failed(agent, exc, events if call.mode == "stream" else None)
        finally:
            _MODEL.reset(token)
        return _finished(agent, state, call, thread, events if call.mode == "stream" else None,
                         len(model.calls))

    def _stream(self, agent: _Agent, payload: Any, config: dict[str, Any], model: ScriptedModel,
                events: list[Event]) -> Any:
        state: Any = None
        pending: dict[str, tuple[str, Any, Any]] = {}  # tool call id -> (thought, name, args)
        for mode, chunk in agent.graph.stream(payload, config, stream_mode=["updates", "values"]):
            if mode == "values":
                state = chunk
                continue
            for update in chunk.values():
                for message in (update or {}).get("messages", []) if isinstance(update, dict) else []:
                    if isinstance(message, AIMessage):
                        pending.update({c["id"]: (message.text, c["name"], c["args"])
                                        for c in message.tool_calls if c["id"]})
                    elif isinstance(message, ToolMessage) and message.tool_call_id in pending:
                        thought, name, args = pending.pop(message.tool_call_id)
                        step = Step(thought=thought, tool_name=name, tool_args=render.json_value(args),
                                    observation=render.json_value(message.content))
                        events.append(Event(kind="step", model_calls=len(model.calls), step=step))
        return state

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        thread = uuid.uuid4().hex
        payload = {"messages": [{"role": "user", "content": render.user_message(call.inputs)}]}
        token = _MODEL.set(model)
        try:
            state = await agent.graph.ainvoke(payload, self._config(agent, call, thread))
        except Exception as exc:
            return _failed(agent, exc)
        finally:
            _MODEL.reset(token)
        return _finished(agent, state, call, thread)

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        thread, inputs, value = agent.interrupts[request.interrupt_id]
        decision = _decision(request.response)
        decisions = [decision for _ in value.get("action_requests", [])]
        command = Command(resume={request.interrupt_id: {"decisions": decisions}})
        config = self._config(agent, CallRequest(inputs=inputs), thread)
        token = _MODEL.set(model)
        try:
            if request.mode == "async":
                state = asyncio.run(agent.graph.ainvoke(command, config))
            else:
                state = agent.graph.invoke(command, config)
        except Exception as exc:
            return _failed(agent, exc)
        finally:
            _MODEL.reset(token)
        return _finished(agent, state, CallRequest(inputs=inputs), thread)

    def mutate_last_result(self, agent: object, marker: str) -> None:
        assert isinstance(agent, _Agent)
        for message in agent.last:
            message.content = marker
        agent.last.append(AIMessage(content=marker))


def _overrides(middleware: AgentMiddleware[Any, Any, Any], hook: str) -> int:
    """1 if the middleware has its own `hook` (a graph node per step), else 0."""
    own = getattr(type(middleware), hook, None)
    return int(own is not None and own is not getattr(AgentMiddleware, hook, None))


def _decision(response: str) -> dict[str, Any]:
    """A person's answer as a HumanInTheLoopMiddleware decision."""
    text = response.strip()
    if text.lower() in ("yes", "y"):
        return {"type": "approve"}
    if text.lower() in ("no", "n"):
        return {"type": "reject"}
    try:
        edit = json.loads(text).get("edit")
    except (ValueError, AttributeError):
        edit = None
    if isinstance(edit, dict):
        return {"type": "edit", "edited_action": {"name": edit.get("name"), "args": edit.get("args")}}
    return {"type": "reject", "message": response}


def _trajectory(messages: Sequence[BaseMessage]) -> list[Step]:
    """One Step per tool call the AIMessages made (valid or not), with its ToolMessage's content."""
    results = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    steps = []
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        for call in [*message.tool_calls, *message.invalid_tool_calls]:
            steps.append(Step(thought=message.text or None, tool_name=str(call["name"]),
                              tool_args=render.json_value(call["args"]),
                              observation=render.json_value(results.get(call["id"] or ""))))
    return steps


def _finished(agent: _Agent, state: Any, call: CallRequest, thread: str,
              events: list[Event] | None = None, calls: int = 0) -> Outcome:
    messages: list[BaseMessage] = list(state.get("messages", []))
    agent.last = messages
    trajectory = _trajectory(messages)
    interrupts = state.get("__interrupt__") or []
    if interrupts:
        return Outcome(trajectory=trajectory, error=_interrupt(agent, interrupts[0], messages, call, thread),
                       events=events)
    answers = [m for m in messages if isinstance(m, AIMessage)]
    last = answers[-1] if answers else None
    capped = last is not None and not last.tool_calls and last.text.startswith(_LIMIT_TEXT)
    final = last if last is not None and not last.tool_calls and not capped else None
    stop = "max_steps" if capped else "finish" if final is not None else None
    outputs = render.reply_outputs(agent.spec.signature, final.text) if final is not None else None
    if events is not None:
        events = [*events, Event(kind="done", model_calls=calls, stop_reason=stop, outputs=outputs)]
    return Outcome(
        outputs=outputs, trajectory=trajectory, stop_reason=stop, events=events,
        iterations=len(answers) - int(capped), fallback=last.text if capped and last else None,
    )


def _failed(agent: _Agent, exc: Exception, events: list[Event] | None = None) -> Outcome:
    if isinstance(exc, GraphRecursionError):
        # It carries no structured fields: no count, no history, no last observation.
        error = ErrorInfo(type=type(exc).__name__, message=str(exc), kind="max-iterations")
    else:
        error = ErrorInfo.from_exception(exc)
    return Outcome(error=error, events=events)


def _interrupt(agent: _Agent, interrupt: Any, messages: list[BaseMessage], call: CallRequest,
               thread: str) -> ErrorInfo:
    value = interrupt.value
    agent.interrupts[interrupt.id] = (thread, dict(call.inputs), value)
    request = (value.get("action_requests") or [{}])[0]
    asked = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    ids = [c["id"] for c in (asked.tool_calls if asked else [])
           if c["name"] == request.get("name") and c["args"] == request.get("args")]
    trajectory = _trajectory(messages)
    return ErrorInfo(
        type="Interrupt", message=str(request.get("description", "")), kind="human-in-the-loop",
        fields={
            "question": request.get("description"),
            "interrupt_id": interrupt.id,
            "tool_call": {"name": request.get("name"), "args": render.json_value(request.get("args")),
                          "call_id": ids[0] if ids else None},
            "context": {"trajectory": [s.model_dump(mode="json") for s in trajectory],
                        "iteration": sum(isinstance(m, AIMessage) for m in messages),
                        "input_args": render.json_value(call.inputs)},
        },
    )


_REPEATS = ("ToolErrorMiddleware returns every error to the model and never stops: no count of "
            "repeated errors, no error history (langchain/agents/middleware/tool_error.py)")


def _tool_error(exc: Exception, request: Any) -> str:
    return f"Error executing {request.tool_call['name']}: {type(exc).__name__}: {exc}"


class LangChainToolErrorsBinding(LangChainBinding):
    """`create_agent` with `ToolErrorMiddleware`, the documented opt-in that returns a raising tool's
    exception to the model as an error ToolMessage instead of ending the run."""

    name = "langchain+tool-errors"
    known_failures: ClassVar[Mapping[str, str]] = {
        **_COMMON,
        "Three similar failures in a row stop the retries with a suggestion": _REPEATS,
        "The error history keeps the last ten errors": _REPEATS,
        "After repeated tool errors the steps appear in the order they ran, one observation each":
            _REPEATS,
    }

    def _middleware(self) -> list[AgentMiddleware[Any, Any, Any]]:
        return [ToolErrorMiddleware(_tool_error)]
