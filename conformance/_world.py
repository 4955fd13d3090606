"""One scenario's state: the agent being described, the scripted model, the outcomes so far."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from conformance import _attribution, _guard
from conformance._http import HttpProfile
from conformance._model import ScriptedModel
from conformance._tools import SuiteTool
from conformance.binding import (
    AdapterName,
    AgentSpec,
    Binding,
    CallRequest,
    ErrorInfo,
    FieldSpec,
    LMCall,
    Outcome,
    ResumeRequest,
    SignatureSpec,
    Step,
    StepTurn,
    ToolSpec,
    Turn,
    effective_capabilities,
)

#: How many model calls past its script and step cap a run may make before it counts as one that
#: never stops (parse retries, retries of transient faults).
RUNAWAY_MARGIN = 20


class World:
    """What a scenario has set up and observed. Step definitions read and write only this."""

    def __init__(self, binding: Binding, timeout: float, requirement: str | None = None) -> None:
        self.binding = binding
        self.timeout = timeout
        #: The requirement the scenario checks (to tell its own failure from a precondition's).
        self.requirement = requirement
        #: The version-2 capabilities the binding claims.
        self.capabilities = effective_capabilities(binding)
        self.signature = SignatureSpec(
            inputs=(FieldSpec(name="question"),), outputs=(FieldSpec(name="answer"),)
        )
        self.tools: dict[str, SuiteTool] = {}
        self.max_steps = 10
        self.adapter: AdapterName | None = None
        self.on_max_steps: str | None = None
        #: Set only by a scenario that says the agent can or cannot ask: else the library's default.
        self.enable_ask_to_user: bool | None = None
        self.model = self.new_model()
        self._agent: object | None = None
        self.build_error: ErrorInfo | None = None
        self.outcomes: list[Outcome] = []
        #: Why each call's step cap did not stop it where it should (a step early, or late: LOOP-3's
        #: defect), or None.
        self.early_stops: list[str | None] = []
        #: Why each call returned right after a reply whose well-formed tool calls never ran
        #: (LOOP-1's defect), or None.
        self.dropped_calls: list[str | None] = []
        #: The exceptions the scenario's tools raised during each call, in call order.
        self.raised_per_run: list[list[str]] = []
        #: Each call's model calls with the turns that answered them, and how many times each
        #: scenario tool ran during it, in call order.
        self.served_per_run: list[tuple[list[tuple[LMCall, Turn | None]], dict[str, int]]] = []
        #: What a scenario observed and reports without judging it (a library's own limits, its
        #: timeout): shown with the verdict, as the scenario's `observed` property.
        self.notes: list[str] = []
        #: Each call's model calls, in call order (the model log is split at every call).
        self.calls_per_run: list[list[LMCall]] = []
        #: The queued turns each call consumed, in call order.
        self.turns_per_run: list[list[Turn]] = []
        #: The person's answers to approvals, queued before the call (`approval_form = "pause"`:
        #: given by `resume` when the scenario says; `"callback"`: `ScriptedModel.approve` hands
        #: them to the library's callback during the run).
        self.approval_answers: list[str] = []
        #: Set by a scenario whose run may end early on a refusal to the person (an edit naming
        #: no tool, HITL-7): the turns the agent would then have used are not required.
        self.may_stop_early = False
        #: Every interrupt a call reported, and those the user answered, in order.
        self.interrupts: list[ErrorInfo] = []
        self.answered: list[ErrorInfo] = []
        self.global_adapter: AdapterName | None = None
        #: Arguments sent by generated scenarios, and results of concurrent runs.
        self.sent_args: list[dict[str, Any]] = []
        #: Raw args texts a scenario wrote as valid JSON objects (too deep to parse back here).
        self.written_objects: set[str] = set()
        #: The outputs a generated final answer wrote (too big to write in the scenario).
        self.written_outputs: dict[str, Any] = {}
        self.concurrent: list[tuple[str | None, ScriptedModel, str, object]] = []
        #: The whole script of each concurrent run, in the order of `concurrent`.
        self.concurrent_scripts: list[list[Turn]] = []
        #: The step cap each concurrent run had.
        self.concurrent_caps: list[int] = []
        #: The index in `calls_per_run` of the latest call (not a resume) and its step cap.
        self._budget: tuple[int, int] | None = None
        #: The model's endpoint in `http` scenarios (set by the fixture), else None.
        self.http: HttpProfile | None = None
        #: Whether a run that ends on a well-formed step reply is STEP-4's here (set by the
        #: fixture): in a smoke scenario, the plainest runs there are; elsewhere, only once a smoke
        #: scenario showed that the library reads no such reply (`reads_no_reply`). Else a run ended
        #: on such a reply is the scenario's own (big args, typed outputs the library chokes on).
        self.replies_judged_by_step_4 = False
        #: The format (adapter) in which a smoke scenario showed that the library reads no
        #: well-formed step reply: a run ended on any step reply in it is STEP-4's
        #: (`_attribution.ended_on_unread_reply`).
        self.reads_no_reply: str | None = None
        #: The format of the call whose reply `unread_reply` tells of.
        self.unread_format: str | None = None
        #: Why the latest run ended on a well-formed step reply, once a scenario was blocked so.
        self.unread_reply: str | None = None

    @property
    def signature_shaped(self) -> bool:
        """Whether the binding claims `signature`: a final answer is `finish` plus an extraction."""
        return "signature" in self.capabilities

    def new_model(self, turns: Iterable[Turn] = ()) -> ScriptedModel:
        """A scripted model that renders a final answer the way this binding's library expects."""
        return ScriptedModel(turns, finish_then_extract=self.signature_shaped,
                             auxiliary_names=self.binding.auxiliary_calls)

    def blocked_unless(self, condition: bool, requirement: str, what: str) -> None:
        """Check a precondition another requirement asks for: if it did not happen, the scenario is
        blocked by that requirement (unless it is the scenario's own, which then simply fails)."""
        _attribution.precondition(condition, requirement, self.requirement, what)

    def configure(self, adapter: AdapterName | None) -> None:
        """Set the library's global adapter (the fixture resets it after the scenario)."""
        _guard.call("configure", lambda: self.binding.configure(adapter=adapter), self.timeout)
        self.global_adapter = adapter

    # -- building ---------------------------------------------------------------------------

    def spec(self) -> AgentSpec:
        """The agent as described so far."""
        return AgentSpec.model_validate(
            {
                "signature": self.signature,
                "tools": tuple(t.spec for t in self.tools.values()),
                "max_steps": self.max_steps,
                "adapter": self.adapter,
                "on_max_steps": self.on_max_steps,
                "enable_ask_to_user": self.enable_ask_to_user,
            }
        )

    def build(self) -> object | None:
        """Build the agent once; a refusal is kept in `build_error`."""
        if self._agent is None and self.build_error is None:
            built = self._built(self.spec())
            if isinstance(built, ErrorInfo):
                self.build_error = built
            else:
                self._agent = built
        return self._agent

    def _built(self, spec: AgentSpec) -> object | ErrorInfo:
        """The binding's agent for `spec` over this scenario's tools, or the library's refusal."""
        tools = list(self.tools.values())
        built = _guard.call("build", lambda: self.binding.build(spec, tools), self.timeout)
        if built is None:
            raise _guard.BindingError("binding.build returned None instead of an agent.")
        return built

    def reset_agent(self) -> None:
        """Forget the built agent, so the next use builds a new one from the current description."""
        self._agent, self.build_error = None, None

    @property
    def agent(self) -> object:
        """The built agent; fails the scenario if the library refused to build it."""
        agent = self.build()
        if agent is None:
            assert self.build_error is not None
            raise AssertionError(
                f"the library refused to build the agent: {self.build_error.type}: "
                f"{self.build_error.message}\nThe agent was: {self.spec().model_dump_json()}"
            )
        return agent

    # -- running ----------------------------------------------------------------------------

    def call(self, inputs: dict[str, Any], max_steps: int | None = None,
             mode: Literal["sync", "async", "stream"] = "sync") -> Outcome:
        """Call the agent once and check the model saw exactly the scripted conversation."""
        agent = self.agent
        request = CallRequest.model_validate({"inputs": inputs, "max_steps": max_steps, "mode": mode,
                                              "base_url": self.http.base_url if self.http else None})
        # A cap that stops a step early is LOOP-3's defect (no off-by-one) in any form of call: a
        # per-call, async or streamed count it spoils is blocked by LOOP-3, and failed where LOOP-3
        # itself passed (the library's agent cap counts right, so that form's count is its own).
        cap = self.max_steps if max_steps is None else max_steps
        self._budget = (len(self.calls_per_run), cap)
        return self._record("run", lambda model: self.binding.run(agent, request, model), cap=cap,
                            steps=max_steps)

    def resume(self, response: str, mode: Literal["sync", "async"] = "sync",
               interrupt: ErrorInfo | None = None, another_agent: str | None = None,
               precondition: str | None = None) -> Outcome:
        """Answer an interrupt (by default the latest) with `response`, as a person would; with
        `another_agent`, through a second agent of that name, built from the same description
        otherwise (HITL-6).

        Answering one a second time, or through another agent, checks no script: what the library
        then does (refuse, repeat its result, ask the model again) is its own, as long as the
        paused call does not run again. With `precondition`, a resume that raises blocks the
        scenario by that requirement.
        """
        again = interrupt is not None and interrupt in self.answered
        interrupt = interrupt or self.interrupt()
        request = ResumeRequest(interrupt_id=interrupt_id(interrupt), response=response, mode=mode)
        agent = self.agent if another_agent is None else self.another_agent(another_agent)
        self.answered.append(interrupt)
        outcome = self._record("resume", lambda model: self.binding.resume(agent, request, model),
                               check=not (again or another_agent is not None or precondition),
                               left=self._steps_left())
        if precondition is not None:
            error = outcome.error
            # A resumed run that never stopped, or asked a step late, and then ended in an error
            # (agno's budget) is LOOP-3's before it is the precondition's.
            self.blocked_if_stopped_early()
            self.blocked_unless(error is None or error.kind != "other", precondition,
                                f"the resume raised {error.type}: {error.message}" if error else "")
            self.check_script(outcome)
        return outcome

    def another_agent(self, name: str) -> object:
        """A second agent named `name`, built from the same description and tools as the first."""
        built = self._built(self.spec().model_copy(update={"name": name}))
        if isinstance(built, ErrorInfo):
            raise AssertionError(f"the library refused to build a second agent from the description "
                                 f"it built the first from: {built.type}: {built.message}")
        return built

    def _steps_left(self) -> int | None:
        """The steps a resume has left of its call's cap: the cap less the step calls of the call
        and of the resumes since (HITL-5: the steps before the pause count)."""
        if self._budget is None:
            return None
        first, cap = self._budget
        used = sum(1 for run in self.calls_per_run[first:] for c in run if c.kind == "step")
        return cap - used

    def _record(self, operation: str, run: Callable[[ScriptedModel], object],
                check: bool = True, cap: int | None = None, steps: int | None = None,
                left: int | None = None) -> Outcome:
        """Run the binding on the scenario's model and record its outcome. `cap` is the call's step
        cap; `left`, for a resume, the steps its call's cap leaves it (only a late step is told by
        it: a resume's step count is the library's own)."""
        model = self.model
        calls, turns = len(model.calls), model.unused
        # A loop that never stops ends here, not at the timeout: room for every scripted turn (a
        # final answer may be two calls), every step the cap allows, and some retries.
        model.call_limit = calls + 2 * (len(turns) + max(steps or 0, self.max_steps)) + RUNAWAY_MARGIN
        runs = {name: len(t.calls) for name, t in self.tools.items()}
        raised = {name: len(t.raised) for name, t in self.tools.items()}
        http = self.http
        try:
            raw = _guard.call(operation, lambda: http.run(run, model) if http else run(model),
                              self.timeout)
        except _guard.ImplementationHung as error:
            # A run that never settled after the model was asked past its cap (a harness whose
            # library left the script's refusal unhandled): LOOP-3's, as the same call raising is.
            late = self._asked_late(model, calls, cap, left)
            if late is not None:
                self.blocked_unless(False, _attribution.STEP_CAP, f"{late}\n{error}")
            raise
        except Exception as error:
            if model.binding_fault is not None:  # what the library made of the seam's refusal
                raise _guard.BindingError(model.binding_fault) from error
            if not isinstance(error, _guard.CheckFailed):
                raise
            # An unexpected model call, or a run the model ended: past the cap, LOOP-3's.
            late = self._asked_late(model, calls, cap, left)
            if late is not None:
                said = late if str(error) == late else f"{late}\n{error}"
                self.blocked_unless(False, _attribution.STEP_CAP, said)
            raise
        if model.binding_fault is not None:
            raise _guard.BindingError(model.binding_fault)
        outcome = _guard.validated(operation, Outcome, raw)
        self.outcomes.append(outcome)
        ran = {name: len(t.calls) - runs.get(name, 0) for name, t in self.tools.items()}
        served = list(zip(model.calls[calls:], model.answers[calls:], strict=True))
        self.early_stops.append(self._asked_late(model, calls, None, left) if cap is None else (
            _attribution.stopped_early(outcome, served, cap, ran)
            or self._asked_late(model, calls, cap)))
        self.dropped_calls.append(_attribution.dropped_tool_calls(
            outcome, served, self.runnable_tools, cap if left is None else left, ran))
        self.raised_per_run.append(
            [kind for name, t in self.tools.items() for kind in t.raised[raised.get(name, 0):]])
        self.served_per_run.append((served, ran))
        self.calls_per_run.append(model.calls[calls:])
        self.turns_per_run.append(turns[: len(turns) - len(model.unused)])
        if outcome.error is not None and outcome.error.kind == "human-in-the-loop":
            self.interrupts.append(outcome.error)
        if check:
            self.check_script(outcome)
        return outcome

    @property
    def runnable_tools(self) -> dict[str, ToolSpec]:
        """The scenario's tools a call runs without a pause for a person, by name."""
        return {name: t.spec for name, t in self.tools.items() if not t.spec.interruptible}

    @staticmethod
    def _asked_late(model: ScriptedModel, calls: int, cap: int | None,
                    left: int | None = None) -> str | None:
        """Why the run that made `model`'s calls from `calls` on did not stop at its cap (a call's
        `cap`, or the steps `left` to a resume), or None."""
        served = list(zip(model.calls[calls:], model.answers[calls:], strict=True))
        if left is not None:
            return _attribution.asked_late(served, left, model.ran_away, resumed=True)
        return _attribution.asked_late(served, cap, model.ran_away)

    def check_calls(self, model: ScriptedModel, run: str = "") -> None:
        """Fail on a call `model`'s script did not expect; an auxiliary call the binding did not
        name is the binding's error. `run` names a concurrent run in the message."""
        if model.binding_fault is not None:
            raise _guard.BindingError(f"{run}: {model.binding_fault}" if run else model.binding_fault)
        if model.unnamed_auxiliary is not None:
            where = f" ({run})" if run else ""
            raise _guard.BindingError(
                f"the binding made an auxiliary call {model.unnamed_auxiliary!r}{where} that its "
                "auxiliary_calls does not name: name each kind of auxiliary call there, with a "
                "one-line description the reports show")
        if model.violation is not None:
            raise AssertionError(f"{run}: {model.violation}" if run else
                                 f"unexpected model call: {model.violation}")

    def check_script(self, outcome: Outcome) -> None:
        """Fail on a model call the script did not expect, or on turns left unused."""
        if self.model.violation is not None:
            self.blocked_if_stopped_early()  # a step call past the cap is LOOP-3's
            self.blocked_if_not_paused(outcome)  # a step call past an unpaused approval is HITL-3's
        self.check_calls(self.model)
        interrupted = outcome.error is not None and outcome.error.kind == "human-in-the-loop"
        refused = self.may_stop_early and outcome.error is not None
        if self.model.unused and not interrupted and not refused:
            self.blocked_if_ended_by_raising_tool()
            self.blocked_if_ended_on_unread_reply()
            self.blocked_if_stopped_early()
            unused = ", ".join(t.kind for t in self.model.unused)
            raise AssertionError(
                f"the implementation made fewer model calls than the scenario scripts: "
                f"{len(self.model.unused)} turn(s) unused ({unused}). It made "
                f"{self.model.count('step')} step and {self.model.count('extract')} extraction "
                f"call(s){_raised(outcome)}."
            )

    # -- reading ----------------------------------------------------------------------------

    @property
    def last(self) -> Outcome:
        """The outcome of the latest call."""
        assert self.outcomes, "the scenario never called the agent"
        return self.outcomes[-1]

    def prediction(self) -> Outcome:
        """The latest outcome, which must be a prediction rather than an error."""
        outcome = self.last
        self.blocked_if_ended_by_raising_tool()
        self.blocked_if_ended_on_unread_reply()
        if outcome.error is not None:
            self.blocked_if_stopped_early()
            raise AssertionError(
                f"the call raised {outcome.error.type}: {outcome.error.message} "
                "instead of returning a prediction"
            )
        return outcome

    def steps(self) -> list[Step]:
        """The latest trajectory: the prediction's, or the history the error carried."""
        outcome = self.last
        if outcome.error is not None and "history" in outcome.error.fields:
            history = outcome.error.fields["history"]
            assert isinstance(history, list), f"error history is not a list: {history!r}"
            return [Step.model_validate(s) for s in history]
        return outcome.trajectory

    def blocked_if_ended_by_raising_tool(self) -> None:
        """A latest call that a tool raised in and that then ended with an error (not a cap, not a
        pause) was ended by the raising tool: ERR-1's failure, so the scenario is blocked by ERR-1."""
        if not self.outcomes or not self.raised_per_run:
            return
        ended = _attribution.ended_by_raising_tool(self.last, self.raised_per_run[-1])
        self.blocked_unless(ended is None, _attribution.TOOL_ERROR, ended or "")

    def blocked_if_ended_on_unread_reply(self, run: int = -1) -> None:
        """A latest call of a `signature` library that ended with an error on a step reply written
        as its prompt asks is STEP-4's failure: the scenario is blocked by STEP-4 (where
        `replies_judged_by_step_4`)."""
        if not (self.signature_shaped and self.replies_judged_by_step_4 and self.served_per_run):
            return
        served, ran = self.served_per_run[run]
        self.unread_reply = _attribution.ended_on_unread_reply(
            self.outcomes[run], served, self.tools, ran, self.written_objects, self.reads_no_reply)
        self.unread_format = served[-1][0].adapter if self.unread_reply else None
        self.blocked_unless(self.unread_reply is None, _attribution.UNREAD_REPLY, self.unread_reply or "")

    def blocked_if_stopped_early(self) -> None:
        """A count that the latest call got wrong because its step cap stopped it a step early, or
        did not stop it after the cap, is LOOP-3's failure: the scenario is blocked by LOOP-3. A
        call that returned before its cap, right after a reply whose tool calls never ran, stopped
        for LOOP-1's defect first: the scenario is blocked by LOOP-1."""
        self.blocked_if_tool_calls_dropped()
        early = self.early_stops[-1] if self.early_stops else None
        self.blocked_unless(early is None, _attribution.STEP_CAP, early or "")

    def blocked_if_tool_calls_dropped(self) -> None:
        """A latest call that returned right after a reply whose well-formed tool calls never ran
        dropped the calls the model chose: LOOP-1's failure, so the scenario is blocked by LOOP-1."""
        dropped = self.dropped_calls[-1] if self.dropped_calls else None
        self.blocked_unless(dropped is None, _attribution.CHOSEN_TOOL, dropped or "")

    def blocked_if_not_paused(self, outcome: Outcome) -> None:
        """A latest call that ran a scripted step calling an interruptible tool, did not pause, and
        asked the model past the script went on where it should have paused for a person: HITL-3's
        failure (the approval never asked), so the scenario is blocked by HITL-3."""
        if self.approval_by_callback or not self.turns_per_run or (
                outcome.error is not None and outcome.error.kind == "human-in-the-loop"):
            return
        called = [c.tool_name for turn in self.turns_per_run[-1] if isinstance(turn, StepTurn)
                  for c in turn.calls()
                  if c.tool_name in self.tools and self.tools[c.tool_name].spec.interruptible]
        self.blocked_unless(not called, _attribution.APPROVAL_PAUSE, (
            f"the call of the interruptible tool {called[0]!r} did not pause the run: the model was asked "
            f"again, past the script" if called else ""))

    def blocked_if_concurrent_run_dropped_calls(self, index: int) -> None:
        """`blocked_if_tool_calls_dropped` for concurrent run `index` (its tools' runs are not told
        apart from the other runs', so its trajectory tells whether the calls ran)."""
        _, model, _, result = self.concurrent[index]
        if isinstance(result, Outcome) and index < len(self.concurrent_caps):
            dropped = _attribution.dropped_tool_calls(
                result, list(zip(model.calls, model.answers, strict=True)), self.runnable_tools,
                self.concurrent_caps[index])
            self.blocked_unless(dropped is None, _attribution.CHOSEN_TOOL,
                                f"concurrent run {index}: {dropped}")

    def blocked_if_concurrent_run_stopped_early(self, index: int) -> None:
        """`blocked_if_stopped_early` for concurrent run `index` (its tools' runs are not told apart
        from the other runs', so only a final answer not taken is recognised)."""
        _, model, _, result = self.concurrent[index]
        if isinstance(result, Outcome) and index < len(self.concurrent_caps):
            early = _attribution.stopped_early(result, list(zip(model.calls, model.answers, strict=True)),
                                  self.concurrent_caps[index], {})
            self.blocked_unless(early is None, _attribution.STEP_CAP, f"concurrent run {index}: {early}")

    def interrupt(self) -> ErrorInfo:
        """The latest interrupt a call reported; a scenario that needs one and got none is blocked
        by the requirement that asks for the pause (HITL-2 for `ask_to_user`, else HITL-3)."""
        asked = any(s.tool_name == "ask_to_user" for turns in self.turns_per_run for s in turns
                    if isinstance(s, StepTurn))
        self.blocked_unless(
            bool(self.interrupts), _attribution.ASK_PAUSE if asked else _attribution.APPROVAL_PAUSE,
            "no call was interrupted: the agent should have paused for a person"
            + (f"; the last call raised {self.last.error.type}: {self.last.error.message}"
               if self.outcomes and self.last.error else ""),
        )
        return self.interrupts[-1]

    @property
    def approval_by_callback(self) -> bool:
        """Whether the library asks for approval through a callback during the run."""
        return self.binding.approval_form == "callback"

    def queue_approval(self, answer: str) -> None:
        """Queue the person's answer to the next approval the library asks for."""
        self.approval_answers.append(answer)
        if self.approval_by_callback:
            self.model.approvals.append(answer)

    def approval_requests(self) -> list[dict[str, Any]]:
        """Every approval the library asked for, in order, as `{"name", "args", "call_id"}`: the
        pending calls of its pauses, or what it asked its approval callback; a scenario that needs
        one and got none is blocked by HITL-3."""
        if self.approval_by_callback:
            requests: list[dict[str, Any]] = list(self.model.approval_requests)
        else:
            requests = [dict(call) for i in self.interrupts
                        if isinstance(call := i.fields.get("tool_call"), dict)]
        self.blocked_unless(bool(requests), _attribution.APPROVAL_PAUSE,
                            "the library never asked a person to approve the call"
                            + _raised(self.last) if self.outcomes else "")
        return requests

    def tool(self, name: str) -> SuiteTool:
        """A tool the scenario declared."""
        assert name in self.tools, f"the scenario declares no tool {name!r}"
        return self.tools[name]


def interrupt_id(interrupt: ErrorInfo) -> str:
    """The id an interrupt carries (the binding must report one)."""
    value = interrupt.fields.get("interrupt_id")
    assert isinstance(value, str) and value, (
        f"the interrupt carries no interrupt_id text: {interrupt.fields.get('interrupt_id')!r} "
        f"(fields: {sorted(interrupt.fields)})"
    )
    return value


def _raised(outcome: Outcome) -> str:
    if outcome.error is None:
        return ""
    return f", then raised {outcome.error.type}: {outcome.error.message}"
