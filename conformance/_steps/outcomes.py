"""Then steps on what a call returned or raised: the prediction, and the errors of construction, of a
call and of the step cap."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bdd import parsers, then

from conformance._steps import _QUOTED, parse_json
from conformance._values import canonical, json_equal
from conformance._world import World
from conformance.binding import ErrorInfo


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
    if not json_equal(value, parse_json(expected)):
        world.blocked_if_stopped_early()  # the field is there; what it holds counts the steps run
    assert json_equal(value, parse_json(expected)), (
        f"the error's {field!r} is {value!r}, expected {expected}"
    )
