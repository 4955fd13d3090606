"""Steps on adapters: which format each model call used, and that an override does not leak."""

from __future__ import annotations

from pytest_bdd import given, parsers, then

from conformance import _guard
from conformance._steps.streams import own_answer
from conformance._world import World
from conformance.binding import AdapterName, FinalTurn, LMCall, Outcome


def _formats(calls: list[LMCall]) -> list[str]:
    return [c.adapter for c in calls]

@then(parsers.parse('every model call used the "{adapter}" format'))
def every_call_format(world: World, adapter: str) -> None:
    formats = _formats(world.model.calls)
    assert formats and all(f == adapter for f in formats), (
        f"every internal call should use the {adapter!r} format; the calls used {formats}"
    )

@then(parsers.parse('the global adapter is still "{adapter}"'))
def global_adapter_still(world: World, adapter: str) -> None:
    got = _guard.call("global_adapter", world.binding.global_adapter, world.timeout)
    assert got == adapter, f"the global adapter should still be {adapter!r}; it is now {got!r}"

@then(parsers.parse('a second agent without its own adapter uses the "{adapter}" format'))
def second_agent_format(world: World, adapter: str) -> None:
    world.adapter = None
    world.reset_agent()
    world.model = world.new_model([
        FinalTurn(thought="done", outputs={"answer": "ok"}),
    ])
    world.call({"question": "Anything?"})
    every_call_format(world, adapter)

@given(parsers.parse(
    'a first agent without its own adapter uses the "{adapter}" format, as ADP-1 requires'
))
def first_agent_format(world: World, adapter: str) -> None:
    """ADP-2's precondition: the global adapter took effect, else "the agent's own adapter wins"
    would pass for a library whose configure does nothing and whose default is the own one."""
    script = world.model
    world.model = world.new_model([FinalTurn(thought="done", outputs={"answer": "ok"})])
    world.call({"question": "Anything?"})
    formats = _formats(world.model.calls)
    world.blocked_unless(bool(formats) and all(f == adapter for f in formats), "ADP-1",
                         f"with the global adapter {adapter!r}, an agent without its own used {formats}")
    world.model = script
    world.outcomes.clear()
    world.early_stops.clear()
    world.calls_per_run.clear()
    world.served_per_run.clear()
    world.turns_per_run.clear()
    world.reset_agent()

@given(parsers.parse(
    'the library builds an agent with the adapter "{adapter}" of its own, as {requirement} requires'
))
def builds_with_own_adapter(world: World, adapter: AdapterName, requirement: str) -> None:
    """The precondition of a scenario that builds agents with an adapter of their own (ADP-3,
    ASYNC-2): the library takes one at all, which ADP-2 judges. A build refused only for the
    adapter (the same agent without it builds) is ADP-2's failure, not the scenario's."""
    kept = world.adapter
    world.adapter = adapter
    world.reset_agent()
    world.build()
    refused = world.build_error
    world.adapter = None
    world.reset_agent()
    world.build()
    plain = world.build_error is None
    world.adapter = kept
    world.reset_agent()
    world.blocked_unless(refused is None or not plain, requirement,
                         f"the library builds the agent, but not with an adapter of its own: "
                         f"{refused.type}: {refused.message}" if refused else "")

@then("every concurrent run used only its own agent's format and got its own answer")
def concurrent_ok(world: World) -> None:
    assert world.concurrent, "no concurrent runs were made"
    for index, (own, model, answer, result) in enumerate(world.concurrent):
        expected = own or world.global_adapter
        assert isinstance(result, Outcome), f"concurrent run {index} did not finish: {result!r}"
        world.check_calls(model, f"concurrent run {index}")
        formats = _formats(model.calls)
        assert formats and all(f == expected for f in formats), (
            f"concurrent run {index} should use only the {expected!r} format; it used {formats}"
        )
        if result.error is not None:
            world.blocked_if_concurrent_run_stopped_early(index)
        own_answer(index, answer, result)
