"""aforward: the same loop on an event loop; async tools awaited, sync work off the loop, no sharing."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

import reference
from reference import HumanInTheLoopRequired, JSONAdapter, MaxIterationsError, ReAct
from tests.reference.conftest import ScriptedLM, answer, step


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script() -> list[str]:
    return [step("adding", "add", {"a": 1234, "b": 4321}), step("bad", "add", {"a": "x"}),
            step("done", "finish"), answer(answer="5555")]


def test_aforward_gives_the_same_result_as_forward() -> None:
    sync, concurrent = ScriptedLM(*script()), ScriptedLM(*script())
    react = ReAct("question -> answer", [add])
    with reference.context(lm=sync):
        expected = react(question="1234 + 4321?")
    with reference.context(lm=concurrent):
        got = asyncio.run(react.aforward(question="1234 + 4321?"))
    assert got.outputs() == expected.outputs() == {"answer": "5555"}
    assert got.trajectory == expected.trajectory and len(got.trajectory) == 3
    assert (got.stop_reason, got.iterations, got.fallback) == (
        expected.stop_reason, expected.iterations, expected.fallback)
    assert concurrent.requests == sync.requests


def test_an_async_tool_is_awaited(lm: ScriptedLM) -> None:
    async def lookup(query: str) -> str:
        """Look a query up."""
        await asyncio.sleep(0)
        return f"found {query}"

    react = ReAct("question -> answer", [lookup])
    for call in (lambda: asyncio.run(react.aforward(question="q")), lambda: react(question="q")):
        lm.replies += [step("look", "lookup", {"query": "cats"}), step("done", "finish"), answer(answer="x")]
        assert call().trajectory[0].observation == "found cats"


def test_a_sync_tool_runs_off_the_event_loop(lm: ScriptedLM) -> None:
    threads: list[int] = []

    def where(query: str) -> str:
        """Say where it ran."""
        threads.append(threading.get_ident())
        return "here"

    async def run() -> int:
        await ReAct("question -> answer", [where]).aforward(question="q")
        return threading.get_ident()

    lm.replies += [step("where", "where", {"query": "x"}), step("done", "finish"), answer(answer="x")]
    loop_thread = asyncio.run(run())
    assert threads and threads[0] != loop_thread


def test_a_raising_async_tool_is_an_error_observation(lm: ScriptedLM) -> None:
    async def explode(query: str) -> str:
        """Fail."""
        raise ValueError("the disk is on fire")

    lm.replies += [step("try", "explode", {"query": "x"}), step("done", "finish"), answer(answer="x")]
    prediction = asyncio.run(ReAct("question -> answer", [explode]).aforward(question="q"))
    assert prediction.trajectory[0].observation == "Error executing explode: the disk is on fire"


def test_aforward_raises_as_forward_does(lm: ScriptedLM) -> None:
    lm.replies += [step("a", "add", {"a": 1, "b": 1})]
    react = ReAct("question -> answer", [add], max_iters=1, on_max_iters="raise")
    with pytest.raises(MaxIterationsError) as info:
        asyncio.run(react.aforward(question="q"))
    assert info.value.iterations == 1 and info.value.tools_used == ["add"]
    with pytest.raises(ValueError, match="missing input"):
        asyncio.run(react.aforward(query="q"))


def test_an_async_interrupt_resumes_asynchronously(lm: ScriptedLM) -> None:
    react = ReAct("question -> answer", [add], enable_ask_to_user=True)
    lm.replies += [step("ask", "ask_to_user", {"question": "Which numbers?"})]
    with pytest.raises(HumanInTheLoopRequired) as info:
        asyncio.run(react.aforward(question="q"))
    lm.replies += [step("adding", "add", {"a": 1, "b": 2}), step("done", "finish"), answer(answer="3")]
    prediction = asyncio.run(react.aresume("one and two", info.value))
    assert prediction.answer == "3" and prediction.trajectory[0].observation == "one and two"


def json_reply(**fields: object) -> str:
    return json.dumps(fields)


def test_concurrent_runs_share_no_state() -> None:
    """Fifty overlapping runs, of one shared agent and of others with their own adapter and step
    cap, each with its own model: each gets its own answer, trajectory, format and budget."""
    shared = ReAct("question -> answer", [add])

    async def one(i: int) -> tuple[int, bool, reference.Prediction, ScriptedLM]:
        steps, own = 1 + i % 4, i % 2 == 1
        calls = [("add", {"a": i, "b": j}) for j in range(steps - 1)] + [("finish", {})]
        if own:  # its own agent, JSON adapter, and step cap
            replies = [json_reply(next_thought=f"run {i}", next_tool_name=name, next_tool_args=args)
                       for name, args in calls] + [json_reply(answer=f"answer {i}")]
            react, cap = ReAct("question -> answer", [add], max_iters=steps, adapter=JSONAdapter()), None
        else:
            replies = [step(f"run {i}", name, args) for name, args in calls] + [answer(answer=f"answer {i}")]
            react, cap = shared, steps
        lm = ScriptedLM(*replies)
        with reference.context(lm=lm):
            return steps, own, await react.aforward(question=f"run {i}", max_iters=cap), lm

    async def every() -> list[tuple[int, bool, reference.Prediction, ScriptedLM]]:
        return list(await asyncio.gather(*(one(i) for i in range(50))))

    for i, (steps, own, prediction, lm) in enumerate(asyncio.run(every())):
        assert prediction.answer == f"answer {i}" and prediction.stop_reason == "finish"
        assert prediction.iterations == steps and len(lm.requests) == steps + 1 and not lm.replies
        assert [s.tool_args for s in prediction.trajectory[:-1]] == [
            {"a": i, "b": j} for j in range(steps - 1)]
        assert all(("[[ ## completed ## ]]" in r[0]["content"]) != own for r in lm.requests)
