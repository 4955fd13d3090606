"""The binding for LlamaIndex's `FunctionAgent` (llama-index-core 0.14, `llama_index.core.agent.workflow`).

Seam: llama-index-core's own test double, `MockFunctionCallingLLM` (llama_index/core/llms/mock.py), a
`FunctionCallingLLM` whose `response_generator` answers each request; here it reads the request's
messages and tools (their declarations from the library's own `ToolMetadata.to_openai_tool`), logs
them as one `LMCall` and answers with an assistant `ChatMessage`: the thought as a `TextBlock` and one
`ToolCallBlock` per call, its `tool_kwargs` the JSON text the model wrote (verbatim when malformed).
The library then parses the args itself (the mock's `get_tool_calls_from_response`, which does what
llama-index-llms-openai's does: `parse_partial_json`, `{}` on failure), builds `ToolSelection`s and
runs the tools. The OpenAI LLM class (llama-index-llms-openai) would add a real client, but it needs
openai<3 and the other peers need openai 3, so it cannot be installed beside them. `translate.serving`
(a contextvar, which the workflow's step tasks inherit) gives each run its `ScriptedModel`, so one
agent serves concurrent runs. Tools are `FunctionTool.from_defaults` over the suite tool's function.

Step cap: `run(max_iterations=N)`, per call (the agent has no cap of its own, so the spec's cap is
passed on every run). `parse_agent_output` counts every model reply as an iteration and stops once
`num_iterations >= max_iterations`, before looking at the reply, so N steps are N model calls and
the N-th reply is never acted on (a final answer on it included). On the cap the default
(`early_stopping_method="force"`) raises `WorkflowRuntimeError("Max iterations of N reached! ...")`;
`"generate"` (`on_max_steps="extract"`) makes one tool-less call and returns its reply, reported as
stopped by the cap (only that branch returns once the count reaches the cap). The agent passes
`timeout=None` to its Workflow and leaves `num_concurrent_runs` unlimited: neither limits a run.

Forms: `agent.run(...)` returns a `WorkflowHandler` that must be awaited on an event loop; the sync
form is the documented `asyncio.run(...)` around it. The stream is `handler.stream_events()`: a step
event as each `ToolCallResult` arrives. Trajectory and step count are read from the run's context
(`handler.ctx.store`: its memory and the scratchpad of messages not yet moved into it, and
`num_iterations`), on every stop path. The cap's WorkflowRuntimeError carries only its message: its
fields are filled from that context, the documented `Context.store` the handler holds.
llama-index-core sends no telemetry; its tokenizer data ships
in the package (`_static/`), so nothing reaches the network.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

from llama_index.core.agent.workflow import AgentOutput, FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow.errors import WorkflowRuntimeError

from conformance import render, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, LMCall, Outcome, Step

_LAST = ("parse_agent_output (agent/workflow/base_agent.py) counts each model reply and stops once "
         "num_iterations >= max_iterations before reading it: the N-th reply is never acted on, a final "
         "answer included, so a cap of N runs N-1 tool steps")
_ZERO = ("a cap of 0 becomes the default 20 (base_agent.py _init_context: `max_iterations or "
         "DEFAULT_MAX_ITERATIONS`): the run makes model calls")
_ARGS4 = "test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value"
_KNOWN: dict[str, str] = {
    # The scenarios of other requirements that count steps up to a cap (the agent's or the call's,
    # synchronous, streamed or concurrent) or give a final answer on the cap's step are blocked by LOOP-3.
    "LOOP-3": _LAST,
    "A step cap of zero is refused at configuration, or raises before any model call": _ZERO,
    "A step cap of zero given to one call is refused, or raises before any model call": _ZERO,
    "EXT-2": "_generate_early_stopping_response asks over memory.aget(), which holds only the input: the "
             "run's steps are still in the scratchpad (FunctionAgent.finalize moves them there only at a "
             "final answer)",
    'test_malformed_json_tool_args_never_crash_the_run[{"amount": 50, "recipient": "Ann"]':
        "get_tool_calls_from_response (llms/mock.py, as llama-index-llms-openai's) parses args with "
        "llms/utils.py parse_partial_json, which completes a truncated object: the tool runs on the guess",
    "Malformed JSON tool args never reach a tool that takes no arguments":
        "get_tool_calls_from_response (llms/mock.py, as llama-index-llms-openai's) reads args it cannot "
        "parse as {}: llms/utils.py parse_partial_json completes '{' to {}, and its ValueError on '{,}' "
        "or text is caught into {}: the tool that takes no arguments runs",
    **dict.fromkeys(
        [f"{_ARGS4}[{case}]" for case in (
            '{"amount": "fifty", "recipient": "Ann"}-amount',
            '{"amount": 50, "recipient": ["Ann", "Bob"]}-recipient',
            '{"amount": "50", "recipient": "Ann"}-amount', '{"amount": 50.5, "recipient": "Ann"}-amount',
            '{"amount": null, "recipient": "Ann"}-amount')],
        "FunctionTool.acall (tools/function_tool.py) calls the function with the args as given, "
        "unvalidated: a wrong type reaches the tool (a missing or extra arg is the call's TypeError, "
        "returned as a ToolOutput with is_error=True)"),
    **dict.fromkeys(
        translate.ARGS5_DEEP,
        "RecursionError from parse_partial_json's json.loads (llms/utils.py) is not among the exceptions "
        "get_tool_calls_from_response catches: it escapes the run"),
}


@dataclass
class _Agent:
    """A built `FunctionAgent`, its spec, and the messages its last call handed out."""

    agent: FunctionAgent
    spec: AgentSpec
    last: list[Any] = field(default_factory=list)


@dataclass
class _Run:
    """What one run left in its context: its messages, its iteration count and its cap."""

    output: AgentOutput | None = None
    messages: list[ChatMessage] = field(default_factory=list)
    iterations: int = 0
    cap: int = 0
    #: ToolOutput.is_error of each tool call's result, by call id (from its ToolCallResult event)
    errors: dict[str, bool] = field(default_factory=dict)


class LlamaIndexBinding(Binding):
    """Runs the suite against llama-index-core's `FunctionAgent`, with its defaults."""

    name = "llama-index"
    dependencies = ("llama-index-core", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-error", "max-steps-extract", "per-call-cap", "async",
                              "streaming", "parallel-tool-calls"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: FunctionAgent takes a system prompt and tools",
        "adapters": "no pluggable format-and-parse layer: each LLM class owns its wire format "
                    "(llama_index/core/llms/function_calling.py, FunctionCallingLLM)",
        "cap-summary": "early_stopping_method='generate' makes one tool-less call whose text is the "
                       "answer (base_agent.py); nothing tells the user what was tried",
        "repeated-error-stop": "a failed tool's ToolOutput(is_error=True) goes back to the model every "
                               "time (base_agent.py call_tool): no count of repeated errors, no stop",
        "max-steps-return": "early_stopping_method offers 'force' (raise WorkflowRuntimeError) and "
                            "'generate' (one more model call); none returns flagged as capped "
                            "(base_agent.py)",
        "ask-user": "no built-in tool for asking the person: a user writes one that awaits "
                    "ctx.wait_for_event(HumanResponseEvent) (docs: Human in the loop)",
        "tool-approval": "no approval option on a tool: every chosen tool runs (base_agent.py "
                         "call_tool); a gate is tool code the user writes around ctx.wait_for_event",
        "approval-edit": "no approval to edit: every chosen tool runs (base_agent.py call_tool)",
        "durable-approvals": "no approval pause to serialise: every chosen tool runs (base_agent.py "
                             "call_tool)",
        "lm-retry": "llama-index-core's LLM base and FunctionAgent do not retry a model call; retries live "
                    "in provider packages (llama-index-llms-openai's client and retry decorator)",
        "http": "llama-index-core ships no HTTP model client; the OpenAI LLM class is the separate "
                "llama-index-llms-openai, which needs openai<3 and cannot be installed beside the peers",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: max_steps when the run raised WorkflowRuntimeError with the context's "
                       "num_iterations at its max_iterations (base_agent.py parse_agent_output), or "
                       "returned there under early_stopping_method='generate'",
        "iterations": "library: the context store's num_iterations (base_agent.py parse_agent_output)",
        "max_iterations": "library: the context store's max_iterations (base_agent.py _init_context)",
        "partial_run": "derived: the run's messages read through the handler's documented Context "
                       "store (handler.ctx.store): its memory and the agent's scratchpad "
                       "(FunctionAgent.scratchpad_key); the cap's WorkflowRuntimeError carries only "
                       "its message (base_agent.py parse_agent_output)",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return version("llama-index-core")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        # "generate" is the documented extraction on the cap; the default ("force") raises.
        stopping = {"early_stopping_method": "generate"} if spec.on_max_steps == "extract" else {}
        return translate.built(lambda: _Agent(FunctionAgent(
            tools=[FunctionTool.from_defaults(translate.documented_function(t), name=t.name) for t in tools],
            llm=MockFunctionCallingLLM(response_generator=_respond),
            system_prompt=spec.signature.instructions or None, **stopping), spec))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        run = _Run()
        with translate.serving(model):
            return translate.reported(
                model, call.mode, partial(_outcome, agent), partial(_failed, agent, run),
                sync=lambda: _play(agent, run, call, model, None),
                asynchronous=lambda: _play(agent, run, call, model, None),
                stream=lambda events: _play(agent, run, call, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        run = _Run()
        with translate.serving(model):
            return await translate.areported(_play(agent, run, call, model, None),
                                             partial(_outcome, agent), partial(_failed, agent, run))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            for block in message.blocks:
                if isinstance(block, TextBlock):
                    block.text = marker
        agent.last.append(ChatMessage(role="assistant", content=marker))
        return [f"the run's chat history ({held} messages)"] if held else []

async def _play(agent: _Agent, run: _Run, call: CallRequest, model: ScriptedModel,
                events: list[Event] | None) -> _Run:
    """`agent.run(...)` awaited (its events read first when streaming); what its context holds then
    goes into `run`, whether it returned or raised."""
    handler = agent.agent.run(user_msg=render.user_message(call.inputs),
                              max_iterations=translate.step_cap(agent.spec, call))
    try:
        # The events are read in every mode: a ToolCallResult is where ToolOutput.is_error lives
        # (the tool message kept in memory drops it).
        replies: list[ChatMessage] = []
        results: dict[str, Any] = {}
        async for event in handler.stream_events():
            if isinstance(event, AgentOutput):
                replies.append(event.response)
            elif isinstance(event, ToolCallResult):
                results[event.tool_id] = event.tool_output.content
                run.errors[event.tool_id] = event.tool_output.is_error
                if events is not None:
                    translate.step_events(model, events, translate.steps(_calls(replies), results,
                                                                         run.errors))
        run.output = await handler
    finally:
        store = handler.ctx.store
        memory = await store.get("memory", default=None)
        history = [] if memory is None else await memory.aget_all()
        run.messages = [*history, *await store.get(agent.agent.scratchpad_key, default=[])]
        run.iterations = await store.get("num_iterations", default=0)
        run.cap = await store.get("max_iterations", default=0)
    return run


def _outcome(agent: _Agent, run: _Run) -> Outcome:
    agent.last = run.messages
    assert run.output is not None
    stop = "max_steps" if run.iterations >= run.cap else "finish"
    return translate.finished(agent.spec.signature, run.output.response.content,
                              _trajectory(run.messages, run.errors), run.iterations, stop)


def _failed(agent: _Agent, run: _Run, exc: Exception) -> Outcome:
    """An exception the run let escape: WorkflowRuntimeError raised on the cap is its step-cap error,
    its fields read from the run's context (it carries only its message)."""
    agent.last = run.messages
    trajectory = _trajectory(run.messages, run.errors)
    if isinstance(exc, WorkflowRuntimeError) and run.cap > 0 and run.iterations >= run.cap:
        return translate.capped(exc, trajectory, run.iterations, run.cap,
                                (t.name for t in agent.spec.tools))
    return Outcome(error=ErrorInfo.from_exception(exc), trajectory=trajectory, iterations=run.iterations)


def _calls(messages: Sequence[ChatMessage]) -> list[translate.NativeCall]:
    """The tool calls of the assistant messages, in order, each with its message's text as thought."""
    return [(b.tool_call_id, m.content, b.tool_name, b.tool_kwargs) for m in messages
            if m.role == MessageRole.ASSISTANT for b in m.blocks if isinstance(b, ToolCallBlock)]


def _trajectory(messages: Sequence[ChatMessage], errors: Mapping[str, bool]) -> list[Step]:
    """One Step per tool call, its observation the tool message answering its call id, its error
    flag the ToolOutput.is_error of that call."""
    results = {str(m.additional_kwargs.get("tool_call_id")): m.content for m in messages
               if m.role == MessageRole.TOOL}
    return translate.steps(_calls(messages), results, errors)


def _respond(messages: Sequence[ChatMessage], **kwargs: Any) -> AsyncIterator[ChatMessage]:
    """The mock LLM's response generator: the request logged, the scripted turn as the reply.

    A step call carries the agent's tools; the early-stopping call ("generate") carries none."""
    model = translate.serving_model()
    tools = kwargs.get("tools")
    call = LMCall(kind="extract" if tools is None else "step", adapter="native",
                  messages=[_shown(m) for m in messages],
                  tools=None if tools is None else [t.metadata.to_openai_tool() for t in tools])

    async def reply() -> AsyncIterator[ChatMessage]:
        turn = await translate.aanswer(model, call)
        message = render.openai_message(turn, len(model.calls))
        blocks: list[Any] = [TextBlock(text=message["content"])] if message["content"] else []
        blocks += [ToolCallBlock(tool_call_id=c["id"], tool_name=c["function"]["name"],
                                 tool_kwargs=c["function"]["arguments"])  # verbatim: the library parses it
                   for c in message.get("tool_calls", [])]
        yield ChatMessage(role="assistant", blocks=blocks)

    return reply()


def _shown(message: ChatMessage) -> dict[str, Any]:
    """A message as the model is shown it, as text (tool calls included)."""
    calls = [(b.tool_name, b.tool_kwargs) for b in message.blocks if isinstance(b, ToolCallBlock)]
    return translate.shown(message.role.value, message.content, calls)
