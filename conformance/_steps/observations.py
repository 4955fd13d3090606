"""Then steps on the trajectory and the observations the agent was shown."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bdd import parsers, then

from conformance._steps import ERROR_WORDS, _show, parse_json
from conformance._steps.run import MUTATION_MARKER
from conformance._steps.tools import tool_ran_once
from conformance._values import json_equal
from conformance._world import World
from conformance.binding import StepTurn


def _tool_steps(world: World) -> list[Any]:
    return [s for s in world.steps() if s.tool_name != "finish"]

@then("the trajectory's tool steps are")
def trajectory_is(world: World, datatable: list[list[str]]) -> None:
    try:
        _trajectory_is(_tool_steps(world), datatable)
    except AssertionError:
        world.blocked_if_stopped_early()
        raise

def _trajectory_is(steps: list[Any], datatable: list[list[str]]) -> None:
    header, *rows = datatable
    listing = "\n".join(f"  {s.model_dump_json()}" for s in steps)
    assert len(steps) == len(rows), (
        f"expected {len(rows)} tool step(s) in the trajectory, got {len(steps)}:\n{listing}"
    )
    for number, (row, step) in enumerate(zip(rows, steps, strict=True), start=1):
        want = dict(zip(header, row, strict=True))
        assert step.tool_name == want["tool"], f"step {number} should be {want['tool']!r}:\n{listing}"
        assert json_equal(step.tool_args, parse_json(want["args"])), (
            f"step {number} should have args {want['args']}:\n{listing}"
        )
        assert want["observation"] in str(step.observation), (
            f"step {number}'s observation should contain {want['observation']!r}:\n{listing}"
        )
        assert step.thought is None or want["thought"] in step.thought, (
            f"step {number}'s thought should be {want['thought']!r}:\n{listing}"
        )

@then(parsers.parse(
    'step {number:d} of the trajectory called "{tool}" with {args} and observed "{observation}"'
))
def trajectory_step(world: World, number: int, tool: str, args: str, observation: str) -> None:
    steps = world.steps()
    assert len(steps) >= number, f"the trajectory has {len(steps)} step(s), not {number}"
    step = steps[number - 1]
    assert step.tool_name == tool and json_equal(step.tool_args, parse_json(args)), (
        f"step {number} should call {tool!r} with {args}: {step.model_dump_json()}"
    )
    assert observation in str(step.observation), (
        f"step {number}'s observation should contain {observation!r}: {step.observation!r}"
    )

def _observation(world: World, number: int) -> str:
    steps = world.steps()
    assert len(steps) >= number, (
        f"the trajectory has {len(steps)} step(s); expected an observation for step {number}"
    )
    return str(steps[number - 1].observation)

@then(parsers.parse('the observation of step {number:d} reads "{text}"'))
def observation_reads(world: World, number: int, text: str) -> None:
    observed = _observation(world, number)
    assert text in observed, f"step {number}'s observation should read {text!r}: {observed!r}"

def _leaves(value: Any) -> list[str]:
    """The keys and scalar values of a JSON value, as text."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in (str(k), *_leaves(v))]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value if isinstance(value, str) else json.dumps(value)]

@then(parsers.re(r"the observation of step (?P<number>\d+) holds (?P<value>\{.*\})$"))
def observation_holds(world: World, number: str, value: str) -> None:
    """LOOP-1: a tool's structured result is the observation: the object itself, or text that
    shows every key and value of it (its JSON, or the library's own rendering of it)."""
    expected = parse_json(value)
    steps = world.steps()
    assert len(steps) >= int(number), (
        f"the trajectory has {len(steps)} step(s); expected an observation for step {number}"
    )
    observed = steps[int(number) - 1].observation
    if json_equal(observed, expected):
        return
    text = observed if isinstance(observed, str) else json.dumps(observed)
    missing = [leaf for leaf in _leaves(expected) if leaf not in text]
    assert not missing, (
        f"step {number}'s observation should be the tool's result {value}, or show each of its "
        f"keys and values; it lacks {missing}: {observed!r}"
    )

@then(parsers.parse('the observation of step {number:d} names "{tool}" and carries "{message}"'))
def observation_names_tool(world: World, number: int, tool: str, message: str) -> None:
    observed = _observation(world, number)
    assert tool in observed and message in observed, (
        f"step {number}'s observation should name the tool {tool!r} and carry the error's message "
        f"{message!r}: {observed!r}"
    )

@then(parsers.parse('the observation of step {number:d} is an error that names "{field}"'))
def observation_names(world: World, number: int, field: str) -> None:
    observed = _observation(world, number)
    assert ERROR_WORDS.search(observed) and field in observed, (
        f"step {number}'s observation should be an error naming the field {field!r}: {observed!r}"
    )

@then(parsers.parse("the agent saw an error for step {number:d} or was asked again"))
def saw_error_or_retried(world: World, number: int) -> None:
    outcome = world.prediction()  # a run that crashed did neither
    steps = outcome.trajectory
    if len(steps) >= number and ERROR_WORDS.search(str(steps[number - 1].observation)):
        return
    calls = [c for c in world.model.calls if c.kind == "step"]
    assert len(calls) >= 2, (
        "after a step the implementation could not carry out, the agent should see an error "
        f"observation or be asked again; it made {len(calls)} step call(s) and the trajectory was "
        f"{[s.model_dump() for s in steps]}"
    )
    first, second = calls[0], calls[1]
    thought = next((t.thought for t in world.turns_per_run[-1] if isinstance(t, StepTurn)), "")
    if thought and thought not in second.text():
        return  # the same step was asked again (a parse retry), in whatever format
    # Step 1 went into the agent's history: what the next step call shows that the first did not
    # must tell the agent it failed.
    seen = set(first.text().splitlines())
    added = "\n".join(line for line in second.text().splitlines() if line not in seen)
    assert ERROR_WORDS.search(added), (
        "after a step the implementation could not carry out, the agent should see an error "
        "observation, or be asked that step again; the next step call shows the step "
        f"({thought!r}) but no error. What it added:\n{_show(added, 2000)}\nThe trajectory was "
        f"{[s.model_dump() for s in steps]}"
    )

@then(parsers.parse('the agent was told that the tool "{tool}" it chose in step {number:d} is unknown'))
def told_unknown_tool(world: World, tool: str, number: int) -> None:
    """LOOP-5: an error observation naming the tool, or a later step call that shows the agent an
    error about that step; a call skipped without any trace (the step gone, or blank) tells it nothing."""
    steps = world.prediction().trajectory
    if len(steps) >= number:
        observed = str(steps[number - 1].observation)
        if ERROR_WORDS.search(observed) and tool in observed:
            return
    calls = [c for c in world.calls_per_run[-1] if c.kind == "step"]
    assert len(calls) > number, (
        f"after the call of the unknown tool {tool!r} the agent should be told; it made "
        f"{len(calls)} step call(s) and the trajectory was {[s.model_dump() for s in steps]}"
    )
    seen = set(calls[number - 1].text().splitlines())
    added = "\n".join(line for line in calls[number].text().splitlines() if line not in seen)
    assert ERROR_WORDS.search(added) and tool in added, (
        f"after the call of the unknown tool {tool!r} the agent should see an error naming it (or "
        f"be asked that step again with one); the next step call adds neither. What it added:\n"
        f"{_show(added, 2000)}\nThe trajectory was {[s.model_dump() for s in steps]}"
    )

@then(parsers.parse(
    'the tool "{name}" ran exactly once with {args}, or the agent saw an error for step {number:d}'))
def ran_or_error(world: World, name: str, args: str, number: int) -> None:
    """A reply the library may read either way (args in a code fence): the run goes on, and the
    tool runs on exactly those args or not at all."""
    calls = world.tool(name).calls
    if calls:
        tool_ran_once(world, name, args)
        world.prediction()
    else:
        saw_error_or_retried(world, number)

@then(parsers.parse('the observation of step {number:d} is an error that says why, matching "{pattern}"'))
def observation_says_why(world: World, number: int, pattern: str) -> None:
    observed = _observation(world, number)
    assert ERROR_WORDS.search(observed) and re.search(pattern, observed, re.IGNORECASE), (
        f"step {number}'s observation should be an error that says what was wrong "
        f"(matching /{pattern}/): {observed!r}"
    )

@then(parsers.parse("no model call of call {number:d} shows the caller's mutation"))
def mutation_not_seen(world: World, number: int) -> None:
    for call in world.calls_per_run[number - 1]:
        assert MUTATION_MARKER not in call.text(), (
            "the caller mutated what an earlier call returned, and a later model call shows it: "
            "the returned trajectory or history was not a snapshot"
        )
    assert MUTATION_MARKER not in world.outcomes[number - 1].model_dump_json(), (
        f"call {number} returned the caller's mutation of an earlier result"
    )
