"""Then steps: every check reads the neutral Outcome, the model log, or the suite's tool recorders."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

from pytest_bdd import given, parsers, then

from conformance import _guard, render
from conformance._steps import parse_json
from conformance._steps.run import MUTATION_MARKER, canonical
from conformance._world import World
from conformance.binding import ErrorInfo, FinalTurn, LMCall, Outcome, StepTurn

#: What an observation that reports an error looks like, in any library's words.
ERROR_WORDS = re.compile(
    r"error|invalid|unknown|not (?:a |an )?(?:valid|allowed|available|found|exist)|could not|"
    r"cannot|can't|failed|refused|reject|not in",
    re.IGNORECASE,
)
_QUOTED = re.compile(r'"([^"]*)"')


def _show(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more chars)"


# -- predictions and errors -------------------------------------------------------------------


@then(parsers.parse('the prediction\'s "{field}" is "{value}"'))
def prediction_field(world: World, field: str, value: str) -> None:
    outputs = world.prediction().outputs
    assert outputs is not None and field in outputs, (
        f"the prediction has no output {field!r}; its outputs are {outputs!r}"
    )
    assert str(outputs[field]) == value, (
        f"the prediction's {field!r} is {outputs[field]!r}, expected {value!r}"
    )


@then(parsers.parse("the prediction's outputs are exactly {outputs}"))
def prediction_outputs(world: World, outputs: str) -> None:
    got = world.prediction().outputs
    expected = parse_json(outputs)
    # canonical JSON: 4 and "4", or true and "true", are different outputs
    assert canonical(got) == canonical(expected), (
        f"the prediction's outputs should be {canonical(expected)} (with these JSON types); "
        f"they are {canonical(got)}"
    )


@then(parsers.re(
    r"either the prediction's outputs are exactly (?P<outputs>\{.*\}) "
    r'or the call fails with a clear error that names "(?P<name>\w+)"$'
))
def prediction_or_clear_error(world: World, outputs: str, name: str) -> None:
    """EXT-1 after an extraction reply that cannot be typed as declared: the library may ask the
    model again (the script's standing answer is well typed) or fail naming the field; it may not
    hand the reply's value over untyped, nor fail with an error that says nothing about it."""
    _outputs_or_clear_error(world, outputs, name)


@then(parsers.parse(
    'either the prediction\'s outputs are exactly as written or the call fails with a clear error '
    'that names "{name}"'
))
def written_outputs_or_clear_error(world: World, name: str) -> None:
    """EXT-1 for outputs too big to write in the scenario (`world.written_outputs`)."""
    _outputs_or_clear_error(world, json.dumps(world.written_outputs), name)


def _outputs_or_clear_error(world: World, outputs: str, name: str) -> None:
    assert world.model.count("extract") >= 1, (
        "the library made no extraction call, so it never saw the reply in question"
    )
    if world.last.error is None:
        prediction_outputs(world, outputs)
    else:
        call_fails_clearly(world, f'"{name}"')


@then(parsers.parse('construction fails with a clear error that names "{names}"'))
def construction_fails(world: World, names: str) -> None:
    """SIG-5 asks for a clear error, not particular words: one that names what is wrong, in a
    sentence rather than a bare name (a `KeyError('question')` names it but explains nothing)."""
    error = world.build_error
    assert error is not None, (
        f"the library built an agent from the malformed signature {world.signature.arrow()!r}; "
        "it must refuse it at construction"
    )
    assert names.lower() in error.message.lower(), (
        f"the construction error should name {names!r}: {error.type}: {error.message}"
    )
    _says_in_words("the construction error", error)


def _says_in_words(what: str, error: ErrorInfo) -> None:
    """A clear error says what is wrong in a sentence: a bare name (`KeyError('question')`, whose
    message is `'question'`) names the field but explains nothing."""
    assert len(re.findall(r"[A-Za-z]{2,}", error.message)) >= 3, (
        f"{what} should say what is wrong in words, not only name it: {error.type}: {error.message}"
    )


@then(parsers.parse('the call fails with an error that names "{name}"'))
def call_fails(world: World, name: str) -> None:
    error = world.last.error
    assert error is not None, "the call returned a prediction; it should have failed"
    # A whole token: "500" inside a memory address ("at 0x7f3a5008e2d0") names nothing.
    token = re.compile(rf"(?<![0-9A-Za-z]){re.escape(name)}(?![0-9A-Za-z])")
    assert token.search(error.message) or token.search(canonical(error.fields)), (
        f"the error should name {name!r}: {error.type}: {error.message} {error.fields or ''}"
    )


@then(parsers.re(r'the call fails with a clear error that names (?P<names>"\w+"(?: or "\w+")*)$'))
def call_fails_clearly(world: World, names: str) -> None:
    """SIG-6: a clear error naming the missing field (one of them, when several are missing), in
    words. A name is a whole token: "contexts" does not name "context"."""
    error = world.last.error
    assert error is not None, "the call returned a prediction; it should have failed"
    shown = f"{error.message} {canonical(error.fields)}"
    wanted = _QUOTED.findall(names)
    assert any(re.search(rf"(?<![0-9A-Za-z_]){re.escape(n)}(?![0-9A-Za-z_])", shown) for n in wanted), (
        f"the error should name {' or '.join(map(repr, wanted))}: {error.type}: {error.message} "
        f"{error.fields or ''}"
    )
    _says_in_words("the error", error)


@then(parsers.parse('the call fails with a clear error that names "{name}", not "{other}"'))
def call_fails_naming_only(world: World, name: str, other: str) -> None:
    """SIG-6: the error names the missing field, and not a field the call gave (an error that
    names every field does not say which one is missing)."""
    call_fails_clearly(world, f'"{name}"')
    error = world.last.error
    assert error is not None
    token = re.compile(rf"(?<![0-9A-Za-z_]){re.escape(other)}(?![0-9A-Za-z_])")
    assert not token.search(error.message), (
        f"the error should name only the missing field {name!r}, but it also names {other!r}, "
        f"which the call gave: {error.type}: {error.message}"
    )


@then(parsers.re(
    r'the call raised MaxIterationsError(?: with a message that matches "(?P<pattern>[^"]*)")?$'
))
def raised_max_iterations(world: World, pattern: str | None) -> None:
    error = world.last.error
    assert error is not None, "the call returned a prediction; it should have raised MaxIterationsError"
    assert error.kind == "max-iterations", (
        f"the call raised {error.type}: {error.message}, not MaxIterationsError"
    )
    if pattern:
        assert re.search(pattern, error.message, re.IGNORECASE), (
            f"the message should still say the limit was reached (/{pattern}/): {error.message!r}"
        )


def _error_field(world: World, field: str) -> Any:
    error = world.last.error
    assert error is not None and error.kind == "max-iterations", (
        f"expected MaxIterationsError, got {error.type if error else 'a prediction'}"
    )
    assert field in error.fields, (
        f"MaxIterationsError carries no {field!r}; it carries {sorted(error.fields)}"
    )
    return error.fields[field]


@then(parsers.parse('the error\'s "{field}" is present, possibly empty'))
def error_field_present(world: World, field: str) -> None:
    value = _error_field(world, field)
    assert value is None or isinstance(value, str), (
        f"the error's {field!r} should be None or text, got {value!r}"
    )


@then(parsers.parse('the error\'s "{field}" holds text'))
def error_field_holds_text(world: World, field: str) -> None:
    """EXH-3's "present": after steps with thoughts there is something to show, never None."""
    value = _error_field(world, field)
    assert isinstance(value, str) and value.strip(), (
        f"the error's {field!r} should hold text once the agent has written thoughts, got {value!r}"
    )


@then(parsers.parse('the error\'s "{field}" mentions "{text}"'))
def error_field_mentions(world: World, field: str, text: str) -> None:
    value = _error_field(world, field)
    assert text in str(value), f"the error's {field!r} should mention {text!r}: {value!r}"


@then(parsers.re(r'the error\'s "history" has (?P<count>\d+) steps?$'))
def error_history_length(world: World, count: str) -> None:
    history = _error_field(world, "history")
    if not (isinstance(history, list) and len(history) == int(count)):
        world.blocked_if_stopped_early()
    assert isinstance(history, list) and len(history) == int(count), (
        f"the error's history should hold {count} step(s): {history!r}"
    )


_JSON_LITERAL = r'\[.*\]|\{.*\}|null|-?\d+|".*"|true|false'


@then(parsers.re(rf'the error\'s "(?P<field>\w+)" is (?P<expected>{_JSON_LITERAL})$'))
def error_field_is(world: World, field: str, expected: str) -> None:
    value = _error_field(world, field)
    if canonical(value) != canonical(parse_json(expected)):
        world.blocked_if_stopped_early()  # the field is there; what it holds counts the steps run
    assert canonical(value) == canonical(parse_json(expected)), (
        f"the error's {field!r} is {value!r}, expected {expected}"
    )


# -- tools ------------------------------------------------------------------------------------


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
    assert [canonical(c) for c in calls] == [canonical(expected)], (
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
    bad = canonical(parse_json(args))
    ran = [name for name, t in world.tools.items() if any(canonical(c) == bad for c in t.calls)]
    assert not ran, f"the tool(s) {ran} ran with {args}, which no tool should receive"


@then(parsers.parse('the tool "{name}" received each of them exactly as sent'))
def tool_received_all(world: World, name: str) -> None:
    calls = world.tool(name).calls
    assert world.sent_args, "no arguments were generated"
    assert [canonical(c) for c in calls] == [canonical(a) for a in world.sent_args], (
        f"the tool {name!r} received {len(calls)} calls for {len(world.sent_args)} sent"
    )


# -- the model log ----------------------------------------------------------------------------


def _calls(world: World, which: str) -> list[LMCall]:
    calls = world.model.calls
    if which == "every model call":
        chosen = calls
    elif which == "every step call":
        chosen = [c for c in calls if c.kind == "step"]
    elif which == "the extraction call":
        chosen = [c for c in calls if c.kind == "extract"]
        assert len(chosen) == 1, f"expected one extraction call, the model received {len(chosen)}"
    else:
        number = int(which.removeprefix("step call "))
        steps = [c for c in calls if c.kind == "step"]
        assert len(steps) >= number, f"there was no step call {number}; there were {len(steps)}"
        chosen = [steps[number - 1]]
    assert chosen, f"there was no model call for {which!r}"
    return chosen


_WHICH = r"(?P<which>every model call|every step call|the extraction call|step call \d+)"


@then(parsers.re(rf'{_WHICH} (?:shows|mentions) (?P<texts>"[^"]*"(?: and "[^"]*")*)$'))
def calls_show(world: World, which: str, texts: str) -> None:
    for call in _calls(world, which):
        shown = call.text()
        for text in _QUOTED.findall(texts):
            assert text in shown, (
                f"{which} should show {text!r}; the {call.kind} call was:\n{_show(shown, 3000)}"
            )


@then(parsers.re(rf'{_WHICH} does not show "(?P<text>[^"]*)"$'))
def calls_do_not_show(world: World, which: str, text: str) -> None:
    for call in _calls(world, which):
        assert text not in call.text(), f"{which} must not show {text!r} yet"


@then(parsers.parse('every step call shows the tool "{name}" with its description and its arguments'))
def step_calls_show_tool(world: World, name: str) -> None:
    spec = world.tool(name).spec
    for call in _calls(world, "every step call"):
        shown = call.text()
        for part in [spec.name, spec.description]:
            assert part in shown, (
                f"every step call should show the tool {name!r}: its name and description "
                f"{spec.description!r}; {part!r} is missing from:\n{_show(shown, 3000)}"
            )
        for param in spec.parameters:
            # A schema names each argument as a key, `"a":` or `a:`, and says its type: the bare
            # name could be any letter of the prose (a description's "a and b"), so it proves nothing.
            key = re.search(rf"""(["']{re.escape(param.name)}["']|\b{re.escape(param.name)})\s*:""", shown)
            types = _SCHEMA_TYPES[param.type]
            assert key and any(t in shown for t in types), (
                f"every step call should show the argument schema of {name!r}: the argument "
                f"{param.name!r} as a key with its type ({' or '.join(types)}); "
                f"{'its type' if key else 'the key'} is missing from:\n{_show(shown, 3000)}"
            )


#: How an argument schema may spell each ParamSpec type (JSON Schema, Python, TypeScript).
_SCHEMA_TYPES: dict[str, tuple[str, ...]] = {
    "int": ("integer", "int"), "float": ("number", "float"), "str": ("string", "str"),
    "bool": ("boolean", "bool"), "list": ("array", "list"), "dict": ("object", "dict"),
}


@then("the model was never called")
def model_never_called(world: World) -> None:
    assert not world.model.calls, (
        f"the model should not have been called; it got {len(world.model.calls)} call(s)"
    )


@then(parsers.re(r"the model received (?P<steps>\d+) step calls? and (?P<extracts>\d+) extraction calls?$"))
def model_received(world: World, steps: str, extracts: str) -> None:
    got = (world.model.count("step"), world.model.count("extract"))
    assert got == (int(steps), int(extracts)), (
        f"expected {steps} step and {extracts} extraction call(s); got {got[0]} and {got[1]}"
    )


@then(parsers.re(r"the model received (?P<extracts>\d+) extraction calls?$"))
def model_received_extractions(world: World, extracts: str) -> None:
    got = world.model.count("extract")
    assert got == int(extracts), f"expected {extracts} extraction call(s); the model received {got}"


@then(parsers.re(r"the model received exactly (?P<steps>\d+) step calls?$"))
def model_received_steps(world: World, steps: str) -> None:
    got = world.model.count("step")
    assert got == int(steps), f"expected exactly {steps} step call(s); the model received {got}"


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
    times, timeout = world.model.times, hangs[0]
    assert timeout is not None and len(times) >= 2 and times[1] - times[0] >= timeout, (
        f"the retry should come after the hung request's timeout ({hangs[0]} s); on the model's "
        f"clock the requests came at {times}"
    )


@then(parsers.re(r"call (?P<number>\d+) made exactly (?P<steps>\d+) step calls?$"))
def call_made_steps(world: World, number: str, steps: str) -> None:
    calls = world.calls_per_run[int(number) - 1]
    got = sum(1 for c in calls if c.kind == "step")
    assert got == int(steps), f"call {number} should have made {steps} step call(s); it made {got}"


@then("the extraction call is the last model call")
def extraction_is_last(world: World) -> None:
    kinds = [c.kind for c in world.model.calls]
    assert kinds and kinds[-1] == "extract" and kinds.count("extract") == 1, (
        f"one extraction call should end the run; the calls were {kinds}"
    )


@then("the final answer is the last model call")
def final_is_last(world: World) -> None:
    calls, finals = world.model.calls, world.model.finals
    kinds = [c.kind for c in calls]
    assert len(finals) == 1, (
        f"the run should end with one final answer; the model's calls were {kinds} and "
        f"{len(finals)} of them {'was' if len(finals) == 1 else 'were'} a final answer"
    )
    assert finals[0] == len(calls) - 1, (
        f"the final answer should end the run, but the model was called again after it: the "
        f"calls were {kinds}, the final answer call #{finals[0] + 1}"
    )


@then(parsers.re(r"the model received (?P<steps>\d+) step calls?, the last one its final answer$"))
def model_received_final(world: World, steps: str) -> None:
    model_received_steps(world, steps)
    final_is_last(world)


@then(parsers.re(r'the tools offered to the model are exactly "(?P<names>[^"]*)"$'))
def tools_offered(world: World, names: str) -> None:
    """STEP-1 for every library: `next_tool_name`'s choices (`signature`), or else the native tool
    declarations of every step call; `finish` and the library's own final-answer tool aside."""
    expected = sorted(n.strip() for n in names.split(",") if n.strip())
    agent = world.agent
    admitted = _guard.call("step_tool_names", lambda: world.binding.step_tool_names(agent),
                           world.timeout)
    # One list of the libraries' final-answer tools, shared with the endpoint that renders them.
    final_tools = {"finish", *render.FINAL_ANSWER_TOOLS}
    if world.enable_ask_to_user is None and "ask-user" in world.capabilities:
        # The scenario leaves ask_to_user to the library's default, which is on (HITL-1): STEP-1
        # allows it beside the agent's tools, whether the library offers it or not.
        final_tools = final_tools | ({"ask_to_user"} - set(expected))
    if admitted is not None:
        offered = sorted(set(admitted) - final_tools)
        assert "finish" in admitted, f"next_tool_name admits {sorted(admitted)}, without finish"
        assert offered == expected, f"next_tool_name admits {sorted(admitted)}; the tools must be {expected}"
        return
    steps = [c for c in world.model.calls if c.kind == "step"]
    assert steps, "the agent made no step call, so it offered the model no tools"
    for number, call in enumerate(steps, 1):
        offered = sorted(set(render.tool_names(call.tools)) - final_tools)
        assert offered == expected, (
            f"step call {number} declared the tools {sorted(render.tool_names(call.tools))} to the "
            f"model; they must be exactly {expected} (plus the library's final-answer tool)"
        )


# -- the trajectory ---------------------------------------------------------------------------


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
        assert canonical(step.tool_args) == canonical(parse_json(want["args"])), (
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
    assert step.tool_name == tool and canonical(step.tool_args) == canonical(parse_json(args)), (
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
    if canonical(observed) == canonical(expected):
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


# -- stop reasons and user-facing messages ----------------------------------------------------


@then(parsers.parse("the run reports that the step cap stopped it after {count:d} steps"))
def cap_reported(world: World, count: int) -> None:
    """EXH-4 on the cap, in any cap behaviour: the stop reason and step count of a run that
    returned, or the library's max-iterations error with its count."""
    outcome = world.last
    if outcome.error is not None:
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
    'call {number:d} showed the agent the tool\'s error "{message}", as {requirement} requires'
))
def call_showed_tool_error(world: World, number: int, message: str, requirement: str) -> None:
    assert len(world.outcomes) >= number, f"the scenario made {len(world.outcomes)} call(s)"
    outcome = world.outcomes[number - 1]
    if outcome.error is not None:
        world.blocked_unless(False, requirement, f"call {number} crashed on the raising tool: "
                             f"{outcome.error.type}: {outcome.error.message}")
    steps = [c for c in world.calls_per_run[number - 1] if c.kind == "step"]
    shown = any(message in c.text() for c in steps[1:])
    world.blocked_unless(shown, requirement, f"call {number} did not show the agent the tool's "
                         f"error {message!r} in any later step call")


@then(parsers.parse("call {number:d} did not crash on the unknown tool, as {requirement} requires"))
def did_not_crash_on_unknown_tool(world: World, number: int, requirement: str) -> None:
    error = world.outcomes[number - 1].error
    if error is not None and error.kind == "other":
        world.blocked_unless(False, requirement, f"call {number} crashed on the unknown tool: "
                             f"{error.type}: {error.message}")


@then("the run ended with the step cap, without crashing")
def ended_on_cap(world: World) -> None:
    outcome = world.last
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


# -- adapters ---------------------------------------------------------------------------------


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
    world.turns_per_run.clear()
    world.reset_agent()


@then("every concurrent run used only its own agent's format and got its own answer")
def concurrent_ok(world: World) -> None:
    assert world.concurrent, "no concurrent runs were made"
    for index, (own, model, answer, result) in enumerate(world.concurrent):
        expected = own or world.global_adapter
        assert isinstance(result, Outcome), f"concurrent run {index} did not finish: {result!r}"
        assert model.violation is None, f"concurrent run {index}: {model.violation}"
        formats = _formats(model.calls)
        assert formats and all(f == expected for f in formats), (
            f"concurrent run {index} should use only the {expected!r} format; it used {formats}"
        )
        got = (result.outputs or {}).get("answer")
        assert got == answer, f"concurrent run {index} got {got!r}, expected its own {answer!r}"
