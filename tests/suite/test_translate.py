"""The translation helpers bindings share (conformance.translate, server.openai_client)."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from conformance import server, translate
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AgentSpec,
    CallRequest,
    ErrorInfo,
    FaultTurn,
    FieldSpec,
    FinalTurn,
    LMCall,
    Outcome,
    ParamSpec,
    SignatureSpec,
    Step,
    StepTurn,
    ToolSpec,
)

STEP = LMCall(kind="step", adapter="native", messages=[{"role": "user", "content": "?"}])
TRANSFER = ToolSpec(name="transfer", description="Move money.", parameters=(
    ParamSpec(name="amount", type="int", description="How much."), ParamSpec(name="to")))


def test_tool_args_are_read_as_the_model_wrote_them() -> None:
    assert translate.tool_args('{"a": [1, 2]}') == {"a": [1, 2]}
    assert translate.tool_args('{"a": 1') == '{"a": 1'  # malformed: the text itself
    deep = "[" * 100_000 + "]" * 100_000
    assert translate.tool_args(deep) == deep  # too deep to parse: the text, no RecursionError
    args = {"when": object()}
    assert translate.tool_args(args) == {"when": str(args["when"])}  # a JSON copy


def test_a_step_is_made_of_text_and_json_data_from_the_librarys_values() -> None:
    when = object()
    assert translate.step(None, {"at": when}, 5, thought=3) == Step(
        thought="3", tool_name="None", tool_args={"at": str(when)}, observation=5)
    assert translate.step("look").thought is None


def test_steps_pair_each_call_with_the_result_of_its_id_in_call_order() -> None:
    calls = [("b", "", "second", "{}"), ("a", "think", "first", {"x": 1}), (None, None, "bad", "{oops")]
    steps = translate.steps(calls, {"a": "one", "b": ["two"], "z": "unasked"})
    assert steps == [
        Step(thought=None, tool_name="second", tool_args={}, observation=["two"], call_id="b"),
        Step(thought="think", tool_name="first", tool_args={"x": 1}, observation="one", call_id="a"),
        Step(thought=None, tool_name="bad", tool_args="{oops", observation=None),
    ]


def test_step_events_add_each_completed_step_once_with_the_model_calls_made_by_then() -> None:
    model = ScriptedModel([FinalTurn(outputs={"answer": "x"})] * 3, finish_then_extract=False)
    events: list = []
    done, pending = Step(tool_name="a", observation="ok"), Step(tool_name="b")
    model.answer(STEP)
    translate.step_events(model, events, [done, pending])
    model.answer(STEP)
    translate.step_events(model, events, [done, pending.model_copy(update={"observation": "ok"})])
    translate.step_events(model, events, [done, pending.model_copy(update={"observation": "ok"})])
    assert [(e.kind, e.step.tool_name, e.model_calls) for e in events] == [("step", "a", 1), ("step", "b", 2)]
    end = translate.done_event(model, {"answer": "x"}, "finish")
    assert (end.kind, end.model_calls, end.outputs, end.stop_reason) == ("done", 2, {"answer": "x"}, "finish")


def test_a_streamed_outcome_ends_its_events_with_its_outputs_and_stop_reason() -> None:
    model = ScriptedModel([FinalTurn(outputs={"answer": "x"})], finish_then_extract=False)
    outcome = Outcome(outputs={"answer": "x"}, stop_reason="finish")
    assert translate.streamed(model, None, outcome) is outcome  # not a stream: unchanged
    model.answer(STEP)
    step = translate.step_event(model, Step(tool_name="a"))
    events = translate.streamed(model, [step], outcome).events
    assert events is not None and events[0] == step
    assert (events[1].kind, events[1].model_calls, events[1].outputs, events[1].stop_reason) == (
        "done", 1, {"answer": "x"}, "finish")


@pytest.mark.parametrize(("response", "decision"), [
    ("yes", "approve"), (" Y ", "approve"), ("no", "reject"), ("N", "reject"),
    ("only on weekdays", "message"), ('{"other": 1}', "message"), ('{"edit": "x"}', "message"),
])
def test_an_approval_answer_is_read_as_the_contract_words_it(response: str, decision: str) -> None:
    answer = translate.approval(response)
    assert (answer.decision, answer.text) == (decision, response)


def test_an_edit_carries_its_tool_name_and_args() -> None:
    edit = translate.approval('{"edit": {"name": "transfer", "args": {"amount": 5}}}')
    assert (edit.decision, edit.name, edit.args) == ("edit", "transfer", {"amount": 5})
    assert translate.approval('{"edit": {"args": {}}}').name is None


def test_an_interrupt_has_the_fields_the_contract_names() -> None:
    error = translate.interrupt("Paused", "approve?", interrupt_id="i1", question=None, tool="transfer",
                                args='{"amount": 5}', call_id="c1", trajectory=[Step(tool_name="look")],
                                iteration=2, inputs={"question": "q"})
    assert (error.type, error.message, error.kind) == ("Paused", "approve?", "human-in-the-loop")
    assert error.fields == {
        "question": None, "interrupt_id": "i1",
        "tool_call": {"name": "transfer", "args": {"amount": 5}, "call_id": "c1"},
        "context": {"trajectory": [Step(tool_name="look").model_dump(mode="json")], "iteration": 2,
                    "input_args": {"question": "q"}},
    }
    asked = translate.interrupt("Asked", "?", interrupt_id="i2", question="Which?", tool=None)
    assert asked.fields["tool_call"] is None and asked.fields["question"] == "Which?"


def test_each_run_and_each_task_is_served_its_own_model() -> None:
    first, second = ScriptedModel([]), ScriptedModel([])
    with pytest.raises(RuntimeError, match="no scripted model"):
        translate.serving_model()

    async def served(model: ScriptedModel) -> ScriptedModel:
        with translate.serving(model):
            await asyncio.sleep(0)  # the other task sets its own model meanwhile
            return translate.serving_model()

    async def both() -> list[ScriptedModel]:
        return list(await asyncio.gather(served(second), served(ScriptedModel([]))))

    with translate.serving(first) as installed:
        assert installed is first and translate.serving_model() is first
        seen = asyncio.run(both())
        assert seen[0] is second and seen[1] is not second
        assert translate.serving_model() is first  # the tasks' models ended with them
    with pytest.raises(RuntimeError):
        translate.serving_model()


def _report(result: object) -> Outcome:
    return Outcome(outputs={"answer": str(result)}, stop_reason="finish")


def _failed(exc: Exception) -> Outcome:
    return Outcome(error=ErrorInfo.from_exception(exc))


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_call_is_made_in_the_form_its_mode_names_and_reported(mode: str) -> None:
    model = ScriptedModel([FinalTurn(outputs={"answer": "x"})], finish_then_extract=False)

    async def on_a_loop() -> str:
        asyncio.get_running_loop()  # raises unless the coroutine runs on an event loop
        return "async"

    def stream(events: list) -> object:
        model.answer(STEP)
        events.append(translate.step_event(model, Step(tool_name="a")))
        return on_a_loop()  # a stream may be the library's async form too

    outcome = translate.reported(model, mode, _report, _failed, sync=lambda: "sync",
                                 asynchronous=on_a_loop, stream=stream)
    assert outcome.outputs == {"answer": "async" if mode != "sync" else "sync"}
    if mode != "stream":
        assert outcome.events is None
        return
    assert outcome.events is not None
    assert [(e.kind, e.model_calls) for e in outcome.events] == [("step", 1), ("done", 1)]
    assert (outcome.events[1].outputs, outcome.events[1].stop_reason) == ({"answer": "async"}, "finish")


@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_what_a_call_lets_escape_is_reported_by_failed_with_the_events_it_sent(mode: str) -> None:
    model = ScriptedModel([])

    def fail() -> None:
        raise ValueError("library failed")

    async def raising() -> None:
        fail()

    def stream(events: list) -> None:
        events.append(translate.step_event(model, Step(tool_name="a")))
        fail()

    outcome = translate.reported(model, mode, _report, _failed, sync=fail, asynchronous=raising,
                                 stream=stream)
    assert outcome.error == ErrorInfo(type="ValueError", message="library failed")
    assert outcome.outputs is None
    assert [e.kind for e in outcome.events or []] == (["step"] if mode == "stream" else [])
    assert (outcome.events is None) == (mode != "stream")


def test_a_form_the_binding_does_not_give_is_its_bug_not_the_librarys() -> None:
    with pytest.raises(NotImplementedError, match="'stream'"):
        translate.reported(ScriptedModel([]), "stream", _report, _failed, sync=lambda: "sync")


def test_an_async_call_is_awaited_on_the_running_loop_and_reported() -> None:
    async def value() -> str:
        return "done"

    async def raising() -> str:
        raise KeyError("gone")

    async def both() -> list[Outcome]:
        return [await translate.areported(value(), _report, _failed),
                await translate.areported(raising(), _report, _failed)]

    done, failed = asyncio.run(both())
    assert (done.outputs, done.error) == ({"answer": "done"}, None)
    assert (failed.outputs, failed.error) == (None, ErrorInfo(type="KeyError", message="'gone'"))


def test_the_last_reply_that_called_no_tool_is_the_final_answer() -> None:
    two = SignatureSpec(outputs=(FieldSpec(name="total", type="int"), FieldSpec(name="note")))
    trajectory = [Step(tool_name="add", observation=3)]
    outcome = translate.finished(two, '{"total": 3, "note": "ok"}', trajectory, 2)
    assert outcome == Outcome(outputs={"total": 3, "note": "ok"}, trajectory=trajectory,
                              stop_reason="finish", iterations=2)
    assert translate.finished(SignatureSpec(), "hi", [], None, "max_steps").model_dump(
        include={"outputs", "stop_reason"}) == {"outputs": {"answer": "hi"}, "stop_reason": "max_steps"}
    ended = translate.finished(two, None, trajectory, 1)  # the run ended on a reply that called a tool
    assert (ended.outputs, ended.stop_reason, ended.iterations) == (None, None, 1)
    assert ended.trajectory == trajectory


def test_a_paused_run_reports_its_steps_so_far_and_the_pause_in_that_context() -> None:
    trajectory = [Step(tool_name="look", observation="ok")]
    outcome = translate.paused("Pending", "approve?", interrupt_id="p1", tool="transfer",
                               args='{"amount": 5}', call_id="c1", trajectory=trajectory, iterations=2,
                               inputs={"question": "q"})
    assert (outcome.outputs, outcome.stop_reason, outcome.trajectory, outcome.iterations) == (
        None, None, trajectory, 2)
    assert outcome.error == translate.interrupt(
        "Pending", "approve?", interrupt_id="p1", question=None, tool="transfer", args='{"amount": 5}',
        call_id="c1", trajectory=trajectory, iteration=2, inputs={"question": "q"})


def test_the_cap_error_is_a_max_iterations_error_with_its_fields() -> None:
    error = translate.max_iterations(RuntimeError("too many"), iterations=3)
    assert (error.type, error.message, error.kind, error.fields) == (
        "RuntimeError", "too many", "max-iterations", {"iterations": 3})


def test_a_capped_run_fills_the_cap_error_from_the_partial_run_the_binding_read() -> None:
    ran = Step(tool_name="add", tool_args={"a": 1}, observation=2)
    unknown = Step(tool_name="nope", tool_args={}, observation="no such tool")
    pending = Step(tool_name="add", tool_args={"a": 2})
    outcome = translate.capped(RuntimeError("cap"), [ran, unknown, pending], 3, 2, ["add"])
    assert (outcome.stop_reason, outcome.iterations, outcome.trajectory) == (
        "max_steps", 3, [ran, unknown, pending])
    assert outcome.error is not None and outcome.error.fields == {
        "iterations": 3, "max_iterations": 2, "tools_used": ["add"],  # a name it lacks ran no tool
        "history": [s.model_dump(mode="json") for s in (ran, unknown, pending)],
        "last_observation": "no such tool"}
    assert outcome.error.kind == "max-iterations"
    bare = translate.capped(RuntimeError("cap"), [], 0, None, [])
    assert bare.error is not None and bare.error.fields == {
        "iterations": 0, "tools_used": [], "history": [], "last_observation": None}


def test_an_escaped_exception_is_the_cap_error_only_when_it_is_the_librarys_cap_error() -> None:
    capped = translate.raised(TimeoutError("cap"), OSError)
    assert (capped.type, capped.kind, capped.fields) == ("TimeoutError", "max-iterations", {})
    other = translate.raised(ValueError("bad"), OSError)
    assert (other.type, other.message, other.kind) == ("ValueError", "bad", "other")


def test_a_message_is_shown_with_each_tool_call_it_made() -> None:
    assert translate.shown("assistant", "thinking", [("a", {"x": 1}), ("b", "{raw")]) == {
        "role": "assistant", "content": 'thinking\ncall a({"x": 1})\ncall b({raw)'}
    assert translate.shown("tool", None) == {"role": "tool", "content": ""}


def test_a_documented_function_describes_its_arguments_and_runs_the_tool() -> None:
    tool = SuiteTool(TRANSFER)
    function = translate.documented_function(tool)
    assert function.__doc__ == "Move money.\n\nArgs:\n    amount: How much.\n"
    assert list(inspect.signature(function).parameters) == ["amount", "to"]
    function(amount=5, to="Ann")
    assert tool.calls == [{"amount": 5, "to": "Ann"}]
    assert translate.documented_function(SuiteTool(ToolSpec(name="t", description="T."))).__doc__ == "T."


def test_a_build_the_library_refuses_is_its_error() -> None:
    def refuse() -> object:
        raise TypeError("no such option")

    agent = object()
    assert translate.built(lambda: agent) is agent
    assert translate.built(refuse) == ErrorInfo(type="TypeError", message="no such option")


def test_the_step_cap_is_the_calls_own_else_the_agents() -> None:
    spec = AgentSpec(signature=SignatureSpec(), tools=(), max_steps=7)
    assert translate.step_cap(spec, CallRequest(inputs={})) == 7
    assert translate.step_cap(spec, CallRequest(inputs={}, max_steps=0)) == 0


def test_a_signature_class_has_the_instructions_types_and_fields() -> None:
    spec = SignatureSpec(inputs=(FieldSpec(name="q", description="asked"),),
                         outputs=(FieldSpec(name="n", type="int"),), instructions="Count.", form="class")
    cls = translate.signature_class(spec, object, lambda d: ("in", d), lambda d: ("out", d))
    assert issubclass(cls, object) and cls.__doc__ == "Count."
    assert cls.__annotations__ == {"q": str, "n": int}
    assert (cls.q, cls.n) == (("in", "asked"), ("out", ""))  # type: ignore[attr-defined]


def test_a_seam_above_the_transport_refuses_a_fault_and_an_async_one_yields_first() -> None:
    with pytest.raises(ConnectionError, match="timeout"):
        translate.answer(ScriptedModel([FaultTurn(fault="timeout")]), STEP)
    step = StepTurn(thought="t", tool_name="a")
    model, order = ScriptedModel([step, step]), []

    async def other() -> None:
        order.append("other")

    async def both() -> None:
        await asyncio.gather(translate.aanswer(model, STEP), other())
        order.append("answered" if len(model.calls) == 1 else "not answered")

    asyncio.run(both())
    assert order == ["other", "answered"]  # the other task ran before the answer was given


def test_a_native_loops_request_is_logged_with_the_native_adapter_and_its_kind() -> None:
    tools = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    messages = [{"role": "system", "content": "Be brief."}, {"role": "assistant", "content": "adding",
                "tool_calls": [{"function": {"name": "add", "arguments": '{"a": 1}'}}]}]
    step = server.native_call({"messages": messages, "tools": tools})
    assert (step.kind, step.adapter, step.tools) == ("step", "native", tools)
    assert step.messages == [{"role": "system", "content": "Be brief."},
                             {"role": "assistant", "content": 'adding\ncall add({"a": 1})'}]
    tool_less = server.native_call({"messages": messages})  # a library's tool-less call on the cap
    assert (tool_less.kind, tool_less.adapter, tool_less.tools) == ("extract", "native", None)
    assert server.native_call({"messages": messages}, kind="step").kind == "step"


def test_an_openai_client_is_answered_from_the_script_beneath_its_retries() -> None:
    pytest.importorskip("openai")  # installed with the dev extra
    step = StepTurn(thought="add", tool_name="add", tool_args={"a": 1})
    model = ScriptedModel([step, FaultTurn(fault="500", retry_after=0.001), step], finish_then_extract=False)
    tools = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    sync = server.openai_client(model, asynchronous=False)
    reply = sync.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}], tools=tools)
    assert reply.choices[0].message.tool_calls[0].function.name == "add"
    client = server.openai_client(model)
    retried = asyncio.run(client.with_options(max_retries=1).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "?"}], tools=tools))
    assert retried.choices[0].message.tool_calls[0].function.arguments == '{"a": 1}'
    assert [c.kind for c in model.calls] == ["step", "step", "step"]  # the 500 was retried


def test_an_openai_client_without_a_model_is_answered_by_the_serving_one_or_goes_to_its_base_url() -> None:
    pytest.importorskip("openai")  # installed with the dev extra
    tools = [{"type": "function", "function": {"name": "add", "parameters": {}}}]
    first, second = (ScriptedModel([StepTurn(thought="t", tool_name=name, tool_args={})],
                                   finish_then_extract=False) for name in ("add", "sub"))
    client = server.openai_client(None, asynchronous=False)
    for model, name in ((first, "add"), (second, "sub")):  # one client, answered by each call's model
        with translate.serving(model):
            reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}],
                                                   tools=tools)
        assert reply.choices[0].message.tool_calls[0].function.name == name
    assert len(first.calls) == len(second.calls) == 1
    remote = server.openai_client(None, base_url="http://127.0.0.1:9/v1")
    assert str(remote.base_url) == "http://127.0.0.1:9/v1/" and remote.api_key == server.API_KEY
