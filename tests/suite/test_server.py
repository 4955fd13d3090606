"""The loopback scripted server, driven by real clients: httpx, the reference LM, and openai."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
import pytest

import reference
from conformance import ExtractTurn, FaultTurn, ScriptedModel, StepTurn, server, translate
from conformance.server import MAX_BODY_BYTES, ScriptedServer

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
    assert model.calls[0].messages[1]["content"] == "2+1?" and server.received == 1


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
    assert server.received == 4 and sleeps == [0.0, 1.0, 2.0]


def test_a_slow_reply_times_the_client_out() -> None:
    model = ScriptedModel([FaultTurn(fault="timeout")])
    with ScriptedServer(model, slow_seconds=1.0) as server, pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/chat/completions", json={"messages": []}, timeout=0.2)


def test_streaming_sends_chunks_an_openai_client_reassembles() -> None:
    openai = pytest.importorskip("openai")  # installed with the dev extra
    model = ScriptedModel([STEP])
    with ScriptedServer(model) as server:
        client = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=[CHAT_SYSTEM], stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert "[[ ## next_tool_args ## ]]\n{\"a\": 1, \"b\": 2}" in text


# Hostile or odd clients: every request gets a clear answer, nothing is kept, nothing hangs.


def _raw(server: ScriptedServer, request: bytes, timeout: float = 5.0) -> bytes:
    """Send `request` on a fresh connection; everything the server answers before it closes or
    goes quiet for `timeout` seconds."""
    host, port = server.url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
                if b"\r\n\r\n" in received and received.split(b"\r\n\r\n", 1)[1].startswith(b"{") \
                        and received.rstrip().endswith(b"}"):
                    break
        except TimeoutError:
            pass
    return received


def _status_and_error(reply: bytes) -> tuple[int, str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"]["message"]


def test_a_query_string_on_the_path_is_accepted() -> None:
    # Clients that add `?api-version=...` (Azure style) once got a 404, blamed on the library.
    model = ScriptedModel([STEP])
    with ScriptedServer(model) as server:
        reply = httpx.post(f"{server.url}/chat/completions?api-version=2024-06-01",
                           json={"model": "m", "messages": [CHAT_SYSTEM]}, timeout=5)
        other = httpx.post(f"{server.url}/embeddings?api-version=x", json={}, timeout=5)
    assert reply.status_code == 200 and model.calls[0].kind == "step"
    assert other.status_code == 404


@pytest.mark.parametrize(("body", "says"), [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "a JSON object"),
    (b'{"messages": "hi"}', "not a chat-completions request"),
    (b"\xff\xfe", "not valid JSON"),
])
def test_a_body_that_is_not_a_chat_request_is_a_400_that_says_why(body: bytes, says: str) -> None:
    model = ScriptedModel([STEP])
    with ScriptedServer(model) as server:
        reply = httpx.post(f"{server.url}/chat/completions", content=body, timeout=5)
    assert reply.status_code == 400 and says in reply.json()["error"]["message"]
    assert model.calls == []


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", "", "\u00b2"])
def test_a_bad_content_length_is_a_400(length: str) -> None:
    with ScriptedServer(ScriptedModel([STEP])) as server:
        reply = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: " + length.encode() + b"\r\n\r\n{}")
    status, message = _status_and_error(reply)
    assert status == 400 and "Content-Length" in message


def test_a_body_over_the_cap_is_a_413_without_reading_it() -> None:
    # A Content-Length of 10^12 once raised MemoryError in the handler, and got no reply.
    with ScriptedServer(ScriptedModel([STEP])) as server:
        start = time.perf_counter()
        reply = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 1000000000000\r\n\r\n{")
        over = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Length: " + str(MAX_BODY_BYTES + 1).encode() + b"\r\n\r\n{")
        digits = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{")  # past int()'s digit limit
    assert time.perf_counter() - start < 2.0
    for answer in (reply, over, digits):
        status, message = _status_and_error(answer)
        assert status == 413 and str(MAX_BODY_BYTES) in message


def test_request_bodies_are_not_kept() -> None:
    # Every body was once kept for the server's lifetime; the scenario's log is the model's calls.
    marker = "unlogged-field-" + "x" * 1000
    model = ScriptedModel([STEP] * 3)
    with ScriptedServer(model) as server:
        for _ in range(3):
            assert _post(server, messages=[CHAT_SYSTEM], metadata=marker).status_code == 200
        assert server.received == 3 and len(model.calls) == 3
        assert marker not in repr(vars(server)) and marker not in repr(model.calls)


def test_a_stalled_client_is_dropped_after_the_socket_timeout() -> None:
    with ScriptedServer(ScriptedModel([STEP]), socket_timeout=0.2) as server:
        start = time.perf_counter()
        reply = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 100\r\n\r\n{", timeout=5.0)
        waited = time.perf_counter() - start
        assert _post(server, messages=[CHAT_SYSTEM]).status_code == 200  # still serving
    assert waited < 2.0
    assert reply == b"" or _status_and_error(reply)[0] == 408


def _chunked(body: bytes, size: int = 7) -> bytes:
    parts = [body[i:i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\nX-Trailer: t\r\n\r\n"


def test_a_chunked_request_body_is_read_whole() -> None:
    # A chunked body was once read as empty (only Content-Length was honoured).
    body = json.dumps({"model": "m", "messages": [CHAT_SYSTEM, {"role": "user", "content": "1 + 2"}]})
    model = ScriptedModel([STEP])
    with ScriptedServer(model) as server:
        reply = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + _chunked(body.encode()))
    assert reply.startswith(b"HTTP/1.1 200"), reply[:300]
    assert model.calls and "1 + 2" in json.dumps(model.calls[0].model_dump())


def test_a_chunked_body_with_a_bad_size_or_over_the_cap_is_refused() -> None:
    with ScriptedServer(ScriptedModel([STEP])) as server:
        bad = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
        over = _raw(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n{" % (MAX_BODY_BYTES + 1))
    assert _status_and_error(bad)[0] == 400
    status, message = _status_and_error(over)
    assert status == 413 and str(MAX_BODY_BYTES) in message


TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {}}}]


@pytest.mark.parametrize("call_for", [server.native_call, server.native_call_for(True)])
def test_a_request_that_declares_tools_but_forbids_them_is_the_final_call_not_a_step(
        call_for: Any) -> None:
    messages = [{"role": "user", "content": "2+1?"}]
    assert call_for({"messages": messages, "tools": TOOLS}).kind == "step"
    assert call_for({"messages": messages, "tools": TOOLS, "tool_choice": "auto"}).kind == "step"
    final = call_for({"messages": messages, "tools": TOOLS, "tool_choice": "none"})
    assert (final.kind, final.adapter, final.tools) == ("extract", "native", TOOLS)


def test_native_call_for_an_agent_without_tools_logs_every_request_as_a_step() -> None:
    body = {"messages": [{"role": "user", "content": "?"}], "tools": TOOLS, "tool_choice": "none"}
    assert server.native_call_for(False)(body).kind == "step"


@pytest.mark.parametrize("path", ["/completions", "/embeddings"])
def test_a_path_the_seam_does_not_serve_is_refused_naming_it_as_the_bindings_fault(path: str) -> None:
    model = ScriptedModel([STEP])
    transport = server.ServingTransport(server.native_call)
    with translate.serving(model), httpx.Client(transport=transport) as client:
        reply = client.post(f"{server.IN_MEMORY_URL}{path}", json={"input": "2+1?"})
    message = reply.json()["error"]["message"]
    assert reply.status_code == 404 and f"'/v1{path}'" in message and "'/chat/completions'" in message
    assert model.binding_fault == message and model.calls == [] and len(model.unused) == 1
