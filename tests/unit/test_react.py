"""The ReAct loop: finish, cap (extract and raise), tool errors, bad steps, snapshots, adapters."""

from __future__ import annotations

import pytest

import reference
from reference import JSONAdapter, MaxIterationsError, ReAct, Step
from tests.unit.conftest import ScriptedLM, answer, step


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def explode(query: str) -> str:
    """Always fails."""
    raise ValueError("the disk is on fire")


def test_a_tool_runs_then_finish_then_extraction(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("done", "finish"), answer("5")]
    prediction = ReAct("question -> answer", [add])(question="2 + 3?")
    assert prediction.answer == "5" and prediction["answer"] == "5"
    assert prediction.stop_reason == "finish" and prediction.iterations == 2
    assert prediction.trajectory[0] == Step(thought="adding", tool_name="add",
                                            tool_args={"a": 2, "b": 3}, observation=5)
    assert prediction.fallback is None and prediction.tool_errors == []
    assert "observation_0: 5" in lm.text(1) and "observation_0: 5" in lm.text(2)
    assert "next_tool_name" in lm.text(0) and "next_tool_name" not in lm.requests[2][0]["content"]


def test_the_step_prompt_lists_tools_with_schemas_and_requires_a_json_object(lm: ScriptedLM) -> None:
    lm.replies += [step("done", "finish"), answer("x")]
    agent = ReAct("question -> answer", [add])
    agent(question="q")
    system = lm.requests[0][0]["content"]
    assert "add: Add two integers." in system and '"required": ["a", "b"]' in system
    assert "next_tool_args must be a valid JSON object" in system
    assert "(one of: add, finish)" in system


def test_the_cap_extracts_and_explains_what_was_tried(lm: ScriptedLM) -> None:
    lm.replies += [step("a", "add", {"a": 1, "b": 1}), step("b", "add", {"a": 1, "b": 2}),
                   step("c", "explode", {"query": "x"}), answer("partial")]
    prediction = ReAct("question -> answer", [add, explode], max_iters=3)(question="q")
    assert prediction.answer == "partial" and prediction.stop_reason == "max_iters"
    assert prediction.fallback is not None
    assert "ran add 2×" in prediction.fallback and "ran explode 1×" in prediction.fallback
    assert 'last attempt errored with "the disk is on fire"' in prediction.fallback
    assert "no tool completed" not in prediction.fallback


def test_the_cap_says_when_no_tool_completed(lm: ScriptedLM) -> None:
    lm.replies += [step("a", "rm", {}), answer("?")]
    prediction = ReAct("question -> answer", [add], max_iters=1)(question="q")
    assert prediction.fallback is not None and "no tool completed" in prediction.fallback


def test_raise_mode_carries_the_structured_context(lm: ScriptedLM) -> None:
    lm.replies += [step("first", "add", {"a": 1, "b": 1}), step("second", "add", {"a": 2, "b": 2})]
    agent = ReAct("question -> answer", [add], max_iters=2, on_max_iters="raise")
    with pytest.raises(MaxIterationsError, match="Maximum iterations reached: 2 of 2") as info:
        agent(question="q")
    error = info.value
    assert (error.iterations, error.max_iterations, error.tools_used) == (2, 2, ["add", "add"])
    assert [s.thought for s in error.history] == ["first", "second"]
    assert error.last_observation == 4 and error.partial_final_answer == "second"


def test_raise_mode_with_no_step_leaves_everything_empty(lm: ScriptedLM) -> None:
    with pytest.raises(MaxIterationsError) as info:
        ReAct("question -> answer", [add], max_iters=0, on_max_iters="raise")(question="q")
    error = info.value
    assert (error.iterations, error.tools_used, error.history) == (0, [], [])
    assert error.last_observation is None and error.partial_final_answer is None


def test_a_per_call_cap_and_a_fresh_budget_per_call(lm: ScriptedLM) -> None:
    agent = ReAct("question -> answer", [add], max_iters=2)
    lm.replies += [step("a", "add", {"a": 1, "b": 1}), answer("x")]
    assert agent.forward(question="q", max_iters=1).iterations == 1
    lm.replies += [step("a", "add", {"a": 1, "b": 1})] * 2 + [answer("x")]
    assert agent(question="q").iterations == 2


@pytest.mark.parametrize(("reply", "says"), [
    (step("t", "rm", {"path": "/"}), "Error: could not parse the step"),
    (step("t", "add", "{a: 1}"), "Error: could not parse the step"),
    (step("t", "add", "[1, 2]"), "must be a JSON object"),
    (step("t", "add", {"a": 1}), "Error: invalid arguments for add: b: Field required"),
    (step("t", "add", {"a": "one", "b": 2}), "Error: invalid arguments for add: a:"),
])
def test_a_step_that_cannot_run_becomes_an_error_observation(lm: ScriptedLM, reply: str, says: str) -> None:
    calls: list[tuple[int, int]] = []

    def add(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    lm.replies += [reply, step("done", "finish"), answer("x")]
    prediction = ReAct("question -> answer", [add])(question="q")
    assert says in prediction.trajectory[0].observation
    assert calls == [] and prediction.stop_reason == "finish"
    assert says in lm.text(1)


def test_a_raising_tool_is_observed_and_three_similar_failures_stop(lm: ScriptedLM) -> None:
    lm.replies += [step("x", "explode", {"query": "x"})] * 3 + [answer("sorry")]
    prediction = ReAct("question -> answer", [explode], max_iters=9)(question="q")
    assert prediction.trajectory[0].observation == "Error executing explode: the disk is on fire"
    assert prediction.stop_reason == "repeated_tool_errors" and prediction.iterations == 3
    assert prediction.fallback is not None and "explode" in prediction.fallback
    assert "try another approach" in prediction.fallback
    assert [e.kind for e in prediction.tool_errors] == ["ValueError"] * 3


def test_a_success_between_failures_resets_the_count_and_history_keeps_ten(lm: ScriptedLM) -> None:
    outcomes = iter([True, True, False] * 5)

    def flaky(query: str) -> str:
        if next(outcomes):
            raise ValueError("nope")
        return "ok"

    lm.replies += [step("x", "flaky", {"query": "x"})] * 15 + [answer("x")]
    prediction = ReAct("question -> answer", [flaky], max_iters=15)(question="q")
    assert prediction.stop_reason == "max_iters" and len(prediction.tool_errors) == 10


def test_error_tracking_is_per_call(lm: ScriptedLM) -> None:
    agent = ReAct("question -> answer", [explode, add])
    lm.replies += [step("x", "explode", {"query": "x"})] * 2 + [step("d", "finish"), answer("x")]
    agent(question="q")
    lm.replies += [step("x", "explode", {"query": "x"}), step("d", "finish"), answer("x")]
    assert agent(question="q").stop_reason == "finish"


def test_the_trajectory_is_the_callers_snapshot(lm: ScriptedLM) -> None:
    agent = ReAct("question -> answer", [add])
    lm.replies += [step("a", "add", {"a": 1, "b": 1}), step("d", "finish"), answer("x")]
    first = agent(question="q")
    first.trajectory[0].tool_args["a"] = 99
    first.trajectory.append(Step(thought="junk", tool_name="junk", tool_args={}, observation=None))
    lm.replies += [step("d", "finish"), answer("y")]
    second = agent(question="q")
    assert [s.tool_name for s in second.trajectory] == ["finish"]
    assert "junk" not in lm.text(3) and "99" not in lm.text(3)


def test_an_adapter_override_formats_both_calls_and_does_not_leak(lm: ScriptedLM) -> None:
    lm.replies += ['{"next_thought": "d", "next_tool_name": "finish", "next_tool_args": {}}',
                   '{"answer": "json"}']
    reference.configure(adapter=reference.ChatAdapter())
    try:
        assert ReAct("question -> answer", [add], adapter=JSONAdapter())(question="q").answer == "json"
        assert all("[[ ##" not in lm.text(i) for i in range(2))
        assert type(reference.settings().adapter) is reference.ChatAdapter
    finally:
        reference.configure(adapter=None)


def test_a_missing_input_fails_before_any_model_call(lm: ScriptedLM) -> None:
    with pytest.raises(ValueError, match="missing input\\(s\\) context"):
        ReAct("context, question -> answer", [add])(question="q")
    assert lm.requests == []


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"on_max_iters": "explode"}, "on_max_iters must be"),
    ({"tools": [add, add]}, "reserved or used twice"),
])
def test_bad_construction_is_refused(kwargs: dict[str, object], says: str) -> None:
    args: dict[str, object] = {"tools": [add], **kwargs}
    with pytest.raises(ValueError, match=says):
        ReAct("question -> answer", **args)  # type: ignore[arg-type]


def test_a_field_named_like_react_internals_is_refused() -> None:
    with pytest.raises(reference.SignatureError, match="'trajectory' is reserved"):
        ReAct("trajectory -> answer", [add])
