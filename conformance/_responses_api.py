"""The OpenAI Responses API (`POST /v1/responses`) on the scripted endpoint, as a translation: a
request becomes the chat-completions body the scripted model reads, and the chat-completions answer
becomes a `response` object (or its server-sent events). The shapes follow the `openai` SDK's
`openai.types.responses` models."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

from conformance._held import Refused, held

__all__ = ["PATH", "Stored", "chat_body", "error", "replayed", "reply", "stored"]

PATH = "/responses"


class Stored:
    """The responses the endpoint stores, as the real API does unless a request says `store:
    false`, by id: the whole input a response answered and its output. A request that names one as
    its `previous_response_id` continues that conversation with only its new input items (the
    default of clients that keep the conversation on the service: Microsoft Agent Framework's
    `OpenAIChatClient`). Instructions and tools are the request's own: the API carries neither over."""

    def __init__(self) -> None:
        self._held: dict[str, list[Any]] = {}
        self._lock = threading.Lock()

    def expand(self, body: dict[str, Any]) -> dict[str, Any]:
        """The whole request a continuation stands for: the stored conversation's items, then its
        own. An unknown `previous_response_id` is refused as the real API refuses it (400,
        `previous_response_not_found`); a `conversation` (the Conversations API) too, as this
        endpoint holds none."""
        if body.get("conversation"):
            raise _refused("conversation", None, "this endpoint holds no conversations: send "
                           "previous_response_id, or the whole conversation in `input`")
        previous = body.get("previous_response_id")
        if not previous:
            return body
        with self._lock:
            items = self._held.get(str(previous))
        if items is None:
            raise _refused("previous_response_id", "previous_response_not_found",
                           f"Previous response with id {str(previous)!r} not found.")
        whole = {k: v for k, v in body.items() if k != "previous_response_id"}
        return {**whole, "input": [*items, *_items(body.get("input"))]}

    def hold(self, body: dict[str, Any], response: dict[str, Any]) -> None:
        """Store `response` to `body` (as `expand` returned it), unless the request said `store: false`."""
        if body.get("store") is False or not isinstance(response.get("id"), str):
            return
        with self._lock:
            self._held[response["id"]] = [*_items(body.get("input")), *(response.get("output") or [])]


def stored(owner: object) -> Stored:
    """The responses stored for `owner` (an endpoint, the scripted model an in-memory seam serves, a
    replaying cassette)."""
    return held(owner, Stored)


def _refused(param: str, code: str | None, message: str) -> Refused:
    return Refused(400, {"error": {"message": message, "type": "invalid_request_error", "param": param,
                                   "code": code}}, message)


def _items(value: Any) -> list[Any]:
    """`input` as a list of items: a string is one user message."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def chat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The request as a chat-completions body: `instructions` and the `input` items as messages
    (`function_call` items as an assistant's tool calls, `function_call_output` as tool messages),
    the function tools and `tool_choice` in chat form. A continuation (`previous_response_id`) is
    read once `Stored.expand` has made it the whole conversation."""
    if body.get("previous_response_id"):
        raise ValueError("previous_response_id names a stored response: expand the request first "
                         "(Stored.expand)")
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": _text(body["instructions"])})
    for item in _items(body.get("input")):
        kind = item.get("type", "message")
        if kind == "message":
            role = "system" if item.get("role") == "developer" else str(item.get("role"))
            messages.append({"role": role, "content": _text(item.get("content"))})
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            if not messages or messages[-1]["role"] != "assistant":  # else: the same reply's text
                messages.append({"role": "assistant", "content": ""})
            messages[-1].setdefault("tool_calls", []).append(call)
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                             "content": _text(item.get("output"))})
        # Other items (reasoning, ...) carry nothing the script reads.
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages,
                            "stream": bool(body.get("stream"))}
    tools = [{"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters")
                                               if k in t}}
             for t in body.get("tools") or [] if t.get("type") == "function"]
    if tools:
        chat["tools"] = tools
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        chat["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif choice is not None:
        chat["tool_choice"] = choice
    return chat


def _text(content: Any) -> str:
    if isinstance(content, list):  # input_text / output_text parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def reply(body: dict[str, Any], message: dict[str, Any], number: int,
          responses: Stored | None = None) -> tuple[str, bytes]:
    """The chat-completions assistant `message` as a `response` object, or its events when the
    request streams (stored in `responses` unless the request says `store: false`)."""
    output = _output(message, number)
    response = _response(body, number, output, "completed")
    if responses is not None:
        responses.hold(body, response)
    if not body.get("stream"):
        return "application/json", json.dumps(response).encode()
    events = _events(body, number, output, response)
    data = "".join(f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': i})}\n\n"
                   for i, e in enumerate(events))
    return "text/event-stream", data.encode()


def _output(message: dict[str, Any], number: int) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append({"type": "message", "id": f"msg_{number}", "status": "completed",
                       "role": "assistant", "content": [
                           {"type": "output_text", "text": message["content"], "annotations": []}]})
    for index, call in enumerate(message.get("tool_calls", [])):
        output.append({"type": "function_call", "id": f"fc_{number}_{index}", "call_id": call["id"],
                       "name": call["function"]["name"], "arguments": call["function"]["arguments"],
                       "status": "completed"})
    return output


def _response(body: dict[str, Any], number: int, output: list[dict[str, Any]],
              status: str) -> dict[str, Any]:
    # No `metadata` (optional in the SDK's `Response`): a cassette keeps no metadata map, which may
    # hold anything, so replay would serve it redacted.
    return {
        "id": f"resp_{number}", "object": "response", "created_at": 0, "status": status,
        "model": str(body.get("model", "scripted")), "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
        "instructions": body.get("instructions"), "error": None, "incomplete_details": None,
        "temperature": None, "top_p": None,
        "usage": {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 0,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 0},
    }


def _events(body: dict[str, Any], number: int, output: list[dict[str, Any]],
            response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The streaming events the real API sends for `output`: each item added, its text or arguments
    in deltas, done; then the completed response."""
    started = _response(body, number, [], "in_progress")
    yield {"type": "response.created", "response": started}
    yield {"type": "response.in_progress", "response": started}
    for index, item in enumerate(output):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield {"type": "response.output_item.added", "output_index": index,
                   "item": {**item, "status": "in_progress", "content": []}}
            part = {"type": "output_text", "text": "", "annotations": []}
            yield {"type": "response.content_part.added", **at, "content_index": 0, "part": part}
            for start in range(0, len(text), 16):
                yield {"type": "response.output_text.delta", **at, "content_index": 0,
                       "delta": text[start:start + 16], "logprobs": []}
            yield {"type": "response.output_text.done", **at, "content_index": 0, "text": text,
                   "logprobs": []}
            yield {"type": "response.content_part.done", **at, "content_index": 0,
                   "part": item["content"][0]}
        else:
            yield {"type": "response.output_item.added", "output_index": index,
                   "item": {**item, "status": "in_progress", "arguments": ""}}
            yield {"type": "response.function_call_arguments.delta", **at, "delta": item["arguments"]}
            yield {"type": "response.function_call_arguments.done", **at, "name": item["name"],
                   "arguments": item["arguments"]}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    yield {"type": "response.completed", "response": response}


#: The error `type` and `code` the real API sends with each status.
_ERRORS = {400: ("invalid_request_error", None), 401: ("invalid_request_error", "invalid_api_key"),
           404: ("invalid_request_error", None), 413: ("invalid_request_error", None),
           429: ("requests", "rate_limit_exceeded"), 500: ("server_error", None),
           503: ("server_error", None), 504: ("server_error", None)}


def error(status: int, message: str) -> dict[str, Any]:
    """An error body as the real API shapes it: `{"error": {"message", "type", "param", "code"}}`."""
    kind, code = _ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def replayed(responses: Stored, body: dict[str, Any], content_type: str, payload: bytes) -> None:
    """Store a recorded reply to `body` (as `Stored.expand` returned it), as `reply` stored it when
    it was recorded, so that a replayed continuation expands to the same conversation: the response
    object, or a stream's `response.completed` event's."""
    try:
        if content_type.startswith("text/event-stream"):
            events = [json.loads(line[5:]) for line in payload.decode().splitlines()
                      if line.startswith("data:")]
            response = next((e["response"] for e in events if e.get("type") == "response.completed"), None)
        else:
            response = json.loads(payload)
    except (ValueError, KeyError, TypeError):
        return
    if isinstance(response, dict) and response.get("object") == "response":
        responses.hold(body, response)
