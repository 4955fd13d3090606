"""Then steps on what a call returned or raised: the prediction, and the errors of construction, of a
call and of the step cap."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bdd import parsers, then

from conformance._steps import _QUOTED, marked_as_error, parse_json
from conformance._values import canonical, json_equal
from conformance._world import World
from conformance.binding import ErrorInfo, Outcome, StepTurn, Turn


@then(parsers.parse('the prediction\'s "{field}" is "{value}"'))
def prediction_field(world: World, field: str, value: str) -> None:
    outputs = world.prediction().outputs
    assert outputs is not None and field in outputs, (
        f"the prediction has no output {field!r}; its outputs are {outputs!r}"
    )
    assert str(outputs[field]) == value, (
        f"the prediction's {field!r} is {outputs[field]!r}, expected {value!r}"
    )

@then(parsers.parse('the prediction\'s "{field}" comes from the extraction reply "{value}"'))
def prediction_field_from_extraction(world: World, field: str, value: str) -> None:
    """EXT-2 asks that the outputs be produced from the partial trajectory, not their exact text:
    an answer that is the extraction reply with the text the model wrote beside the earlier steps
    before it (LOOP-7's cause, a SHOULD that may not block this MUST) still came from the
    extraction; any other answer did not."""
    outputs = world.prediction().outputs
    assert outputs is not None and field in outputs, (
        f"the prediction has no output {field!r}; its outputs are {outputs!r}"
    )
    text = str(outputs[field])
    thoughts = "".join("".join(a.thought.split()) for a in world.model.answers
                       if isinstance(a, StepTurn))
    joined = text.endswith(value) and "".join(text[:len(text) - len(value)].split()) in ("", thoughts)
    assert text == value or (joined and thoughts), (
        f"the prediction's {field!r} is {outputs[field]!r}, expected the extraction reply {value!r}"
    )


@then("the run reached its final answer")
def reached_final_answer(world: World) -> None:
    """What a scenario needs of a run that should end on the script's final answer, without its
    text (LOOP-7 judges the text: a library that joins every step's text into the answer fails
    there, once): the call returned a prediction, its last model call was the one that completed
    the final answer (in the `signature` profile the extraction after `finish`), and the stop
    reason, where the library reports one, is not the step cap's (EXH-4 judges a misreported
    reason; LOOP-3 a final answer on step N taken for a cap stop)."""
    outcome = world.prediction()
    run = world.calls_per_run[-1]
    first = len(world.model.calls) - len(run)
    served = [first + i for i, call in enumerate(run) if call.kind != "auxiliary"]
    assert run == world.model.calls[first:], "the scenario changed the model after the call it reads"
    assert served and served[-1] in world.model.finals, (
        f"the call returned, but its last model call was not the script's final answer: it made "
        f"{sum(c.kind == 'step' for c in run)} step and {sum(c.kind == 'extract' for c in run)} "
        f"extraction call(s), the last answered with "
        f"{_turn(world.model.answers[served[-1]]) if served else 'nothing (no model call)'}"
    )
    if outcome.stop_reason == "max_steps":
        world.blocked_if_stopped_early()
    world.blocked_unless(
        outcome.stop_reason != "max_steps", "EXH-4",
        "the run ended on the model's final answer, yet reports the stop reason 'max_steps'")

def _turn(turn: Turn | None) -> str:
    """A served turn, for a message."""
    if isinstance(turn, StepTurn):
        return f"a step that calls {turn.tool_name!r}"
    return f"a {turn.kind} turn" if turn is not None else "no scripted turn"

@then(parsers.parse("call {number:d} gave the same result as call {other:d}"))
def same_result(world: World, number: int, other: int) -> None:
    """ASYNC-1: another form of call gives what call `other` gave for the same script, whatever that
    is (its answer's text, an error observation's words): the same outputs, the same steps (thought,
    tool, args, and observation; of an error observation only that it is one, as its words may
    carry the call's own traceback), the same stop reason and step count, and the same kind of error
    if it raised. A property the sync run lacks is judged by its own requirement."""
    assert len(world.outcomes) >= max(number, other), f"the scenario made {len(world.outcomes)} call(s)"
    got, expected = _result(world.outcomes[number - 1]), _result(world.outcomes[other - 1])
    differ = [part for part in expected if not json_equal(got[part], expected[part])]
    assert not differ, f"call {number} gave another result than call {other}: " + "; ".join(
        f"its {part} {canonical(got[part])}, not {canonical(expected[part])}" for part in differ)

def _result(outcome: Outcome) -> dict[str, Any]:
    """What a call gave, comparable by value (numbers as binary64, ASYNC-1)."""
    return {
        "outputs": outcome.outputs,
        "steps": [[s.thought, s.tool_name, s.tool_args,
                   "(an error observation)" if marked_as_error(s) else s.observation]
                  for s in outcome.trajectory],
        "stop reason": outcome.stop_reason,
        "step count": outcome.iterations,
        "error": None if outcome.error is None else [outcome.error.type, outcome.error.kind],
    }

@then(parsers.parse("the prediction's outputs are exactly {outputs}"))
def prediction_outputs(world: World, outputs: str) -> None:
    got = world.prediction().outputs
    expected = parse_json(outputs)
    # 4 and "4", or true and "true", are different outputs; 2 and 2.0 are the same number
    assert json_equal(got, expected), (
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

@then(parsers.re(
    r'construction fails with an error that quotes the signature or names (?P<names>"[^"]+"(?: or "[^"]+")*)$'
))
def construction_fails(world: World, names: str) -> None:
    """SIG-5's "clear": the error quotes the malformed signature, or names what is wrong with it
    (the offending field, the missing arrow or side). No particular words beyond that."""
    error = world.build_error
    signature = world.signature.arrow()
    assert error is not None, (
        f"the library built an agent from the malformed signature {signature!r}; "
        "it must refuse it at construction"
    )
    wanted = _QUOTED.findall(names)
    shown = " ".join(f"{error.message} {canonical(error.fields)}".split())
    quoted = " ".join(signature.split()) in shown
    named = [n for n in wanted if n.lower() in shown.lower()]  # "inputs" names the input side
    assert quoted or named, (
        f"the construction error should quote the signature {signature!r} or name "
        f"{' or '.join(map(repr, wanted))}: {error.type}: {error.message}"
    )

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
    if error is None:
        world.blocked_if_tool_calls_dropped()
    assert error is not None, "the call returned a prediction; it should have raised MaxIterationsError"
    assert error.kind == "max-iterations", (
        f"the call raised {error.type}: {error.message}, not MaxIterationsError"
    )
    if pattern:
        assert re.search(pattern, error.message, re.IGNORECASE), (
            f"the message should still say the limit was reached (/{pattern}/): {error.message!r}"
        )

def _max_iterations(world: World) -> ErrorInfo:
    error = world.last.error
    assert error is not None and error.kind == "max-iterations", (
        f"expected the library's max-iterations error, got "
        f"{f'{error.type}: {error.message}' if error else 'a prediction'}"
    )
    return error

def _error_field(world: World, field: str) -> Any:
    error = _max_iterations(world)
    assert field in error.fields, (
        f"MaxIterationsError carries no {field!r}; it carries {sorted(error.fields)}"
    )
    return error.fields[field]

@then(parsers.parse("the error's partial final answer, if it gives one, is not empty"))
def partial_answer_not_empty(world: World) -> None:
    """EXH-3, after steps with thoughts: a library that gives a partial final answer (optional, of
    any JSON type) has something to give, so it may not be null or empty."""
    error = _max_iterations(world)
    if "partial_final_answer" not in error.fields:
        return
    value = error.fields["partial_final_answer"]
    assert value not in (None, "", [], {}) and not (isinstance(value, str) and not value.strip()), (
        f"the error gives a partial final answer, but it is empty ({value!r}), though the agent "
        "wrote thoughts before the step cap"
    )

@then(parsers.re(r"the error's tools used are (?P<names>\[.*\])$"))
def error_tools_used(world: World, names: str) -> None:
    """EXH-2/EXH-3: the tools that ran, as the error's `tools_used` says, or else as its history
    shows (the steps that called one of the agent's tools)."""
    error = _max_iterations(world)
    expected = parse_json(names)
    if "tools_used" in error.fields:
        got = error.fields["tools_used"]
        where = "tools_used"
    else:
        declared = set(world.tools)
        got = [s.tool_name for s in world.steps() if s.tool_name in declared]
        where = "history (it gives no tools_used)"
    if not json_equal(got, expected):
        world.blocked_if_stopped_early()
    assert json_equal(got, expected), (
        f"the error's {where} says the tools used were {got!r}, expected {names}")

@then(parsers.parse('the error\'s last observation, if it gives one, mentions "{text}"'))
def error_last_observation(world: World, text: str) -> None:
    """EXH-2: the steps so far are the history; a `last_observation` the library gives as well must
    be the last step's."""
    error = _max_iterations(world)
    if "last_observation" in error.fields:
        value = error.fields["last_observation"]
        assert text in str(value), f"the error's last_observation should mention {text!r}: {value!r}"

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
    if not json_equal(value, parse_json(expected)):
        world.blocked_if_stopped_early()  # the field is there; what it holds counts the steps run
    assert json_equal(value, parse_json(expected)), (
        f"the error's {field!r} is {value!r}, expected {expected}"
    )

#: What a clear refusal of a step cap names: the cap, in any library's words.
_CAP_WORDS = re.compile(r"max|step|iter|turn|limit|cap|budget|recursion", re.I)

@then("the step cap of zero was refused with a clear error, or the call raised on it with nothing run")
def zero_cap(world: World) -> None:
    """EXH-3: a cap of zero is refused when the agent is configured (at construction, or by the call
    that is given it) with an error that names the cap, or the run raises the library's
    max-iterations error before any model call with nothing in it. Never silently a default: the
    scenario also checks that the model was never called."""
    steps = world.model.count("step")
    assert not steps, (
        f"the agent was given a step cap of zero, yet it made {steps} step call(s): the cap was "
        "not honoured (a default replaced it?); it must be refused, or raise before any model call"
    )
    refusal = world.build_error or (world.last.error if world.outcomes else None)
    assert refusal is not None, (
        "the agent accepted a step cap of zero and the call returned: it must refuse the cap, or "
        f"raise on it before any model call (stop reason {world.last.stop_reason!r})"
    )
    if refusal.kind == "max-iterations":
        history = refusal.fields.get("history", [])
        assert history == [] and refusal.fields.get("last_observation") is None, (
            f"the run raised on a cap of zero, but its error reports steps or an observation: "
            f"{canonical(refusal.fields)}"
        )
        assert refusal.fields.get("iterations", 0) == 0, (
            f"the run raised on a cap of zero, but its error counts steps: {canonical(refusal.fields)}")
        assert refusal.fields.get("tools_used", []) == [], (
            f"the run raised on a cap of zero, but its error reports tools used: {canonical(refusal.fields)}")
        return
    assert _CAP_WORDS.search(refusal.message), (
        f"the step cap of zero was refused, but the error does not say it is about the step cap: "
        f"{refusal.type}: {refusal.message}"
    )
    _says_in_words("the refusal of a step cap of zero", refusal)
