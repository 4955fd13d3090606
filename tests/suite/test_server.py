"""The loopback scripted server, driven by real clients: httpx, the reference LM, and openai."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

import reference
from conformance import ExtractTurn, FaultTurn, ScriptedModel, StepTurn
from conformance.server import ScriptedServer

CHAT_SYSTEM = {"role": "system", "content": "Output next_tool_name ... [[ ## completed ## ]]"}
STEP = StepTurn(thought="add them", tool_name="add", tool_args={"a": 1, "b": 2})


def _post(server: ScriptedServer, **body: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json={"model": "m", **body}, timeout=5)


def test_a_chat_request_is_answered_in_chat_sections_and_logged() -> None:
    model = ScriptedModel([STEP])
    with ScriptedServer(model) as server:
        reply = _post(server, messages=[CHAT_SYSTEM, {"role": "user", "content": "2+1?"}])
    assert reply.status_code == 200
    content = reply.json()["choices"][0]["message"]["content"]
    assert "[[ ## next_tool_name ## ]]\nadd" in content and content.endswith("[[ ## completed ## ]]")
    assert [(c.kind, c.adapter) for c in model.calls] == [("step", "chat")]
    assert server.requests[0]["messages"][1]["content"] == "2+1?"


def test_a_request_with_tools_gets_native_tool_calls() -> None:
    model = ScriptedModel([STEP])
    tools = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    with ScriptedServer(model) as server:
        message = _post(server, messages=[{"role": "user", "content": "?"}], tools=tools).json()[
            "choices"][0]["message"]
    assert message["tool_calls"][0]["function"] == {"name": "add", "arguments": '{"a": 1, "b": 2}'}
    assert model.calls[0].adapter == "native" and model.calls[0].tools == tools


def test_an_unexpected_call_is_a_400_that_names_it() -> None:
    model = ScriptedModel([ExtractTurn(outputs={"answer": "x"})])
    with ScriptedServer(model) as server:
        reply = _post(server, messages=[CHAT_SYSTEM])
    assert reply.status_code == 400 and "was a step call" in reply.json()["error"]["message"]
    assert model.violation is not None


def test_faults_are_retried_by_the_reference_lm_over_real_http() -> None:
    model = ScriptedModel([FaultTurn(fault="429", retry_after=0), FaultTurn(fault="500"),
                           FaultTurn(fault="connection"), ExtractTurn(outputs={"answer": "ok"})])
    sleeps: list[float] = []
    with ScriptedServer(model) as server:
        lm = reference.LM("m", base_url=server.url, sleep=sleeps.append)
        text = lm.complete([{"role": "system", "content": "Reply with a single JSON object."}])
    assert json.loads(text) == {"answer": "ok"}
    assert len(server.requests) == 4 and sleeps == [0.0, 1.0, 2.0]


def test_a_slow_reply_times_the_client_out() -> None:
    model = ScriptedModel([FaultTurn(fault="timeout")])
    with ScriptedServer(model, slow_seconds=1.0) as server, pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/chat/completions", json={"messages": []}, timeout=0.2)


def test_streaming_sends_chunks_an_openai_client_reassembles() -> None:
    openai = pytest.importorskip("openai")  # installed with the peers extra
    model = ScriptedModel([STEP])
    with ScriptedServer(model) as server:
        client = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=[CHAT_SYSTEM], stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert "[[ ## next_tool_args ## ]]\n{\"a\": 1, \"b\": 2}" in text
