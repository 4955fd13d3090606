"""Anthropic's Messages API (`POST /v1/messages`) on the scripted endpoint, as a translation: a
request becomes the chat-completions body the scripted model reads, and the chat-completions answer
becomes a `message` (or its server-sent events). The shapes follow the `anthropic` SDK's
`anthropic.types` models."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

from conformance._held import Refused, held

__all__ = ["CREATE_ONLY_FIELDS", "PATH", "Refused", "Threads", "chat_body", "error", "replayed", "reply",
           "status", "threads"]

PATH = "/messages"
#: The fields a message thread takes from the request that created it (anthropic's
#: `lib/threads/_thread_state.py` CREATE_ONLY_FIELDS): a `continue` leaves them out.
CREATE_ONLY_FIELDS = ("system", "tools")


class Threads:
    """The conversations the endpoint holds for the message-threads beta (`thread: {"type":
    "create"}`, then `{"type": "continue", "previous_message_id"}` with only the new messages), by
    reply id: the create-only fields and every message up to and including the reply. Anthropic's
    SDK threads its tool runner's requests by default, so a stateless endpoint would lose them."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def expand(self, body: dict[str, Any]) -> dict[str, Any]:
        """The whole request a `continue` stands for: the held fields and messages, then its own.
        An unknown `previous_message_id` is refused as the real API refuses it (`thread_not_found`,
        on which the SDK replays the whole conversation under a new thread)."""
        thread = body.get("thread")
        if not isinstance(thread, dict) or thread.get("type") != "continue":
            return body
        with self._lock:
            held = self._held.get(str(thread.get("previous_message_id")))
        if held is None:
            message = (f"no thread holds the message {thread.get('previous_message_id')!r}: replay the "
                       "conversation with thread: {'type': 'create'}")
            raise Refused(404, {"type": "error", "error": {
                "type": "not_found_error", "details": {"error_code": "thread_not_found"},
                "message": message}}, message)
        return {**body, **held["fields"], "messages": [*held["messages"], *(body.get("messages") or [])]}

    def hold(self, body: dict[str, Any], message: dict[str, Any]) -> None:
        """Keep the conversation of a threaded request (`body` as `expand` returned it) and its reply."""
        if not isinstance(body.get("thread"), dict):
            return
        fields = {f: body[f] for f in CREATE_ONLY_FIELDS if f in body}
        messages = [*(body.get("messages") or []), {"role": "assistant", "content": message["content"]}]
        with self._lock:
            self._held[message["id"]] = {"fields": fields, "messages": messages}


def threads(owner: object) -> Threads:
    """The threads held for `owner` (an endpoint, the scripted model an in-memory seam serves, a
    replaying cassette)."""
    return held(owner, Threads)


#: Anthropic's `tool_choice` types in chat-completions form (`tool` names the function).
_CHOICES = {"auto": "auto", "any": "required", "none": "none"}


def chat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The request as a chat-completions body: `system` and the messages (`tool_use` blocks as an
    assistant's tool calls, `tool_result` blocks as tool messages), the client tools (those with an
    `input_schema`) and `tool_choice` in chat form."""
    messages: list[dict[str, Any]] = []
    if body.get("system"):
        messages.append({"role": "system", "content": _text(body["system"])})
    for message in body.get("messages") or []:
        role, content = str(message.get("role")), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for result in results:
            messages.append({"role": "tool", "tool_call_id": result.get("tool_use_id"),
                             "content": _text(result.get("content"))})
        text = _text([b for b in blocks if b.get("type") == "text"])
        calls = [{"id": b.get("id"), "type": "function",
                  "function": {"name": b.get("name"), "arguments": _arguments(b.get("input"))}}
                 for b in blocks if b.get("type") == "tool_use"]
        if text or calls or not results:
            messages.append({"role": role, "content": text, **({"tool_calls": calls} if calls else {})})
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages,
                            "stream": bool(body.get("stream"))}
    tools = [{"type": "function", "function": {
                 "name": t.get("name"), "description": t.get("description", ""),
                 "parameters": t.get("input_schema")}}
             for t in body.get("tools") or [] if "input_schema" in t]
    if tools:
        chat["tools"] = tools
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        kind = str(choice.get("type"))
        chat["tool_choice"] = ({"type": "function", "function": {"name": choice.get("name")}}
                               if kind == "tool" else _CHOICES.get(kind, kind))
    return chat


def _text(content: Any) -> str:
    if isinstance(content, list):  # text blocks
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def _arguments(value: Any) -> str:
    """A `tool_use` block's input as chat-completions arguments: the raw text it arrived as, if a
    client sent one back (`_input`), else the object as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


class _Verbatim(str):
    """Arguments nested deeper than Python's JSON parser goes: sent as written, spliced into the
    reply's JSON (`_dumps`), so the client meets the object the wire would carry."""


def _input(arguments: str) -> Any:
    """Tool-call arguments as a `tool_use` block's `input`: the object, or, for arguments a scenario
    scripts as malformed JSON, the raw text (the real API never sends one; the scenario asks what
    a client does with it)."""
    try:
        value = json.loads(arguments)
    except RecursionError:
        return _Verbatim(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _dumps(value: dict[str, Any]) -> str:
    """`value` as JSON, each `_Verbatim` input spliced in as written (in place of a unique mark)."""
    raw: dict[str, str] = {}
    content = []
    for block in value.get("content", []):
        if isinstance(block.get("input"), _Verbatim):
            mark = f"\0verbatim-{len(raw)}\0"  # a NUL never occurs in JSON text a script writes
            raw[json.dumps(mark)] = block["input"]
            block = {**block, "input": mark}
        content.append(block)
    text = json.dumps({**value, "content": content})
    for mark, written in raw.items():
        text = text.replace(mark, written)
    return text


def reply(body: dict[str, Any], message: dict[str, Any], number: int,
          held: Threads | None = None) -> tuple[str, bytes]:
    """The chat-completions assistant `message` as a Messages `message`, or its events when the
    request streams (`held` keeps it for a threaded request). `stop_reason` is `tool_use` or
    `end_turn`: a scripted reply is never cut short, so never `max_tokens`."""
    calls = message.get("tool_calls", [])
    content: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message.get(
        "content") else []
    content += [{"type": "tool_use", "id": "toolu_" + str(c["id"]).removeprefix("call_"),
                 "name": c["function"]["name"], "input": _input(c["function"]["arguments"])}
                for c in calls]
    stop = "tool_use" if calls else "end_turn"
    head = {"id": f"msg_{number}", "type": "message", "role": "assistant",
            "model": str(body.get("model", "scripted")), "stop_sequence": None}
    whole = {**head, "content": content, "stop_reason": stop,
             "usage": {"input_tokens": 0, "output_tokens": 0}}
    if held is not None:
        held.hold(body, whole)
    if not body.get("stream"):
        return "application/json", _dumps(whole).encode()
    raw = [c["function"]["arguments"] for c in calls]
    events = _events(head, content, raw, stop)
    return "text/event-stream", "".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _events(head: dict[str, Any], content: list[dict[str, Any]], arguments: list[str],
            stop: str) -> Iterator[dict[str, Any]]:
    """The streaming events the real API sends: message_start, each block's start, deltas (text,
    or the input's JSON text in `input_json_delta`s) and stop, message_delta with the stop reason,
    message_stop."""
    yield {"type": "message_start", "message": {**head, "content": [], "stop_reason": None,
                                                "usage": {"input_tokens": 0, "output_tokens": 0}}}
    calls = iter(arguments)
    for index, block in enumerate(content):
        if block["type"] == "text":
            yield {"type": "content_block_start", "index": index,
                   "content_block": {"type": "text", "text": ""}}
            for start in range(0, len(block["text"]), 16):
                yield {"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": block["text"][start:start + 16]}}
        else:
            yield {"type": "content_block_start", "index": index,
                   "content_block": {**block, "input": {}}}
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "input_json_delta", "partial_json": next(calls)}}
        yield {"type": "content_block_stop", "index": index}
    yield {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
           "usage": {"output_tokens": 0}}
    yield {"type": "message_stop"}


#: The error `type` the real API sends with each status (the `anthropic` SDK's `ErrorType` and
#: `types/shared/error_object.py`: a gateway timeout is `timeout_error`, an overload `overloaded_error`).
_ERRORS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
           404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
           504: "timeout_error", 529: "overloaded_error"}
#: The status the real API answers in place of one a scenario scripts: it signals an unavailable
#: (overloaded) service with 529 `overloaded_error`, never 503, and the SDK retries 529 as any 5xx
#: (`_base_client.py` `_should_retry`: 408, 409, 429, >= 500).
_STATUSES = {503: 529}


def status(scripted: int) -> int:
    """The status the real API answers with where a scenario scripts `scripted`."""
    return _STATUSES.get(scripted, scripted)


def error(status: int, message: str) -> dict[str, Any]:
    """An error body as the real API shapes it: `{"type": "error", "error": {"type", "message"}}`."""
    kind = _ERRORS.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def replayed(held: Threads, body: dict[str, Any], content_type: str, payload: bytes) -> None:
    """Hold a recorded reply to `body` (as `Threads.expand` returned it) in its thread, as `reply`
    held it when it was recorded, so that a replayed `continue` expands to the same conversation."""
    message = _recorded(content_type, payload)
    if message is not None:
        held.hold(body, message)


def _recorded(content_type: str, payload: bytes) -> dict[str, Any] | None:
    """The `message` a reply carries: its JSON, or the one its events build (text deltas joined, a
    `tool_use` block's `input_json_delta`s parsed); None if it carries none."""
    try:
        if not content_type.startswith("text/event-stream"):
            value = json.loads(payload)
            return value if isinstance(value, dict) and value.get("type") == "message" else None
        message: dict[str, Any] | None = None
        partial: dict[int, str] = {}
        for line in payload.decode().splitlines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            if event.get("type") == "message_start":
                message = {**event["message"], "content": []}
            elif message is not None and event.get("type") == "content_block_start":
                message["content"].append(dict(event["content_block"]))
            elif message is not None and event.get("type") == "content_block_delta":
                block, delta = message["content"][event["index"]], event["delta"]
                if delta.get("type") == "text_delta":
                    block["text"] = block.get("text", "") + delta["text"]
                elif delta.get("type") == "input_json_delta":
                    partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
        for index, text in partial.items():
            assert message is not None
            message["content"][index]["input"] = _input(text)
        return message
    except (ValueError, KeyError, IndexError, TypeError):
        return None
