"""Then steps on the suite's tool recorders: which tool ran, how often, with which args."""

from __future__ import annotations

from typing import Any

from pytest_bdd import parsers, then

from conformance._steps import parse_json
from conformance._values import json_equal, json_key, of_declared_type
from conformance._world import World
from conformance.binding import ToolSpec


@then("no tool ran")
def no_tool_ran(world: World) -> None:
    ran = {name: t.calls for name, t in world.tools.items() if t.calls}
    assert not ran, f"no tool should have run, but these did: {ran}"

@then(parsers.parse('the tool "{name}" never ran'))
def tool_never_ran(world: World, name: str) -> None:
    calls = world.tool(name).calls
    assert not calls, f"the tool {name!r} must not run, but it ran with {calls}"

@then(parsers.re(r'the tool "(?P<name>[^"]+)" ran exactly once, with (?P<args>\{.*\})'
                  r'(?:, as (?P<requirement>[A-Z]+-\d+) requires)?$'))
def tool_ran_once(world: World, name: str, args: str, requirement: str | None = None) -> None:
    """With "as X requires", a precondition X judges: a failure blocks the scenario by X."""
    calls = world.tool(name).calls
    expected = parse_json(args)
    ran = [json_key(c) for c in calls] == [json_key(expected)]
    message = f"the tool {name!r} should have run once with {args}; it ran with {calls}"
    if requirement is not None:
        world.blocked_unless(ran, requirement, message)
    assert ran, message

@then(parsers.re(r'the tool "(?P<name>\w+)" ran (?P<count>\d+) times?$'))
def tool_ran_times(world: World, name: str, count: str) -> None:
    calls = world.tool(name).calls
    if len(calls) != int(count):
        world.blocked_if_ended_by_raising_tool()
        world.blocked_if_ended_on_unread_reply()
        world.blocked_if_stopped_early()
    assert len(calls) == int(count), (
        f"the tool {name!r} should have run {count} time(s); it ran {len(calls)}: {calls}"
    )

@then(parsers.parse("no tool ran with {args}"))
def no_tool_ran_with(world: World, args: str) -> None:
    bad = json_key(parse_json(args))
    ran = [name for name, t in world.tools.items() if any(json_key(c) == bad for c in t.calls)]
    assert not ran, f"the tool(s) {ran} ran with {args}, which no tool should receive"

@then(parsers.parse('the tool "{name}" received each of them exactly as sent'))
def tool_received_all(world: World, name: str) -> None:
    calls = world.tool(name).calls
    assert world.sent_args, "no arguments were generated"
    assert [json_key(c) for c in calls] == [json_key(a) for a in world.sent_args], (
        f"the tool {name!r} received {len(calls)} calls for {len(world.sent_args)} sent"
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def schema_problems(spec: ToolSpec, sent: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """How the args a tool received (`got`) break its declared schema, or were not converted
    losslessly from the args the model sent: empty when each declared argument is there, of its
    declared type, and equal to what was sent or a lossless conversion of it (`"50"` to 50)."""
    problems = []
    for param in spec.parameters:
        if param.name not in got:
            problems.append(f"{param.name!r} is missing")
            continue
        value = got[param.name]
        if not of_declared_type(value, param.type):
            problems.append(f"{param.name!r} is {value!r}, not of the declared type {param.type}")
        elif param.name not in sent:
            problems.append(f"{param.name!r} was not sent, and the tool got {value!r}")
        elif not _lossless(sent[param.name], value):
            problems.append(f"{param.name!r} was sent as {sent[param.name]!r} and reached the tool "
                            f"as {value!r}, which is not the same value")
    return problems


def _lossless(sent: Any, got: Any) -> bool:
    """Whether `got` is `sent`, or `sent` written in another JSON type without losing anything:
    a number written as text (`"50"`), or a number as its text."""
    if json_equal(sent, got):
        return True
    if isinstance(sent, str) and _number(got):
        try:
            return json_equal(float(sent.strip()), got) and sent.strip() == sent
        except ValueError:
            return False
    if _number(sent) and isinstance(got, str):
        try:
            return json_equal(float(got), sent)
        except ValueError:
            return False
    return False
