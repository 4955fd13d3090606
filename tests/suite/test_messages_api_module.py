"""harnesses/lib/messages-api.mjs, the Messages API as the Node harnesses script it, translates as
conformance/_messages_api.py does: the same chat-completions body for a request (message threads
expanded), the same `message` and the same server-sent events for a reply, the same error bodies."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from conformance import _messages_api

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "harnesses" / "lib" / "messages-api.mjs"

_CALL = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
_TOOLS = [{"name": "add", "description": "Add.", "input_schema": {"type": "object", "properties": {}}},
          {"type": "web_search_20250305", "name": "web_search"}]
#: Requests: a first turn of a thread, its continuation (only the new messages), and a whole history.
REQUESTS: list[dict[str, Any]] = [
    {"model": "m", "max_tokens": 9, "system": "Be brief.", "tools": _TOOLS, "thread": {"type": "create"},
     "messages": [{"role": "user", "content": "What is 1 + 2?"}]},
    {"model": "m", "max_tokens": 9, "thread": {"type": "continue", "previous_message_id": "msg_1"},
     "messages": [{"role": "user", "content": [
         {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "3"}]}]}]},
    {"model": "m", "max_tokens": 9,
     "system": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}],
     "tool_choice": {"type": "tool", "name": "add"}, "tools": _TOOLS, "stream": True, "messages": [
         {"role": "user", "content": "go"},
         {"role": "assistant", "content": [
             {"type": "text", "text": "Adding."},
             {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"a": 1}}]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "oops",
                                       "is_error": True}, {"type": "text", "text": "and?"}]}]},
    {"model": "m", "max_tokens": 9, "tool_choice": {"type": "none"},
     "messages": [{"role": "user", "content": "x"}]},
]
#: Replies (chat-completions assistant messages), each rendered as JSON and as a stream.
MESSAGES: list[dict[str, Any]] = [
    {"role": "assistant", "content": "I will add.", "tool_calls": [
        _CALL, {**_CALL, "id": "call_1_1", "function": {"name": "add", "arguments": "{not json"}}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {**_CALL, "function": {"name": "add", "arguments": "[1, 2]"}}]},
    {"role": "assistant", "content": "The answer is 3, as 1 + 2 = 3."},
]
#: The statuses whose error bodies are compared: each the real API names, and others.
STATUSES = [400, 401, 403, 413, 429, 500, 503, 504, 529, 418, 599]

PROGRAM = """
import { writeFileSync } from 'node:fs';
import { chatBody, errorBody, expand, reply, status } from %s;
const cases = JSON.parse(process.argv[2]);
const out = { requests: [], replies: [], errors: [], statuses: cases.statuses.map(status) };
// The first request's reply is what the second continues.
out.requests.push(chatBody(expand(cases.requests[0])));
await reply(cases.requests[0], cases.messages[0], 1).text();
for (const request of cases.requests.slice(1)) out.requests.push(chatBody(expand(request)));
for (const [i, message] of cases.messages.entries()) {
  for (const stream of [false, true]) {
    out.replies.push(await reply({ model: 'm', stream }, message, 10 + i).text());
  }
}
for (const status of cases.statuses) out.errors.push(errorBody(status, 'why'));
writeFileSync(process.argv[3], JSON.stringify(out));
"""


def _same(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions body with each tool call's arguments as what they say (each language
    spaces its JSON its own way); arguments that are not JSON stay as they are, to the byte."""
    def arguments(text: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def call(c: dict[str, Any]) -> dict[str, Any]:
        return {**c, "function": {**c["function"], "arguments": arguments(c["function"]["arguments"])}}

    return {**body, "messages": [
        {**m, "tool_calls": [call(c) for c in m["tool_calls"]]} if "tool_calls" in m else m
        for m in body["messages"]]}


def _events(payload: str) -> list[Any]:
    lines = payload.splitlines()
    return [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]


def _reply(text: str) -> Any:
    return _events(text) if text.startswith("event: ") else json.loads(text)


def rendered_by_node(tmp_path: Path, program: str, module: Path, cases: dict[str, Any]) -> Any:
    """What `program` (a Node module importing `module` at its `%s`) writes to the file named by its
    second argument, given `cases` as JSON in its first."""
    node = shutil.which("node")
    assert node is not None, "the Node harness tests need Node.js on PATH"
    path = tmp_path / "program.mjs"
    path.write_text(program % json.dumps(module.as_uri()), encoding="utf-8")
    out = tmp_path / "out.json"
    ran = subprocess.run([node, str(path), json.dumps(cases), str(out)], capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def test_the_node_messages_api_module_translates_as_the_python_one_does(tmp_path: Path) -> None:
    rendered = rendered_by_node(tmp_path, PROGRAM, MODULE,
                                {"requests": REQUESTS, "messages": MESSAGES, "statuses": STATUSES})

    held = _messages_api.Threads()
    _messages_api.reply(REQUESTS[0], MESSAGES[0], 1, held)
    expected = [_messages_api.chat_body(held.expand(r)) for r in REQUESTS]
    assert [_same(r) for r in rendered["requests"]] == [_same(r) for r in expected]
    replies = [_messages_api.reply({"model": "m", "stream": stream}, m, 10 + i)[1].decode()
               for i, m in enumerate(MESSAGES) for stream in (False, True)]
    assert [_reply(r) for r in rendered["replies"]] == [_reply(r) for r in replies]
    assert rendered["errors"] == [_messages_api.error(s, "why") for s in STATUSES]
    assert rendered["statuses"] == [_messages_api.status(s) for s in STATUSES]
