"""Then steps on why and how a run stopped: stop reasons, iterations, the user-facing message."""

from __future__ import annotations

import re

from pytest_bdd import parsers, then

from conformance._steps import marked_as_error
from conformance._world import World


@then(parsers.parse("the run reports that the step cap stopped it after {count:d} steps"))
def cap_reported(world: World, count: int) -> None:
    """EXH-4 on the cap, in any cap behaviour: the stop reason and step count of a run that
    returned, or the library's max-iterations error with its count."""
    outcome = world.last
    if outcome.error is not None:
        if outcome.error.kind != "max-iterations":
            world.blocked_if_ended_on_unread_reply()
        assert outcome.error.kind == "max-iterations", (
            f"the step cap should stop the run, reported as such; the call raised "
            f"{outcome.error.type}: {outcome.error.message}"
        )
        iterations = outcome.error.fields.get("iterations", outcome.iterations)
        if iterations != count:
            world.blocked_if_stopped_early()
        assert iterations == count, (
            f"the max-iterations error should say the run used {count} steps; it says "
            f"{iterations!r} (fields: {sorted(outcome.error.fields)})"
        )
        return
    if outcome.stop_reason != "max_steps":
        world.blocked_if_tool_calls_dropped()
    assert outcome.stop_reason == "max_steps", (
        f"a run the step cap stopped should report stop reason 'max_steps'; got {outcome.stop_reason!r}"
    )
    if outcome.iterations != count:
        world.blocked_if_stopped_early()
    assert outcome.iterations == count, (
        f"the run should report {count} steps used; got {outcome.iterations!r}"
    )

@then("the call returned normally, flagged as stopped by the step cap")
def returned_flagged(world: World) -> None:
    outcome = world.prediction()
    assert outcome.stop_reason == "max_steps", (
        "a run the step cap stopped must say so, never look like a final answer: its stop reason "
        f"is {outcome.stop_reason!r}, not 'max_steps'"
    )

@then(parsers.parse('call {number:d} stopped with "{reason}", as {requirement} requires'))
def call_stopped_as_required(world: World, number: int, reason: str, requirement: str) -> None:
    assert len(world.outcomes) >= number, f"the scenario made {len(world.outcomes)} call(s)"
    outcome = world.outcomes[number - 1]
    got = outcome.stop_reason if outcome.error is None else f"{outcome.error.type} raised"
    world.blocked_unless(outcome.stop_reason == reason, requirement,
                         f"call {number} should have stopped with {reason!r}; it stopped with {got!r}")

@then(parsers.parse(
    'call {number:d} showed the agent an error for the call of "{tool}", as {requirement} requires'
))
def call_showed_an_error(world: World, number: int, tool: str, requirement: str) -> None:
    """That call `number` went on past the raising tool with an error observation for its call, by
    the library's flag or its words, whatever the words say (the message is ERR-4's, a SHOULD a
    MUST scenario does not lean on)."""
    assert len(world.outcomes) >= number, f"the scenario made {len(world.outcomes)} call(s)"
    did_not_crash_on_raising_tool(world, number, "ERR-1" if number == 1 else requirement)
    raised = world.raised_per_run[number - 1]
    steps = [s for s in world.outcomes[number - 1].trajectory if s.tool_name == tool]
    world.blocked_unless(
        bool(steps) and all(marked_as_error(s, raised[0] if raised else None) for s in steps),
        requirement, f"call {number} did not show the agent an error for the call of {tool!r}: its "
        f"steps of {tool!r} observed {[s.observation for s in steps]}")

@then(parsers.parse("call {number:d} did not crash on the unknown tool, as {requirement} requires"))
def did_not_crash_on_unknown_tool(world: World, number: int, requirement: str) -> None:
    error = world.outcomes[number - 1].error
    if error is not None and error.kind == "other":
        world.blocked_unless(False, requirement, f"call {number} crashed on the unknown tool: "
                             f"{error.type}: {error.message}")

@then(parsers.parse("call {number:d} did not crash on the raising tool, as {requirement} requires"))
def did_not_crash_on_raising_tool(world: World, number: int, requirement: str) -> None:
    """A run that a raising tool crashed has no trajectory to judge: ERR-1's failure, not ours."""
    error = world.outcomes[number - 1].error
    if error is not None and error.kind == "other":
        world.blocked_unless(False, requirement, f"call {number} crashed on the raising tool: "
                             f"{error.type}: {error.message}")

@then("the run is reported as stopped by its final answer, not by the step cap")
def stopped_by_final_answer(world: World) -> None:
    """LOOP-3: a final answer on the last allowed step is a final answer. A library that reports no
    stop reason passes on its outputs alone (EXH-4 judges the missing reason); one that reports a
    reason must report `finish`."""
    outcome = world.prediction()
    assert outcome.stop_reason in (None, "finish"), (
        f"the model gave its final answer on the last allowed step, but the run reports the stop "
        f"reason {outcome.stop_reason!r}, not 'finish': a final answer on step N of a cap of N is "
        "a final answer, not a cap stop"
    )

@then("the run ended with the step cap, without crashing")
def ended_on_cap(world: World) -> None:
    outcome = world.last
    if outcome.error is not None and outcome.error.kind != "max-iterations":
        world.blocked_if_ended_on_unread_reply()
    assert outcome.error is None or outcome.error.kind == "max-iterations", (
        f"the run should end on the step cap (returning, or raising the library's max-iterations "
        f"error); it crashed with {outcome.error.type}: {outcome.error.message}"
    )

@then(parsers.parse('the stop reason is "{reason}"'))
def stop_reason(world: World, reason: str) -> None:
    got = world.last.stop_reason
    assert got == reason, f"the stop reason should be {reason!r}, got {got!r}"

@then(parsers.parse("the run reports {count:d} iterations"))
def run_iterations(world: World, count: int) -> None:
    got = world.last.iterations
    if got != count:
        world.blocked_if_stopped_early()
    assert got == count, f"the run should report {count} iterations, got {got!r}"

def _fallback(world: World) -> str:
    message = world.last.fallback
    assert message, (
        "the run should give the user a message saying what was tried; it gave none "
        f"(stop reason {world.last.stop_reason!r})"
    )
    return message

@then(parsers.parse('the user-facing message names "{tool}" and suggests what to do'))
def message_suggests(world: World, tool: str) -> None:
    message = _fallback(world)
    assert tool in message, f"the message should name the tool {tool!r}: {message!r}"
    assert re.search(r"try|check|instead|suggest|rephrase|consider|could|please", message, re.I), (
        f"the message should suggest what the user can do: {message!r}"
    )

def _counted(message: str, name: str, count: int) -> bool:
    number = rf"(?<![\d.]){count}(?![\d.])"
    return bool(
        re.search(rf"\b{re.escape(name)}\b[^\d\n]{{0,20}}{number}", message)
        or re.search(rf"{number}\s*(?:×|x|times)?\s*\b{re.escape(name)}\b", message)
    )

@then(parsers.parse('the user-facing message counts "{a}" {m:d} times and "{b}" {n:d} time'))
def message_counts(world: World, a: str, m: int, b: str, n: int) -> None:
    message = _fallback(world)
    for name, count in ((a, m), (b, n)):
        assert _counted(message, name, count), (
            f"the message should say {name!r} ran {count} time(s) (e.g. 'ran {name} {count}×'): "
            f"{message!r}"
        )

@then(parsers.parse('the user-facing message mentions "{text}"'))
def message_mentions(world: World, text: str) -> None:
    message = _fallback(world)
    assert text in message, f"the message should mention {text!r}: {message!r}"

@then("the user-facing message says that no tool completed")
def message_no_tool(world: World) -> None:
    message = _fallback(world)
    assert re.search(r"no tool|n't complete any|not complete any|no tools", message, re.I), (
        f"the message should say that no tool completed: {message!r}"
    )

@then(parsers.parse('the error history holds exactly the errors "{first}" to "{last}", in order'))
def error_history(world: World, first: str, last: str) -> None:
    history = world.last.tool_errors
    assert history is not None, "the implementation does not report its tool-error history"
    prefix, start = first.rsplit(" ", 1)
    end = int(last.rsplit(" ", 1)[1])
    expected = [f"{prefix} {n}" for n in range(int(start), end + 1)]
    got = [str(entry) for entry in history]
    assert len(got) == len(expected) and all(
        want in entry for want, entry in zip(expected, got, strict=True)
    ), f"the error history should hold {expected}; it holds {got}"
