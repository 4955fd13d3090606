"""The harness protocol's messages and its committed JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from conformance import _protocol as p
from conformance.binding import CallRequest, LMCall, StepTurn

SCHEMA = Path(__file__).resolve().parents[2] / "harnesses" / "protocol.schema.json"


def test_the_committed_schema_is_generated_from_the_models() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == p.schema_text(), (
        "harnesses/protocol.schema.json is stale: regenerate it with "
        "`python -m conformance._protocol > harnesses/protocol.schema.json`"
    )


def test_the_schema_names_every_message_once_per_direction() -> None:
    defs = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    to_harness = {ref["$ref"].rsplit("/", 1)[-1] for ref in defs["to_harness"]["oneOf"]}
    from_harness = {ref["$ref"].rsplit("/", 1)[-1] for ref in defs["from_harness"]["oneOf"]}
    assert {"Hello", "Build", "Run", "Resume", "Stop", "TurnAnswer", "ToolAnswer"} <= to_harness
    assert {"Welcome", "Built", "Ran", "ModelRequest", "ToolRequest", "Failed"} <= from_harness
    assert not to_harness & from_harness
    # The payloads are the binding contract's own models, not copies.
    assert {"AgentSpec", "CallRequest", "Outcome", "LMCall", "ErrorInfo", "StepTurn"} <= set(defs)


def test_a_message_round_trips_as_one_line() -> None:
    run = p.Run(id=3, agent="agent-1", run="run-1",
                call=CallRequest(inputs={"question": "multi\nline"}))
    line = p.encode(run)
    assert line.endswith("\n") and line.count("\n") == 1
    assert p.to_harness.validate_json(line) == run
    request = p.ModelRequest(id="h1", run="run-1",
                             call=LMCall(kind="step", adapter="chat", messages=[]))
    assert p.from_harness.validate_json(p.encode(request)) == request
    answer = p.TurnAnswer(id="h1", turn=StepTurn(thought="t", tool_name="finish"))
    assert p.to_harness.validate_json(p.encode(answer)) == answer


def test_a_lone_surrogate_is_sent_as_a_replacement_character_never_a_crash() -> None:
    # The isolated worker once died writing its welcome when a binding's reason held one
    # (`json.loads` of "\\ud800", a string cut inside an emoji): the whole run was lost.
    welcome = p.Welcome(id=1, protocol=3, name="cut \ud83d", version="1\udfff",
                        known_failures={"LOOP-3": "a \ud800 b"})
    line = p.encode(welcome)
    line.encode("utf-8")
    assert line.count("\n") == 1
    read = p.decode(p.from_harness, line)
    assert isinstance(read, p.Welcome)
    assert (read.name, read.version) == ("cut \ufffd", "1\ufffd")
    assert read.known_failures == {"LOOP-3": "a \ufffd b"}


@pytest.mark.parametrize(("escaped", "read"), [
    ("\\ud83d", "\ufffd"),  # JSON.stringify's escape of a JavaScript string cut inside an emoji
    ("x\\udc00y", "x\ufffdy"),
    ("\\ud83d\\ude00", "\U0001f600"),  # a pair is its character
    ("\\\\ud83d", "\\ud83d"),  # an escaped backslash, then letters: no surrogate at all
    ("\\ud800\\ud800\\udc00", "\ufffd\U00010000"),
])
def test_a_harness_line_with_a_lone_surrogate_escape_is_read(escaped: str, read: str) -> None:
    line = '{"type": "welcome", "id": 1, "protocol": 3, "name": "' + escaped + '", "version": "1"}'
    message = p.decode(p.from_harness, line)
    assert isinstance(message, p.Welcome) and message.name == read


@pytest.mark.parametrize(("line", "says"), [
    ('{"type": "ran", "id": 1}', "outcome"),
    ('{"type": "welcome", "id": 1, "protocol": 1, "name": "x", "version": "1", "extra": 1}', "extra"),
    ('{"type": "launch", "id": 1}', "launch"),
    ('{"type": "model", "id": 1, "run": "r", "call": {"kind": "think", "adapter": "chat", '
     '"messages": []}}', "kind"),
])
def test_an_invalid_harness_message_is_refused_naming_the_field(line: str, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        p.from_harness.validate_json(line)


def test_each_protocol_module_speaks_the_contracts_version() -> None:
    """A harness copies a protocol module and answers `hello` with its version: it must be the
    contract's, or a new harness is held to an older contract without knowing."""
    import re

    from conformance.binding import CONTRACT_VERSION

    lib = Path(__file__).resolve().parents[2] / "harnesses" / "lib"
    declared = {path.name: re.findall(r"^\s*(?:export const PROTOCOL =|PROTOCOL =|@protocol) (\d+)",
                                      path.read_text(encoding="utf-8"), re.M)
                for path in sorted(lib.glob("protocol.*"))}
    assert declared == {name: [str(CONTRACT_VERSION)] for name in declared}
    assert {"protocol.mjs", "protocol.rb", "protocol.ex"} <= set(declared)
