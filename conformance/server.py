"""A model endpoint on loopback that answers from a scenario's script.

Usable on its own: point any OpenAI-compatible client at `server.url` and every request is answered
by the `ScriptedModel`, in the format the request asks for (chat sections, a JSON object, native
`tool_calls`, or server-sent events when `"stream": true`), or with a scripted fault. Beside chat
completions it serves the OpenAI Responses API (`/responses`) and Anthropic's Messages API
(`/messages`): each translates its request into the chat-completions body the model reads
(`_responses_api`, `_messages_api`), so all three log, count and answer alike.

    with ScriptedServer(ScriptedModel([...])) as server:
        client = OpenAI(base_url=server.url, api_key="unused")
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload
from urllib.parse import urlsplit

import httpx
from pydantic import JsonValue

from conformance import _held, _messages_api, _responses_api, render, translate
from conformance._model import ScriptedModel, UnexpectedModelCall
from conformance.binding import ExtractTurn, FaultTurn, FinalTurn, LMCall, StepTurn

if TYPE_CHECKING:
    import openai

__all__ = ["APIS", "API_KEY", "IN_MEMORY_URL", "MAX_BODY_BYTES", "ScriptedServer", "ServingTransport",
           "api_for", "async_handler", "completion", "fault_response", "handler", "native_call",
           "native_call_for", "openai_client", "request_call"]

#: The base URL of a client whose requests an in-memory transport answers (`openai_client`).
IN_MEMORY_URL = "http://model.invalid/v1"
#: The API key a binding gives its library's client: the endpoint and the transports take any.
API_KEY = "placeholder-key"
#: The largest request body the server reads; a longer one is refused (413) unread.
MAX_BODY_BYTES = 32 * 1024 * 1024
#: How long a connection may stall (a request line, headers or body not arriving, a reply not
#: being read) before the server drops it.
SOCKET_TIMEOUT = 30.0


class ScriptedServer:
    """Serves `model` at `url` (`http://127.0.0.1:<ephemeral port>/v1`) while entered."""

    def __init__(self, model: ScriptedModel, *, slow_seconds: float = 5.0,
                 socket_timeout: float = SOCKET_TIMEOUT) -> None:
        self.model = model
        #: How long a `timeout` fault holds its reply (set the client's timeout below it).
        self.slow_seconds = slow_seconds
        #: How long a stalled connection is kept before it is dropped.
        self.socket_timeout = socket_timeout
        #: How many chat-completions requests were answered or refused by the script. The bodies
        #: are not kept: the model's `calls` are the scenario's log.
        self.received = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The base URL to give a client."""
        assert self._httpd is not None, "the server is not running: use it as a context manager"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ScriptedServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for one, at the end of every scenario.
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="scripted-server",
                         daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd = None

    def call_for(self, body: dict[str, Any]) -> LMCall:
        """How a request body is logged: step or extraction, and the format it asks for."""
        return request_call(body)


def request_call(body: dict[str, Any]) -> LMCall:
    """A chat-completions request body as the scripted model logs it: its kind and its format."""
    messages: list[dict[str, JsonValue]] = [
        translate.shown(str(m.get("role")), _text(m.get("content")), _calls(m))
        for m in body.get("messages", [])
    ]
    system = next((str(m["content"]) for m in messages if m["role"] == "system"), "")
    tools = body.get("tools") or None
    # Tools declared but their use forbidden (`tool_choice: "none"`): a loop's final call, no step.
    offered = tools if offers_tools(body) else None
    # The reply format is asked for in the system message (DSPy), or after the inputs (udspy).
    asked = render.request_adapter(system)
    if asked == "other":
        asked = render.request_adapter("\n".join(str(m["content"]) for m in messages))
    adapter = "native" if tools else asked
    kind = "step" if offered else "extract" if tools else render.request_kind(system)
    return LMCall(kind=kind, adapter=adapter, messages=messages, tools=tools)


def native_call(body: dict[str, Any], kind: Literal["step", "extract"] | None = None) -> LMCall:
    """A native loop's request body as logged: `request_call`'s, the `native` adapter, `kind` if given."""
    return request_call(body).model_copy(update={"adapter": "native", **({"kind": kind} if kind else {})})


def native_call_for(has_tools: bool) -> Callable[[dict[str, Any]], LMCall]:
    """How a native loop's requests are logged (`native_call`): a request that offers tools is a step,
    and so is every request of an agent that has none; a request of an agent with tools that offers
    none (no tools, or tools declared with `tool_choice: "none"`) is the extraction (the one call some
    loops make on their step cap)."""
    return lambda body: native_call(body, "step" if offers_tools(body) or not has_tools else "extract")


def offers_tools(body: dict[str, Any]) -> bool:
    """Whether a chat-completions request lets the model call a tool: tools declared, their use not
    forbidden by `tool_choice: "none"`."""
    return bool(body.get("tools")) and body.get("tool_choice") != "none"


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """The tool calls an assistant message made: part of the trajectory the model is shown."""
    calls = [c.get("function", {}) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    return [(str(c.get("name")), c.get("arguments")) for c in calls if isinstance(c, dict)]


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _message(turn: StepTurn | FinalTurn | ExtractTurn, call: LMCall, number: int) -> dict[str, Any]:
    if call.adapter == "native" or isinstance(turn, FinalTurn):
        return render.openai_message(turn, number, render.tool_names(call.tools))
    # A chain-of-thought request (udspy's extraction, say) also asks for `reasoning`: give one.
    extra = {"reasoning": "The trajectory has it."} if "`reasoning`" in call.text() else None
    reply = render.json_reply(turn, extra) if call.adapter == "json" else render.chat_reply(turn, extra)
    return {"role": "assistant", "content": reply}


def completion(body: dict[str, Any], call: LMCall, turn: StepTurn | FinalTurn | ExtractTurn,
               number: int) -> tuple[str, bytes]:
    """The endpoint's answer to request `body` (logged as `call`, the `number`th): its content type
    and payload, a chat.completion object or, when the body asks to stream, server-sent chunk events."""
    return _chat_reply(body, _message(turn, call, number), number)


def _chat_reply(body: dict[str, Any], message: dict[str, Any], number: int) -> tuple[str, bytes]:
    if body.get("stream"):
        events = [f"data: {json.dumps(chunk)}\n\n" for chunk in _chunks(message, number)]
        return "text/event-stream", ("".join(events) + "data: [DONE]\n\n").encode()
    finish = "tool_calls" if "tool_calls" in message else "stop"
    return "application/json", json.dumps({
        "id": f"chatcmpl-{number}", "object": "chat.completion",
        "created": 0, "model": str(body.get("model", "scripted")),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }).encode()


class _Api(NamedTuple):
    """A wire API the endpoint serves: the whole request a body stands for (given the state its
    `owner`, the endpoint, the in-memory seam's model or a replaying cassette, holds: Anthropic's
    message threads, the Responses API's stored responses), how
    that reads as a chat-completions body, how a chat-completions assistant message is sent back
    in its form (and held), its error body, the status it answers a scripted one with, and how a
    recorded reply (its content type and payload) is held again when a cassette replays it."""

    name: str
    path: str
    read: Callable[[object, dict[str, Any]], dict[str, Any]]
    chat_body: Callable[[dict[str, Any]], dict[str, Any]]
    reply: Callable[[object, dict[str, Any], dict[str, Any], int], tuple[str, bytes]]
    error: Callable[[int, str], dict[str, Any]]
    status: Callable[[int], int] = lambda scripted: scripted
    replayed: Callable[[object, dict[str, Any], str, bytes], None] = lambda owner, body, kind, payload: None


def _chat_error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message}}


#: The APIs served, by the path their requests end in (under any base URL).
APIS = (
    _Api("chat-completions", "/chat/completions", lambda owner, body: body, lambda body: body,
         lambda owner, body, message, number: _chat_reply(body, message, number), _chat_error),
    _Api("OpenAI Responses API", _responses_api.PATH,
         lambda owner, body: _responses_api.stored(owner).expand(body), _responses_api.chat_body,
         lambda owner, body, message, number: _responses_api.reply(body, message, number,
                                                                   _responses_api.stored(owner)),
         _responses_api.error, lambda scripted: scripted,
         lambda owner, body, kind, payload: _responses_api.replayed(_responses_api.stored(owner), body, kind,
                                                                    payload)),
    _Api("Anthropic Messages API", _messages_api.PATH,
         lambda owner, body: _messages_api.threads(owner).expand(body), _messages_api.chat_body,
         lambda owner, body, message, number: _messages_api.reply(body, message, number,
                                                                  _messages_api.threads(owner)),
         _messages_api.error, _messages_api.status,
         lambda owner, body, kind, payload: _messages_api.replayed(_messages_api.threads(owner), body, kind,
                                                                   payload)),
)


def api_for(path: str) -> _Api | None:
    """The API a request to `path` speaks, if the endpoint serves it."""
    return next((api for api in APIS if path.endswith(api.path)), None)


def fault_response(turn: FaultTurn, request: httpx.Request,
                   model: ScriptedModel | None = None) -> httpx.Response:
    """A scripted fault on an in-memory httpx transport: a raised timeout or connection error, or
    the HTTP status (with its Retry-After). A `hang` passes the request's own read timeout on
    `model`'s clock (`ScriptedModel.hang`), then raises the timeout it would end in."""
    if turn.fault == "hang":
        timeout = request.extensions.get("timeout", {}).get("read")
        if model is not None:
            model.hang(timeout)
        raise httpx.ReadTimeout("the endpoint never answered", request=request)
    if turn.fault == "timeout":
        raise httpx.ReadTimeout("scripted timeout", request=request)
    if turn.fault == "connection":
        raise httpx.ConnectError("scripted connection reset", request=request)
    status, headers, payload = _status_fault(turn, api_for(request.url.path) or APIS[0])
    return httpx.Response(status, headers=headers, json=payload)


def _status_fault(turn: FaultTurn, api: _Api) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A fault turn's HTTP status (the one the API's real service answers with, Anthropic's 529 for
    an unavailable service), its Retry-After, and the API's error body (the real API's error type
    for the status) that says what failed in words, never the status code: an error that
    merely quotes the body must not name the status by chance, since NET-1 asks the client itself
    to name it."""
    scripted = int(turn.fault)
    status = api.status(scripted)
    headers = {"Retry-After": f"{turn.retry_after:g}"} if turn.retry_after is not None else {}
    return status, headers, api.error(status, f"scripted fault: {HTTPStatus(scripted).phrase}")


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        timeout = server.socket_timeout  # applied to the connection's socket by setup()

        def do_POST(self) -> None:
            body = self._body()
            if body is None:
                return
            api = api_for(urlsplit(self.path).path)
            if api is None:
                return self._json(404, {"error": {"message": f"no route {self.path}"}})
            try:
                body = api.read(server, body)
                call = server.call_for(api.chat_body(body))
            except _held.Refused as exc:
                return self._json(exc.status, exc.body)
            except (AttributeError, TypeError, ValueError) as exc:
                return self._refuse(400, f"the body is not a {api.name} request: {exc!r}", api)
            with server._lock:
                server.received += 1
                number = server.received
            try:
                turn = server.model.answer(call)
            except UnexpectedModelCall as exc:  # 400: not transient, so no client retries it
                return self._refuse(400, str(exc), api, "unexpected_call")
            if isinstance(turn, FaultTurn):
                return self._fault(turn, api)
            content_type, payload = api.reply(server, body, _message(turn, call, number), number)
            self._send(200, content_type, payload)

        def _body(self) -> dict[str, Any] | None:
            """The request body as a JSON object; None once a 400 or 413 has answered it."""
            coding = self.headers.get("Transfer-Encoding", "").split(",")[-1].strip().lower()
            if coding == "chunked":  # takes precedence over any Content-Length (RFC 9112 6.3)
                raw = self._chunked()
                return None if raw is None else self._json_body(raw)
            length = self.headers.get("Content-Length", "0").strip()
            if not (length.isascii() and length.isdigit()):  # a sign too: read(-1) waits for EOF
                self.close_connection = True  # where the body ends is unknown
                self._refuse(400, f"the Content-Length {length!r} is not a byte count")
                return None
            if len(length) > len(str(MAX_BODY_BYTES)) or int(length) > MAX_BODY_BYTES:
                self.close_connection = True  # the body is left unread
                self._refuse(413, f"the body is {length} bytes; this server reads at most "
                                  f"{MAX_BODY_BYTES} bytes")
                return None
            return self._json_body(self.rfile.read(int(length)))

        def _chunked(self) -> bytes | None:
            """A chunked body, read chunk by chunk up to the cap; None once a 400 or 413 answered."""
            chunks, size = [], 0
            while True:
                line = self.rfile.readline(1024)
                digits = line.split(b";", 1)[0].strip()  # a chunk extension is ignored
                if not line.endswith(b"\n") or not re.fullmatch(rb"[0-9a-fA-F]{1,16}", digits):
                    self.close_connection = True
                    self._refuse(400, f"the chunk size line {line[:40]!r} is not a hexadecimal size")
                    return None
                length = int(digits, 16)
                size += length
                if size > MAX_BODY_BYTES:
                    self.close_connection = True  # the rest is left unread
                    self._refuse(413, f"the chunked body is over {MAX_BODY_BYTES} bytes; this "
                                      f"server reads at most {MAX_BODY_BYTES} bytes")
                    return None
                if length == 0:
                    break
                chunks.append(self.rfile.read(length))
                self.rfile.readline(3)  # the chunk's CRLF
            for _ in range(100):  # trailer fields, up to the empty line
                if self.rfile.readline(8192).strip() == b"":
                    break
            return b"".join(chunks)

        def _json_body(self, raw: bytes) -> dict[str, Any] | None:
            try:
                body = json.loads(raw or b"{}")
            except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
                self._refuse(400, f"the body is not valid JSON: {exc}")
                return None
            if not isinstance(body, dict):
                self._refuse(400, f"the body must be a JSON object, not {type(body).__name__}")
                return None
            return body

        def _refuse(self, status: int, message: str, api: _Api = APIS[0],
                    kind: str = "invalid_request") -> None:
            # Chat completions keep the suite's own error types; the other APIs use their own.
            payload = api.error(status, message)
            self._json(status, {"error": {**payload["error"], "type": kind}} if api is APIS[0] else payload)

        def _fault(self, turn: FaultTurn, api: _Api) -> None:
            if turn.fault == "connection":
                self.close_connection = True  # hang up without a response
                return
            if turn.fault in ("timeout", "hang"):  # a real socket: the slow reply stands for both
                time.sleep(server.slow_seconds)
                return self._json(504, api.error(504, "scripted slow reply"))
            status, headers, payload = _status_fault(turn, api)
            self._json(status, payload, headers)

        def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send(status, "application/json", json.dumps(payload).encode(), headers)

        def _send(self, status: int, content_type: str, data: bytes,
                  headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _chunks(message: dict[str, Any], number: int) -> Iterator[dict[str, Any]]:
    """The message as chat.completion.chunk events: content in pieces, then tool calls."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "created": 0,
                "model": "scripted", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    content = message.get("content") or ""
    for start in range(0, len(content), 16):
        yield chunk({"content": content[start:start + 16]})
    for index, call in enumerate(message.get("tool_calls", [])):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, "tool_calls" if message.get("tool_calls") else "stop")


def unserved(path: str) -> str:
    """Why the seam refuses a request to `path`: the binding pointed its library at an API it
    does not serve, so the reply is not the library's to read."""
    served = ", ".join(f"{api.path!r} ({api.name})" for api in APIS)
    return (f"the binding's seam got a request to {path!r}, but it serves only {served}: "
            "configure the library's client for one of these APIs, or answer that API's requests "
            "in the binding")


def handler(model: ScriptedModel, call_for: Callable[[dict[str, Any]], LMCall] = request_call
            ) -> Callable[[httpx.Request], httpx.Response]:
    """An `httpx.MockTransport` handler that answers chat-completions requests from `model`, as the
    endpoint does, beneath the library's own HTTP client (and so beneath its retries). `call_for`
    logs a request body as an LMCall. A request the script did not expect gets a 400, which no
    client retries; the scripted model remembers it for the scenario."""

    def handle(request: httpx.Request) -> httpx.Response:
        api = api_for(request.url.path)
        if api is None:
            refusal = unserved(request.url.path)
            model.binding_fault = model.binding_fault or refusal
            return httpx.Response(404, json={"error": {"message": refusal}})
        try:
            body = api.read(model, json.loads(request.content))
            chat = api.chat_body(body)
        except _held.Refused as exc:
            return httpx.Response(exc.status, json=exc.body)
        except ValueError as exc:
            return httpx.Response(400, json=api.error(400, str(exc)))
        call = call_for(chat)
        try:
            turn = model.answer(call)
        except UnexpectedModelCall as exc:
            return httpx.Response(400, json=api.error(400, str(exc)))
        if isinstance(turn, FaultTurn):
            return fault_response(turn, request, model)
        number = len(model.calls)
        content_type, payload = api.reply(model, body, _message(turn, call, number), number)
        return httpx.Response(200, headers={"Content-Type": content_type}, content=payload)

    return handle


def async_handler(model: ScriptedModel, call_for: Callable[[dict[str, Any]], LMCall] = request_call
                  ) -> Callable[[httpx.Request], Coroutine[Any, Any, httpx.Response]]:
    """`handler` for an async client: each request first yields to the event loop, as a network
    call would, so that overlapping runs interleave."""
    answer = handler(model, call_for)

    async def handle(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0)
        return answer(request)

    return handle


class ServingTransport(httpx.MockTransport):
    """An in-memory endpoint for a client built once with the agent: each request is answered by
    the model serving the running call (`translate.serving`), so one client serves concurrent runs,
    each with its own model; an async request yields to the event loop first, as a network call
    would."""

    def __init__(self, call_for: Callable[[dict[str, Any]], LMCall] = request_call) -> None:
        super().__init__(lambda request: handler(translate.serving_model(), call_for)(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0)
        return await super().handle_async_request(request)


@overload
def openai_client(model: ScriptedModel | None = ..., call_for: Callable[[dict[str, Any]], LMCall] = ...,
                  *, asynchronous: Literal[True] = ..., base_url: str | None = ...) -> openai.AsyncOpenAI: ...
@overload
def openai_client(model: ScriptedModel | None = ..., call_for: Callable[[dict[str, Any]], LMCall] = ...,
                  *, asynchronous: Literal[False], base_url: str | None = ...) -> openai.OpenAI: ...
def openai_client(model: ScriptedModel | None = None,
                  call_for: Callable[[dict[str, Any]], LMCall] = request_call, *, asynchronous: bool = True,
                  base_url: str | None = None) -> openai.AsyncOpenAI | openai.OpenAI:
    """An `openai` client (which many libraries drive) at `base_url`, or in memory answered beneath
    its own retries by `model` (None: the model serving the running call, `ServingTransport`)."""
    import openai  # a dependency of the libraries whose bindings call this, not of the suite

    make = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    if base_url is not None:
        return make(base_url=base_url, api_key=API_KEY)
    transport: httpx.MockTransport = ServingTransport(call_for)
    if model is not None:
        answer = async_handler(model, call_for) if asynchronous else handler(model, call_for)
        transport = httpx.MockTransport(answer)
    http = httpx.AsyncClient(transport=transport) if asynchronous else httpx.Client(transport=transport)
    return make(base_url=IN_MEMORY_URL, api_key=API_KEY, http_client=http)
