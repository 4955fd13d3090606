"""Steps of the `http` profile: what the endpoint answers, and what went over the wire."""

from __future__ import annotations

from pytest_bdd import given, parsers, then

from conformance._world import World
from conformance.binding import FaultTurn


@given(parsers.re(r"the endpoint first answers HTTP (?P<status>\d{3})(?: with Retry-After (?P<after>\d+))?$"))
def endpoint_fails_first(world: World, status: str, after: str | None) -> None:
    fault = {"fault": status, "retry_after": float(after) if after is not None else None}
    world.model.extend([FaultTurn.model_validate(fault)])


@then(parsers.re(r"the (?P<which>first|last) request was sent again, unchanged$"))
def request_sent_again(world: World, which: str) -> None:
    calls = world.model.calls
    assert len(calls) >= 2, f"the endpoint received {len(calls)} request(s): nothing was retried"
    failed, again = (calls[0], calls[1]) if which == "first" else (calls[-2], calls[-1])
    assert (failed.messages, failed.tools) == (again.messages, again.tools), (
        f"the {which} request was not sent again unchanged: the request after it differs.\n"
        f"failed: {failed.model_dump_json()}\nnext:   {again.model_dump_json()}"
    )
