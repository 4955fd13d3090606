"""The harness protocol: the binding contract spoken as JSON lines over a child process's stdio.

The suite writes commands to the harness's stdin; the harness writes replies, and its own requests
for every model call and every tool call, to its stdout, one JSON object per line. The payloads are
the binding contract's models (`conformance.binding`), so the contract has one source of truth;
`harnesses/protocol.schema.json` is generated from the message models below
(`python -m conformance._protocol > harnesses/protocol.schema.json`).

Every message has a `type`. Commands carry an `id` the reply repeats; a harness's own requests carry
an `id` of its choosing that the suite's answer repeats. Runs may overlap (concurrent scenarios):
each `run`, `resume` and `run_concurrently` entry names a `run` that the harness's model and tool
requests repeat, so the suite answers each from the right scenario script and tool recorders.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError
from pydantic.json_schema import models_json_schema
from pydantic_core import PydanticSerializationError

from conformance._text import clean
from conformance.binding import (
    CONTRACT_VERSION,
    AdapterName,
    AgentSpec,
    CallRequest,
    ErrorInfo,
    LMCall,
    Outcome,
    ResumeRequest,
    Turn,
)

#: The protocol version this suite speaks: the binding contract's version. A harness answering
#: `hello` with an older version it still speaks (`SUPPORTED_VERSIONS`) is held to that version's
#: contract; the handshake fails on any other.
PROTOCOL_VERSION = CONTRACT_VERSION
SUPPORTED_VERSIONS = range(1, PROTOCOL_VERSION + 1)

#: The environment variable naming the file descriptor of the harness's protocol pipe: a harness
#: that writes its messages there (the first one says so) keeps its stdout, file descriptor 1, for
#: whatever the library or a process it starts prints, which the suite keeps as a log. A harness
#: that never writes there speaks on stdout, as in protocol versions 1 to 3.
PROTOCOL_FD = "REACT_CONFORMANCE_PROTOCOL_FD"

_Message = ConfigDict(extra="forbid")


# -- the suite's commands ------------------------------------------------------------------------


class Hello(BaseModel):
    """The first command: the suite's protocol version; the harness answers with `Welcome`."""

    model_config = _Message
    type: Literal["hello"] = "hello"
    id: int
    protocol: int = PROTOCOL_VERSION


class Configure(BaseModel):
    """Set (or with null, reset) the library's global adapter; answered with `Done`."""

    model_config = _Message
    type: Literal["configure"] = "configure"
    id: int
    adapter: AdapterName | None


class GetGlobalAdapter(BaseModel):
    """Read the library's global adapter back; answered with `Adapter`."""

    model_config = _Message
    type: Literal["global_adapter"] = "global_adapter"
    id: int


class Build(BaseModel):
    """Construct the agent `agent` (an id the suite chose) from `spec`; answered with `Built`."""

    model_config = _Message
    type: Literal["build"] = "build"
    id: int
    agent: str
    spec: AgentSpec


class Run(BaseModel):
    """Call agent `agent` once; model and tool requests name `run`; answered with `Ran`."""

    model_config = _Message
    type: Literal["run"] = "run"
    id: int
    agent: str
    run: str
    call: CallRequest
    #: The suite's scripted model that answers this call: one id for a run and its resumes, whose
    #: requests it numbers on from the run's (a harness may ignore it).
    model: str | None = None
    #: The call's script holds a transport fault: a seam that must choose the library's HTTP client
    #: before the run (its retries sit in that client) reads it here (a harness may ignore it).
    scripted_fault: bool = False


class Resume(BaseModel):
    """Resume an interrupted call of `agent` with a person's answer; answered with `Ran`."""

    model_config = _Message
    type: Literal["resume"] = "resume"
    id: int
    agent: str
    run: str
    request: ResumeRequest
    #: The suite's scripted model that answers this call: one id for a run and its resumes, whose
    #: requests it numbers on from the run's (a harness may ignore it).
    model: str | None = None
    #: The call's script holds a transport fault: a seam that must choose the library's HTTP client
    #: before the run (its retries sit in that client) reads it here (a harness may ignore it).
    scripted_fault: bool = False


class RunEntry(BaseModel):
    """One of the calls of `RunConcurrently`."""

    model_config = _Message
    agent: str
    run: str
    call: CallRequest
    #: The suite's scripted model that answers this call: one id for a run and its resumes, whose
    #: requests it numbers on from the run's (a harness may ignore it).
    model: str | None = None
    #: The call's script holds a transport fault: a seam that must choose the library's HTTP client
    #: before the run (its retries sit in that client) reads it here (a harness may ignore it).
    scripted_fault: bool = False


class RunConcurrently(BaseModel):
    """Start every call at once (all `mode="async"`), wait for all; answered with `RanAll`."""

    model_config = _Message
    type: Literal["run_concurrently"] = "run_concurrently"
    id: int
    runs: list[RunEntry]


class GetStepToolNames(BaseModel):
    """The names the agent's step output `next_tool_name` admits; answered with `Names`."""

    model_config = _Message
    type: Literal["step_tool_names"] = "step_tool_names"
    id: int
    agent: str


class MutateLastResult(BaseModel):
    """Mutate in place every container the agent's last call handed the caller (a prediction's
    trajectory, an error's history, a pause's context trajectory), adding `marker`; answered with
    `Done`, whose `changed` says what was mutated."""

    model_config = _Message
    type: Literal["mutate_last_result"] = "mutate_last_result"
    id: int
    agent: str
    marker: str


class Stop(BaseModel):
    """The last command: answer with `Done`, then exit."""

    model_config = _Message
    type: Literal["stop"] = "stop"
    id: int


# -- the suite's answers to the harness's requests -------------------------------------------------


class TurnAnswer(BaseModel):
    """Answers a `ModelRequest`: the scripted `turn`, or `error` when the script did not expect it."""

    model_config = _Message
    type: Literal["turn"] = "turn"
    id: int | str
    turn: Turn | None = None
    #: The request was not scripted: fail the model call (raise in the library's model seam).
    error: str | None = None
    #: For an auxiliary call (`call.kind == "auxiliary"`, named in `call.auxiliary`): the neutral
    #: standing answer (`continue`) instead of a turn; render it as the library's "go on, unchanged".
    auxiliary: str | None = None


class ToolAnswer(BaseModel):
    """Answers a `ToolRequest`: the tool's `result`, or the `error` it raised (raise it on)."""

    model_config = _Message
    type: Literal["observation"] = "observation"
    id: int | str
    result: JsonValue = None
    error: ErrorInfo | None = None


class ApprovalAnswer(BaseModel):
    """Answers an `ApprovalRequest` (protocol 3): the person's `response`, as in `ResumeRequest`."""

    model_config = _Message
    type: Literal["approval"] = "approval"
    id: int | str
    response: str


ToHarness = Annotated[
    Hello | Configure | GetGlobalAdapter | Build | Run | Resume | RunConcurrently
    | GetStepToolNames | MutateLastResult | Stop | TurnAnswer | ToolAnswer | ApprovalAnswer,
    Field(discriminator="type"),
]


# -- the harness's replies -----------------------------------------------------------------------


class Welcome(BaseModel):
    """Replies to `Hello`: who the harness is and what its library claims."""

    model_config = _Message
    type: Literal["welcome"] = "welcome"
    id: int
    protocol: int
    #: What the reports call it, e.g. `dspy-ts`.
    name: str
    #: The version of the library under test.
    version: str
    capabilities: list[str] = Field(default_factory=list)
    #: For each capability not claimed, a one-line reason the library lacks it (protocol 2).
    not_claimed: dict[str, str] = Field(default_factory=dict)
    #: Scenario names or requirement IDs the library fails, each with a one-line reason.
    known_failures: dict[str, str] = Field(default_factory=dict)
    #: Scenario names, Outline rows or requirement IDs whose setup the library's API cannot
    #: express, each with a one-line reason: reported as not claimed (see `Binding.cannot_express`).
    cannot_express: dict[str, str] = Field(default_factory=dict)
    #: Known failures found only by fuzzing at scale: they apply to runs whose ARGS-1 sends more
    #: generated arguments than the default (see `Binding.fuzz_known_failures`).
    fuzz_known_failures: dict[str, str] = Field(default_factory=dict)
    #: The library's auxiliary model calls (neither steps nor extractions), each with a one-line
    #: description (see `Binding.auxiliary_calls`).
    auxiliary_calls: dict[str, str] = Field(default_factory=dict)
    #: How the library asks a person to approve a tool call (protocol 3; `Binding.approval_form`).
    approval_form: Literal["pause", "callback"] = "pause"
    #: For each rule of the contract's parity (`conformance.binding.PARITY`), how the harness fills
    #: that field for its library (see `Binding.parity`).
    parity: dict[str, str] = Field(default_factory=dict)
    #: The installed version of the library's own packages and of the key dependencies its loop
    #: runs on (`{"ai": "4.3.1", "zod": "3.24.2"}`), as a binding's `dependencies` are reported.
    dependencies: dict[str, str] = Field(default_factory=dict)


class Done(BaseModel):
    """Replies to `Configure`, `MutateLastResult` and `Stop`."""

    model_config = _Message
    type: Literal["done"] = "done"
    id: int
    #: Answering `MutateLastResult`: one line per container the harness mutated, e.g.
    #: "result.trajectory (3 steps)"; absent or empty, the mutation changed nothing, which fails
    #: the snapshot scenario as the harness's error.
    changed: list[str] | None = None


class Adapter(BaseModel):
    """Replies to `GetGlobalAdapter`."""

    model_config = _Message
    type: Literal["adapter"] = "adapter"
    id: int
    adapter: AdapterName | None


class Built(BaseModel):
    """Replies to `Build`: `error` is what the library raised if it refused to build the agent."""

    model_config = _Message
    type: Literal["built"] = "built"
    id: int
    error: ErrorInfo | None = None


class Ran(BaseModel):
    """Replies to `Run` and `Resume`: what the call did."""

    model_config = _Message
    type: Literal["ran"] = "ran"
    id: int
    outcome: Outcome


class RanAll(BaseModel):
    """Replies to `RunConcurrently`: one outcome per entry, in order."""

    model_config = _Message
    type: Literal["ran_all"] = "ran_all"
    id: int
    outcomes: list[Outcome]


class Names(BaseModel):
    """Replies to `GetStepToolNames`; null when the library does not constrain the name."""

    model_config = _Message
    type: Literal["names"] = "names"
    id: int
    names: list[str] | None


class Failed(BaseModel):
    """Replies to any command the harness itself could not carry out (a harness bug)."""

    model_config = _Message
    type: Literal["failed"] = "failed"
    id: int
    message: str
    #: The library did not return in time (the suite's --conformance-timeout, which a worker is
    #: given): the scenario fails as hung, as it does in process, rather than errored.
    hung: bool = False


# -- the harness's requests ----------------------------------------------------------------------


class ModelRequest(BaseModel):
    """The library sent a request to the model during run `run`; the suite answers `TurnAnswer`."""

    model_config = _Message
    type: Literal["model"] = "model"
    id: int | str
    run: str
    call: LMCall


class ToolRequest(BaseModel):
    """The library called tool `name` during run `run`; the suite answers `ToolAnswer`."""

    model_config = _Message
    type: Literal["tool"] = "tool"
    id: int | str
    run: str
    name: str
    #: The arguments exactly as the library passed them (normally an object).
    args: JsonValue
    #: Instead of `args`, their JSON text (protocol 3), for arguments nested deeper than a message
    #: may be (about 200 levels): the suite parses it itself, to any depth.
    args_json: str | None = None


class ApprovalRequest(BaseModel):
    """The library's approval callback asked a person to approve the call `name(args)` during run
    `run` (protocol 3, `approval_form = "callback"`); the suite answers `ApprovalAnswer`."""

    model_config = _Message
    type: Literal["approve"] = "approve"
    id: int | str
    run: str
    name: str
    args: JsonValue
    call_id: str | None = None


class Sleep(BaseModel):
    """The library's model client waited `seconds` before a retry during run `run` (NET-1): the
    suite passes it on the scenario model's clock (`ScriptedModel.sleep`). No answer; send it
    before the retried request. Where the library lets you replace its sleep, send this instead."""

    model_config = _Message
    type: Literal["sleep"] = "sleep"
    run: str
    seconds: float


class Hang(BaseModel):
    """A `hang` fault: the request's own read timeout (null if it has none), which the suite
    passes on the scenario model's clock (`ScriptedModel.hang`); then fail the request as that
    timeout would, at once. No answer; send it before the retried request."""

    model_config = _Message
    type: Literal["hang"] = "hang"
    run: str
    timeout: float | None


class BindingFault(BaseModel):
    """The binding's own fault during run `run`, seen by its seam (a request to a path the seam
    does not serve): the suite records it on the run's model (`ScriptedModel.binding_fault`), so the
    scenario is errored as the binding's, whatever the library then makes of the refusal. No answer;
    send it before the run's reply."""

    model_config = _Message
    type: Literal["binding_fault"] = "binding_fault"
    run: str
    message: str


#: A command of the suite, which the harness answers with a `Reply`.
Command = (Hello | Configure | GetGlobalAdapter | Build | Run | Resume | RunConcurrently
           | GetStepToolNames | MutateLastResult | Stop)
#: The harness's answer to a command.
Reply = Welcome | Done | Adapter | Built | Ran | RanAll | Names | Failed

FromHarness = Annotated[
    Welcome | Done | Adapter | Built | Ran | RanAll | Names | Failed | ModelRequest | ToolRequest
    | ApprovalRequest | Sleep | Hang | BindingFault,
    Field(discriminator="type"),
]

#: Validates and parses a line the suite reads.
from_harness: TypeAdapter[FromHarness] = TypeAdapter(FromHarness)
#: Validates and parses a line the harness reads (the suite checks its own lines in debug mode).
to_harness: TypeAdapter[ToHarness] = TypeAdapter(ToHarness)


def encode(message: BaseModel) -> str:
    """One message as one line of JSON (no newline inside, `\\n` at the end). A lone surrogate (a
    string cut inside an emoji, `json.loads` of `"\\\\ud800"`) is sent as U+FFFD: no UTF-8 writer
    takes it, and a binding's text must never lose the run."""
    try:
        return message.model_dump_json(exclude_none=False) + "\n"
    except PydanticSerializationError:
        data = message.model_dump(mode="json", exclude_none=False)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return clean(text) + "\n"


M = TypeVar("M")
#: A JSON escape: a surrogate pair, a lone surrogate, or any other escape (so that `\\` before
#: `ud800` is read as the escaped backslash it is).
_ESCAPE = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|\\u(d[89a-f][0-9a-f]{2})|\\.",
                     re.I)


def decode(adapter: TypeAdapter[M], line: str) -> M:
    """A line read as one message. A lone surrogate's escape (`\\ud83d`, which JavaScript's
    JSON.stringify writes for a string cut inside an emoji) is read as U+FFFD, not refused: it is the
    library's text, and the harness relayed it faithfully."""
    try:
        return adapter.validate_json(line)
    except ValidationError:
        mended = _ESCAPE.sub(lambda m: "\\ufffd" if m[3] else m[0], line)
        if mended == line:
            raise
    return adapter.validate_json(mended)


def schema() -> dict[str, Any]:
    """The JSON Schema of the protocol: `to_harness` and `from_harness` message unions."""
    _, top = models_json_schema(
        [(m, "validation") for m in _MESSAGES], ref_template="#/$defs/{model}"
    )
    defs = top["$defs"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"react-conformance harness protocol, version {PROTOCOL_VERSION}",
        "description": (
            "JSON lines over a harness's stdin (`to_harness`) and stdout (`from_harness`). "
            "Generated from conformance/_protocol.py: do not edit."
        ),
        "protocol": PROTOCOL_VERSION,
        "$defs": {
            **defs,
            "to_harness": {"oneOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in _TO_HARNESS]},
            "from_harness": {"oneOf": [{"$ref": f"#/$defs/{m.__name__}"} for m in _FROM_HARNESS]},
        },
        "oneOf": [{"$ref": "#/$defs/to_harness"}, {"$ref": "#/$defs/from_harness"}],
    }


_TO_HARNESS: tuple[type[BaseModel], ...] = (
    Hello, Configure, GetGlobalAdapter, Build, Run, Resume, RunConcurrently, GetStepToolNames,
    MutateLastResult, Stop, TurnAnswer, ToolAnswer, ApprovalAnswer,
)
_FROM_HARNESS: tuple[type[BaseModel], ...] = (
    Welcome, Done, Adapter, Built, Ran, RanAll, Names, Failed, ModelRequest, ToolRequest,
    ApprovalRequest, Sleep, Hang, BindingFault,
)
_MESSAGES = _TO_HARNESS + _FROM_HARNESS


def schema_text() -> str:
    """The schema as the committed file holds it."""
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_text())
