"""The binding for the Anthropic Python SDK's tool runner (`anthropic`, `client.beta.messages.tool_runner`).

Seam: the SDK's own client (`anthropic.Anthropic`, `AsyncAnthropic`, its default retries: 2, with
backoff), whose HTTP client (httpx2, the SDK's documented `http_client`) has an in-memory transport
that answers the Messages API from the script (`server.handler`, the same endpoint as the loopback
server's); in the `http` profile the client points at `CallRequest.base_url`. Beneath it run the
runner's own request building (message threads by default: each turn after the first sends only the
new messages, continuing the thread the endpoint holds), the SDK's reply parsing and retries. Tools
are `@beta_tool` functions (`beta_async_tool` for the async client), the runner's documented primary
form: the schema comes from the signature and the docstring's `Args:`. Such a function returns the
result's text or content blocks (`BetaFunctionToolResultType`, lib/tools/_beta_functions.py: `str |
Iterable[BetaContent]`), so a suite tool's value is returned as its JSON text (a string as it is,
None as None, which the SDK sends as `content: null`).

Step cap: `max_iterations`, "how many replies the loop asks for at most" (lib/tools/_beta_runner.py
BetaToolRunner): after N replies the loop ends (`_should_stop`), running the Nth reply's tools first,
and `until_done()` returns the last reply, a `tool_use` message; nothing is raised and no tool-less
final call is made. It is an argument of each runner, so the per-call cap is native. A run's replies
are what iterating the runner yields; each reply's tool results are `generate_tool_call_response()`
(cached, so the runner reuses them: no tool runs twice), the SDK's documented way to read them.
Streaming is `stream=True`: the runner yields a `BetaMessageStream` per reply; a step event follows
each reply's tool results.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from typing import Any, ClassVar

import anthropic
import httpx
import httpx2
from anthropic import beta_async_tool, beta_tool

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import AgentSpec, Binding, CallRequest, ErrorInfo, Event, LMCall, Outcome, Step
from conformance.render import user_message

#: The model id and reply budget every request names (the endpoint answers any).
_MODEL, _MAX_TOKENS = "claude-sonnet-4-5", 1024
_RUNNER = "lib/tools/_beta_runner.py"
_ARGS5 = "test_tool_args_of_any_size_or_nesting_reach_the_tool_intact_or_are_refused_saying_why"
_INVALID = ("BetaFunctionTool.call (lib/tools/_beta_functions.py) validates the input with "
            "pydantic.validate_call and replaces the ValidationError with ValueError('Invalid arguments "
            "for function <name>'), the only text the model is shown (_beta_runner.py _run_tool)")
_KNOWN: dict[str, str] = {
    "ARGS-4": f"the call is refused, but the field is not named: {_INVALID}",
    "ARGS-6": f"the undeclared arg is refused, but not named: {_INVALID}",
    **{f"{_ARGS5}[store-{row}]": "a reply whose tool_use input is nested deeper than Python's JSON parser "
       "goes raises RecursionError in the client's response parsing (_response.py APIResponse._parse, "
       "response.json()), which nothing catches: it escapes messages.create and the runner"
       for row in ("an object nested 100000 levels deep", "an object nested 5000 levels deep",
                   "an object nested 5000 levels deep after an escaped quote",
                   "arrays nested 5000 levels deep inside its object",
                   "arrays nested 5000 levels deep, each beside an empty one")},
}


@dataclass
class _Agent:
    """The spec and the tools (sync and async forms) of an agent: the runner is built per call."""

    spec: AgentSpec
    tools: list[Any]
    async_tools: list[Any]
    #: The replies of the last call (the SDK's parsed messages, as returned).
    last: list[Any] = field(default_factory=list)


def _text_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` returning its value as the text a `@beta_tool` function returns (a string as it is,
    None as None, anything else as JSON), with the same name, docstring and signature."""

    def tool(**kwargs: Any) -> Any:
        value = function(**kwargs)
        return value if value is None or isinstance(value, str) else json.dumps(value)

    return _like(tool, function)


def _async_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` as a coroutine function with the same name, docstring and signature, the form
    `beta_async_tool` takes."""

    async def tool(**kwargs: Any) -> Any:
        return function(**kwargs)

    return _like(tool, function)


def _like(tool: Callable[..., Any], function: Callable[..., Any]) -> Callable[..., Any]:
    """`tool` with `function`'s name, docstring and signature, which the SDK reads the schema from."""
    tool.__name__ = tool.__qualname__ = function.__name__
    tool.__doc__ = function.__doc__
    tool.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    tool.__annotations__ = dict(function.__annotations__)
    return tool


def _bridge(model: ScriptedModel, call_for: Callable[[dict[str, Any]], LMCall]) -> httpx2.MockTransport:
    """An httpx2 transport (the SDK's HTTP client) answered by the suite's in-memory endpoint
    (`server.handler`, written for httpx): a request is handed over as it is, the reply or the
    scripted transport failure handed back as httpx2's."""
    answer = server.handler(model, call_for)

    def handle(request: httpx2.Request) -> httpx2.Response:
        mirrored = httpx.Request(request.method, str(request.url), headers=request.headers.multi_items(),
                                 content=request.read(), extensions=dict(request.extensions))
        try:
            reply = answer(mirrored)
        except httpx.TimeoutException as exc:
            raise httpx2.ReadTimeout(str(exc), request=request) from None
        except httpx.ConnectError as exc:
            raise httpx2.ConnectError(str(exc), request=request) from None
        return httpx2.Response(reply.status_code, headers=reply.headers.multi_items(), content=reply.content)

    return httpx2.MockTransport(handle)


def _async_bridge(model: ScriptedModel, call_for: Callable[[dict[str, Any]], LMCall]) -> httpx2.MockTransport:
    """`_bridge` for the async client: each request first yields to the event loop, as a network
    call would, so that overlapping runs interleave."""
    import asyncio

    answer = _bridge(model, call_for).handler

    async def handle(request: httpx2.Request) -> httpx2.Response:
        await asyncio.sleep(0)
        await request.aread()
        return answer(request)

    return httpx2.MockTransport(handle)


def _client(model: ScriptedModel, base_url: str | None, has_tools: bool, *,
            asynchronous: bool) -> anthropic.Anthropic | anthropic.AsyncAnthropic:
    """The SDK's client with its defaults, at `base_url` (without its `/v1`, as the SDK adds it) or
    answered in memory by `model`."""
    if base_url is not None:
        make = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
        return make(base_url=base_url.removesuffix("/v1"), api_key=server.API_KEY)
    call_for = server.native_call_for(has_tools)
    if asynchronous:
        http = anthropic.DefaultAsyncHttpxClient(transport=_async_bridge(model, call_for))
        return anthropic.AsyncAnthropic(base_url=server.IN_MEMORY_URL.removesuffix("/v1"),
                                        api_key=server.API_KEY, http_client=http)
    return anthropic.Anthropic(base_url=server.IN_MEMORY_URL.removesuffix("/v1"), api_key=server.API_KEY,
                               http_client=anthropic.DefaultHttpxClient(transport=_bridge(model, call_for)))


class AnthropicToolRunnerBinding(Binding):
    """Runs the suite against the Anthropic SDK's tool runner, with its defaults."""

    name = "anthropic-tool-runner"
    dependencies = ("anthropic", "httpx2", "pydantic")
    contract_version = 3
    capabilities = frozenset({"max-steps-return", "per-call-cap", "async", "streaming",
                              "parallel-tool-calls", "lm-retry", "http"})
    not_claimed: ClassVar[Mapping[str, str]] = {
        "signature": "a native tool-calling loop: a system prompt, messages and tools, no signature",
        "adapters": "no pluggable format-and-parse layer: the runner speaks the Messages API only",
        "max-steps-error": f"on max_iterations the loop ends ({_RUNNER} _should_stop) and until_done() "
                           "returns the last reply; nothing is raised",
        "max-steps-extract": f"on max_iterations the loop ends ({_RUNNER} _steps): no tool-less final call",
        "cap-summary": "on max_iterations the last reply, a tool_use message, is all that is returned: "
                       "no message for the user of what was tried",
        "repeated-error-stop": f"a failing tool's error goes back as an is_error tool_result every time "
                               f"({_RUNNER} _run_tool): no count of repeated failures and no stop",
        "ask-user": "the SDK ships no tool for asking the person a question",
        "tool-approval": f"no pause before a tool runs: generate_tool_call_response ({_RUNNER}) runs "
                         "every tool_use block of a reply",
        "approval-edit": "no pause before a tool runs, so no pending call to edit",
        "durable-approvals": "no pause before a tool runs, so none to keep",
    }
    known_failures: ClassVar[Mapping[str, str]] = _KNOWN
    parity: ClassVar[Mapping[str, str]] = {
        "stop_reason": "derived: the runner's own record, its replies: max_iterations replies, the last "
                       "a tool_use message, is the cap (lib/tools/_beta_runner.py _should_stop); a reply "
                       "that ends the turn (stop_reason end_turn) is the finish",
        "iterations": "derived: the replies the runner yielded, one per model call",
        "max_iterations": "none: no cap error: on max_iterations the runner returns the last reply",
        "partial_run": "none: no cap error to carry it: the replies are what the runner yielded",
        "concurrency": "per-run: a runner holds one conversation (BetaToolRunner over a message thread, "
                       "'A thread runs one turn at a time'), so each call makes its own",
    }

    @property
    def version(self) -> str:
        return version("anthropic")

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        functions = [_text_function(translate.documented_function(t)) for t in tools]
        return translate.built(lambda: _Agent(spec, [beta_tool(f) for f in functions],
                                              [beta_async_tool(_async_function(f)) for f in functions]))

    def _runner(self, agent: _Agent, call: CallRequest, model: ScriptedModel, *, asynchronous: bool,
                stream: bool = False) -> Any:
        client = _client(model, call.base_url, bool(agent.tools), asynchronous=asynchronous)
        system = agent.spec.signature.instructions
        return client.beta.messages.tool_runner(
            model=_MODEL, max_tokens=_MAX_TOKENS, max_iterations=translate.step_cap(agent.spec, call),
            tools=agent.async_tools if asynchronous else agent.tools,
            messages=[{"role": "user", "content": user_message(call.inputs)}],
            **({"system": system} if system else {}), **({"stream": True} if stream else {}))

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        cap = translate.step_cap(agent.spec, call)
        replies: list[Any] = []
        results: dict[str, Any] = {}
        report = partial(_outcome, agent, cap, replies, results)
        return translate.reported(
            model, call.mode, lambda _: report(), lambda exc: report(exc),
            sync=lambda: _drive(self._runner(agent, call, model, asynchronous=False), replies, results),
            asynchronous=lambda: _adrive(self._runner(agent, call, model, asynchronous=True), replies,
                                         results),
            stream=lambda events: _drive(self._runner(agent, call, model, asynchronous=False, stream=True),
                                         replies, results, model, events))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        replies: list[Any] = []
        results: dict[str, Any] = {}
        report = partial(_outcome, agent, translate.step_cap(agent.spec, call), replies, results)
        return await translate.areported(
            _adrive(self._runner(agent, call, model, asynchronous=True), replies, results),
            lambda _: report(), lambda exc: report(exc))

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        """What the call returned is its last reply (`until_done()`'s message); the replies the
        runner yielded are the SDK's parsed messages, handed out as they are."""
        assert isinstance(agent, _Agent)
        if not agent.last:
            return None
        for reply in agent.last:
            for block in reply.content:
                if block.type == "text":
                    block.text = marker
                elif block.type == "tool_use" and isinstance(block.input, dict):
                    block.input[marker] = marker
        return [f"the {len(agent.last)} replies the runner yielded (their text and tool_use input)"]


def _collect(runner: Any, reply: Any, replies: list[Any], results: dict[str, Any]) -> None:
    """Keep a reply and the tool results the runner made for it (its cached response)."""
    replies.append(reply)
    response = runner.generate_tool_call_response()
    for result in (response or {}).get("content", []):
        results[result["tool_use_id"]] = result


def _drive(runner: Any, replies: list[Any], results: dict[str, Any], model: ScriptedModel | None = None,
           events: list[Event] | None = None) -> None:
    """Run the runner to its end as a user iterating it does, keeping each reply and its results;
    a stream's step event after each reply's results."""
    items: Iterator[Any] = iter(runner)
    for item in items:
        reply = item.get_final_message() if events is not None else item
        _collect(runner, reply, replies, results)
        if model is not None and events is not None:
            translate.step_events(model, events, _trajectory(replies, results))


async def _adrive(runner: Any, replies: list[Any], results: dict[str, Any]) -> None:
    """`_drive` for the async runner."""
    items: AsyncIterator[Any] = runner.__aiter__()
    async for reply in items:
        replies.append(reply)
        response = await runner.generate_tool_call_response()
        for result in (response or {}).get("content", []):
            results[result["tool_use_id"]] = result


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def _trajectory(replies: Sequence[Any], results: Mapping[str, Any]) -> list[Step]:
    """One Step per tool_use block, in order: the reply's text its thought, the tool_result with its
    id its observation and `is_error` flag (None while it has no result)."""
    trajectory = []
    for reply in replies:
        thought = "".join(b.text for b in reply.content if b.type == "text") or None
        for block in reply.content:
            if block.type != "tool_use":
                continue
            result = results.get(block.id)
            trajectory.append(translate.step(
                block.name, translate.tool_args(block.input),
                None if result is None else translate.tool_args(_text(result.get("content"))), thought,
                is_error=None if result is None else bool(result.get("is_error")), call_id=block.id))
    return trajectory


def _outcome(agent: _Agent, cap: int, replies: list[Any], results: dict[str, Any],
             exc: Exception | None = None) -> Outcome:
    """What the run did: its replies' steps; the last reply's text as the final answer when it ended
    the turn; `max_steps` when the cap's replies ran out on a tool_use reply."""
    agent.last = list(replies)
    trajectory = _trajectory(replies, results)
    if exc is not None:
        return Outcome(trajectory=trajectory, iterations=len(replies), error=ErrorInfo.from_exception(exc))
    last = replies[-1] if replies else None
    if last is not None and last.stop_reason != "tool_use":
        text = "".join(b.text for b in last.content if b.type == "text")
        return translate.finished(agent.spec.signature, text, trajectory, len(replies))
    stop = "max_steps" if len(replies) >= cap else None
    return Outcome(trajectory=trajectory, iterations=len(replies), stop_reason=stop)
