"""The binding for Semantic Kernel's `ChatCompletionAgent` (semantic-kernel 1.45, `semantic_kernel.agents`).

Seam: Semantic Kernel's own `OpenAIChatCompletion` service, given (its documented `async_client`) an
`openai.AsyncOpenAI` over an in-memory transport that answers from the script (`translate.serving`:
a contextvar, so one agent serves concurrent runs); in the `http` profile a service whose client
points at `CallRequest.base_url`. So the service's request building, its tool-call parsing and the
client's retries (openai's default: 2, with backoff) run as in a user's run. Tools are a plugin:
an object whose functions carry `@kernel_function` (name, description), their parameters
`Annotated` with their descriptions, passed as `plugins=[...]`. The service declares each as
`<plugin>-<function>` (`tools-add`); the log records the function's own name, and the script's
tool names are sent bare, which `Kernel.get_function` also resolves (it looks a bare function
name up in every plugin: functions/kernel_function_extension.py).

Loop: `ChatCompletionAgent` defaults to `FunctionChoiceBehavior.Auto()`, whose auto-invoke loop
(connectors/ai/chat_completion_client_base.py `get_chat_message_contents`) makes up to
`maximum_auto_invoke_attempts` (default 5) requests, runs each reply's function calls at once
(`asyncio.gather`), and returns the first reply that calls none. After that many requests that all
called functions it makes one more request with function calling switched off and returns its
reply: the step cap is `maximum_auto_invoke_attempts=N` (`max-steps-extract`), that last request
is the extraction, and a run that went through it is reported as stopped by the cap (the loop's
`for ... else`). A call's own cap is the same behaviour in the call's
`KernelArguments(settings=...)`, which take precedence over the agent's.

Forms: `get_response` (async; Semantic Kernel has no sync form, its samples run it with
`asyncio.run`, as the sync form does here) and `invoke_stream`, whose `on_intermediate_message`
hands over each function-call and function-result message as the loop adds it: a step event per
result. The trajectory is read from the run's `ChatHistoryAgentThread`, to which the agent copies
the loop's messages once the service returns (so a run that raised leaves none there). Each step
carries its call id; a `FunctionResultContent` has no error flag, so `is_error` stays unknown.

Approval (`approval_form = "callback"`): an auto-function-invocation filter on the agent's kernel,
added only when a tool must not run before a person approves it, asks the running call's
`ScriptedModel.approve` for those tools: it invokes the function (`next`), on the person's args for
an edit, or sets the function's result to the person's answer, which the loop sends to the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar, Literal

import httpx
import openai
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
from semantic_kernel.connectors.ai import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
from semantic_kernel.contents import ChatMessageContent, FunctionCallContent, FunctionResultContent
from semantic_kernel.filters import AutoFunctionInvocationContext, FilterTypes
from semantic_kernel.functions import FunctionResult, KernelArguments, kernel_function

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, LMCall, Outcome, Step
from conformance.render import json_value, user_message

_PLUGIN = "tools"
_ARGS4 = "test_tool_args_that_break_the_tools_schema_never_reach_it_with_a_wrong_or_missing_value"
_ARGS5 = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
_CAST = ("KernelFunctionFromMethod._parse_parameter (functions/kernel_function_from_method.py) converts a "
         "value by calling the declared type on it: ")
_DEEP = ("FunctionCallContent.parse_arguments (contents/function_call_content.py) json.loads the args; its "
         "RecursionError is not among what Kernel.invoke_function_call (kernel.py) catches "
         "(FunctionCallInvalidArgumentsException, TypeError): it escapes get_response")
_KNOWN: dict[str, str] = {
    f'{_ARGS4}[{{"amount": 50, "recipient": ["Ann", "Bob"]}}-recipient]':
        _CAST + "str(['Ann', 'Bob']) reaches the tool as the text \"['Ann', 'Bob']\"",
    f'{_ARGS4}[{{"amount": 50.5, "recipient": "Ann"}}-amount]': _CAST + "int(50.5) reaches the tool as 50",
    **{f"{_ARGS5}[store-{row}]": _DEEP for row in (
        "an object nested 100000 levels deep", "an object nested 5000 levels deep",
        "an object nested 5000 levels deep after an escaped quote",
        "arrays nested 5000 levels deep inside its object",
        "arrays nested 5000 levels deep, each beside an empty one")},
    **dict.fromkeys(["Each step prompt shows the trajectory so far",
                     "The last step call of a long run shows the whole trajectory"],
                    "ChatMessageContent.to_dict (contents/chat_message_content.py) writes an assistant "
                    "message that calls functions as its tool_calls only: the text the model wrote beside "
                    "them is never sent back"),
    "test_malformed_json_tool_args_never_crash_the_run[{'amount': 50, 'recipient': 'Ann'}]":
        "FunctionCallContent.parse_arguments (contents/function_call_content.py) repairs args that are "
        "not JSON by turning single quotes into double quotes, and the function runs on the guess",
}


@dataclass
class _Agent:
    """A built `ChatCompletionAgent`, its spec, and the messages its last call handed out."""

    agent: ChatCompletionAgent
    spec: AgentSpec
    last: list[ChatMessageContent] = field(default_factory=list)


class SemanticKernelBinding(Binding):
    """Runs the suite against Semantic Kernel's `ChatCompletionAgent`, with its defaults."""

    name = "semantic-kernel"
    dependencies = ("semantic-kernel", "openai", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-extract", "per-call-cap", "async", "streaming",
                              "parallel-tool-calls", "lm-retry", "http", "tool-approval", "approval-edit"})
    approval_form: ClassVar[Literal["pause", "callback"]] = "callback"
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: ChatCompletionAgent takes instructions, messages "
                     "and plugins, no signature",
        "adapters": "no pluggable prompt format: each connector writes its provider's request",
        "cap-summary": "on the cap the run returns the model's reply to its tool-less request "
                       "(chat_completion_client_base.py get_chat_message_contents): no account of the "
                       "tools tried",
        "repeated-error-stop": "each failing call is answered with 'An error occurred while invoking the "
                               "function ...' and the loop asks the model again (kernel.py "
                               "_inner_auto_function_invoke_handler): no count of repeated failures",
        "durable-approvals": "approval is a function-invocation filter called inside the run (kernel.py "
                             "invoke_function_call): there is no pause to serialise",
        "max-steps-error": "after maximum_auto_invoke_attempts the loop makes one request without "
                           "functions and returns its reply (chat_completion_client_base.py "
                           "get_chat_message_contents): it never raises",
        "max-steps-return": "on the cap the loop always makes its tool-less final request; nothing "
                            "returns the run as it stands, flagged as capped",
        "ask-user": "no built-in tool for asking the person a question",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: max_steps when the thread holds maximum_auto_invoke_attempts "
                       "function-calling replies: the loop's for-else then made its one request "
                       "without functions (connectors/ai/chat_completion_client_base.py "
                       "get_chat_message_contents); the agent flags no stop",
        "iterations": "derived: counted from the ChatHistoryAgentThread's messages, one per "
                      "function-calling reply, plus the final reply of a run the cap did not stop",
        "max_iterations": "none: on the cap the auto-invoke loop raises nothing; it makes one "
                          "request without functions and returns its reply",
        "partial_run": "none: on the cap the loop raises nothing; the run returns its thread",
        "concurrency": "shared",
    }

    @property
    def version(self) -> str:
        return version("semantic-kernel")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return translate.built(lambda: _Agent(_gated(ChatCompletionAgent(
            service=_service(None, bool(tools)), name="agent",
            instructions=spec.signature.instructions or None, plugins=[_plugin(tools)] if tools else None,
            function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=spec.max_steps),
        ), spec), spec))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        thread = ChatHistoryAgentThread()
        with translate.serving(model):
            return translate.reported(
                model, call.mode, partial(_outcome, agent, call), partial(_failed, agent),
                sync=lambda: _respond(agent, call, thread),
                asynchronous=lambda: _respond(agent, call, thread),
                stream=lambda events: _stream(agent, call, thread, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        thread = ChatHistoryAgentThread()
        with translate.serving(model):
            return await translate.areported(_respond(agent, call, thread), partial(_outcome, agent, call),
                                             partial(_failed, agent))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        assert isinstance(agent, _Agent)
        held = len(agent.last)
        for message in agent.last:
            for item in message.items:
                if isinstance(item, FunctionResultContent):
                    item.result = marker
        agent.last.append(ChatMessageContent(role="user", content=marker))
        return [f"the run's chat history ({held} messages)"] if held else []

def _plugin(tools: Sequence[SuiteTool]) -> object:
    """The tools as a plugin object: one `@kernel_function` per tool, its parameters `Annotated`
    with their descriptions (the form Semantic Kernel reads them in)."""
    return type(_PLUGIN, (), {t.name: staticmethod(kernel_function(
        translate.annotated_function(t), name=t.name, description=t.spec.description)) for t in tools})()


def _gated(agent: ChatCompletionAgent, spec: AgentSpec) -> ChatCompletionAgent:
    """The agent with Semantic Kernel's documented approval gate, a filter around each function the
    model calls ("Task automation with agents" asks the user's consent in a function-invocation
    filter; the auto-function-invocation filter used here is that gate for the model's calls, its
    context holding the call id), on its kernel when a tool must not run before a person approves
    it: the filter asks the running call's
    `ScriptedModel.approve`; an approval invokes the function, an edit invokes it on the person's
    args, anything else sets the function's result to the person's answer, which goes back to the
    model in its place (kernel.py invoke_function_call)."""
    gated = frozenset(t.name for t in spec.tools if t.interruptible)
    if not gated:
        return agent

    # Semantic Kernel passes the rest of the filter chain by the keyword `next` (filters/filter_types.py).
    async def ask_the_person(context: AutoFunctionInvocationContext,
                             next: Callable[[AutoFunctionInvocationContext], Awaitable[None]]) -> None:
        proceed = next
        name = context.function.name
        if name not in gated:
            await proceed(context)
            return
        call = context.function_call_content
        answer = translate.approval(translate.serving_model().approve(
            name, json_value(dict(context.arguments or {})), call.id if call is not None else None))
        if answer.decision == "edit" and answer.name not in (None, name):
            # The filter's context holds one function: the person is told it cannot run another.
            raise ValueError(f"a function-invocation filter can change the arguments of {name}; it "
                             f"cannot make the call run another function ({answer.name!r})")
        if answer.decision == "edit":
            context.arguments = KernelArguments(**(answer.args if isinstance(answer.args, dict) else {}))
        if answer.decision in ("approve", "edit"):
            await proceed(context)
            return
        # The wording of the consent filter in Semantic Kernel's "Task automation with agents".
        declined = "The call was not approved by the user." if answer.decision == "reject" else answer.text
        context.function_result = FunctionResult(function=context.function.metadata, value=declined)

    agent.kernel.add_filter(FilterTypes.AUTO_FUNCTION_INVOCATION, ask_the_person)
    return agent


def _service(base_url: str | None, has_tools: bool) -> OpenAIChatCompletion:
    """The OpenAI chat-completion service: its client at `base_url`, or in memory. A request that
    offers no function is the extraction where the agent has some (the cap's final request)."""

    def call_for(body: dict[str, Any]) -> LMCall:
        tools = [{**t, "function": {**t["function"], "name": str(t["function"]["name"]).removeprefix(
            f"{_PLUGIN}-")}} for t in body.get("tools") or []]
        return server.native_call_for(has_tools)({**body, "tools": tools})

    if base_url is None:
        http = httpx.AsyncClient(transport=server.ServingTransport(call_for))
        client = openai.AsyncOpenAI(base_url=server.IN_MEMORY_URL, api_key=server.API_KEY, http_client=http)
    else:
        client = openai.AsyncOpenAI(base_url=base_url, api_key=server.API_KEY)
    return OpenAIChatCompletion(ai_model_id="scripted", async_client=client)


def _arguments(agent: _Agent, call: CallRequest) -> dict[str, Any]:
    """What the agent is invoked with: the user message, and the call's own cap, if any, as settings;
    in the `http` profile the service at the call's endpoint, in a kernel of the agent's plugins."""
    arguments: dict[str, Any] = {"messages": user_message(call.inputs)}
    if call.max_steps is not None:
        arguments["arguments"] = KernelArguments(settings=OpenAIChatPromptExecutionSettings(
            function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=call.max_steps)))
    if call.base_url is not None:
        kernel = agent.agent.kernel.clone()
        kernel.add_service(_service(call.base_url, bool(agent.spec.tools)), overwrite=True)
        arguments["kernel"] = kernel
    return arguments


async def _respond(agent: _Agent, call: CallRequest, thread: ChatHistoryAgentThread
                   ) -> tuple[str, list[ChatMessageContent]]:
    """`get_response`: the reply's text, and the messages the run left in its thread."""
    response = await agent.agent.get_response(thread=thread, **_arguments(agent, call))
    return str(response.message.content), [m async for m in thread.get_messages()]


async def _stream(agent: _Agent, call: CallRequest, thread: ChatHistoryAgentThread, model: ScriptedModel,
                  events: list[Event]) -> tuple[str, list[ChatMessageContent]]:
    """`invoke_stream`: a step event for each function result the loop adds; the reply's text."""
    seen: list[ChatMessageContent] = []

    async def intermediate(message: ChatMessageContent) -> None:
        seen.append(message)
        translate.step_events(model, events, _trajectory(seen))

    chunks = [str(item.message.content) async for item in agent.agent.invoke_stream(
        thread=thread, on_intermediate_message=intermediate, **_arguments(agent, call))]
    return "".join(chunks), [m async for m in thread.get_messages()]


def _trajectory(messages: Sequence[ChatMessageContent]) -> list[Step]:
    """One Step per function call, its thought its message's text, its observation the result
    filed under its call id."""
    results = {i.id or "": i.result for m in messages for i in m.items
               if isinstance(i, FunctionResultContent)}
    return translate.steps([(i.id, m.content, i.function_name, i.arguments) for m in messages
                            for i in m.items if isinstance(i, FunctionCallContent)], results)


def _outcome(agent: _Agent, call: CallRequest, result: tuple[str, list[ChatMessageContent]]) -> Outcome:
    """A run that returned: it went through the cap's tool-less request iff every one of its
    `maximum_auto_invoke_attempts` requests called functions."""
    reply, messages = result
    agent.last = messages
    rounds = sum(1 for m in messages if any(isinstance(i, FunctionCallContent) for i in m.items))
    capped = rounds >= translate.step_cap(agent.spec, call)
    return translate.finished(agent.spec.signature, reply, _trajectory(messages),
                              rounds if capped else rounds + 1, "max_steps" if capped else "finish")


def _failed(agent: _Agent, exc: Exception) -> Outcome:
    """An exception the agent let escape: the thread holds none of the run's messages then."""
    agent.last = []
    return Outcome(error=ErrorInfo.from_exception(exc))

