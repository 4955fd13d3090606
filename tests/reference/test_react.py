"""The ReAct loop on every stop path, its prompts, its errors, snapshots and adapter overrides."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, Literal, get_args

import pytest

import reference
from reference import (
    ChatAdapter,
    JSONAdapter,
    MaxIterationsError,
    Predict,
    ReAct,
    Signature,
    SignatureError,
    Step,
    Tool,
    ToolErrorRecord,
)
from tests.reference.conftest import ScriptedLM, answer, json_step, step

CALLS: list[tuple[str, dict[str, Any]]] = []


def add(a: int, b: int) -> int:
    """Add two integers."""
    CALLS.append(("add", {"a": a, "b": b}))
    return a + b


def explode(query: str) -> str:
    """Always fails."""
    CALLS.append(("explode", {"query": query}))
    raise ValueError("the disk is on fire")


@pytest.fixture(autouse=True)
def _calls() -> None:
    CALLS.clear()


# Construction and the internal signatures


def test_construction_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="on_max_iters must be 'extract' or 'raise'"):
        ReAct("q -> a", [add], on_max_iters="ignore")  # type: ignore[arg-type]

    def finish() -> None:
        """Not allowed."""

    with pytest.raises(ValueError, match="'finish' is reserved"):
        ReAct("q -> a", [finish])
    with pytest.raises(ValueError, match="'add' is reserved or used twice"):
        ReAct("q -> a", [add, Tool(add)])
    with pytest.raises(SignatureError, match="'max_iters' is reserved"):
        ReAct("q, max_iters -> a", [add])
    with pytest.raises(SignatureError, match="no '->'"):
        ReAct("q a", [add])


def test_public_attributes() -> None:
    adapter = JSONAdapter()
    agent = ReAct("question -> answer", [add, Tool(explode, name="boom")], max_iters=4,
                  adapter=adapter)
    assert agent.signature == Signature("question -> answer")
    assert list(agent.tools) == ["add", "boom", "ask_to_user"] and isinstance(agent.tools["add"], Tool)
    assert isinstance(agent.step, Predict) and isinstance(agent.extract, Predict)
    assert agent.max_iters == 4 and agent.adapter is adapter
    assert agent.step.adapter is adapter and agent.extract.adapter is adapter


def test_the_step_signature_constrains_the_tool_name_to_the_tools_and_finish() -> None:
    agent = ReAct("context, question -> answer, sources", [add, explode], enable_ask_to_user=False)
    sig = agent.step.signature
    assert list(sig.inputs) == ["context", "question", "trajectory"]
    assert list(sig.outputs) == ["next_thought", "next_tool_name", "next_tool_args"]
    assert set(get_args(sig.outputs["next_tool_name"].annotation)) == {"add", "explode", "finish"}
    assert sig.outputs["next_tool_name"].annotation == Literal["add", "explode", "finish"]
    assert sig.outputs["next_tool_args"].annotation is dict


def test_the_step_instructions_list_every_tool_with_schema_and_require_a_json_object() -> None:
    class QA(Signature):
        """Answer with care."""

        question: str = reference.InputField()
        answer: str = reference.OutputField()

    agent = ReAct(QA, [add])
    text = agent.step.signature.instructions
    assert text.startswith("Answer with care.")
    assert f"add: Add two integers. Arguments: {json.dumps(agent.tools['add'].args_schema)}" in text
    assert ("finish: call this when you have everything needed to produce the outputs: "
            "`answer`") in text
    assert "next_tool_args must be a valid JSON object" in text


def test_the_extraction_signature_is_inputs_and_trajectory_to_the_outputs() -> None:
    agent = ReAct("context, question -> answer, sources: list", [add])
    sig = agent.extract.signature
    assert list(sig.inputs) == ["context", "question", "trajectory"]
    assert sig.outputs == agent.signature.outputs
    assert sig.instructions == agent.signature.instructions


# The loop: finish


def test_a_tool_runs_with_exactly_its_args_then_finish_then_extraction(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("done", "finish", {"x": 1}),
                   answer(answer="5")]
    prediction = ReAct("question -> answer", [add])(question="What is 2 + 3?")
    assert CALLS == [("add", {"a": 2, "b": 3})]
    assert prediction.answer == "5" and prediction["answer"] == "5"
    assert prediction.stop_reason == "finish" and prediction.iterations == 2
    assert prediction.trajectory == [
        Step(thought="adding", tool_name="add", tool_args={"a": 2, "b": 3}, observation=5),
        Step(thought="done", tool_name="finish", tool_args={}, observation="Completed."),
    ]
    assert prediction.fallback is None and prediction.tool_errors == []
    assert len(lm.requests) == 3


def test_each_step_call_carries_the_inputs_and_the_trajectory_so_far(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("done", "finish"),
                   answer(answer="5")]
    ReAct("question -> answer", [add])(question="What is 2 + 3?")
    first, second, extraction = lm.user(0), lm.user(1), lm.user(2)
    assert "[[ ## question ## ]]\nWhat is 2 + 3?" in first
    assert "[[ ## trajectory ## ]]\n\n" in first
    assert ("thought_0: adding\ntool_name_0: add\ntool_args_0: {\"a\": 2, \"b\": 3}\n"
            "observation_0: 5") in second
    assert "What is 2 + 3?" in extraction and "tool_name_1: finish" in extraction
    assert "observation_1: Completed." in extraction
    assert "next_tool_name" in lm.system(0) and "next_tool_name" not in lm.system(2)
    assert "[[ ## answer ## ]]" in lm.system(2)


def test_a_non_text_observation_is_kept_and_shown_as_json(lm: ScriptedLM) -> None:
    def lookup(key: str) -> dict[str, Any]:
        """Look something up."""
        return {"key": key, "hits": [1, 2]}

    lm.replies += [step("look", "lookup", {"key": "k"}), step("done", "finish"), answer(a="x")]
    prediction = ReAct("q -> a", [lookup])(q="q")
    assert prediction.trajectory[0].observation == {"key": "k", "hits": [1, 2]}
    assert 'observation_0: {"key": "k", "hits": [1, 2]}' in lm.user(1)


class Thing:
    def __str__(self) -> str:
        return "a thing"


def test_a_result_that_is_not_json_data_is_observed_as_its_str(lm: ScriptedLM) -> None:
    def make() -> Thing:
        """Make a thing."""
        return Thing()

    lm.replies += [step("make", "make", {}), step("done", "finish"), answer(a="x")]
    prediction = ReAct("q -> a", [make])(q="q")
    assert prediction.trajectory[0].observation == "a thing"
    assert "observation_0: a thing\n" in lm.user(1)


def test_finish_first_runs_no_tool(lm: ScriptedLM) -> None:
    lm.replies += [step("nothing to do", "finish"), answer(answer="hi")]
    prediction = ReAct("question -> answer", [add])(question="hello")
    assert CALLS == [] and prediction.iterations == 1 and prediction.answer == "hi"


# The loop: the step cap


def test_the_cap_makes_exactly_budget_step_calls_then_extracts(lm: ScriptedLM) -> None:
    lm.replies += [step("a", "add", {"a": 1, "b": 1}), step("b", "add", {"a": 1, "b": 2}),
                   step("c", "explode", {"query": "x"}), answer(answer="partial")]
    prediction = ReAct("question -> answer", [add, explode], max_iters=3)(question="q")
    assert len(lm.requests) == 4 and "observation_2: Error executing explode" in lm.user(3)
    assert prediction.answer == "partial" and prediction.stop_reason == "max_iters"
    assert prediction.iterations == 3 and len(prediction.trajectory) == 3
    assert prediction.fallback is not None
    assert 'ran add 2×, ran explode 1×; last attempt errored with "the disk is on fire"' in (
        prediction.fallback)
    assert "no tool completed" not in prediction.fallback


def test_the_cap_fallback_says_when_no_tool_completed(lm: ScriptedLM) -> None:
    lm.replies += [step("a", "explode", {"query": "x"}), step("b", "rm", {}), answer(answer="?")]
    prediction = ReAct("question -> answer", [explode], max_iters=2)(question="q")
    assert prediction.fallback is not None
    assert "ran explode 1×" in prediction.fallback and "no tool completed" in prediction.fallback


def test_a_zero_budget_extracts_from_an_empty_trajectory(lm: ScriptedLM) -> None:
    lm.replies.append(answer(answer="?"))
    prediction = ReAct("question -> answer", [add], max_iters=0)(question="q")
    assert prediction.iterations == 0 and prediction.trajectory == []
    assert prediction.fallback is not None and "no tool completed" in prediction.fallback


def test_raise_mode_carries_the_structured_context(lm: ScriptedLM) -> None:
    lm.replies += [step("first", "add", {"a": 1, "b": 1}), step("", "explode", {"query": "x"}),
                   step("second", "add", {"a": 2, "b": 2})]
    agent = ReAct("question -> answer", [add, explode], max_iters=3, on_max_iters="raise")
    with pytest.raises(MaxIterationsError) as info:
        agent(question="q")
    error = info.value
    assert "Maximum iterations reached" in str(error) and "3" in str(error)
    assert isinstance(error, RuntimeError) and len(lm.requests) == 3  # no extraction
    assert (error.iterations, error.max_iterations) == (3, 3)
    assert error.tools_used == ["add", "explode", "add"]
    assert [s.thought for s in error.history] == ["first", "", "second"]
    assert error.last_observation == 4 and error.partial_final_answer == "second"


def test_raise_mode_partial_answer_is_the_last_non_empty_thought(lm: ScriptedLM) -> None:
    lm.replies += [step("the answer is 4", "add", {"a": 2, "b": 2}), step("", "add", {"a": 1})]
    with pytest.raises(MaxIterationsError) as info:
        ReAct("q -> a", [add], max_iters=2, on_max_iters="raise")(q="q")
    assert info.value.partial_final_answer == "the answer is 4"
    assert info.value.last_observation.startswith("Error: invalid arguments for add")
    assert info.value.tools_used == ["add"]


def test_raise_mode_when_no_tool_ran(lm: ScriptedLM) -> None:
    lm.replies += [step("", "rm", {}), "garbage"]
    with pytest.raises(MaxIterationsError) as info:
        ReAct("q -> a", [add], max_iters=2, on_max_iters="raise")(q="q")
    error = info.value
    assert error.tools_used == [] and error.iterations == 2 and len(error.history) == 2
    assert error.partial_final_answer is None
    assert error.last_observation.startswith("Error: could not parse the step")


def test_raise_mode_with_no_step_leaves_everything_empty(lm: ScriptedLM) -> None:
    with pytest.raises(MaxIterationsError, match="Maximum iterations reached: 0 of 0") as info:
        ReAct("q -> a", [add], max_iters=0, on_max_iters="raise")(q="q")
    error = info.value
    assert (error.iterations, error.max_iterations, error.tools_used, error.history) == (
        0, 0, [], [])
    assert error.last_observation is None and error.partial_final_answer is None


def test_the_raised_history_is_the_callers_copy(lm: ScriptedLM) -> None:
    agent = ReAct("q -> a", [add], max_iters=1, on_max_iters="raise")
    lm.replies.append(step("one", "add", {"a": 1, "b": 1}))
    with pytest.raises(MaxIterationsError) as info:
        agent(q="q")
    info.value.history[0].tool_args["a"] = 99
    info.value.history.append(Step(thought="junk", tool_name="junk", tool_args={},
                                   observation=None))
    lm.replies.append(step("again", "add", {"a": 1, "b": 1}))
    with pytest.raises(MaxIterationsError) as again:
        agent(q="q")
    assert len(again.value.history) == 1 and "99" not in lm.user(1) and "junk" not in lm.user(1)


def test_a_per_call_cap_overrides_and_each_call_gets_a_fresh_budget(lm: ScriptedLM) -> None:
    agent = ReAct("q -> a", [add], max_iters=2)
    lm.replies += [step("a", "add", {"a": 1, "b": 1}), answer(a="x")]
    assert agent.forward(q="q", max_iters=1).iterations == 1
    lm.replies += [step("a", "add", {"a": 1, "b": 1})] * 3 + [answer(a="x")]
    assert agent.forward(q="q", max_iters=3).iterations == 3
    lm.replies += [step("a", "add", {"a": 1, "b": 1})] * 2 + [answer(a="x")]
    assert agent(q="q").iterations == 2 and agent.max_iters == 2


# The loop: steps that cannot run


@pytest.mark.parametrize(("reply", "says"), [
    (step("t", "rm", {"path": "/"}), "Error: could not parse the step: field 'next_tool_name': "
                                     "'rm' is not one of add, ask_to_user, finish"),
    (step("t", "add", "{a: 1}"), "Error: could not parse the step: field 'next_tool_args': "
                                 "tool arguments are not valid JSON"),
    (step("t", "add", "[1, 2]"), "Error: could not parse the step: field 'next_tool_args': "
                                 "tool arguments must be a JSON object, not an array"),
    (step("t", "add", "null"), "Error: could not parse the step: field 'next_tool_args': "
                               "tool arguments must be a JSON object, not null"),
    (step("t", "add", "{" * 100_000), "Error: could not parse the step"),
    ("I will just answer in prose.", "Error: could not parse the step: field 'next_thought': "
                                     "missing from the reply"),
    (step("t", "add", {"a": 1}), "Error: invalid arguments for add: b: Field required"),
    (step("t", "add", {"a": 1, "b": 2, "c": 3}), "Error: invalid arguments for add: c: Extra"),
    (step("t", "add", {"a": "one", "b": 2}), "Error: invalid arguments for add: a: Input should"),
])
def test_a_step_that_cannot_run_is_an_error_observation_and_the_loop_goes_on(
        lm: ScriptedLM, reply: str, says: str) -> None:
    lm.replies += [reply, step("done", "finish"), answer(a="x")]
    prediction = ReAct("q -> a", [add])(q="q")
    assert CALLS == []
    first = prediction.trajectory[0]
    assert first.observation.startswith(says)
    assert prediction.stop_reason == "finish" and prediction.iterations == 2
    assert prediction.tool_errors == []
    assert "observation_0: " + says in lm.user(1)
    if says.startswith("Error: could not parse"):
        assert (first.thought, first.tool_name, first.tool_args) == ("", "", {})


@pytest.mark.parametrize("adapter", [ChatAdapter(), JSONAdapter()])
def test_an_integer_too_long_for_int_is_an_error_observation(lm: ScriptedLM, adapter: Any) -> None:
    # ARGS-3/ARGS-5: json.loads raises a plain ValueError for it, which once aborted the run.
    number = "9" * (sys.get_int_max_str_digits() + 1)
    args = '{"a": ' + number + ', "b": 1}'
    if isinstance(adapter, ChatAdapter):
        lm.replies += [step("t", "add", args), step("done", "finish"), answer(a="x")]
    else:
        lm.replies += ['{"next_thought": "t", "next_tool_name": "add", "next_tool_args": ' + args + "}",
                       json_step("done", "finish", {}), '{"a": "x"}']
    prediction = ReAct("q -> a", [add], adapter=adapter)(q="q")
    assert CALLS == [] and prediction.stop_reason == "finish"
    assert prediction.trajectory[0].observation.startswith("Error: could not parse the step")
    assert "digits" in prediction.trajectory[0].observation


# Tool errors


def test_a_raising_tool_is_observed_recorded_and_the_loop_goes_on(lm: ScriptedLM) -> None:
    lm.replies += [step("try", "explode", {"query": "x"}), step("add", "add", {"a": 2, "b": 3}),
                   step("done", "finish"), answer(a="5")]
    prediction = ReAct("q -> a", [add, explode])(q="q")
    assert prediction.trajectory[0].observation == "Error executing explode: the disk is on fire"
    assert "observation_0: Error executing explode: the disk is on fire" in lm.user(1)
    assert prediction.tool_errors == [ToolErrorRecord(tool="explode", kind="ValueError",
                                                      message="the disk is on fire")]
    assert prediction.stop_reason == "finish" and prediction.a == "5"


def test_three_similar_failures_in_a_row_stop_with_a_suggestion(lm: ScriptedLM) -> None:
    lm.replies += [step("x", "explode", {"query": "x"})] * 3 + [answer(a="sorry")]
    prediction = ReAct("q -> a", [explode], max_iters=8)(q="q")
    assert prediction.stop_reason == "repeated_tool_errors" and prediction.iterations == 3
    assert len(lm.requests) == 4 and prediction.a == "sorry"
    assert [e.kind for e in prediction.tool_errors] == ["ValueError"] * 3
    fallback = prediction.fallback
    assert fallback is not None and "explode" in fallback and "the disk is on fire" in fallback
    assert "ValueError" in fallback and "try another approach" in fallback


def _flaky(*outcomes: type[Exception] | None) -> Tool:
    results = iter(outcomes)

    def flaky(query: str) -> str:
        """Fails on cue."""
        error = next(results)
        if error is not None:
            raise error(f"failed on {query}")
        return "ok"

    return Tool(flaky)


@pytest.mark.parametrize("outcomes", [
    (ValueError, ValueError, None, ValueError, ValueError),
    (ValueError, TimeoutError, ValueError, ValueError),
])
def test_a_success_or_a_different_failure_breaks_the_run(
        lm: ScriptedLM, outcomes: tuple[type[Exception] | None, ...]) -> None:
    lm.replies += [step("x", "flaky", {"query": str(i)}) for i in range(len(outcomes))]
    lm.replies += [step("done", "finish"), answer(a="x")]
    prediction = ReAct("q -> a", [_flaky(*outcomes)], max_iters=10)(q="q")
    assert prediction.stop_reason == "finish"


def test_a_step_that_could_not_run_breaks_the_run_too(lm: ScriptedLM) -> None:
    lm.replies += [step("x", "explode", {"query": "x"})] * 2 + [step("x", "rm", {})]
    lm.replies += [step("x", "explode", {"query": "x"})] * 2
    lm.replies += [step("done", "finish"), answer(a="x")]
    assert ReAct("q -> a", [explode])(q="q").stop_reason == "finish"


def test_the_error_history_keeps_the_last_ten(lm: ScriptedLM) -> None:
    tool = _flaky(*[ValueError, TimeoutError] * 6)
    lm.replies += [step("x", "flaky", {"query": str(i)}) for i in range(12)] + [answer(a="x")]
    prediction = ReAct("q -> a", [tool], max_iters=12)(q="q")
    assert prediction.stop_reason == "max_iters"
    assert [e.message for e in prediction.tool_errors] == [f"failed on {i}" for i in range(2, 12)]


def test_error_tracking_starts_fresh_on_every_call(lm: ScriptedLM) -> None:
    agent = ReAct("q -> a", [explode, add])
    lm.replies += [step("x", "explode", {"query": "x"})] * 2 + [step("d", "finish"), answer(a="x")]
    assert len(agent(q="q").tool_errors) == 2
    lm.replies += [step("x", "explode", {"query": "x"}), step("d", "finish"), answer(a="x")]
    second = agent(q="q")
    assert second.stop_reason == "finish" and len(second.tool_errors) == 1


# Snapshots and isolation


def test_the_trajectory_is_the_callers_snapshot(lm: ScriptedLM) -> None:
    state = {"items": [1, 2]}

    def items() -> dict[str, list[int]]:
        """The tool's own state."""
        return state

    agent = ReAct("q -> a", [items, add])
    lm.replies += [step("a", "items", {}), step("b", "add", {"a": 1, "b": 1}),
                   step("d", "finish"), answer(a="x")]
    first = agent(q="q")
    first.trajectory[0].observation["items"].append(3)
    first.trajectory[1].tool_args["a"] = 99
    first.trajectory.append(Step(thought="junk", tool_name="junk", tool_args={},
                                 observation=None))
    assert state == {"items": [1, 2]}
    lm.replies += [step("d", "finish"), answer(a="y")]
    second = agent(q="q")
    assert [s.tool_name for s in second.trajectory] == ["finish"]
    assert "junk" not in lm.user(4) and "99" not in lm.user(4)


def test_missing_or_unexpected_inputs_fail_before_any_model_call(lm: ScriptedLM) -> None:
    agent = ReAct("context, question -> answer", [add])
    with pytest.raises(ValueError, match="missing input\\(s\\) question"):
        agent(context="c")
    with pytest.raises(ValueError, match="unexpected input\\(s\\) other"):
        agent.forward(context="c", question="q", other=1, max_iters=3)
    assert lm.requests == []


def test_the_global_adapter_applies_at_call_time(lm: ScriptedLM) -> None:
    agent = ReAct("q -> a", [add])
    reference.configure(adapter=JSONAdapter())
    lm.replies += [json_step("d", "finish", {}), '{"a": "json"}']
    assert agent(q="q").a == "json"
    assert all("JSON object" in lm.system(i) for i in range(2))


def test_an_adapter_override_serves_both_predictors_and_does_not_leak(lm: ScriptedLM) -> None:
    reference.configure(adapter=ChatAdapter())
    agent = ReAct("q -> a", [add], adapter=JSONAdapter())
    other = ReAct("q -> a", [add])
    lm.replies += [json_step("adding", "add", {"a": 1, "b": 2}), json_step("d", "finish", {}),
                   '{"a": "3"}', step("d", "finish"), answer(a="chat")]
    assert agent(q="q").a == "3"
    assert all("JSON object" in lm.system(i) and "[[ ##" not in lm.system(i) for i in range(3))
    assert other(q="q").a == "chat" and "[[ ## completed ## ]]" in lm.system(3)
    assert isinstance(reference.settings().adapter, ChatAdapter)


def test_concurrent_calls_share_nothing() -> None:
    json_agent = ReAct("q -> a", [add], adapter=JSONAdapter())
    chat_agent = ReAct("q -> a", [add])
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    class Slow(ScriptedLM):
        def complete(self, messages: list[dict[str, str]]) -> str:
            barrier.wait(timeout=5)  # both runs are mid-loop at every call
            return super().complete(messages)

    def run(name: str, agent: ReAct, lm: ScriptedLM) -> None:
        with reference.context(lm=lm):
            results[name] = (agent(q=name), lm)

    json_lm = Slow(json_step("j", "add", {"a": 1, "b": 1}), json_step("d", "finish", {}),
                   '{"a": "from json"}')
    chat_lm = Slow(step("c", "add", {"a": 5, "b": 5}), step("d", "finish"), answer(a="from chat"))
    threads = [threading.Thread(target=run, args=("json", json_agent, json_lm)),
               threading.Thread(target=run, args=("chat", chat_agent, chat_lm))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (json_prediction, _), (chat_prediction, _) = results["json"], results["chat"]
    assert json_prediction.a == "from json" and chat_prediction.a == "from chat"
    assert json_prediction.trajectory[0].observation == 2
    assert chat_prediction.trajectory[0].observation == 10
    assert all("JSON object" in json_lm.system(i) for i in range(3))
    assert all("[[ ## completed ## ]]" in chat_lm.system(i) for i in range(3))
