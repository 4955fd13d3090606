"""The OpenAI Responses API (`POST /v1/responses`) on the scripted endpoint, as a translation: a
request becomes the chat-completions body the scripted model reads, and the chat-completions answer
becomes a `response` object (or its server-sent events). The shapes follow the `openai` SDK's
`openai.types.responses` models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

PATH = "/responses"


def chat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The request as a chat-completions body: `instructions` and the `input` items as messages
    (`function_call` items as an assistant's tool calls, `function_call_output` as tool messages),
    the function tools and `tool_choice` in chat form. The endpoint keeps no state, so a request
    that continues a stored response (`previous_response_id`) is refused."""
    if body.get("previous_response_id"):
        raise ValueError("previous_response_id names a stored response, but this endpoint stores "
                         "none: send the whole conversation in `input` (with `store: false`)")
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": _text(body["instructions"])})
    items = body.get("input") or []
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items:
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


def reply(body: dict[str, Any], message: dict[str, Any], number: int) -> tuple[str, bytes]:
    """The chat-completions assistant `message` as a `response` object, or its events when the
    request streams."""
    output = _output(message, number)
    response = _response(body, number, output, "completed")
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
