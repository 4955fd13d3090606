"""When steps: build the agent, call it, tamper with what it returned, run many at once."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from pydantic import JsonValue
from pytest_bdd import parsers, when

from conformance import _guard
from conformance._model import ScriptedModel
from conformance._process import HarnessError
from conformance._steps import parse_json
from conformance._values import canonical, json_key
from conformance._world import World
from conformance.binding import CallRequest, FinalTurn, Outcome, StepTurn

#: What the caller writes into returned containers; no run may ever show it afterwards.
MUTATION_MARKER = "CALLER-MUTATION-7f3a"
#: How `mutate_last_result` reports a container the library hands out unmodifiable (its mutation
#: raised): the caller cannot change it, so it is a snapshot by construction, which TRJ-2 asks.
REFUSED = "refused:"


@when("the agent is built")
def agent_is_built(world: World) -> None:
    world.build()


@when(
    parsers.re(
        r"the agent is called(?: again)? with (?P<inputs>\{.*\})"
        r"(?: and a step cap of (?P<cap>\d+))?$"
    )
)
def agent_is_called(world: World, inputs: str, cap: str | None) -> None:
    values = parse_json(inputs)
    assert isinstance(values, dict), f"inputs must be a JSON object: {inputs}"
    world.call(values, max_steps=int(cap) if cap is not None else None)


@when(parsers.re(r"the agent is called with (?P<inputs>\{.*\}) unless it was refused$"))
def agent_is_called_unless_refused(world: World, inputs: str) -> None:
    """Build the agent; call it only if the library built it (a refusal is judged by a Then step)."""
    if world.build() is not None:
        agent_is_called(world, inputs, None)


@when("the caller mutates what the call returned")
def caller_mutates(world: World) -> None:
    """Mutate what the call returned; a mutation that changed nothing would let the snapshot
    check pass whatever the library shares, so it is the binding's error (REQUIREMENTS 3.1)."""
    agent = world.agent
    changed = _guard.call("mutate_last_result",
                          lambda: world.binding.mutate_last_result(agent, MUTATION_MARKER),
                          world.timeout)
    error = world.outcomes[-1].error if world.outcomes else None
    if not changed and error is not None and error.kind != "human-in-the-loop":
        # The library handed the caller no history with its error: nothing to mutate is then the
        # library's failure of its own requirement (EXH-2 asks for the history), not the binding's.
        assert "history" in error.fields, (
            f"{error.type} carries no 'history': the caller was handed nothing to mutate")
    blank = [line for line in changed or [] if line.startswith(REFUSED) and not line[len(REFUSED):].strip()]
    if blank:
        raise _guard.BindingError(
            f"binding.mutate_last_result returned {blank!r}: a container the library refused to "
            f"let the caller mutate is a line '{REFUSED} <container>: <what the library raised>'.")
    if not changed:
        raise _guard.BindingError(
            f"binding.mutate_last_result returned {changed!r}: it changed nothing, so this "
            "snapshot check would pass whatever the library shares. The contract asks it to "
            "mutate in place every container the last result handed the caller (a prediction's "
            "trajectory, an error's history, a pause's context trajectory) and to return one "
            "line per container it changed (see docs/writing-a-binding.md)."
        )


@when(parsers.parse('the model sends {count:d} generated JSON objects as arguments to "{tool}"'))
def generated_args(world: World, count: int, tool: str, pytestconfig: pytest.Config) -> None:
    from conformance import _fuzz  # hypothesis, imported only by a run that fuzzes

    recorder = world.tool(tool)
    names = [p.name for p in recorder.spec.parameters]
    assert names == ["text", "data"], f"this step needs a tool taking text and data, not {names}"
    world.sent_args = []
    examples = _fuzz.example_count(pytestconfig, count)
    seed = fuzz_seed(pytestconfig.getoption("conformance_seed", None))
    last: list[dict[str, JsonValue]] = []
    #: The first hang or harness (or isolated worker) fault, with its arguments: no example runs
    #: after it.
    stopped: list[tuple[HarnessError | _guard.ImplementationHung, dict[str, JsonValue]]] = []
    #: Each in-process binding fault, with its arguments: shrunk as a failure is, but hypothesis
    #: reports one that its replay did not repeat as its own "unreliable results", without it.
    faults: list[tuple[_guard.BindingError, dict[str, JsonValue]]] = []

    def send(text: str, data: dict[str, Any]) -> None:
        if stopped:
            return
        _fuzz.forget_earlier_output(pytestconfig)
        args: dict[str, JsonValue] = {"text": text, "data": data}
        last[:] = [args]
        world.sent_args.append(args)
        world.model = world.new_model([
            StepTurn(thought="record it", tool_name=tool, tool_args=args),
            FinalTurn(thought="done", outputs={"answer": "recorded"}),
        ])
        before = len(recorder.calls)
        try:
            world.call({"question": "Record this"})
        except (HarnessError, _guard.ImplementationHung) as exc:
            # Never shrunk: each hang would cost the time limit again (minutes in all), and a
            # harness or worker restarted after a crash may not crash on the replay, which
            # hypothesis then reports as its own "inconsistent results" instead of the fault. An
            # in-process binding fault is shrunk as any failure is.
            stopped.append((exc, args))
            return
        except _guard.BindingError as exc:
            faults.append((exc, args))
            raise
        got = recorder.calls[before:]
        assert [json_key(c) for c in got] == [json_key(args)], (
            f"the tool {tool!r} was sent {canonical(args)}\nbut received {got!r}"
        )

    try:
        _fuzz.check(send, examples, seed)
    except AssertionError as exc:
        # Hypothesis replays the shrunk example last: that is the one the message shows.
        raise AssertionError(f"{exc}\n\n{_reproduce(seed, examples, last)}") from None
    except _guard.BindingError as exc:
        # In its message, which is what the report shows of it (a note is the terminal's only).
        exc.args = (f"{exc}\n\n{_reproduce(seed, examples, last)}",)
        _fuzz.trim_tracebacks(exc)
        raise
    except Exception as exc:
        if faults:  # hypothesis' own error about a binding fault that did not recur on its replay
            fault, faulted = faults[0]
            how = _reproduce(seed, examples, [faulted]).replace("shrunk example", "on the example", 1)
            raise type(fault)(f"{fault}\n\n{how}\n(the fault did not recur when this example ran "
                              "again)") from None
        exc.add_note(_reproduce(seed, examples, last))
        _fuzz.trim_tracebacks(exc)
        raise
    if stopped:
        error, args = stopped[0]
        how = _reproduce(seed, examples, [args]).replace("shrunk example", "on the example", 1)
        raise type(error)(f"{error}\n\n{how}") from None


def fuzz_seed(option: str | None) -> int | None:
    """The seed `--conformance-seed` asks for: an integer, `random` (a fresh one), or None."""
    if option is None:
        return None
    if option == "random":
        return random.SystemRandom().randrange(2**32)
    try:
        return int(option)
    except ValueError:
        raise pytest.UsageError(
            f"--conformance-seed {option!r}: give an integer, or `random`."
        ) from None


def _reproduce(seed: int | None, examples: int, last: list[dict[str, JsonValue]]) -> str:
    shrunk = f"shrunk example: {canonical(last[0])}" if last else "no example ran"
    how = ("derandomised: the same examples every run (--conformance-seed varies them)"
           if seed is None else f"--conformance-seed {seed}: rerun with it to reproduce")
    return f"{shrunk}\n{examples} examples, {how}"


@when(
    parsers.parse(
        '{own:d} agents with their own "{adapter}" adapter and {plain:d} agents without one '
        "run at the same time"
    )
)
def concurrent_runs(world: World, own: int, adapter: str, plain: int) -> None:
    jobs: list[tuple[str | None, ScriptedModel, str]] = []
    for i in range(own + plain):
        answer = f"answer number {i}"
        model = world.new_model([
            StepTurn(thought=f"agent {i} adds", tool_name="add", tool_args={"a": i, "b": i}),
            FinalTurn(thought="done", outputs={"answer": answer}),
        ])
        jobs.append((adapter if i < own else None, model, answer))
    agents = []
    for own_adapter, _, _ in jobs:
        world.adapter = own_adapter  # type: ignore[assignment]
        world.reset_agent()
        agents.append(world.agent)
    barrier = threading.Barrier(len(jobs))
    # A leak between runs shows whatever the threads' timing: every run's later requests follow
    # every run's first one.
    first_requests = threading.Barrier(len(jobs))
    for _, model, _ in jobs:
        model.rendezvous = first_requests
    results: list[Outcome | BaseException | None] = [None] * len(jobs)

    def run(index: int) -> None:
        _, model, _ = jobs[index]
        request = CallRequest(inputs={"question": f"What is {index} + {index}?"})
        barrier.wait()
        try:
            results[index] = _guard.validated(
                "run", Outcome, world.binding.run(agents[index], request, model)
            )
        except BaseException as exc:
            results[index] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(world.timeout)
    for result in results:
        if isinstance(result, BaseException):
            # What the binding let escape, or returned instead of an Outcome, is its own fault.
            raise _guard.fault("run", result)
    world.concurrent = [(own_adapter, model, answer, results[i])
                        for i, (own_adapter, model, answer) in enumerate(jobs)]
