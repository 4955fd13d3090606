"""The scripted episode, built once per implementation: N-1 steps of `add`, then the end of the run.

Each library is driven directly through its own model seam (never through a conformance binding,
whose translation would be timed too) by a scripted model that hands back replies rendered ahead
of time in the format that library's loop parses, so the model itself costs next to nothing. The
DSPy-style loops (reference, dspy, udspy, bare) end with a `finish` step, then one extraction call:
N+1 model calls. The native tool-calling loops (langchain, openai-agents, pydantic-ai, smolagents,
llama-index, haystack, agno, strands-agents, crewai) end the library's own way: a reply with no tool call
(smolagents: a call of its `final_answer` tool): N model calls. `Episode.check` runs one episode and
fails loudly unless the library did exactly that work, so the benchmark never times a run that went
wrong. "bare" is the floor: the loop itself, written inline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

#: The implementations, in the order the reports list them.
IMPLS = ("reference", "dspy", "udspy", "langchain", "openai-agents", "pydantic-ai", "smolagents",
         "llama-index", "haystack", "agno", "strands-agents", "semantic-kernel", "autogen", "google-adk",
         "crewai", "bare")
#: The implementations timed in an environment of their own (tests/peer_envs.py), as their
#: dependencies do not install beside the others' (strands-agents' openai extra pins openai < 3, and
#: crewai requires openai < 3 itself).
OWN_ENVS = ("agno", "strands-agents", "google-adk", "crewai")
QUESTION = "What is 1 + 2?"
ANSWER = "3"
THOUGHT = "I add the numbers."
ARGS = {"a": 1, "b": 2}


class Script:
    """The pre-rendered replies of one episode, and the count of tool calls, kept on our side."""

    def __init__(self) -> None:
        self.calls = 0
        self._replies: Iterator[Any] = iter(())

    def add(self, a: int, b: int) -> int:
        """Add two integers."""
        self.calls += 1
        return a + b

    def start(self, replies: list[Any]) -> None:
        """Begin an episode: these replies, in order, and no tool call yet."""
        self.calls = 0
        self._replies = iter(replies)

    def reply(self) -> Any:
        """The next reply; running out means the library asked the model more than the episode needs."""
        reply = next(self._replies, None)
        if reply is None:
            raise RuntimeError("the library asked the model more often than the episode needs")
        return reply

    def unused(self) -> int:
        """How many replies of this episode were never asked for (and drop them)."""
        return sum(1 for _ in self._replies)


class Episode:
    """`run(n)` plays the n-step episode once, with the replies `replies(n)` builds (once per n)."""

    def __init__(self, script: Script, play: Callable[[], Any], answer_of: Callable[[Any], Any],
                 replies: Callable[[int], list[Any]]) -> None:
        self.script = script
        self._play = play
        self._answer_of = answer_of
        self._replies = replies
        self._scripts: dict[int, list[Any]] = {}

    def run(self, n: int) -> Any:
        """Play the n-step episode once; what the library returned."""
        script = self._scripts.get(n)
        if script is None:
            script = self._scripts[n] = self._replies(n)
        self.script.start(script)
        return self._play()

    def check(self, n: int) -> None:
        """Run once; raise unless the tool ran n-1 times, every reply was used, and the answer is right."""
        answer = self._answer_of(self.run(n))
        calls, unused = self.script.calls, self.script.unused()
        if calls != n - 1 or unused or str(answer) != ANSWER:
            raise RuntimeError(f"the {n}-step episode went wrong: the tool ran {calls} times (expected "
                               f"{n - 1}), {unused} scripted replies were not asked for, and the answer was "
                               f"{answer!r} (expected {ANSWER!r})")


def build(impl: str, max_steps: int) -> Episode:
    """The episode for `impl`, its agent allowed `max_steps` steps; imports only that library."""
    builders: dict[str, Callable[[Script, int], Episode]] = {
        "reference": _reference, "dspy": _dspy, "udspy": _udspy, "langchain": _langchain,
        "openai-agents": _openai_agents, "pydantic-ai": _pydantic_ai, "smolagents": _smolagents,
        "llama-index": _llama_index, "haystack": _haystack, "agno": _agno, "strands-agents": _strands,
        "semantic-kernel": _semantic_kernel, "autogen": _autogen,
        "google-adk": _google_adk, "crewai": _crewai, "bare": _bare}
    if impl not in builders:
        raise ValueError(f"unknown implementation {impl!r}; choose from {', '.join(IMPLS)}")
    return builders[impl](Script(), max_steps)


def _chat(values: dict[str, Any]) -> str:
    """DSPy-style `[[ ## field ## ]]` sections; non-strings as JSON."""
    parts = [f"[[ ## {k} ## ]]\n{v if isinstance(v, str) else json.dumps(v)}" for k, v in values.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def _react(render: Callable[[dict[str, Any]], Any]) -> Callable[[int], list[Any]]:
    """A DSPy-style episode's replies: n-1 `add` steps, `finish`, then the extraction, each rendered once."""
    step = render({"next_thought": THOUGHT, "next_tool_name": "add", "next_tool_args": ARGS})
    finish = render({"next_thought": "I have it.", "next_tool_name": "finish", "next_tool_args": {}})
    extract = render({"reasoning": "The trajectory has it.", "answer": ANSWER})
    return lambda n: [*[step] * (n - 1), finish, extract]


def _reference(script: Script, max_steps: int) -> Episode:
    import reference

    class ScriptedLM:
        def complete(self, messages: list[dict[str, str]]) -> str:
            reply: str = script.reply()
            return reply

    lm = ScriptedLM()
    agent = reference.ReAct("question -> answer", [script.add], max_iters=max_steps)

    def run() -> Any:
        with reference.context(lm=lm):  # the reference has no process-wide model
            return agent(question=QUESTION)

    # The reference's extraction asks for the outputs only: no reasoning field.
    return Episode(script, run, lambda p: p.answer,
                   _react(lambda v: _chat({k: x for k, x in v.items() if k != "reasoning"})))


def _dspy(script: Script, max_steps: int) -> Episode:
    import dspy
    from dspy import lm15

    class Engine:
        def complete(self, request: Any) -> Any:
            return script.reply()

        def close(self) -> None:
            """Nothing to release."""

    def response(values: dict[str, Any]) -> Any:
        message = lm15.Message.assistant([lm15.TextPart(_chat(values))])
        return lm15.Response(id=None, model="scripted", message=message, finish_reason="stop",
                             usage=lm15.Usage(input_tokens=0, output_tokens=0, total_tokens=0))

    # cache=False: otherwise dspy answers a repeated prompt from its cache and the episode is free.
    dspy.configure(lm=dspy.LM("scripted/model", engine=Engine(), cache=False))
    agent = dspy.ReAct("question -> answer", tools=[script.add], max_iters=max_steps)
    return Episode(script, lambda: agent(question=QUESTION), lambda p: p.answer, _react(response))


def _udspy(script: Script, max_steps: int) -> Episode:
    import udspy
    from openai.types.chat import ChatCompletion
    from udspy.lm import BaseLM

    class ScriptedLM(BaseLM):  # type: ignore[misc]
        async def acomplete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
            return script.reply()

    def completion(values: dict[str, Any]) -> Any:
        # udspy's adapter asks for, and parses, one JSON object (adapter.py parse_outputs).
        return ChatCompletion.model_validate({
            "id": "scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(values)}}],
        })

    udspy.settings.configure(lm=ScriptedLM())
    agent = udspy.ReAct("question -> answer", [udspy.Tool(script.add)], max_iters=max_steps)
    return Episode(script, lambda: agent(question=QUESTION), lambda p: p["answer"], _react(completion))


def _native(step: Callable[[int], Any], final: Callable[[int], Any]) -> Callable[[int], list[Any]]:
    """A tool-calling episode's replies: n-1 `add` calls, then the final answer; each its own object
    (ids numbered by step), so that no library meets the same message twice in one run."""
    return lambda n: [*(step(i) for i in range(1, n)), final(n)]


def _langchain(script: Script, max_steps: int) -> Episode:
    """`create_agent` (a LangGraph graph), its model a `BaseChatModel` subclass that binds tools as the
    provider integrations do (`convert_to_openai_tool`, then `bind`) and answers with ready AIMessages."""
    from langchain.agents import create_agent
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class ScriptedChat(BaseChatModel):  # type: ignore[misc]
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                      run_manager: Any = None, **kwargs: Any) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=script.reply())])

    def step(i: int) -> AIMessage:
        return AIMessage(content=THOUGHT, id=f"reply-{i}",
                         tool_calls=[{"name": "add", "args": ARGS, "id": f"call-{i}", "type": "tool_call"}])

    agent = create_agent(ScriptedChat(), [script.add])
    # LangGraph counts super-steps: a model node and a tools node per step.
    config: Any = {"recursion_limit": 2 * max_steps}
    question = {"messages": [{"role": "user", "content": QUESTION}]}
    return Episode(script, lambda: agent.invoke(question, config), lambda state: state["messages"][-1].text,
                   _native(step, lambda n: AIMessage(content=ANSWER, id=f"reply-{n}")))


def _openai_agents(script: Script, max_steps: int) -> Episode:
    """`Runner.run_sync`, its model a subclass of the SDK's own `Model` interface that returns ready
    `ModelResponse`s: the Runner's loop, tool execution and items, without the chat-completions
    converter and HTTP client a provider adds."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class ScriptedModel(Model):  # type: ignore[misc]
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            return script.reply()

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the benchmark does not stream")

    def step(i: int) -> Any:
        call = ResponseFunctionToolCall(type="function_call", id=f"fc-{i}", call_id=f"call-{i}", name="add",
                                        arguments=json.dumps(ARGS), status="completed")
        return ModelResponse(output=[call], usage=Usage(requests=1), response_id=None)

    def final(n: int) -> Any:
        text = ResponseOutputText(type="output_text", text=ANSWER, annotations=[])
        message = ResponseOutputMessage(type="message", id=f"msg-{n}", role="assistant", status="completed",
                                        content=[text])
        return ModelResponse(output=[message], usage=Usage(requests=1), response_id=None)

    agent: Any = Agent(name="agent", tools=[function_tool(script.add)])
    config = RunConfig(model=ScriptedModel(), tracing_disabled=True)
    return Episode(script, lambda: Runner.run_sync(agent, QUESTION, max_turns=max_steps, run_config=config),
                   lambda result: result.final_output, _native(step, final))


def _pydantic_ai(script: Script, max_steps: int) -> Episode:
    """`Agent.run_sync` with pydantic-ai's own test double, `FunctionModel`, over an async function (a
    sync one would run in a thread pool) returning ready `ModelResponse`s. Each carries its usage, as
    a provider's does: without it, FunctionModel estimates usage by walking every message so far."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage, UsageLimits

    async def respond(messages: Any, info: Any) -> Any:
        return script.reply()

    def step(i: int) -> ModelResponse:
        return ModelResponse(parts=[TextPart(THOUGHT), ToolCallPart("add", json.dumps(ARGS), f"call-{i}")],
                             usage=RequestUsage(input_tokens=1, output_tokens=1))

    def final(n: int) -> ModelResponse:
        return ModelResponse(parts=[TextPart(ANSWER)], usage=RequestUsage(input_tokens=1, output_tokens=1))

    agent: Any = Agent(FunctionModel(respond), tools=[Tool(script.add, takes_ctx=False)])
    limits = UsageLimits(request_limit=max_steps)
    return Episode(script, lambda: agent.run_sync(QUESTION, usage_limits=limits),
                   lambda result: result.output, _native(step, final))


def _smolagents(script: Script, max_steps: int) -> Episode:
    """`ToolCallingAgent.run`, its model a `smolagents.models.Model` subclass returning ready
    `ChatMessage`s; the run ends with a call of smolagents' own `final_answer` tool."""
    from smolagents import ToolCallingAgent, tool
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, Model
    from smolagents.monitoring import LogLevel

    class ScriptedModel(Model):  # type: ignore[misc]
        def generate(self, messages: Any, stop_sequences: Any = None, response_format: Any = None,
                     tools_to_call_from: Any = None, **kwargs: Any) -> Any:
            return script.reply()

    @tool  # type: ignore[untyped-decorator]
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first integer.
            b: The second integer.
        """
        return script.add(a, b)

    def message(i: int, name: str, args: dict[str, Any]) -> Any:
        call = ChatMessageToolCall(function=ChatMessageToolCallFunction(name=name, arguments=args),
                                   id=f"call-{i}", type="function")
        return ChatMessage(role="assistant", content=THOUGHT, tool_calls=[call])

    agent = ToolCallingAgent(tools=[add], model=ScriptedModel(model_id="scripted"), max_steps=max_steps,
                             verbosity_level=LogLevel.OFF)
    return Episode(script, lambda: agent.run(QUESTION), str,
                   _native(lambda i: message(i, "add", ARGS), lambda n: message(n, "final_answer",
                                                                                {"answer": ANSWER})))


def _llama_index(script: Script, max_steps: int) -> Episode:
    """`FunctionAgent.run` awaited under `asyncio.run` (its form from sync code), its LLM llama-index-core's
    own test double, `MockFunctionCallingLLM`, whose response generator hands back ready `ChatMessage`s;
    the agent parses each `ToolCallBlock`'s args and runs the tool itself."""
    import asyncio

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    def respond(messages: Any, **kwargs: Any) -> Any:
        async def reply() -> Any:
            yield script.reply()

        return reply()

    def step(i: int) -> Any:
        call = ToolCallBlock(tool_call_id=f"call-{i}", tool_name="add", tool_kwargs=json.dumps(ARGS))
        return ChatMessage(role="assistant", blocks=[TextBlock(text=THOUGHT), call])

    agent = FunctionAgent(tools=[script.add], llm=MockFunctionCallingLLM(response_generator=respond))

    async def play() -> Any:
        # FunctionAgent never acts on its max_iterations-th reply: N steps need max_iterations=N+1.
        return await agent.run(user_msg=QUESTION, max_iterations=max_steps + 1)

    return Episode(script, lambda: asyncio.run(play()), lambda output: output.response.content,
                   _native(step, lambda n: ChatMessage(role="assistant", content=ANSWER)))


def _haystack(script: Script, max_steps: int) -> Episode:
    """`Agent.run`, its chat generator a `@component` whose `run(messages, tools)` returns ready
    assistant `ChatMessage`s (Haystack's documented shape of a custom chat generator): the Agent's
    loop and tool execution, without `OpenAIChatGenerator`'s converter, the OpenAI client and httpx."""
    import os

    # Haystack's documented telemetry opt-out (Agent.run sends no event either way; see the binding).
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    from haystack import component
    from haystack.components.agents import Agent
    from haystack.dataclasses import ChatMessage, ToolCall
    from haystack.tools import create_tool_from_function

    @component
    class ScriptedGenerator:
        @component.output_types(replies=list[ChatMessage])  # type: ignore[untyped-decorator]
        def run(self, messages: list[ChatMessage], tools: Any = None) -> dict[str, Any]:
            return {"replies": [script.reply()]}

    def step(i: int) -> Any:
        return ChatMessage.from_assistant(THOUGHT, tool_calls=[ToolCall("add", dict(ARGS), id=f"call-{i}")])

    agent = Agent(chat_generator=ScriptedGenerator(), tools=[create_tool_from_function(script.add)],
                  max_agent_steps=max_steps)
    question = [ChatMessage.from_user(QUESTION)]
    return Episode(script, lambda: agent.run(question), lambda result: result["last_message"].text,
                   _native(step, lambda n: ChatMessage.from_assistant(ANSWER)))


def _completion_transport(script: Script) -> Any:
    """An httpx transport answering each chat-completions request with the script's next reply,
    a response body rendered ahead of time (the seam of the loops driven through their own OpenAI
    model class: agno, strands-agents)."""
    import httpx

    def answer(request: httpx.Request) -> httpx.Response:
        content_type, body = script.reply()
        return httpx.Response(200, headers={"Content-Type": content_type}, content=body)

    return httpx.MockTransport(answer)


def _completions(stream: bool, distinct: bool = False) -> Callable[[int], list[Any]]:
    """A tool-calling episode's replies as chat-completions bodies (server-sent events when `stream`);
    `distinct`: each step's args differ (`b` is the step's number), for a loop that stops a run
    repeating one call."""
    def body(i: int, message: dict[str, Any]) -> tuple[str, bytes]:
        finish = "tool_calls" if "tool_calls" in message else "stop"
        if not stream:
            return "application/json", json.dumps({
                "id": f"c{i}", "object": "chat.completion", "created": 0, "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}]}).encode()
        delta = {k: v for k, v in message.items() if k != "tool_calls"}
        deltas = [delta, *({"tool_calls": [{"index": 0, **c}]} for c in message.get("tool_calls", []))]
        chunks = [{"id": f"c{i}", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
                   "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({**chunks[0], "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        events = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return "text/event-stream", events.encode()

    def step(i: int) -> tuple[str, bytes]:
        function = {"name": "add", "arguments": json.dumps({**ARGS, "b": i} if distinct else ARGS)}
        call = {"id": f"call-{i}", "type": "function", "function": function}
        return body(i, {"role": "assistant", "content": THOUGHT, "tool_calls": [call]})

    return _native(step, lambda n: body(n, {"role": "assistant", "content": ANSWER}))


def _agno(script: Script, max_steps: int) -> Episode:
    """`Agent.run`, its model Agno's own `OpenAIChat` over an OpenAI client whose in-memory transport
    answers with ready chat-completions bodies. Agno has no step cap (`tool_call_limit` counts tool
    calls): none is set. Its answer carries each step's text as a prefix (see the binding), so the
    episode reads the last assistant message."""
    import os

    os.environ.setdefault("AGNO_TELEMETRY", "false")  # the documented opt-out; see the binding
    import httpx
    import openai
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat

    client = openai.OpenAI(base_url="http://model.invalid/v1", api_key="unused",
                           http_client=httpx.Client(transport=_completion_transport(script)))
    agent = Agent(model=OpenAIChat(id="scripted", api_key="unused", client=client), tools=[script.add])
    return Episode(script, lambda: agent.run(QUESTION), lambda run: run.messages[-1].content,
                   _completions(stream=False))


def _crewai(script: Script, max_steps: int) -> Episode:
    """`Agent.kickoff`, its model CrewAI's own `LLM` (its native OpenAI provider) whose OpenAI client
    has an in-memory transport answering with ready chat-completions bodies; the client is put in
    place of the one CrewAI built, as the binding does (CrewAI takes no client). `max_iter` is its
    step cap."""
    import os

    for flag, value in (("CREWAI_DISABLE_TELEMETRY", "true"), ("OTEL_SDK_DISABLED", "true"),
                        ("CREWAI_TRACING_ENABLED", "false")):
        os.environ.setdefault(flag, value)  # the documented opt-outs; see the binding
    import httpx
    import openai
    from crewai import LLM, Agent
    from crewai.tools import tool

    llm = LLM(model="openai/scripted", api_key="unused", base_url="http://model.invalid/v1")
    llm._client = openai.OpenAI(**llm._get_client_params(),
                                http_client=httpx.Client(transport=_completion_transport(script)))
    agent = Agent(role="assistant", goal="Answer the user's request.", backstory="", llm=llm,
                  tools=[tool("add")(script.add)], max_iter=max_steps)
    # Distinct args: CrewAI stops the 5th identical call with an identical result as no progress
    # (utilities/agent_utils.py check_repeated_tool_call).
    return Episode(script, lambda: agent.kickoff(QUESTION), lambda output: output.raw,
                   _completions(stream=False, distinct=True))


def _strands(script: Script, max_steps: int) -> Episode:
    """`Agent(...)` called, its model Strands' own `OpenAIModel` over an OpenAI client whose
    in-memory transport answers with ready streamed chat-completions bodies (Strands always
    streams); `limits={"turns": max_steps}` is its step cap."""
    import httpx
    import openai
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    client = openai.AsyncOpenAI(base_url="http://model.invalid/v1", api_key="unused",
                                http_client=httpx.AsyncClient(transport=_completion_transport(script)))
    agent = Agent(model=OpenAIModel(client=client, model_id="scripted"), tools=[tool(script.add)],
                  callback_handler=None)

    def run() -> Any:
        agent.messages.clear()  # each episode a fresh conversation, as the other loops' runs are
        return agent(QUESTION, limits={"turns": max_steps})

    return Episode(script, run, lambda result: str(result).strip(), _completions(stream=True))


def _semantic_kernel(script: Script, max_steps: int) -> Episode:
    """`ChatCompletionAgent.get_response` under `asyncio.run` (Semantic Kernel has no sync form), its
    service the OpenAI connector over an openai client whose transport hands back ready responses."""
    import asyncio

    import httpx
    import openai
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.functions import kernel_function

    class Tools:
        @kernel_function  # type: ignore[untyped-decorator]
        def add(self, a: int, b: int) -> int:
            """Add two integers."""
            return script.add(a, b)

    agent = ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id="scripted", async_client=openai.AsyncOpenAI(
            base_url="http://model.invalid/v1", api_key="unused",
            http_client=httpx.AsyncClient(transport=_completion_transport(script)))),
        name="agent", plugins=[Tools()],
        function_choice_behavior=FunctionChoiceBehavior.Auto(maximum_auto_invoke_attempts=max_steps))
    return Episode(script, lambda: asyncio.run(agent.get_response(QUESTION)),
                   lambda response: response.message.content,
                   _completions(stream=False))


def _autogen(script: Script, max_steps: int) -> Episode:
    """`AssistantAgent.run` under `asyncio.run` (AutoGen has no sync form), its model client
    autogen-ext's OpenAI client over an httpx client whose transport hands back ready responses.
    The agent is reset before each episode (`on_reset`): it keeps its conversation across runs."""
    import asyncio

    import httpx
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core import CancellationToken
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return script.add(a, b)

    client = OpenAIChatCompletionClient(
        model="scripted", base_url="http://model.invalid/v1", api_key="unused",
        http_client=httpx.AsyncClient(transport=_completion_transport(script)),
        model_info={"vision": False, "function_calling": True, "json_output": False, "family": "unknown",
                    "structured_output": False})

    agent = AssistantAgent("agent", model_client=client, tools=[add], max_tool_iterations=max_steps)

    async def play() -> Any:
        await agent.on_reset(CancellationToken())
        return await agent.run(task=QUESTION)

    return Episode(script, lambda: asyncio.run(play()), lambda result: result.messages[-1].content,
                   _completions(stream=False))




def _google_adk(script: Script, max_steps: int) -> Episode:
    """`Runner.run` of an `LlmAgent` (a new session per episode), its model a `BaseLlm` subclass (ADK's
    model interface, the binding's seam) yielding ready `LlmResponse`s; `max_llm_calls` is the cap."""
    from google.adk.agents import LlmAgent, RunConfig
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    class Scripted(BaseLlm):  # type: ignore[misc]
        model: str = "scripted"

        async def generate_content_async(self, request: Any, stream: bool = False) -> Any:
            yield script.reply()

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return script.add(a, b)

    def step(i: int) -> Any:
        call = types.FunctionCall(id=f"call-{i}", name="add", args=dict(ARGS))
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=THOUGHT),
                                                                     types.Part(function_call=call)]))

    runner = InMemoryRunner(agent=LlmAgent(name="agent", model=Scripted(), tools=[add]), app_name="bench")
    question = types.Content(role="user", parts=[types.Part(text=QUESTION)])

    def play() -> Any:
        session = runner.session_service.create_session_sync(app_name="bench", user_id="user")
        return list(runner.run(user_id="user", session_id=session.id, new_message=question,
                               run_config=RunConfig(max_llm_calls=max_steps)))

    return Episode(script, play, lambda events: "".join(p.text or "" for p in events[-1].content.parts),
                   _native(step, lambda n: LlmResponse(content=types.Content(
                       role="model", parts=[types.Part(text=ANSWER)]))))


_BARE_SYSTEM = ("Answer the question. In each step, reply with one JSON object with the keys next_thought, "
                "next_tool_name (add or finish) and next_tool_args. Tools: add(a: int, b: int).")


def _bare(script: Script, max_steps: int) -> Episode:
    """The floor: format a prompt, parse a JSON reply, call the tool, append; then extract."""
    tools: dict[str, Callable[..., Any]] = {"add": script.add}

    def complete(prompt: str) -> str:
        reply: str = script.reply()
        return reply

    def play() -> dict[str, Any]:
        trajectory: list[str] = []
        for _ in range(max_steps):
            prompt = f"{_BARE_SYSTEM}\n\nquestion: {QUESTION}\n\ntrajectory:\n{''.join(trajectory)}"
            choice = json.loads(complete(prompt))
            name, args = choice["next_tool_name"], choice["next_tool_args"]
            observation = "Completed." if name == "finish" else tools[name](**args)
            trajectory.append(f"thought: {choice['next_thought']}\ntool: {name}\nargs: {json.dumps(args)}\n"
                              f"observation: {observation}\n")
            if name == "finish":
                break
        prompt = f"Give the answer.\n\nquestion: {QUESTION}\n\ntrajectory:\n{''.join(trajectory)}"
        outputs: dict[str, Any] = json.loads(complete(prompt))
        return outputs

    return Episode(script, play, lambda outputs: outputs["answer"], _react(json.dumps))
