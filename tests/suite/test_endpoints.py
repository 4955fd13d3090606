"""The endpoint's OpenAI Responses and Anthropic Messages APIs, driven by the real `openai` and
`anthropic` clients: the same script answers them as it answers chat completions, logged and
counted alike, and the scripted faults come in each API's error shape, which each SDK retries (or
not) as it retries the real API."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from conformance import ExtractTurn, FaultTurn, FinalTurn, ScriptedModel, StepTurn, server
from conformance.server import ScriptedServer

openai = pytest.importorskip("openai")  # both installed with the dev extra
anthropic = pytest.importorskip("anthropic")

STEP = StepTurn(thought="I will add", tool_name="add", tool_args={"a": 2, "b": 2})
FINAL = FinalTurn(outputs={"answer": "4"})
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
RESPONSES_TOOLS: Any = [{"type": "function", "name": "add", "description": "Add.", "parameters": SCHEMA,
                         "strict": False}]
MESSAGES_TOOLS: Any = [{"name": "add", "description": "Add.", "input_schema": SCHEMA}]


def _model(turns: Any = (), **standing: Any) -> ScriptedModel:
    """A script whose final answers reach the client as they are (no `finish` step first)."""
    return ScriptedModel(turns, finish_then_extract=False, **standing)


def _openai(url: str, retries: int = 2) -> Any:
    return openai.OpenAI(base_url=url, api_key="unused", max_retries=retries)


def _anthropic(url: str, retries: int = 2) -> Any:
    return anthropic.Anthropic(base_url=url.removesuffix("/v1"), api_key="unused", max_retries=retries)


# -- the OpenAI Responses API ------------------------------------------------------------------------


def test_a_responses_step_is_a_function_call_and_its_output_reaches_the_next_call() -> None:
    model = _model([STEP, FINAL])
    with ScriptedServer(model) as endpoint:
        client = _openai(endpoint.url)
        first = client.responses.create(model="m", instructions="Answer.", input="What is 2 + 2?",
                                        tools=RESPONSES_TOOLS)
        calls = [item for item in first.output if item.type == "function_call"]
        assert [(c.name, json.loads(c.arguments)) for c in calls] == [("add", {"a": 2, "b": 2})]
        assert first.output_text == "I will add"
        items: Any = [{"role": "user", "content": "What is 2 + 2?"},
                      *[item.model_dump(exclude_none=True) for item in first.output],
                      {"type": "function_call_output", "call_id": calls[0].call_id, "output": "4"}]
        second = client.responses.create(model="m", input=items, tools=RESPONSES_TOOLS)
    assert second.output_text == "4" and [i.type for i in second.output] == ["message"]
    assert [(c.kind, c.adapter) for c in model.calls] == [("step", "native"), ("step", "native")]
    assert model.calls[0].messages[0] == {"role": "system", "content": "Answer."}
    shown = model.calls[1].messages
    assert shown[1]["role"] == "assistant" and shown[2]["role"] == "tool" and shown[2]["content"] == "4"
    assert "add" in model.calls[1].text() and endpoint.received == 2


def test_a_streamed_responses_reply_reassembles_into_the_same_output() -> None:
    model = _model([STEP, FINAL])
    with ScriptedServer(model) as endpoint:
        client = _openai(endpoint.url)
        with client.responses.stream(model="m", input="2 + 2?", tools=RESPONSES_TOOLS) as stream:
            kinds = [event.type for event in stream]
            step = stream.get_final_response()
        with client.responses.stream(model="m", input="2 + 2?", tools=RESPONSES_TOOLS) as stream:
            text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
    call = next(item for item in step.output if item.type == "function_call")
    assert (call.name, json.loads(call.arguments)) == ("add", {"a": 2, "b": 2})
    assert "response.function_call_arguments.delta" in kinds and kinds[-1] == "response.completed"
    assert text == "4"


def test_responses_tool_choice_none_is_the_final_call_not_a_step() -> None:
    model = _model([ExtractTurn(outputs={"answer": "4"})])
    with ScriptedServer(model) as endpoint:
        reply = _openai(endpoint.url).responses.create(model="m", input="2 + 2?", tools=RESPONSES_TOOLS,
                                                       tool_choice="none")
    assert reply.output_text == "4" and model.calls[0].kind == "extract"
    assert server.native_call_for(True)(server.APIS[1].chat_body(
        {"input": "?", "tools": RESPONSES_TOOLS, "tool_choice": "none"})).kind == "extract"


@pytest.mark.parametrize("fault", [FaultTurn(fault="429", retry_after=0), FaultTurn(fault="500"),
                                   FaultTurn(fault="503")])
def test_the_openai_sdk_retries_a_responses_rate_limit_or_server_error(fault: FaultTurn) -> None:
    model = _model([fault, FINAL])
    with ScriptedServer(model) as endpoint:
        reply = _openai(endpoint.url).responses.create(model="m", input="2 + 2?", tools=RESPONSES_TOOLS)
    assert reply.output_text == "4" and endpoint.received == 2


def test_a_responses_400_is_not_retried_and_has_the_real_error_shape() -> None:
    model = _model([FaultTurn(fault="400"), FINAL])
    with ScriptedServer(model) as endpoint, pytest.raises(openai.BadRequestError) as raised:
        _openai(endpoint.url).responses.create(model="m", input="2 + 2?")
    assert endpoint.received == 1 and raised.value.status_code == 400
    assert raised.value.body == {"message": "scripted fault: Bad Request", "type": "invalid_request_error",
                                 "param": None, "code": None}


def test_a_responses_request_continuing_a_response_the_endpoint_never_stored_is_refused_as_the_api_does(
) -> None:
    with ScriptedServer(_model([FINAL])) as endpoint:
        client = _openai(endpoint.url)
        unstored = client.responses.create(model="m", input="?", store=False, tools=RESPONSES_TOOLS)
        for previous in ("resp_9", unstored.id):
            with pytest.raises(openai.BadRequestError) as raised:
                client.responses.create(model="m", input="?", previous_response_id=previous,
                                        tools=RESPONSES_TOOLS)
            assert raised.value.code == "previous_response_not_found" and previous in str(raised.value)
    assert endpoint.received == 1


def test_a_responses_request_continuing_a_stored_response_shows_the_script_the_whole_conversation(
) -> None:
    # The real API stores a response unless told `store: false`; a client that keeps the
    # conversation there (Agent Framework's OpenAIChatClient) sends only the new items after it. The
    # endpoint once refused every such request.
    model = _model([STEP, FINAL])
    with ScriptedServer(model) as endpoint:
        client = _openai(endpoint.url)
        first = client.responses.create(model="m", instructions="Answer.", input="What is 2 + 2?",
                                        tools=RESPONSES_TOOLS)
        call = next(item for item in first.output if item.type == "function_call")
        second = client.responses.create(model="m", previous_response_id=first.id, tools=RESPONSES_TOOLS,
                                         input=[{"type": "function_call_output", "call_id": call.call_id,
                                                 "output": "4"}])
    assert second.output_text == "4"
    shown = model.calls[1]
    assert [m["role"] for m in shown.messages] == ["user", "assistant", "tool"]  # no instructions: the
    assert shown.messages[0]["content"] == "What is 2 + 2?"  # API carries none over
    assert shown.messages[1]["content"] == 'I will add\ncall add({"a": 2, "b": 2})'
    assert shown.messages[2]["content"] == "4" and shown.kind == "step"


# -- Anthropic's Messages API ------------------------------------------------------------------------


def test_a_messages_step_is_a_tool_use_block_and_its_result_reaches_the_next_call() -> None:
    model = _model([STEP, FINAL])
    with ScriptedServer(model) as endpoint:
        client = _anthropic(endpoint.url)
        question = {"role": "user", "content": "What is 2 + 2?"}
        first = client.messages.create(model="m", max_tokens=100, system="Answer.", messages=[question],
                                       tools=MESSAGES_TOOLS)
        use = first.content[-1]
        assert first.stop_reason == "tool_use" and first.content[0].text == "I will add"
        assert (use.type, use.name, use.input) == ("tool_use", "add", {"a": 2, "b": 2})
        result = {"type": "tool_result", "tool_use_id": use.id, "content": "4"}
        second = client.messages.create(model="m", max_tokens=100, tools=MESSAGES_TOOLS, messages=[
            question, {"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}])
    assert second.stop_reason == "end_turn" and [b.text for b in second.content] == ["4"]
    assert [(c.kind, c.adapter) for c in model.calls] == [("step", "native"), ("step", "native")]
    assert model.calls[0].messages[0] == {"role": "system", "content": "Answer."}
    shown = model.calls[1].messages
    assert [m["role"] for m in shown] == ["user", "assistant", "tool"] and shown[2]["content"] == "4"


def test_a_streamed_messages_reply_reassembles_with_input_json_deltas() -> None:
    model = _model([STEP])
    with ScriptedServer(model) as endpoint, _anthropic(endpoint.url).messages.stream(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "2 + 2?"}],
            tools=MESSAGES_TOOLS) as stream:
        kinds = [event.type for event in stream]
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use" and message.content[1].input == {"a": 2, "b": 2}
    assert kinds[0] == "message_start" and "input_json" in kinds and kinds[-1] == "message_stop"


@pytest.mark.parametrize(("choice", "kind"), [({"type": "none"}, "extract"), ({"type": "auto"}, "step"),
                                              ({"type": "any"}, "step"),
                                              ({"type": "tool", "name": "add"}, "step")])
def test_messages_tool_choice_none_is_the_final_call_and_the_others_are_steps(
        choice: Any, kind: str) -> None:
    model = _model(every_step=STEP, every_extract=ExtractTurn(outputs={"answer": "4"}))
    with ScriptedServer(model) as endpoint:
        _anthropic(endpoint.url).messages.create(model="m", max_tokens=100, tools=MESSAGES_TOOLS,
                                                 tool_choice=choice,
                                                 messages=[{"role": "user", "content": "?"}])
    assert [c.kind for c in model.calls] == [kind]


@pytest.mark.parametrize(("fault", "status", "kind", "error"), [
    (FaultTurn(fault="429", retry_after=0), 429, "rate_limit_error", "RateLimitError"),
    (FaultTurn(fault="500"), 500, "api_error", "InternalServerError"),
    # The real API signals an unavailable service as overloaded, 529, never 503.
    (FaultTurn(fault="503"), 529, "overloaded_error", "OverloadedError")])
def test_the_anthropic_sdk_retries_a_rate_limit_or_server_error(fault: FaultTurn, status: int, kind: str,
                                                                error: str) -> None:
    with ScriptedServer(_model([fault, FINAL])) as endpoint:
        reply = _anthropic(endpoint.url).messages.create(model="m", max_tokens=100, tools=MESSAGES_TOOLS,
                                                         messages=[{"role": "user", "content": "?"}])
        assert reply.content[0].text == "4" and endpoint.received == 2
        failed = httpx.post(f"{endpoint.url}/messages", json={"messages": []})  # the model's queue is empty
    assert failed.json()["type"] == "error" and failed.status_code == 400
    with ScriptedServer(_model([fault])) as endpoint, pytest.raises(anthropic.APIStatusError) as raised:
        _anthropic(endpoint.url, retries=0).messages.create(model="m", max_tokens=100,
                                                            messages=[{"role": "user", "content": "?"}])
    assert raised.value.status_code == status and type(raised.value).__name__ == error
    assert raised.value.body == {"type": "error", "error": {"type": kind, "message": raised.value.body[
        "error"]["message"]}}


def test_a_messages_slow_reply_is_the_real_apis_gateway_timeout() -> None:
    model = _model([FaultTurn(fault="timeout")])
    with ScriptedServer(model, slow_seconds=0.0) as endpoint, pytest.raises(
            anthropic.GatewayTimeoutError) as raised:
        _anthropic(endpoint.url, retries=0).messages.create(model="m", max_tokens=100,
                                                            messages=[{"role": "user", "content": "?"}])
    assert raised.value.body["error"]["type"] == "timeout_error"  # type: ignore[index]


def test_the_in_memory_seam_answers_a_messages_fault_as_the_endpoint_does() -> None:
    model = _model([FaultTurn(fault="503", retry_after=0)])
    with httpx.Client(transport=httpx.MockTransport(server.handler(model, server.native_call))) as client:
        reply = client.post(f"{server.IN_MEMORY_URL}/messages", json={
            "model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "?"}]})
    assert reply.status_code == 529 and reply.json()["error"]["type"] == "overloaded_error"
    assert reply.headers["retry-after"] == "0"


@pytest.mark.parametrize(("status", "error"), [("400", "BadRequestError"), ("401", "AuthenticationError")])
def test_a_messages_400_or_401_is_not_retried_and_names_its_status(status: str, error: str) -> None:
    with ScriptedServer(_model([FaultTurn(fault=status), FINAL])) as endpoint, pytest.raises(
            getattr(anthropic, error)) as raised:
        _anthropic(endpoint.url).messages.create(model="m", max_tokens=100,
                                                 messages=[{"role": "user", "content": "?"}])
    assert endpoint.received == 1 and status in str(raised.value)


def test_the_in_memory_seam_answers_a_messages_request_in_the_sdks_shape() -> None:
    model = _model([STEP])
    with httpx.Client(transport=httpx.MockTransport(server.handler(model, server.native_call))) as client:
        reply = client.post(f"{server.IN_MEMORY_URL}/messages", json={
            "model": "m", "max_tokens": 100, "tools": MESSAGES_TOOLS,
            "messages": [{"role": "user", "content": "?"}]})
    message = anthropic.types.Message.model_validate(reply.json())
    assert message.stop_reason == "tool_use" and model.calls[0].kind == "step" and model.binding_fault is None


def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return str(a + b)


def test_the_tool_runner_continues_its_message_thread_and_the_script_sees_the_whole_conversation() -> None:
    # Anthropic's tool runner threads its requests by default: the second sends only the tool result,
    # continuing the thread of the first reply; the endpoint holds the conversation.
    model = _model([STEP, FINAL])
    sent: list[dict[str, Any]] = []
    http = anthropic.DefaultHttpxClient(
        event_hooks={"request": [lambda request: sent.append(json.loads(request.read()))]})
    with ScriptedServer(model) as endpoint:
        client = anthropic.Anthropic(base_url=endpoint.url.removesuffix("/v1"), api_key="unused",
                                     http_client=http)
        runner = client.beta.messages.tool_runner(model="m", max_tokens=100, system="Answer.",
                                                  tools=[anthropic.beta_tool(add)],
                                                  messages=[{"role": "user", "content": "2 + 2?"}])
        final = runner.until_done()
    assert final.stop_reason == "end_turn" and final.content[0].text == "4"
    assert sent[0]["thread"] == {"type": "create"} and sent[1]["thread"]["type"] == "continue"
    assert [m["role"] for m in sent[1]["messages"]] == ["user"] and "tools" not in sent[1]
    shown = model.calls[1]
    assert [m["role"] for m in shown.messages] == ["system", "user", "assistant", "tool"]
    assert shown.messages[3]["content"] == "4"  # the tool ran on the tool_use's input
    assert shown.tools is not None and shown.kind == "step"


def test_a_continue_of_a_thread_the_endpoint_does_not_hold_is_refused_as_the_real_api_does() -> None:
    with ScriptedServer(_model([FINAL])) as endpoint:
        reply = httpx.post(f"{endpoint.url}/messages", json={
            "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "?"}],
            "thread": {"type": "continue", "previous_message_id": "msg_9"}})
    error = reply.json()["error"]
    assert reply.status_code == 404 and error["details"] == {"error_code": "thread_not_found"}
    assert endpoint.received == 0


def test_tool_args_nested_deeper_than_pythons_json_parser_reach_the_client_as_written() -> None:
    deep = '{"x": ' * 3000 + "1" + "}" * 3000
    model = _model([StepTurn(thought="", tool_name="store", raw_tool_args=deep)])
    with ScriptedServer(model) as endpoint:
        reply = httpx.post(f"{endpoint.url}/messages", json={
            "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "?"}],
            "tools": [{"name": "store", "input_schema": {"type": "object"}}]})
    assert reply.status_code == 200 and f'"input": {deep}}}' in reply.text
