"""harnesses/lib/responses-api.mjs, the Responses API as the Node harnesses script it, translates as
conformance/_responses_api.py does: the same chat-completions body for a request (a
`previous_response_id` continuation expanded), the same `response` object and the same server-sent
events for a reply, the same refusals and error bodies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance import _responses_api
from conformance._held import Refused
from tests.suite.test_messages_api_module import MESSAGES, STATUSES, _reply, _same, rendered_by_node

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "harnesses" / "lib" / "responses-api.mjs"

_TOOLS = [{"type": "function", "name": "add", "description": "Add.", "strict": True,
           "parameters": {"type": "object", "properties": {}}},
          {"type": "web_search_preview"}]
#: Requests: a first turn, its continuation (only the new items), a whole history as the Agents SDK
#: sends it, and a tool-less one that stores nothing.
REQUESTS: list[dict[str, Any]] = [
    {"model": "m", "instructions": "Be brief.", "tools": _TOOLS, "input": "What is 1 + 2?"},
    {"model": "m", "previous_response_id": "resp_1", "tools": _TOOLS, "input": [
        {"type": "function_call_output", "call_id": "call_1", "output": "3"}]},
    {"model": "m", "tools": _TOOLS, "tool_choice": {"type": "function", "name": "add"}, "stream": True,
     "parallel_tool_calls": False, "input": [
         {"role": "developer", "content": "Be brief."},
         {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
         {"type": "message", "role": "assistant", "id": "msg_2", "status": "completed",
          "content": [{"type": "output_text", "text": "Adding.", "annotations": []}]},
         {"type": "function_call", "call_id": "call_2", "name": "add", "arguments": '{"a": 1}'},
         {"type": "function_call_output", "call_id": "call_2", "output": [
             {"type": "input_text", "text": "oops"}]},
         {"type": "reasoning", "id": "rs_1", "summary": []},
         {"type": "function_call", "call_id": "call_3", "name": "add", "arguments": "{not json"}]},
    {"model": "m", "store": False, "tool_choice": "none", "input": [{"role": "user", "content": "x"}]},
]
#: Requests the endpoint refuses: an unknown stored response, and a conversation.
REFUSED: list[dict[str, Any]] = [
    {"model": "m", "previous_response_id": "resp_404", "input": "x"},
    {"model": "m", "conversation": "conv_1", "input": "x"},
]

PROGRAM = """
import { writeFileSync } from 'node:fs';
import { chatBody, errorBody, expand, reply } from %s;
const cases = JSON.parse(process.argv[2]);
const out = { requests: [], replies: [], refused: [], errors: [] };
// The first request's reply is what the second continues.
out.requests.push(chatBody(expand(cases.requests[0])));
await reply(cases.requests[0], cases.messages[0], 1).text();
for (const request of cases.requests.slice(1)) out.requests.push(chatBody(expand(request)));
for (const request of cases.refused) {
  try {
    expand(request);
    out.refused.push(null);
  } catch (error) {
    out.refused.push([error.status, error.body]);
  }
}
for (const [i, message] of cases.messages.entries()) {
  for (const stream of [false, true]) {
    out.replies.push(await reply({ model: 'm', stream }, message, 10 + i).text());
  }
}
for (const status of cases.statuses) out.errors.push(errorBody(status, 'why'));
writeFileSync(process.argv[3], JSON.stringify(out));
"""


def _refusal(stored: _responses_api.Stored, request: dict[str, Any]) -> Any:
    try:
        stored.expand(request)
    except Refused as refused:
        return [refused.status, refused.body]
    return None


def test_the_node_responses_api_module_translates_as_the_python_one_does(tmp_path: Path) -> None:
    rendered = rendered_by_node(tmp_path, PROGRAM, MODULE, {"requests": REQUESTS, "refused": REFUSED,
                                                            "messages": MESSAGES, "statuses": STATUSES})

    stored = _responses_api.Stored()
    _responses_api.reply(REQUESTS[0], MESSAGES[0], 1, stored)
    expected = [_responses_api.chat_body(stored.expand(r)) for r in REQUESTS]
    assert [_same(r) for r in rendered["requests"]] == [_same(r) for r in expected]
    assert rendered["refused"] == [_refusal(stored, r) for r in REFUSED]
    replies = [_responses_api.reply({"model": "m", "stream": stream}, m, 10 + i)[1].decode()
               for i, m in enumerate(MESSAGES) for stream in (False, True)]
    assert [_reply(r) for r in rendered["replies"]] == [_reply(r) for r in replies]
    assert rendered["errors"] == [_responses_api.error(s, "why") for s in STATUSES]
