"""The binding contract: what the suite hands an implementation, and what it must hand back.

Everything that crosses the contract is a pydantic model, JSON-serialisable, so that a binding in
another process (or language) can speak it. A binding translates; it never repairs: it reports what
the library did, including the exceptions the library raised, as data.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

if TYPE_CHECKING:
    from conformance._model import ScriptedModel
    from conformance._tools import SuiteTool

__all__ = [
    "CAPABILITIES",
    "CONTRACT_VERSION",
    "PARITY",
    "V1_CAPABILITIES",
    "V2_CAPABILITIES",
    "AdapterName",
    "AgentSpec",
    "Binding",
    "CallRequest",
    "ErrorInfo",
    "Event",
    "ExtractTurn",
    "FaultTurn",
    "FieldSpec",
    "FinalTurn",
    "LMCall",
    "Outcome",
    "ParamSpec",
    "ResumeRequest",
    "SignatureSpec",
    "Step",
    "StepTurn",
    "ToolCall",
    "ToolSpec",
    "Turn",
    "effective_capabilities",
]

#: The version of this contract. A binding declares the one it was written against in
#: `Binding.contract_version`; a binding that declares none is a version-1 binding (see
#: `V1_CAPABILITIES`), which keeps working unchanged; a version-2 binding is judged as it was
#: (see `V2_CAPABILITIES`).
CONTRACT_VERSION = 3

#: The optional profiles a binding may claim; a scenario tagged with an unclaimed one is not run.
#: Everything else is core: every binding is judged on it and cannot unclaim it.
CAPABILITIES: frozenset[str] = frozenset(
    {
        "signature",  # DSPy-shaped: built from a signature, a step predictor and an extraction call
        "adapters",  # a pluggable format-and-parse layer, set globally or per agent (ADP-*)
        "max-steps-error",  # on the step cap the run raises the library's max-iterations error
        "max-steps-extract",  # on the step cap the outputs are still extracted from the trajectory
        "max-steps-return",  # on the step cap the run returns normally, flagged as stopped by it
        "cap-summary",  # on a cap that does not raise, a message for the user of what was tried (EXH-5)
        "per-call-cap",  # a step cap given to one call (LOOP-4)
        "repeated-error-stop",  # a stop after repeated similar tool failures (ERR-2, ERR-3)
        "ask-user",  # a built-in tool through which the agent asks the person (HITL-1, HITL-2)
        "tool-approval",  # tools that must not run before a person approves the call (HITL-3..6)
        "approval-edit",  # the person can change a pending call's args before it runs (HITL-7)
        "durable-approvals",  # a pause survives serialisation; a replayed answer is recognised (HITL-8)
        "async",  # the library's own async form (ASYNC-*)
        "streaming",  # the library's own stream of step events ending in one `done` (STREAM-1)
        "parallel-tool-calls",  # one model reply may call several tools (LOOP-6)
        "lm-retry",  # the library's own model client retries transient failures (NET-1)
        "http",  # runs with the library's own HTTP client pointed at `CallRequest.base_url`
    }
)

#: How a version-1 binding's capabilities read in version 2: `tool-errors`, `tool-args` and
#: `stop-reason` became core; `adapter-override` is part of `signature`, which every version-1
#: binding has; `human-in-the-loop` split in two.
V1_CAPABILITIES: Mapping[str, tuple[str, ...]] = {
    "adapter-override": (),
    "tool-errors": (),
    "tool-args": (),
    "stop-reason": (),
    "human-in-the-loop": ("ask-user", "tool-approval"),
    "max-steps-extract": ("max-steps-extract",),
    "max-steps-error": ("max-steps-error",),
    "async": ("async",),
    "streaming": ("streaming",),
    "lm-retry": ("lm-retry",),
    "http": ("http",),
}


#: What version 3 split out of a version-2 binding's judgement, so that it is judged as before:
#: LOOP-4 and ERR-2/ERR-3 were core, the adapters part of `signature`, EXH-5 part of the
#: non-raising cap behaviours, and the edit and the replay of an approval part of `tool-approval`.
V2_CAPABILITIES: Mapping[str, tuple[str, ...]] = {
    "": ("per-call-cap", "repeated-error-stop"),
    "signature": ("adapters",),
    "max-steps-extract": ("cap-summary",),
    "max-steps-return": ("cap-summary",),
    "tool-approval": ("approval-edit", "durable-approvals"),
}


def effective_capabilities(binding: Binding) -> frozenset[str]:
    """The version-3 capabilities `binding` claims (an older binding's, translated)."""
    if binding.contract_version >= 3:
        return frozenset(binding.capabilities)
    claimed = set(binding.capabilities)
    if binding.contract_version < 2:
        claimed = {"signature", *(c for v1 in claimed for c in V1_CAPABILITIES.get(v1, ()))}
    added = {c for v2 in ("", *claimed) for c in V2_CAPABILITIES.get(v2, ())}
    return frozenset(claimed | added)


#: The contract fields a binding may fill from more than the library's result or error, each with
#: the one rule every binding follows (docs/writing-a-binding.md, "Parity"). A bundled binding
#: says in `Binding.parity`, for each, how it fills that field for its library: `library: <where
#: the library reports it>`, `derived: <what it is derived from, where in the library>`, or
#: `none: <why the library allows neither>`. Where one library allows a derivation, every binding
#: whose library allows it derives too, so that a verdict never rests on a binding's choice.
PARITY: Mapping[str, str] = {
    "stop_reason": "Outcome.stop_reason: the library's own; or `max_steps` derived from the "
    "library's own record of the run when it shows the run used its whole step cap without a "
    "final answer (a capped flag, or its one tool-less call after the cap); never from the "
    "suite's model log",
    "iterations": "Outcome.iterations and the cap error's `iterations`: the library's own count; or "
    "counted from the library's own record of the run (its messages, steps or events)",
    "max_iterations": "the cap error's `max_iterations`: the library's own; or the step cap the "
    "binding gave the library for this call (the agent's or the call's)",
    "partial_run": "the cap error's `history`, `tools_used` and `last_observation`: from the "
    "error; or read through the library's documented API for the run's state (a checkpointer, a "
    "capture helper, the session) when the error carries none",
    "concurrency": "ASYNC-2's concurrent runs: `shared` (one agent object for every run, the "
    "default) or `per-run` (an agent built per run, where the library documents that an agent is "
    "not safe to share between concurrent runs: say where)",
}


AdapterName = Literal["chat", "json"]
FieldType = Literal["str", "int", "float", "bool", "list", "dict"]

_Model = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(BaseModel):
    """One input or output field of a signature."""

    model_config = _Model
    name: str
    type: FieldType = "str"
    description: str = ""


class SignatureSpec(BaseModel):
    """A signature in neutral words; `form` says how the binding must hand it to the library."""

    model_config = _Model
    inputs: tuple[FieldSpec, ...] = ()
    outputs: tuple[FieldSpec, ...] = ()
    instructions: str = ""
    form: Literal["string", "class", "value"] = "string"
    #: For the string form only: the exact text to pass (used to feed malformed signatures).
    text: str | None = None
    #: Whether the scenario judges the form itself (it names it: SIG-1 to SIG-5 and their
    #: preconditions). Then the signature is handed over in exactly that form, also to a library
    #: that has no such form (it refuses it, as it refuses a user's). Otherwise the form is the
    #: suite's default, a string: a library without arrow strings takes the same fields in its own
    #: form, as its user would write them.
    form_judged: bool = False

    def arrow(self) -> str:
        """The arrow string, `"a, b -> c"` (or `text` verbatim when given)."""
        if self.text is not None:
            return self.text
        return f"{', '.join(f.name for f in self.inputs)} -> {', '.join(f.name for f in self.outputs)}"


class ParamSpec(BaseModel):
    """One argument of a tool."""

    model_config = _Model
    name: str
    type: FieldType = "str"
    description: str = ""


class ToolSpec(BaseModel):
    """A tool as the library must declare it: name, description, argument schema."""

    model_config = _Model
    name: str
    description: str
    parameters: tuple[ParamSpec, ...] = ()
    #: Must not run before a person approves it (`tool-approval` profile). A binding declares a
    #: tool that is not interruptible as a plain tool, as a user would, without passing the
    #: library's approval option: a plain tool's default behaviour is judged too (HITL-3).
    interruptible: bool = False

    def json_schema(self) -> dict[str, Any]:
        """The argument schema as a JSON schema object."""
        json_types = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
                      "list": "array", "dict": "object"}
        return {
            "type": "object",
            "properties": {
                p.name: {"type": json_types[p.type], "description": p.description}
                for p in self.parameters
            },
            "required": [p.name for p in self.parameters],
            "additionalProperties": False,
        }


class AgentSpec(BaseModel):
    """Everything needed to construct one agent.

    A binding that does not claim `signature` builds its library's agent from the tools, the step
    cap and `signature.instructions`; it renders the call's inputs as the user message
    (`render.user_message`) and reports the final reply as the one output
    (`render.reply_outputs`).
    """

    model_config = _Model
    signature: SignatureSpec
    tools: tuple[ToolSpec, ...]
    max_steps: int = 10
    #: The agent's name, for a library whose agents have one (HITL-6's second agent has another).
    name: str = "agent"
    #: The per-agent adapter override (`ReAct(..., adapter=X)`), if any.
    adapter: AdapterName | None = None
    #: What to do on the step cap (one of the cap behaviours the binding claims); `None` means
    #: the library's default. A library with one cap behaviour ignores it.
    on_max_steps: Literal["extract", "raise", "return"] | None = None
    #: Whether the built-in `ask_to_user` tool is enabled (`ask-user` profile); `None` means the
    #: library's default: pass nothing, so that the default is judged (HITL-1: on by default).
    #: A binding that passes the value straight through to a flag that takes None as its default
    #: keeps working; one whose flag needs a bool passes it only when it is not None.
    enable_ask_to_user: bool | None = None


class CallRequest(BaseModel):
    """One call of an agent."""

    model_config = _Model
    inputs: dict[str, JsonValue]
    #: Per-call step cap override (`forward(max_iters=N)`), if any.
    max_steps: int | None = None
    #: `sync` (forward), `async` (aforward) or `stream` (the step-event stream; `Outcome.events`).
    mode: Literal["sync", "async", "stream"] = "sync"
    #: Set only in `http` scenarios: an OpenAI-compatible endpoint (`.../v1`) that answers from the
    #: script and logs every request itself. Point the library's own HTTP client at it (any API key)
    #: instead of installing the `ScriptedModel`, with the retry backoff at zero if the library lets you.
    base_url: str | None = None

    def kwargs(self, step_cap: str = "max_iters") -> dict[str, Any]:
        """The inputs as keyword arguments, plus the per-call step cap named `step_cap` if given."""
        cap = {} if self.max_steps is None else {step_cap: self.max_steps}
        return {**self.inputs, **cap}


class ResumeRequest(BaseModel):
    """A person's answer to an interrupt an earlier call reported (`ask-user`, `tool-approval`)."""

    model_config = _Model
    #: The `interrupt_id` of the interrupt's ErrorInfo fields.
    interrupt_id: str
    #: `yes`, `y`, `no`, `n`, free text, or `{"edit": {"name": ..., "args": {...}}}` as JSON text.
    response: str
    #: `sync` (resume) or `async` (aresume).
    mode: Literal["sync", "async"] = "sync"


class Step(BaseModel):
    """One step of a normalised trajectory."""

    model_config = ConfigDict(extra="forbid")
    thought: str | None = None
    tool_name: str
    tool_args: JsonValue = None
    observation: JsonValue = None
    #: Whether the library marked the observation as an error with a flag of its own (`is_error`,
    #: `status="error"`, a tool-error part): True or False; None when the library has no such flag
    #: (the suite then reads the observation's words).
    is_error: bool | None = None
    #: The id that binds the observation to its tool call, where the library has one (native tool
    #: calling); None in a text protocol, where the tool's name binds it.
    call_id: str | None = None


class ErrorInfo(BaseModel):
    """An exception the library raised, as data.

    A human-in-the-loop interrupt is `kind="human-in-the-loop"` with the fields `question`,
    `interrupt_id` (text), `tool_call` (`{"name", "args", "call_id"}`, or None when the agent asked
    the user a question) and `context` (`{"trajectory": [Step, ...], "iteration": int,
    "input_args": {...}}`).
    """

    model_config = ConfigDict(extra="forbid")
    #: The exception class name, e.g. `MaxIterationsError`.
    type: str
    message: str
    #: What the binding recognised it as: the library's step-cap error, its pause for a person,
    #: or `other` for anything else.
    kind: Literal["max-iterations", "human-in-the-loop", "other"] = "other"
    #: The structured fields the exception carries (EXH-2: iterations, max_iterations, tools_used,
    #: history, last_observation, partial_final_answer of any JSON type, ...). Where the library
    #: exposes the partial run through a documented API rather than on the error, the binding reads
    #: it there and reports it here, under the same names.
    fields: dict[str, JsonValue] = Field(default_factory=dict)

    @classmethod
    def from_exception(cls, exc: BaseException, **fields: JsonValue) -> ErrorInfo:
        """An `other` error from any exception, with optional structured fields."""
        return cls(type=type(exc).__name__, message=str(exc), fields=dict(fields))


class Event(BaseModel):
    """One event of a streaming run: a `step` as it completed, or the final `done`."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["step", "done"]
    #: How many model calls the run had made when this event reached the binding: measure
    #: `len(model.calls)` as each event arrives, so the suite can tell a stream from a replay.
    model_calls: int
    #: The step (`step` events).
    step: Step | None = None
    #: Why the run stopped, in the words of `Outcome.stop_reason` (`done`).
    stop_reason: str | None = None
    #: The prediction's output values (`done`).
    outputs: dict[str, JsonValue] | None = None


class Outcome(BaseModel):
    """What one call did, as the library reported it."""

    model_config = ConfigDict(extra="forbid")
    outputs: dict[str, JsonValue] | None = None
    trajectory: list[Step] = Field(default_factory=list)
    #: Why the run stopped (EXH-4): `finish` (the final answer), `max_steps` (the step cap),
    #: `repeated_tool_errors`, ...; None when the library does not say.
    stop_reason: str | None = None
    #: How many steps (model calls that may choose a tool) the run used, as the library reports
    #: it; None when it does not.
    iterations: int | None = None
    #: The user-facing message for a run that did not finish normally (EXH-5, ERR-2).
    fallback: str | None = None
    #: The tool errors the library keeps, oldest first (ERR-2), else None.
    tool_errors: list[JsonValue] | None = None
    error: ErrorInfo | None = None
    #: A streaming run's events, in the order the library emitted them (`mode="stream"` only).
    events: list[Event] | None = None


class ToolCall(BaseModel):
    """One tool call the model makes."""

    model_config = _Model
    tool_name: str
    tool_args: JsonValue = Field(default_factory=dict)
    #: When set, sent verbatim instead of `tool_args` (to feed malformed JSON).
    raw_tool_args: str | None = None

    def args_text(self) -> str:
        """The tool args as the model writes them."""
        if self.raw_tool_args is not None:
            return self.raw_tool_args
        return json.dumps(self.tool_args)


class StepTurn(ToolCall):
    """The model picks a tool: what a step call is answered with."""

    kind: Literal["step"] = "step"
    thought: str
    #: `signature` only: the reply leaves `next_tool_args` out (a malformed step reply); the
    #: `render` helpers write it so.
    without_tool_args: bool = False
    #: Further tool calls in the same reply (`parallel-tool-calls` scenarios only), after this one.
    parallel: tuple[ToolCall, ...] = ()

    def calls(self) -> tuple[ToolCall, ...]:
        """Every tool call of the reply, in order."""
        first = ToolCall(tool_name=self.tool_name, tool_args=self.tool_args,
                         raw_tool_args=self.raw_tool_args)
        return (first, *self.parallel)


class FinalTurn(BaseModel):
    """The model gives its final answer, in the form the library expects.

    A binding claiming `signature` never sees one: the scripted model answers that step call with
    `finish` and the extraction call that follows with `outputs`. Any other binding renders it as
    its library's final answer: a reply that calls no tool (`reply_text()`), or its final-answer
    tool.
    """

    model_config = _Model
    kind: Literal["final"] = "final"
    thought: str = ""
    outputs: dict[str, JsonValue]

    def reply_text(self) -> str:
        """The final answer as one reply: the single output's text, or a JSON object of them all."""
        if len(self.outputs) == 1:
            (value,) = self.outputs.values()
            return value if isinstance(value, str) else json.dumps(value)
        return json.dumps(self.outputs)


class ExtractTurn(BaseModel):
    """The model writes the outputs: what an extraction call is answered with."""

    model_config = _Model
    kind: Literal["extract"] = "extract"
    outputs: dict[str, JsonValue]


class FaultTurn(BaseModel):
    """The transport fails instead of answering (lm-retry profile).

    `hang`: the endpoint never answers. The seam does not wait: it calls `model.hang(timeout)` with
    the request's own read timeout (None if it has none), then fails the request as that timeout
    would (`conformance.server.fault_response` does both for an httpx transport).
    """

    model_config = _Model
    kind: Literal["fault"] = "fault"
    fault: Literal["timeout", "connection", "hang", "429", "500", "503", "400", "401"]
    retry_after: float | None = None


Turn = Annotated[StepTurn | FinalTurn | ExtractTurn | FaultTurn, Field(discriminator="kind")]


class LMCall(BaseModel):
    """One request the implementation sent to the model, as the binding saw it."""

    model_config = ConfigDict(extra="forbid")
    #: A step call (the model may choose a tool, or give its final answer), an extraction call
    #: (write the outputs with no tool to choose: `signature`'s extraction, or a library's one
    #: tool-less call on the step cap), or an auxiliary call the binding named in
    #: `Binding.auxiliary_calls` (answered by `ScriptedModel.auxiliary`, never from the script).
    kind: Literal["step", "extract", "auxiliary", "other"]
    #: The reply format the request asks for.
    adapter: Literal["chat", "json", "native", "other"]
    messages: list[dict[str, JsonValue]]
    #: Native tool declarations sent with the request, if any.
    tools: list[JsonValue] | None = None
    #: For an auxiliary call: its name, one of the binding's `auxiliary_calls`.
    auxiliary: str | None = None

    def text(self) -> str:
        """Everything the model was shown, as one string."""
        parts = [str(m.get("content", "")) for m in self.messages]
        if self.tools:
            parts.append(json.dumps(self.tools))
        return "\n".join(parts)


class Binding(ABC):
    """Adapts one agent library to the suite. Subclass it and register it as an entry point."""

    #: The name `--impl` selects it by; `<lib>+<config>` for a documented opt-in configuration.
    name: ClassVar[str]
    #: The contract version the binding was written against (1 if it does not say).
    contract_version: ClassVar[int] = 1
    #: The capabilities it claims (see `CAPABILITIES`); core scenarios always run.
    capabilities: ClassVar[frozenset[str]] = frozenset()
    #: For each capability it does not claim, a one-line reason the library lacks it.
    not_claimed: ClassVar[Mapping[str, str]] = {}
    #: Scenario names or requirement IDs expected to fail, each with a one-line reason.
    known_failures: ClassVar[Mapping[str, str]] = {}
    #: Scenario names, Outline rows or requirement IDs whose setup the library's API cannot express
    #: (an edit naming a tool the agent lacks, args it only takes parsed), each with a one-line
    #: reason: reported as not claimed, the reason beside it ("k of n" where others passed), never
    #: as a pass nor as the library refusing. A capability it lacks as a whole is `not_claimed`.
    cannot_express: ClassVar[Mapping[str, str]] = {}
    #: Known failures found only by fuzzing at scale: they apply (strictly) to a run whose ARGS-1
    #: sends more generated arguments than the default 40 (`--conformance-examples 2000`, the
    #: `fuzz` hypothesis profile), and not to a default run, where the scenario must pass.
    fuzz_known_failures: ClassVar[Mapping[str, str]] = {}
    #: The model calls the library makes that are neither steps nor extractions (an observation
    #: processor, a planning or summarising call), each name with a one-line description. The seam
    #: answers such a call with `ScriptedModel.auxiliary(name, call)`: a neutral standing answer
    #: that consumes no scripted turn, is logged, and is shown in the report.
    auxiliary_calls: ClassVar[Mapping[str, str]] = {}
    #: How the library asks a person to approve a tool call (`tool-approval`): `pause` (the run
    #: returns a pause to the caller, answered by `resume`) or `callback` (the library calls an
    #: approval callback during the run; the binding's callback asks `ScriptedModel.approve`).
    approval_form: ClassVar[Literal["pause", "callback"]] = "pause"
    #: The distributions (names as installed, `langchain-core`) whose versions the report records
    #: beside `version`: the library's own packages and the key dependencies its loop runs on (its
    #: model client, its graph runtime), so a report says what exactly was judged.
    dependencies: ClassVar[tuple[str, ...]] = ()
    #: For each rule of `PARITY`, how the binding fills that field for its library (`library: ...`,
    #: `derived: ...`, `none: ...`; `concurrency`: `shared` or `per-run: <where documented>`).
    parity: ClassVar[Mapping[str, str]] = {}

    @property
    @abstractmethod
    def version(self) -> str:
        """The version of the library under test."""

    def configure(self, *, adapter: AdapterName | None) -> None:
        """Set (or with None, reset) the library's global adapter, process-wide (`signature`)."""
        raise NotImplementedError(f"binding {self.name!r} has no global adapter")

    def global_adapter(self) -> AdapterName | None:
        """Read the library's global adapter back (to check that an override did not leak)."""
        return None

    @abstractmethod
    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        """Construct the library's agent; an exception the library raised is returned as ErrorInfo."""

    @abstractmethod
    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """Call the agent with `model` answering every model request; report what happened.

        `call.mode` says which form to call: `sync`, `async` (the library's own async form, on an
        event loop) or `stream` (its event stream, reported in `Outcome.events`, plus the
        outcome of the whole run).
        """

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        """Resume the interrupted run `request.interrupt_id` with the person's response, through
        `agent`; report what happened, as `run` does. `agent` may be another agent than the one
        whose run paused (HITL-6: the library must refuse it), so keep pauses by id on the binding.
        Called only for bindings claiming `ask-user` or `tool-approval` (`approval_form = "pause"`)."""
        raise NotImplementedError(f"binding {self.name!r} has no resume")

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        """`run` for `mode="async"`, on the running event loop, with `model` for this task only.
        The default `run_concurrently` gathers it; a binding claiming `async` implements one of them."""
        raise NotImplementedError(f"binding {self.name!r} has no arun")

    def run_concurrently(
        self, calls: Sequence[tuple[object, CallRequest, ScriptedModel]]
    ) -> list[Outcome]:
        """Start every call at once on one event loop (each `mode="async"`), wait for all, and
        report each one's Outcome, in order. Called only for bindings claiming `async`.

        The suite checks that the runs were in flight at the same time. Where the library awaits
        its model through an async seam, the binding's seam must yield to the event loop before
        it answers (`await asyncio.sleep(0)`), as a real network call would. The default gathers
        `arun` over the calls: all the isolation is the library's own.
        """
        import asyncio  # here: `import conformance` (and an xdist controller) never needs it

        async def every_call() -> list[Outcome]:
            return list(await asyncio.gather(*(self.arun(a, c, m) for a, c, m in calls)))

        return asyncio.run(every_call())

    def step_tool_names(self, agent: object) -> list[str] | None:
        """The names the agent's step output `next_tool_name` admits (`signature`), or None: the
        suite then reads the tools declared to the model in the step calls' `LMCall.tools`."""
        return None

    @abstractmethod
    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        """Mutate in place every container the agent's last result handed the caller, adding
        `marker`, and return what was changed: one line per container.

        The containers are those the library handed the caller as the call's result, as the
        caller holds them: a prediction's trajectory, an error's history, a pause's (interrupt's)
        context trajectory; never the agent's own state (a conversation the library documents as
        live and editable is not a result). Each line names one container and what it held, e.g.
        `"result.trajectory (3 steps)"`, `"pause.context.trajectory"`. The suite then checks that
        the agent and its next run never see the marker (TRJ-2, EXH-2); a snapshot scenario whose
        mutation changed nothing (None or an empty list) is the binding's error, never a pass.
        """
