"""Then steps on the suite's tool recorders: which tool ran, how often, with which args."""

from __future__ import annotations

from pytest_bdd import parsers, then

from conformance._steps import parse_json
from conformance._values import json_key
from conformance._world import World


@then("no tool ran")
def no_tool_ran(world: World) -> None:
    ran = {name: t.calls for name, t in world.tools.items() if t.calls}
    assert not ran, f"no tool should have run, but these did: {ran}"

@then(parsers.parse('the tool "{name}" never ran'))
def tool_never_ran(world: World, name: str) -> None:
    calls = world.tool(name).calls
    assert not calls, f"the tool {name!r} must not run, but it ran with {calls}"

@then(parsers.parse('the tool "{name}" ran exactly once, with {args}'))
def tool_ran_once(world: World, name: str, args: str) -> None:
    calls = world.tool(name).calls
    expected = parse_json(args)
    assert [json_key(c) for c in calls] == [json_key(expected)], (
        f"the tool {name!r} should have run once with {args}; it ran with {calls}"
    )

@then(parsers.re(r'the tool "(?P<name>\w+)" ran (?P<count>\d+) times?$'))
def tool_ran_times(world: World, name: str, count: str) -> None:
    calls = world.tool(name).calls
    if len(calls) != int(count):
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
