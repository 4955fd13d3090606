"""Steps of the `http` profile: what the endpoint answers, and what went over the wire."""

from __future__ import annotations

import json

from pydantic import JsonValue
from pytest_bdd import given, parsers, then

from conformance._world import World
from conformance.binding import FaultTurn, LMCall


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
        f"the {which} request failed and was not sent again unchanged: {_difference(failed, again)}"
    )


def _difference(failed: LMCall, again: LMCall) -> str:
    """The first difference between a failed request and the one after it, in a line or two."""
    if failed.tools != again.tools:
        return f"its tools were {failed.tools}, then {again.tools}"
    for number, (before, after) in enumerate(zip(failed.messages, again.messages, strict=False), 1):
        if before != after:
            return f"message {number} was {_short(before)}, then {_short(after)}"
    longer, shorter = (again, failed) if len(again.messages) > len(failed.messages) else (failed, again)
    extra = longer.messages[len(shorter.messages):]
    return f"the {'retry' if longer is again else 'failed request'} also had {[_short(m) for m in extra]}"


def _short(message: dict[str, JsonValue], limit: int = 160) -> str:
    text = json.dumps(message)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"
