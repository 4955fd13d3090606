"""Then steps on the trajectory and the observations the agent was shown."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bdd import parsers, then

from conformance._attribution import TRAJECTORY, args_as_text, args_recorded_as_text
from conformance._steps import ERROR_WORDS, _show, how_marked, marked_as_error, parse_json
from conformance._steps.run import MUTATION_MARKER
from conformance._steps.tools import schema_problems, tool_ran_once
from conformance._values import json_equal
from conformance._world import World
from conformance.binding import Step, StepTurn


def _tool_steps(world: World) -> list[Any]:
    return [s for s in world.steps() if s.tool_name != "finish"]

class _ArgsAsText:
    """Steps whose args the trajectory recorded as the JSON text of the object (TRJ-1's defect):
    read as the object, so that every other check of the scenario runs first, and told at the end
    (`blocked`), where nothing else failed. A tool that did not receive the args its step records
    is no recording defect: that check fails as it would."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.causes: list[str] = []

    def equal(self, number: int, step: Step, expected: Any) -> bool:
        if json_equal(step.tool_args, expected):
            return True
        # A built-in tool (ask_to_user) records no runs of its own to hold the step to.
        received = step.tool_name not in self.world.tools or any(
            json_equal(c, expected) for c in self.world.tool(step.tool_name).calls)
        if received and args_as_text(step.tool_args, expected):
            self.causes.append(args_recorded_as_text(number, str(step.tool_args)))
            return True
        return False

    def told(self) -> None:
        self.world.blocked_unless(not self.causes, TRAJECTORY, "; ".join(self.causes))


@then("the trajectory's tool steps are")
def trajectory_is(world: World, datatable: list[list[str]]) -> None:
    as_text = _ArgsAsText(world)
    try:
        _trajectory_is(_tool_steps(world), datatable, as_text)
    except AssertionError:
        world.blocked_if_stopped_early()
        raise
    as_text.told()

def _trajectory_is(steps: list[Any], datatable: list[list[str]], as_text: _ArgsAsText) -> None:
    header, *rows = datatable
    listing = "\n".join(f"  {s.model_dump_json()}" for s in steps)
    assert len(steps) == len(rows), (
        f"expected {len(rows)} tool step(s) in the trajectory, got {len(steps)}:\n{listing}"
    )
    for number, (row, step) in enumerate(zip(rows, steps, strict=True), start=1):
        want = dict(zip(header, row, strict=True))
        assert step.tool_name == want["tool"], f"step {number} should be {want['tool']!r}:\n{listing}"
        assert as_text.equal(number, step, parse_json(want["args"])), (
            f"step {number} should have args {want['args']}:\n{listing}"
        )
        assert step.observation is not None, (
            f"step {number} ({step.tool_name}) ran but has no observation:\n{listing}"
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
    step, as_text = steps[number - 1], _ArgsAsText(world)
    assert step.tool_name == tool and as_text.equal(number, step, parse_json(args)), (
        f"step {number} should call {tool!r} with {args}: {step.model_dump_json()}"
    )
    assert observation in str(step.observation), (
        f"step {number}'s observation should contain {observation!r}: {step.observation!r}"
    )
    as_text.told()

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

def _scripted_call(world: World, number: int) -> StepTurn:
    turns = [t for t in world.turns_per_run[-1] if isinstance(t, StepTurn)]
    assert len(turns) >= number, f"the scenario scripts {len(turns)} step(s), not {number}"
    return turns[number - 1]

def _bound_step(world: World, number: int, tool: str, as_text: _ArgsAsText) -> Step:
    """Step `number` of the latest run, checked to answer the call the model made there: the same
    tool and args, and (where the library binds by id) an id no other step answers."""
    steps = world.steps()
    listing = "\n".join(f"  {s.model_dump_json()}" for s in steps)
    assert len(steps) >= number, (
        f"the trajectory has {len(steps)} step(s); expected an observation for step {number}:\n{listing}")
    step, turn = steps[number - 1], _scripted_call(world, number)
    assert step.tool_name == tool == turn.tool_name and as_text.equal(number, step, turn.tool_args), (
        f"step {number}'s observation should answer the call {tool}({turn.args_text()}) the model "
        f"made there:\n{listing}")
    if step.call_id is not None:
        shared = [s.model_dump_json() for s in steps if s is not step and s.call_id == step.call_id]
        assert not shared, (
            f"step {number}'s observation is bound to the call id {step.call_id!r}, which other steps "
            f"answer too: {shared}")
    return step

@then(parsers.parse('the observation of step {number:d} is an error bound to the call of "{tool}"'))
def error_bound_to_call(world: World, number: int, tool: str) -> None:
    """ERR-1: the run went on (a prediction), and the step the raising tool was called in has an
    observation bound to that call and marked as an error, by the library's flag where it has one,
    else by its words (or the exception's type name). The message is ERR-4's."""
    world.prediction()
    raised = world.raised_per_run[-1]
    world.blocked_unless(bool(raised), "LOOP-1",
                         f"the tool {tool!r} was chosen in step {number} but never ran")
    as_text = _ArgsAsText(world)
    step = _bound_step(world, number, tool, as_text)
    assert marked_as_error(step, raised[0]), (
        f"step {number}'s observation should be marked as an error (the tool raised {raised[0]}); "
        f"{how_marked(step)}: {step.observation!r}")
    as_text.told()

@then(parsers.parse('the error observation of step {number:d} carries the message "{message}"'))
def error_carries_message(world: World, number: int, message: str) -> None:
    """ERR-4, once ERR-1 holds: the error observation carries the exception's message."""
    world.prediction()
    steps = world.steps()
    raised = world.raised_per_run[-1]
    world.blocked_unless(bool(raised) and len(steps) >= number and marked_as_error(
        steps[number - 1], raised[0]), "ERR-1", f"step {number} has no error observation")
    observed = str(steps[number - 1].observation)
    assert message in observed, (
        f"step {number}'s error observation should carry the exception's message {message!r}: "
        f"{observed!r}")

def _error_step(world: World, number: int) -> Step:
    steps = world.steps()
    assert len(steps) >= number, (
        f"the trajectory has {len(steps)} step(s); expected an error observation for step {number}")
    return steps[number - 1]

@then(parsers.parse('the observation of step {number:d} is an error that names "{field}"'))
def observation_names(world: World, number: int, field: str) -> None:
    step = _error_step(world, number)
    observed = str(step.observation)
    assert marked_as_error(step) and field in observed, (
        f"step {number}'s observation should be an error naming the field {field!r}"
        + ("" if marked_as_error(step) else f" ({how_marked(step)})") + f": {observed!r}")

@then(parsers.parse("the agent saw an error for step {number:d} or was asked again"))
def saw_error_or_retried(world: World, number: int) -> None:
    outcome = world.prediction()  # a run that crashed did neither
    steps = outcome.trajectory
    if len(steps) >= number and marked_as_error(steps[number - 1]):
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

#: Words that say why args were refused for their size or depth, in any library's words.
_TOO_BIG = re.compile(r"long|large|big|size|limit|characters|bytes|exceed|maxim|too many|deep|nest|"
                      r"depth|level|recursion", re.IGNORECASE)

@then(parsers.parse('the tool "{name}" received it intact, or never ran and the agent was told why'))
def intact_or_refused(world: World, name: str) -> None:
    """ARGS-5: the run returned (no crash, within the scenario's timeout); the tool either got
    the args as sent, or never ran and step 1's observation is an error that says why. Which one,
    and the library's words, are reported: the limits are the library's own."""
    world.prediction()
    calls, (sent,) = world.tool(name).calls, world.sent_args[-1:]
    size = f"{len(_scripted_call(world, 1).args_text()):,} characters of args"
    if calls:
        assert len(calls) == 1 and json_equal(calls[0], sent), (
            f"the tool {name!r} ran on {size}, but not with them intact ({len(calls)} call(s))")
        world.notes.append(f"{size}: the tool received them intact")
        return
    step = _error_step(world, 1)
    observed = str(step.observation)
    assert marked_as_error(step) and _TOO_BIG.search(observed), (
        f"the tool {name!r} did not run on {size}; step 1's observation should be an error "
        f"that says why (their size or depth): {_show(observed)!r}")
    world.notes.append(f"{size}: refused, the agent was told {_show(observed, 300)!r}")

@then(parsers.parse('the tool "{name}" never received a wrong-typed or missing value, or the agent '
                    'saw an error for step {number:d} naming "{field}"'))
def schema_kept(world: World, name: str, number: int, field: str) -> None:
    """ARGS-4: a call against the declared schema is refused with an error naming the field, or
    reaches the tool converted losslessly to the declared types (`"50"` to 50)."""
    world.prediction()
    tool = world.tool(name)
    sent = _scripted_call(world, number).tool_args
    assert isinstance(sent, dict), f"the scenario's args are not an object: {sent!r}"
    if tool.calls:
        wrong = [problem for got in tool.calls for problem in schema_problems(tool.spec, sent, got)]
        assert not wrong, (
            f"the tool {name!r} was called with {json.dumps(sent)} against its schema, and ran "
            f"with {tool.calls}: {'; '.join(wrong)}")
        world.notes.append(f"{json.dumps(sent)} was converted to {tool.calls[0]} and the tool ran")
        return
    observation_names(world, number, field)

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
