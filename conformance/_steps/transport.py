"""Then steps on retries of the model (NET-1): the tries, the waits between them, timeouts."""

from __future__ import annotations

from itertools import pairwise

from pytest_bdd import parsers, then

from conformance import _guard
from conformance._world import World


@then("the model was retried at least once")
def model_retried(world: World) -> None:
    got = world.model.count("step")
    assert got >= 2, f"a transient failure should be retried; the model was asked {got} time(s)"

#: How much longer each wait before a retry must be than the one before: exponential backoff
#: doubles it, and the jitter libraries add leaves at least 1.2 (Ax's ±25%; the openai client's
#: -25% leaves 1.5). A constant backoff without jitter never grows; with jitter it may, by chance.
BACKOFF_GROWTH = 1.15

#: Measured in real time, the shortest first wait that is a wait and not the run's own overhead.
REAL_WAIT_FLOOR = 0.05

def _retry_gaps(world: World, least: int) -> tuple[list[float], float, str]:
    """The time between each try of the model and the next, the least of them that counts as a
    wait, and where they were measured: on the scripted model's clock when the binding passes the
    library's waits to it (`ScriptedModel.sleep`, no real waiting), else in real time. Blocked
    unless the model was retried `least` times."""
    model = world.model
    retries = model.count("step") - 1
    world.blocked_unless(retries >= least, "NET-1", f"the model was tried {retries + 1} time(s), "
                         f"not enough to see {least} wait(s) before a retry")
    on_clock = bool(model.waits)
    times = model.times if on_clock else model.walls
    gaps = [round(b - a, 4) for a, b in pairwise(times)][:retries]
    if on_clock:
        return gaps, 0.0, "the model's clock"
    return gaps, REAL_WAIT_FLOOR, "real time (the binding passed no waits to ScriptedModel.sleep)"

@then("the waits between the model's tries grew")
def waits_grew(world: World) -> None:
    """NET-1's exponential backoff: each wait before a retry at least BACKOFF_GROWTH times the one
    before (see `_retry_gaps` for where it is measured)."""
    gaps, floor, where = _retry_gaps(world, least=2)
    assert gaps[0] > floor and all(b >= BACKOFF_GROWTH * a for a, b in pairwise(gaps)), (
        f"the waits before each retry should grow (exponential backoff: each at least "
        f"{BACKOFF_GROWTH}x the one before); in {where} they were {gaps} s"
    )

@then("every retry came after a wait")
def every_retry_waited(world: World) -> None:
    """NET-1 retries with backoff: no retry, the last one before giving up included, is sent at
    once. How long each wait is the library's to choose (a cap may stop its growth)."""
    gaps, floor, where = _retry_gaps(world, least=1)
    assert all(gap > floor for gap in gaps), (
        f"each retry should come after a backoff wait; in {where} the model was retried after "
        f"{gaps} s"
    )

@then(parsers.parse("the retry came {seconds:d} seconds after the first request, as the endpoint asked"))
def retry_after_honoured(world: World, seconds: int) -> None:
    """NET-1: a 429 or 503 with Retry-After is retried after that wait, not after the library's own
    backoff; on the model's clock, or else in real time (see `waits_grew`)."""
    model = world.model
    on_clock = bool(model.waits)
    times = model.times if on_clock else model.walls
    world.blocked_unless(len(times) >= 2, "NET-1", "the model was not retried")
    gap = round(times[1] - times[0], 3)
    where = "the model's clock" if on_clock else "real time"
    assert seconds * 0.99 <= gap <= seconds + 1.0, (
        f"the endpoint asked to retry after {seconds} s (Retry-After); in {where} the retry came "
        f"after {gap} s"
    )

@then("the hung request had a timeout, and the retry came after it")
def hung_request_timed_out(world: World) -> None:
    hangs = world.model.hangs
    if not hangs:
        raise _guard.BindingError(
            "the scenario scripts a hang, but the binding's seam never called ScriptedModel.hang "
            "with the request's timeout")
    assert all(t is not None and 0 < t < float("inf") for t in hangs), (
        f"a request to an endpoint that never answers should time out; its timeout was "
        f"{hangs[0]!r}, so the call would wait for ever"
    )
    world.notes.append(f"a request that got no answer timed out after {hangs[0]:g} s, the timeout "
                       "the library's model client gave it")
    times, timeout = world.model.times, hangs[0]
    assert timeout is not None and len(times) >= 2 and times[1] - times[0] >= timeout, (
        f"the retry should come after the hung request's timeout ({hangs[0]} s); on the model's "
        f"clock the requests came at {times}"
    )
