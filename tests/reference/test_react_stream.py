"""stream: an event per step as it completes, then exactly one done event; a fresh budget per call."""

from __future__ import annotations

import asyncio

import pytest

from reference import Event, HumanInTheLoopRequired, MaxIterationsError, ReAct, Step
from tests.reference.conftest import ScriptedLM, answer, step


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_the_stream_emits_each_step_in_order_then_one_done(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("bad", "add", {"a": 1}),
                   step("done", "finish"), answer(answer="5")]
    events = list(ReAct("question -> answer", [add]).stream(question="2 + 3?"))
    assert [e.kind for e in events] == ["step", "step", "step", "done"]
    steps = [e.step for e in events[:-1]]
    assert steps[0] == Step(thought="adding", tool_name="add", tool_args={"a": 2, "b": 3}, observation=5)
    assert "invalid arguments for add" in steps[1].observation
    done = events[-1]
    assert done.step is None and done.stop_reason == "finish" and done.prediction is not None
    assert done.prediction.answer == "5" and done.prediction.stop_reason == "finish"
    assert done.prediction.trajectory == steps


def test_each_step_event_comes_before_the_next_model_call(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("done", "finish"), answer(answer="5")]
    stream = ReAct("question -> answer", [add]).stream(question="q")
    first = next(stream)
    assert first.kind == "step" and len(lm.requests) == 1
    assert [e.kind for e in stream] == ["step", "done"] and len(lm.requests) == 3


def test_a_capped_stream_still_ends_with_one_done(lm: ScriptedLM) -> None:
    lm.replies += [step("a", "add", {"a": 1, "b": 1}), step("b", "add", {"a": 1, "b": 1}), answer(answer="2")]
    events = list(ReAct("question -> answer", [add], max_iters=5).stream(question="q", max_iters=2))
    assert [e.kind for e in events] == ["step", "step", "done"]
    assert events[-1].stop_reason == "max_iters" and events[-1].prediction is not None
    assert events[-1].prediction.fallback is not None


def test_step_events_are_the_callers_copies(lm: ScriptedLM) -> None:
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("done", "finish"), answer(answer="5")]
    events = []
    for event in ReAct("question -> answer", [add]).stream(question="q"):
        if event.step is not None:
            event.step.observation = "mutated"
        events.append(event)
    assert events[-1].prediction is not None
    assert events[-1].prediction.trajectory[0].observation == 5 and "mutated" not in lm.text(2)


def test_a_stream_raises_what_forward_raises_after_the_steps_it_took(lm: ScriptedLM) -> None:
    react = ReAct("question -> answer", [add], max_iters=1, on_max_iters="raise",
                  enable_ask_to_user=True)
    lm.replies += [step("a", "add", {"a": 1, "b": 1})]
    events: list[Event] = []
    with pytest.raises(MaxIterationsError):
        events.extend(react.stream(question="q"))
    assert [e.kind for e in events] == ["step"]
    lm.replies += [step("ask", "ask_to_user", {"question": "Sure?"})]
    with pytest.raises(HumanInTheLoopRequired):
        list(react.stream(question="q"))


def test_astream_emits_the_same_events(lm: ScriptedLM) -> None:
    react = ReAct("question -> answer", [add])

    async def collect() -> list[Event]:
        return [event async for event in react.astream(question="q")]

    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("done", "finish"), answer(answer="5")]
    sync = list(react.stream(question="q"))
    lm.replies += [step("adding", "add", {"a": 2, "b": 3}), step("done", "finish"), answer(answer="5")]
    concurrent = asyncio.run(collect())
    assert [(e.kind, e.step, e.stop_reason) for e in concurrent] == [
        (e.kind, e.step, e.stop_reason) for e in sync]


@pytest.mark.parametrize("form", ["forward", "stream", "aforward"])
def test_every_call_starts_with_a_fresh_budget(lm: ScriptedLM, form: str) -> None:
    react = ReAct("question -> answer", [add], max_iters=2)

    def call() -> int:
        if form == "stream":
            *_, done = react.stream(question="q")
            assert done.prediction is not None
            return done.prediction.iterations
        prediction = asyncio.run(react.aforward(question="q")) if form == "aforward" else react(question="q")
        return prediction.iterations

    for _ in range(3):
        lm.replies += [step("a", "add", {"a": 1, "b": 1}),
                       step("b", "add", {"a": 1, "b": 1}),
                       answer(answer="2")]
        assert call() == 2
    lm.replies += [step("a", "add", {"a": 1, "b": 1}), step("done", "finish"), answer(answer="2")]
    assert call() == 2
