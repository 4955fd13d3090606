"""Bindings the suite must see through: misbehaving bindings, and deliberately broken ReActs.

Each broken implementation changes one behaviour of the reference, the way a buggy library would;
the tests check that the suite reports the right requirement as failed.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import errno
import json
import logging
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import httpx

import reference
import reference._adapters
import reference._signature
from conformance import AgentSpec, CallRequest, ErrorInfo, Outcome, ScriptedModel, SuiteTool
from conformance._model import UnexpectedModelCall
from conformance.binding import AdapterName, LMCall, ResumeRequest, Step, StepTurn
from conformance.bindings.reference import _ADAPTERS, ReferenceBinding, _Agent
from reference._args import MAX_DEPTH, too_deep, unfence
from reference.react import _model, _Part, _Paused, _Run

# -- bindings that misbehave (binding bugs, not library bugs) ----------------------------------


class Hanging(ReferenceBinding):
    """Its run never returns."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        time.sleep(3600)
        raise AssertionError("unreachable")


class Nonsense(ReferenceBinding):
    """Its run returns something that is not an Outcome."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return {"outputs": 5, "trajectory": "all good"}  # type: ignore[return-value]


class Raising(ReferenceBinding):
    """Its run lets an exception escape."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        raise KeyError("the binding forgot a field")


class StaleKnownFailure(ReferenceBinding):
    """Lists a known failure that names nothing."""

    known_failures: ClassVar[Mapping[str, str]] = {"no-such-scenario": "made up"}


class MistypedKnownFailures(ReferenceBinding):
    """Lists a scenario name with a typo and an Outline's bare test id, which covers no row."""

    known_failures: ClassVar[Mapping[str, str]] = {
        "Choosing finsh stops the loop at once": "a typo",
        "test_approving_runs_the_pending_call_exactly_once": "a bare Outline id",
    }


class PassingKnownFailure(ReferenceBinding):
    """Lists as a known failure a scenario the reference passes."""

    known_failures: ClassVar[Mapping[str, str]] = {
        "Choosing finish stops the loop at once": "pretends the reference fails it",
    }


class BrokenSmoke(ReferenceBinding):
    """Builds agents that cannot answer anything: the smoke tier must catch it."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return Outcome(outputs={})


class FailsTheSmokeTierByDesign(BrokenSmoke):
    """A library that fails the smoke scenarios by design lists them: the tier is not broken, and
    every other scenario is judged."""

    known_failures: ClassVar[Mapping[str, str]] = {
        "Choosing finish stops the loop at once": "its runs end without outputs by design",
        "SIG-1": "its runs end without outputs by design",
    }


class HangsInBuild(ReferenceBinding):
    """Its build never returns."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        time.sleep(3600)
        raise AssertionError("unreachable")


class ExitsInBuild(ReferenceBinding):
    """Its build raises SystemExit, as a library calling sys.exit would."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        raise SystemExit(3)


class InterruptedInBuild(ReferenceBinding):
    """Its build raises KeyboardInterrupt, as if the person running the suite pressed Ctrl-C."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        raise KeyboardInterrupt


class InterruptedLater(ReferenceBinding):
    """Its 40th build in a process raises KeyboardInterrupt: a run stopped with Ctrl-C midway."""

    builds: ClassVar[int] = 0

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        InterruptedLater.builds += 1
        if InterruptedLater.builds == 40:
            raise KeyboardInterrupt
        return super().build(spec, tools)


class KillsTheProcess(ReferenceBinding):
    """Its fifth run ends the process at once, as a crashing native extension would."""

    runs: ClassVar[int] = 0

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        KillsTheProcess.runs += 1
        if KillsTheProcess.runs == 5:
            os._exit(7)
        return super().run(agent, call, model)


class KillsTheProcessInOneScenario(ReferenceBinding):
    """Ends the process at once in one scenario (LOOP-1's: the agent with a "search" tool, asked
    "What is 1234 + 4321?"), wherever it runs: in process, or in an isolated worker each time."""

    def __init__(self) -> None:
        self.tools_of: dict[int, set[str]] = {}

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        built = super().build(spec, tools)
        self.tools_of[id(built)] = {t.name for t in spec.tools}
        return built

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if ("1234 + 4321" in json.dumps(call.inputs) and call.mode == "sync"
                and call.base_url is None and "search" in self.tools_of.get(id(agent), set())):
            os._exit(7)
        return super().run(agent, call, model)


class LeaksAThread(ReferenceBinding):
    """Its first build starts a thread that is not a daemon and never ends."""

    leaked: ClassVar[threading.Thread | None] = None

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        if LeaksAThread.leaked is None:
            LeaksAThread.leaked = threading.Thread(target=time.sleep, args=(3600,),
                                                   name="leaked-by-the-binding", daemon=False)
            LeaksAThread.leaked.start()
        return super().build(spec, tools)


class ConcurrentNonsense(ReferenceBinding):
    """Its run_concurrently returns something that is not an Outcome for every call."""

    def run_concurrently(
        self, calls: Sequence[tuple[object, CallRequest, ScriptedModel]]
    ) -> list[Outcome]:
        return [{"outputs": 5, "trajectory": "all good"} for _ in calls]  # type: ignore[misc]


class ThreadedNonsense(ReferenceBinding):
    """Its run returns something that is not an Outcome for the agents run on threads at once."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if any(isinstance(t, StepTurn) and t.thought.startswith("agent ") and t.thought.endswith(" adds")
               for t in model.unused):
            return {"outputs": 5}  # type: ignore[return-value]
        return super().run(agent, call, model)


# -- broken implementations (library bugs the suite must report) -------------------------------


class IgnoresTheCap(ReferenceBinding):
    """A ReAct that runs one step more than its cap allows."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return super().build(spec.model_copy(update={"max_steps": spec.max_steps + 1}), tools)

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if call.max_steps is not None:
            call = call.model_copy(update={"max_steps": call.max_steps + 1})
        return super().run(agent, call, model)


class NeverStops(ReferenceBinding):
    """A ReAct whose step cap never binds: a model that never gives its final answer keeps it
    going for ever."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return super().build(spec.model_copy(update={"max_steps": 10**9}), tools)


class NeverStopsThenHangs(NeverStops):
    """NeverStops, whose run never settles once the model refuses a call past its script: a library
    that leaves the error unhandled, as a harness reports a run that never settled."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        try:
            return super().run(agent, call, model)
        except BaseException:
            threading.Event().wait()  # never set: the suite's guard abandons this thread
            raise


class HangsOnTheFirstTry(ReferenceBinding):
    """Hangs in the call that ERR-3 needs to stop on repeated errors (its precondition, ERR-2's)."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if call.inputs.get("question") == "First try":
            time.sleep(30)
        return super().run(agent, call, model)


class StopsAStepEarly(ReferenceBinding):
    """A ReAct that raises on its cap, and whose cap of N asks the model for step N, then stops
    without acting on its reply (it counts the request before reading it)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        fewer = {"max_steps": max(spec.max_steps - 1, 0), "on_max_steps": "raise"}
        return super().build(spec.model_copy(update=fewer), tools)

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return _asks_once_more(super().run(agent, _one_step_less(call), model), model)

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return _asks_once_more(await super().arun(agent, _one_step_less(call), model), model)


def _one_step_less(call: CallRequest) -> CallRequest:
    if call.max_steps is None:
        return call
    return call.model_copy(update={"max_steps": max(call.max_steps - 1, 0)})


def _asks_once_more(outcome: Outcome, model: ScriptedModel) -> Outcome:
    """After a run the cap stopped, the request for the step it then drops."""
    error = outcome.error
    if outcome.stop_reason == "max_steps" or (error is not None and error.kind == "max-iterations"):
        with contextlib.suppress(UnexpectedModelCall):
            model.answer(LMCall(kind="step", adapter="chat", messages=[]))
    return outcome


class DropsTheAdapterOverride(ReferenceBinding):
    """A ReAct whose constructor accepts an adapter and ignores it."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return super().build(spec.model_copy(update={"adapter": None}), tools)


class ReordersTheTrajectory(ReferenceBinding):
    """A ReAct that hands back its steps newest first."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        outcome.trajectory.reverse()
        return outcome


class RunsUnknownTools(ReferenceBinding):
    """A ReAct that sends a call for an unknown tool to the first tool it has."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        built = super().build(spec, tools)
        if isinstance(built, _Agent) and tools:
            first = tools[0]

            def delete_everything(path: str) -> Any:
                return first(path=path)

            react = built.react
            react.tools["delete_everything"] = reference.Tool(delete_everything)
            built.react = reference.ReAct(
                react.signature, list(react.tools.values()), max_iters=react.max_iters,
                adapter=react.adapter, on_max_iters=react.on_max_iters,
                enable_ask_to_user=False,  # react.tools holds it already if it was enabled
            )
        return built


class LeaksTheAdapterOverride(ReferenceBinding):
    """A ReAct that installs its own adapter globally when it runs."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        if agent.react.adapter is not None:
            reference.configure(adapter=agent.react.adapter)
        return super().run(agent, call, model)


class ReplaysTheStream(ReferenceBinding):
    """A ReAct whose stream runs the whole loop first, then hands out every event at once."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        for event in outcome.events or []:
            event.model_calls = len(model.calls)
        return outcome


class BlocksTheEventLoop(ReferenceBinding):
    """A ReAct whose aforward is forward in disguise: concurrent runs go one after another."""

    def run_concurrently(
        self, calls: Sequence[tuple[object, CallRequest, ScriptedModel]]
    ) -> list[Outcome]:
        return [self.run(agent, call, model) for agent, call, model in calls]


class SharesTheAdapterAcrossRuns(ReferenceBinding):
    """A ReAct whose async runs install their adapter globally while they run."""

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, _Agent)
        reference.configure(adapter=agent.react.adapter)
        return await super().arun(agent, call, model)


class RunsBeforeApproval(ReferenceBinding):
    """A ReAct that runs interruptible tools without asking anyone."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        built = super().build(spec, tools)
        if isinstance(built, _Agent):
            for tool in built.react.tools.values():
                tool.interruptible = False
        return built


class _CapOnTheAgent(reference.ReAct):
    """Stores each call's step cap on the agent, where a concurrent call overwrites it."""

    async def aforward(self, *, max_iters: int | None = None, **inputs: Any) -> reference.Prediction:
        self.max_iters = max_iters or self.max_iters
        await asyncio.sleep(0)  # another call starts here, as it would at any real await
        return await super().aforward(**inputs)


class _BuildsAs(ReferenceBinding):
    """Builds each agent as `react_class`, a broken subclass of the reference's ReAct."""

    react_class: ClassVar[type[reference.ReAct]] = reference.ReAct

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        built = super().build(spec, tools)
        if isinstance(built, _Agent):
            react = built.react
            built.react = self.react_class(
                react.signature, list(react.tools.values()), max_iters=react.max_iters,
                adapter=react.adapter, on_max_iters=react.on_max_iters,
                enable_ask_to_user=False,  # react.tools holds it already if it was enabled
            )
        return built


class KeepsTheCallOnTheAgent(_BuildsAs):
    """A ReAct whose running call lives on the agent: concurrent calls of one agent share it."""

    react_class = _CapOnTheAgent


class KnowsItIgnoresTheCap(IgnoresTheCap):
    """Lists its LOOP-3 failures, one scenario with a reason of its own."""

    known_failures: ClassVar[Mapping[str, str]] = {
        "LOOP-3": "the whole requirement's reason",
        "The step cap stops a loop that never chooses finish": "this scenario's own reason",
    }


class ListsTheCapById(IgnoresTheCap):
    """Lists LOOP-3 by ID: the entry covers its failing scenarios, not the one it passes."""

    known_failures: ClassVar[Mapping[str, str]] = {"LOOP-3": "runs one step past its cap"}


class ListsAPassedRequirementById(ReferenceBinding):
    """Lists by ID a requirement whose every scenario the reference passes."""

    known_failures: ClassVar[Mapping[str, str]] = {"LOOP-3": "pretends the reference fails it"}


class _NoArgumentSchema(reference.ReAct):
    """Lists each tool by name and description only, as a prompt without argument schemas would."""

    def _step_signature(self) -> reference.Signature:
        signature = super()._step_signature()
        lines = [line.split(" Arguments: ")[0] for line in signature.instructions.splitlines()]
        return signature.extended(instructions="\n".join(lines))


class HidesTheArgumentSchema(_BuildsAs):
    """A ReAct whose step prompt never shows the tools' argument names and types."""

    react_class = _NoArgumentSchema


class NamesNoStatus(ReferenceBinding):
    """A ReAct whose exhausted retries raise an error naming only a future's memory address."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        if outcome.error is not None and outcome.error.type == "LMError":
            outcome.error = ErrorInfo(type="RetryError", message="RetryError[<Future at 0x7f3a5008e2d0>]")
        return outcome


class QuotesOnlyTheEndpoint(ReferenceBinding):
    """A model client whose error is the endpoint's own error message, without the HTTP status: it
    names the status only when the endpoint's body happens to (NET-1)."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        error = outcome.error
        if error is not None and error.type == "LMError":
            said = re.search(r"\((scripted [^)]*)\)", error.message)
            outcome.error = ErrorInfo(type="APIError", message=said.group(1) if said else "failed")
        return outcome


class AsksNoOneByDefault(ReferenceBinding):
    """A ReAct whose `ask_to_user` is off unless enabled (seed 004: on unless disabled)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        if spec.enable_ask_to_user is None:
            spec = spec.model_copy(update={"enable_ask_to_user": False})
        return super().build(spec, tools)


class ApprovesEveryToolByDefault(ReferenceBinding):
    """A ReAct whose approval is per agent: once one tool needs it, every plain tool waits too."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        built = super().build(spec, tools)
        if isinstance(built, _Agent) and any(t.interruptible for t in built.react.tools.values()):
            for name, tool in built.react.tools.items():
                if name != "ask_to_user":  # the built-in is shared by every agent: left alone
                    tool.interruptible = True
        return built


class _SkipsUnknownTools(reference.ReAct):
    """Records a step it cannot carry out as a blank step: the agent is never told what happened."""

    def _iterate(self, run: _Run) -> _Part:
        try:
            choice = yield _model(self.step, {**run.inputs, "trajectory": run.text})
        except reference.AdapterParseError:
            run.record(reference.Step(thought="", tool_name="", tool_args={}, observation=""))
            return None
        return (yield from self._act(run, choice["next_thought"], choice["next_tool_name"],
                                     choice["next_tool_args"]))


class SkipsUnknownTools(_BuildsAs):
    """A ReAct that skips a call of an unknown tool without any trace (LOOP-5)."""

    react_class = _SkipsUnknownTools


def _guess(value: str | Mapping[str, Any]) -> dict[str, Any]:
    """A "forgiving" parser: strict JSON first, then Python literals and trailing commas."""
    try:
        return reference.parse_tool_args(value)
    except reference.ToolArgsError:
        if not isinstance(value, str):
            raise
        text = re.sub(r",\s*([}\]])", r"\1", unfence(value))
        try:
            guess = json.loads(text)
        except ValueError:
            try:
                guess = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise reference.ToolArgsError("tool arguments are not valid JSON") from None
        if not isinstance(guess, dict):
            raise
        return guess


class GuessesMalformedArgs(ReferenceBinding):
    """A ReAct whose argument parser repairs Python literals and trailing commas, and runs the
    tool on its guess (ARGS-3)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        reference._adapters.parse_tool_args = _guess  # the library's own parser, process-wide
        return super().build(spec, tools)


class _RestartsTheBudget(reference.ReAct):
    """A resumed run gets a whole new budget, counted from the paused step."""

    def _resumed(self, response: str, interrupt: reference.HumanInTheLoopRequired) -> Any:
        paused = interrupt.state()
        if isinstance(paused, _Paused):
            paused.run.budget = len(paused.run.steps) + self.max_iters
        return super()._resumed(response, interrupt)


class RestartsTheBudgetOnResume(_BuildsAs):
    """A ReAct whose resume restarts the step budget (HITL-5)."""

    react_class = _RestartsTheBudget


class BacksOffConstantly(ReferenceBinding):
    """A model client that waits the same time before every retry: no exponential backoff (NET-1)."""

    def lm(self, model: ScriptedModel, base_url: str | None, client: httpx.Client) -> reference.LM:
        lm = super().lm(model, base_url, client)
        lm.sleep = lambda _: model.sleep(0.5)
        return lm


class _TriesOnceMore(reference.LM):
    def complete(self, messages: list[dict[str, str]]) -> str:
        try:
            return super().complete(messages)
        except reference.LMError as exc:
            if exc.attempts <= self.max_retries:  # not retried: not a transient failure
                raise
            retries, self.max_retries = self.max_retries, 0
            try:
                return super().complete(messages)
            finally:
                self.max_retries = retries


class TriesOnceMoreAtOnce(ReferenceBinding):
    """A model client that, its retries run out, tries once more without backing off (NET-1)."""

    def lm(self, model: ScriptedModel, base_url: str | None, client: httpx.Client) -> reference.LM:
        lm = super().lm(model, base_url, client)
        lm.__class__ = _TriesOnceMore
        return lm


class WaitsForEver(ReferenceBinding):
    """A model client without a timeout: a hung endpoint would hold the call for ever (NET-1)."""

    def lm(self, model: ScriptedModel, base_url: str | None, client: httpx.Client) -> reference.LM:
        lm = super().lm(model, base_url, client)
        lm.timeout = None  # type: ignore[assignment]
        return lm


class DropsFieldDescriptions(ReferenceBinding):
    """A ReAct whose signature classes lose their fields' descriptions (SIG-2)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        signature = spec.signature
        plain = {side: tuple(f.model_copy(update={"description": ""}) for f in getattr(signature, side))
                 for side in ("inputs", "outputs")}
        return super().build(spec.model_copy(update={"signature": signature.model_copy(update=plain)}),
                             tools)


class _QuotesTheSignature(reference.ReAct):
    """Refuses a call that lacks an input by quoting the whole signature: every field is named."""

    def _start(self, inputs: dict[str, Any], max_iters: int | None) -> _Run:
        if inputs.keys() != self.signature.inputs.keys():
            raise ValueError(f"the inputs do not match the signature {self.signature}")
        return super()._start(inputs, max_iters)


class NamesEveryInput(_BuildsAs):
    """A ReAct whose missing-input error names every input, not the missing one (SIG-6)."""

    react_class = _QuotesTheSignature


class _LooksUpTheInputs(reference.ReAct):
    """Checks no input: the first prompt's lookup of the missing one raises a bare KeyError."""

    def _start(self, inputs: dict[str, Any], max_iters: int | None) -> _Run:
        for name in self.signature.inputs:
            inputs[name]  # the lookup is the check
        return super()._start(inputs, max_iters)


class NamesTheInputBare(_BuildsAs):
    """A ReAct whose missing-input error is a KeyError: it names the field, and says nothing (SIG-6)."""

    react_class = _LooksUpTheInputs


class _ReportsTheUnexpectedInput(reference.ReAct):
    """Refuses an unexpected input first, naming only it: a misspelled input hides the missing one."""

    def _start(self, inputs: dict[str, Any], max_iters: int | None) -> _Run:
        unexpected = sorted(set(inputs) - set(self.signature.inputs))
        if unexpected:
            raise ValueError(f"unexpected input(s) {', '.join(unexpected)}")
        return super()._start(inputs, max_iters)


class NamesOnlyTheMisspelledInput(_BuildsAs):
    """A ReAct whose error for a misspelled input names the misspelling, not the input it lacks (SIG-6)."""

    react_class = _ReportsTheUnexpectedInput


class _CountsTheMissingInputs(reference.ReAct):
    """Names a missing input when one is missing, only counts them when several are."""

    def _start(self, inputs: dict[str, Any], max_iters: int | None) -> _Run:
        missing = [n for n in self.signature.inputs if n not in inputs]
        if len(missing) > 1:
            raise ValueError(f"{len(missing)} inputs are missing; pass every input of the signature")
        return super()._start(inputs, max_iters)


class CountsTheMissingInputs(_BuildsAs):
    """A ReAct whose error for a call lacking several inputs names none of them (SIG-6)."""

    react_class = _CountsTheMissingInputs


class ReadsArrowStringsAsText(ReferenceBinding):
    """A ReAct whose arrow-string parser accepts the type names and makes every field text (EXT-1)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        # the library's own table, process-wide
        reference._signature._TYPES = dict.fromkeys(reference._signature._TYPES, str)
        return super().build(spec, tools)


class _DropsMissingFields(reference.JSONAdapter):
    """Returns the fields the reply has; a missing one is found missing later, as a KeyError."""

    def parse(self, signature: reference.Signature, text: str) -> dict[str, Any]:
        data = json.loads(unfence(text))
        present = reference.Signature(inputs=dict.fromkeys(signature.inputs, str), outputs={
            n: f.annotation for n, f in signature.outputs.items() if n in data})
        return super().parse(present, text)


class _ChatDropsMissingFields(reference.ChatAdapter):
    def parse(self, signature: reference.Signature, text: str) -> dict[str, Any]:
        names = set(re.findall(r"\[\[ ## (\w+) ## \]\]", text))
        present = reference.Signature(inputs=dict.fromkeys(signature.inputs, str), outputs={
            n: f.annotation for n, f in signature.outputs.items() if n in names})
        return super().parse(present, text)


class CrashesOnAReplyWithoutArgs(ReferenceBinding):
    """Adapters that skip a missing output field: the loop then crashes on the step reply
    without next_tool_args (ARGS-3: malformed never crashes)."""

    def configure(self, *, adapter: AdapterName | None) -> None:
        broken = {"chat": _ChatDropsMissingFields, "json": _DropsMissingFields}
        reference.configure(adapter=broken[adapter]() if adapter else None)

    def global_adapter(self) -> AdapterName | None:
        current = reference.settings().adapter
        return next((n for n, cls in _ADAPTERS.items() if isinstance(current, cls)), None)


def _crashing_unfence(text: str) -> str:
    if text.strip().startswith("```"):
        raise TypeError("can only concatenate str (not \"NoneType\") to str")
    return unfence(text)


class CrashesOnAFencedReply(ReferenceBinding):
    """A ReAct whose fence stripping raises a TypeError on args in a code fence (ARGS-3)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        reference._args.unfence = _crashing_unfence  # type: ignore[attr-defined]
        reference._adapters.unfence = _crashing_unfence
        return super().build(spec, tools)


class IgnoresRetryAfter(ReferenceBinding):
    """A model client that backs off by its own schedule, whatever Retry-After asks (NET-1)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        reference._lm._retry_after = lambda response, default: default  # type: ignore[attr-defined]
        return super().build(spec, tools)


class ShowsAPlaceholderForStructuredResults(ReferenceBinding):
    """A ReAct that records a tool's list or object result as a placeholder naming its type: the
    model never sees what the tool returned (LOOP-1)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        reference.react._observation = (  # type: ignore[attr-defined]
            lambda result: result if isinstance(result, str | int | float | None)
            else f"<{type(result).__name__}>")
        return super().build(spec, tools)


class LosesThePartialAnswer(ReferenceBinding):
    """A MaxIterationsError whose partial_final_answer is always None, though the agent wrote
    thoughts (EXH-3: None vs present)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        exhausted = reference.react._exhausted

        def without_partial(run: _Run) -> reference.MaxIterationsError:
            error = exhausted(run)
            error.partial_final_answer = None
            return error

        reference.react._exhausted = without_partial  # type: ignore[attr-defined]
        return super().build(spec, tools)


class RefusesWholeFloats(ReferenceBinding):
    """Adapters that refuse the JSON number 2 for a float output, wanting 2.0 (EXT-1: JSON has one
    number type)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        coerce = reference._adapters._coerce

        def strict(field: Any, value: Any, reply: str) -> Any:
            if field.annotation is float and type(value) is int:
                raise reference.AdapterParseError(f"{value!r} is not a float", field=field.name,
                                                  reply=reply)
            return coerce(field, value, reply)

        reference._adapters._coerce = strict  # type: ignore[attr-defined]
        return super().build(spec, tools)


class _TrustsDecodedArgs(reference.JSONAdapter):
    """Takes next_tool_args as the JSON object the reply decoded to, without the size limit the
    text parser applies."""

    def parse(self, signature: reference.Signature, text: str) -> dict[str, Any]:
        data = json.loads(unfence(text))
        args = data.get("next_tool_args") if isinstance(data, dict) else None
        if "next_tool_args" not in signature.outputs or not isinstance(args, dict):
            return super().parse(signature, text)
        rest = reference.Signature(inputs=dict.fromkeys(signature.inputs, str), outputs={
            n: f.annotation for n, f in signature.outputs.items() if n != "next_tool_args"})
        return {**super().parse(rest, text), "next_tool_args": args}


class _WithABrokenJSONAdapter(ReferenceBinding):
    """Sets `json_adapter`, a broken JSONAdapter, where a scenario asks for the JSON adapter."""

    json_adapter: ClassVar[type[reference.JSONAdapter]] = reference.JSONAdapter

    def configure(self, *, adapter: AdapterName | None) -> None:
        reference.configure(adapter=(self.json_adapter() if adapter == "json" else
                                     _ADAPTERS[adapter]() if adapter else None))

    def global_adapter(self) -> AdapterName | None:
        current = reference.settings().adapter
        return next((n for n, cls in _ADAPTERS.items() if isinstance(current, cls)), None)


class SkipsTheLimitsUnderTheJSONAdapter(_WithABrokenJSONAdapter):
    """A JSON adapter that hands decoded tool args over unchecked: megabytes reach the tool
    (ARGS-5)."""

    json_adapter = _TrustsDecodedArgs


def _stops_at_an_escape(text: str, limit: int) -> bool:
    """The depth guard, except that the first escape ends the scan: the rest is taken for string
    contents."""
    return too_deep(text.split("\\", 1)[0], limit)


def _resets_on_each_close(text: str, limit: int) -> bool:
    """The depth guard, except that a closing bracket resets the count to one level."""
    first, *rest = re.split(r"[\]}]", text)
    return too_deep(first, limit) or any(too_deep(part, limit - 1) for part in rest)


class _MisjudgesTheDepth(ReferenceBinding):
    """Builds with a broken depth guard (`guard`) in the reference's parsers: deep args it misses
    reach the JSON parser, which recurses until it crashes (ARGS-5)."""

    guard: ClassVar[Any] = None

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        reference._args.too_deep = self.guard  # type: ignore[attr-defined]
        reference._adapters.too_deep = self.guard
        return super().build(spec, tools)


class LosesTrackOfEscapes(_MisjudgesTheDepth):
    """A depth guard that stops at the first escaped character."""

    guard = staticmethod(_stops_at_an_escape)


class ForgetsTheDepthOnEachClose(_MisjudgesTheDepth):
    """A depth guard that counts one level after every closing bracket: arrays nested beside
    empty siblings pass it."""

    guard = staticmethod(_resets_on_each_close)


class _RaisesOnArgsThatAreNotAnObject(reference.JSONAdapter):
    """Raises a plain ValueError, not the adapter's parse error, for next_tool_args that are not
    an object: the loop, which catches parse errors only, crashes."""

    def parse(self, signature: reference.Signature, text: str) -> dict[str, Any]:
        try:
            return super().parse(signature, text)
        except reference.AdapterParseError as exc:
            if exc.field == "next_tool_args":
                raise ValueError(str(exc)) from None
            raise


class CrashesOnArgsThatAreNotAnObject(_WithABrokenJSONAdapter):
    """A JSON adapter whose error for args that are not an object escapes the loop (ARGS-2)."""

    json_adapter = _RaisesOnArgsThatAreNotAnObject


class ShowsOnlyTextInputs(ReferenceBinding):
    """Adapters that write an input that is not a string as nothing: the step prompt lacks it
    (STEP-3)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        reference._adapters._text = (  # type: ignore[attr-defined]
            lambda value: value if isinstance(value, str) else "")
        return super().build(spec, tools)


class KeepsNumbersInTextOutputs(ReferenceBinding):
    """Adapters that keep a JSON number the model wrote for a text output as a number (EXT-1:
    typed as declared)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        coerce = reference._adapters._coerce
        reference._adapters._coerce = (  # type: ignore[attr-defined]
            lambda field, value, reply: value if field.annotation is str else coerce(field, value, reply))
        return super().build(spec, tools)


class _OnUnparsedNumbers(ReferenceBinding):
    """Adapters that, where a number output does not parse, return `instead(value)`: what a lenient
    library does with `count: four`."""

    @staticmethod
    def instead(field: Any, value: Any) -> Any:
        raise NotImplementedError

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        adapters = reference._adapters
        instead = self.instead

        def lenient(parse: Any) -> Any:
            def parsed(field: Any, value: Any, reply: str) -> Any:
                try:
                    return parse(field, value, reply)
                except reference.AdapterParseError:
                    if field.annotation not in (int, float):
                        raise
                    return instead(field, value)
            return parsed

        adapters._decode = lenient(adapters._decode)  # type: ignore[attr-defined]
        adapters._coerce = lenient(adapters._coerce)  # type: ignore[attr-defined]
        return super().build(spec, tools)


class KeepsUnparsedNumbers(_OnUnparsedNumbers):
    """Keeps the text the model wrote for a number output that does not parse (EXT-1: udspy)."""

    @staticmethod
    def instead(field: Any, value: Any) -> Any:
        return value


class GuessesUnparsedNumbers(_OnUnparsedNumbers):
    """Reads a number output that does not parse as 0 (EXT-1: dspy.ts's `parseFloat(value) || 0`)."""

    @staticmethod
    def instead(field: Any, value: Any) -> Any:
        return 0


class FailsOnUnparsedNumbersWithoutSaying(_OnUnparsedNumbers):
    """Fails on a number output that does not parse with an error that does not name the field, as
    the reference's mutants whose AdapterParseError constructor raises TypeError (EXT-1)."""

    @staticmethod
    def instead(field: Any, value: Any) -> Any:
        raise TypeError("__init__() missing 1 required keyword-only argument: 'reply'")


class _OnADeeplyNestedOutput(ReferenceBinding):
    """Adapters that, where a typed output nests deeper than the reference's limit, return
    `instead()` rather than refusing it naming the field."""

    @staticmethod
    def instead() -> Any:
        raise NotImplementedError

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        adapters, instead = reference._adapters, self.instead
        decode = adapters._decode

        def decoded(field: Any, text: str, reply: str) -> Any:
            return instead() if too_deep(text, MAX_DEPTH) else decode(field, text, reply)

        adapters._decode = decoded  # type: ignore[attr-defined]
        return super().build(spec, tools)


class CrashesOnADeeplyNestedOutput(_OnADeeplyNestedOutput):
    """Crashes on a list output nested 100 levels deep, as a recursive parser does (EXT-1)."""

    @staticmethod
    def instead() -> Any:
        raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")


class EmptiesADeeplyNestedOutput(_OnADeeplyNestedOutput):
    """Hands over an empty list for a list output nested 100 levels deep (EXT-1)."""

    @staticmethod
    def instead() -> Any:
        return []


class _LosesArgsAtScale(reference.ReAct):
    """Passes a tool's `data` argument on empty from its 100th tool call in the process on: a
    failure that only fuzzing at scale finds."""

    tool_calls: ClassVar[int] = 0

    def _act(self, run: _Run, thought: str, name: str, args: dict[str, Any],
             approved: bool = False) -> _Part:
        if name != "finish":
            _LosesArgsAtScale.tool_calls += 1
            if _LosesArgsAtScale.tool_calls >= 100 and args.get("data"):
                args = {**args, "data": {}}
        return (yield from super()._act(run, thought, name, args, approved))


class LosesArgsAtScale(_BuildsAs):
    """Lists the failure only fuzzing at scale finds as a fuzz known failure, by scenario name."""

    react_class = _LosesArgsAtScale
    fuzz_known_failures: ClassVar[Mapping[str, str]] = {
        "Any JSON object the model writes reaches the tool intact": "data is lost after 100 calls",
    }


class ListsAFuzzFailureItPasses(ReferenceBinding):
    """Lists as a fuzz known failure a requirement the reference passes at any scale."""

    fuzz_known_failures: ClassVar[Mapping[str, str]] = {"ARGS-1": "pretends fuzzing finds a bug"}


class SpeaksInSurrogates(ReferenceBinding):
    """Lone surrogates (what `json.loads` or a JavaScript string cut inside an emoji makes) in
    everything it says: its name, version, reasons, an escaped exception and an answer."""

    name = "surrogate\ud800"
    not_claimed: ClassVar[Mapping[str, str]] = {
        **ReferenceBinding.not_claimed, "parallel-tool-calls": "lone \udfff surrogate"}

    @property
    def version(self) -> str:
        return "1.0\ud800"

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if "7" in str(call.inputs):
            raise ValueError("cut emoji \ud83d")
        outcome = super().run(agent, call, model)
        steps = [step.model_copy(update={"thought": f"{step.thought}\udc00"}) for step in outcome.trajectory]
        return outcome.model_copy(update={"trajectory": steps})


class SpeaksInCommands(ReferenceBinding):
    """Workflow commands, ANSI escapes and Markdown in everything it says: what a CI runner, a
    terminal or a Markdown reader would obey if the suite relayed it raw."""

    name = "cmd\n::add-mask::passed\n# Forged | heading"
    not_claimed: ClassVar[Mapping[str, str]] = {
        **ReferenceBinding.not_claimed,
        "parallel-tool-calls": "no\n::stop-commands::halt\n\x1b[31mred\x1b[0m | split | row\n## Forged"}
    known_failures: ClassVar[Mapping[str, str]] = {
        "LOOP-1": "it errs\n::add-mask::known\n::stop-commands::halt",
        "EXT-1": "it fails\n::add-mask::passes\n##[stop-commands]halt",
        "Every step prompt shows a tool's argument schema, not only its description":
            "it loses\n::add-mask::known\n::error::forged"}

    @property
    def version(self) -> str:
        return "1.0\r::add-mask::failed\x1b]0;title\x07"

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if "7" in str(call.inputs):
            raise ValueError("oops\n::stop-commands::halt\n##[add-mask]x\n# Forged | heading | row")
        if "How far" in str(call.inputs) or "Pay Ann" in str(call.inputs):  # the library's words
            return Outcome(error=ErrorInfo(
                type="RuntimeError", message="lost\n::add-mask::failure\n::error::forged\n# Forged"))
        return super().run(agent, call, model)


class _ForgetfulPending(set[str]):
    """The ids of unanswered pauses, except that adding a new one brings back every id ever added."""

    def __init__(self) -> None:
        super().__init__()
        self.ever: set[str] = set()

    def add(self, element: str) -> None:
        self.ever.add(element)
        self.update(self.ever)


class _ForgetsAnsweredPauses(reference.ReAct):
    """Forgets which pauses were answered whenever it pauses again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending = _ForgetfulPending()


class ForgetsAnsweredPausesOnANewPause(_BuildsAs):
    """A ReAct whose resumed run, once it pauses again, lets the first pause be answered again (HITL-6)."""

    react_class = _ForgetsAnsweredPauses


class _TakesOverAnyPause(reference.ReAct):
    """Resumes a pause another agent made as if it were its own."""

    def _resumed(self, response: str, interrupt: reference.HumanInTheLoopRequired) -> Any:
        paused = interrupt.state()
        agent = getattr(paused, "agent", self._key)
        if agent != self._key:
            self._key = agent
            self._pending.add(interrupt.interrupt_id)
        return super()._resumed(response, interrupt)


class ResumesAnotherAgentsPause(_BuildsAs):
    """A ReAct that takes a person's answer to another agent's pause and runs the call (HITL-6)."""

    react_class = _TakesOverAnyPause


class _CrashesOnQueryC(reference.ReAct):
    """Lets a tool's error escape on one call only: args `{"query": "c"}`, which no ERR-1 scenario sends."""

    def _act(self, run: Any, thought: str, name: str, args: dict[str, Any], approved: bool = False) -> Any:
        if args == {"query": "c"}:
            raise RuntimeError("the disk is on fire")
        return super()._act(run, thought, name, args, approved)


class BlockedByAPassedRequirement(_BuildsAs):
    """Ends a run with a tool's error only where a TRJ-3 scenario calls the raising tool a third
    time: TRJ-3 is blocked by ERR-1, which passed, so that scenario is a failure of its own."""

    react_class = _CrashesOnQueryC


class _NeverResumes(reference.ReAct):
    """Pauses, but refuses every resume, its own pauses' included."""

    def _resumed(self, response: str, interrupt: reference.HumanInTheLoopRequired) -> Any:
        raise NotImplementedError("resume is not implemented")


class CannotResume(_BuildsAs):
    """A ReAct that cannot resume at all: HITL-4 fails, and its refusal of another agent's pause
    proves nothing, so that HITL-6 scenario is blocked by HITL-4 rather than passed."""

    react_class = _NeverResumes


class _MarksThePause(reference.ReAct):
    """Marks an answered pause on the interrupt itself, not on the agent: a copy is unmarked."""

    def _resumed(self, response: str, interrupt: reference.HumanInTheLoopRequired) -> Any:
        if getattr(interrupt, "answered", False):
            raise RuntimeError("this pause was answered already")
        interrupt.answered = True
        self._pending.add(interrupt.interrupt_id)
        return super()._resumed(response, interrupt)


class RunsAReplayedPauseAgain(_BuildsAs):
    """A ReAct that refuses a pause answered twice only on the same object: its serialised copy
    runs the approved call again (HITL-8)."""

    react_class = _MarksThePause


class _EditFallsBack(reference.ReAct):
    """An edit naming a tool the agent lacks runs the pending call's tool with the edit's args."""

    def _answer(self, run: _Run, paused: _Paused, reply: Any) -> _Part:
        if isinstance(reply, reference.ToolCall) and reply.name not in self.tools:
            reply = reference.ToolCall(name=paused.name, args=reply.args)
        return (yield from super()._answer(run, paused, reply))


class RunsTheCallOnAnEditOfNoTool(_BuildsAs):
    """A ReAct that, edited to call a tool it lacks, runs the pending call's tool instead (HITL-7)."""

    react_class = _EditFallsBack


class _SharesThePausedSteps(reference.ReAct):
    """Hands out the paused run's own steps in the pause's context, not a copy."""

    def _act(self, run: _Run, thought: str, name: str, args: dict[str, Any],
             approved: bool = False) -> _Part:
        try:
            return (yield from super()._act(run, thought, name, args, approved))
        except reference.HumanInTheLoopRequired as exc:
            exc.context["trajectory"] = run.steps
            raise


class SharesThePausedTrajectory(_BuildsAs):
    """A ReAct whose pause hands the caller the paused run's own trajectory (TRJ-2)."""

    react_class = _SharesThePausedSteps


class _RejectsSilently(reference.ReAct):
    """Records a rejected call as a step with an empty observation: the agent is never told."""

    def _answer(self, run: _Run, paused: _Paused, reply: Any) -> _Part:
        if paused.confirm and reply == "no":
            run.record(reference.Step(thought=paused.thought, tool_name=paused.name,
                                      tool_args=paused.args, observation=""))
            return None
        return (yield from super()._answer(run, paused, reply))


class RejectsWithoutTellingTheAgent(_BuildsAs):
    """A ReAct that, when the person rejects a call, tells the agent nothing (HITL-4)."""

    react_class = _RejectsSilently
class _CrashesOnAnUnparsableStep(reference.ReAct):
    def _iterate(self, run: _Run) -> _Part:
        choice = yield _model(self.step, {**run.inputs, "trajectory": run.text})  # a parse error escapes
        return (yield from self._act(run, choice["next_thought"], choice["next_tool_name"],
                                     choice["next_tool_args"]))


class CrashesOnAnUnparsableStep(_BuildsAs):
    """A ReAct that lets the adapter's parse error on a step reply end the run (STEP-4)."""

    react_class = _CrashesOnAnUnparsableStep


class _MappingChat(reference.ChatAdapter):
    def system(self, signature: reference.Signature) -> str:
        return super().system(signature).replace("a JSON object", "a mapping")


class _SaysNothingOfJSON(reference.ReAct):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.step.adapter = self.step.adapter or _MappingChat()

    def _step_signature(self) -> reference.Signature:
        signature = super()._step_signature()
        lines = [line for line in signature.instructions.splitlines() if "JSON" not in line]
        return signature.extended(instructions="\n".join(lines))


class SaysNothingOfJSON(_BuildsAs):
    """A ReAct whose step prompt never says the tool arguments are a JSON object (STEP-2)."""

    react_class = _SaysNothingOfJSON


class SaysNothingOfTheSignature(ReferenceBinding):
    """A ReAct that refuses a malformed signature with a bare 'invalid' (SIG-5)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        built = super().build(spec, tools)
        if isinstance(built, ErrorInfo):
            return built.model_copy(update={"message": "invalid"})
        return built


class HasNoArrowStrings(ReferenceBinding):
    """A ReAct whose one signature form is a class (DSPy.rb's): an arrow string a scenario judges
    is handed over as it is, and refused; a default string form is handed over as its class. SIG-1
    is listed, as such a harness lists it: a failing smoke scenario would mark the binding broken."""

    known_failures: ClassVar[Mapping[str, str]] = {"SIG-1": "its one signature form is a class"}

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        signature = spec.signature
        if signature.form == "string" and signature.form_judged:
            return ErrorInfo(type="TypeError", message=f"expected a class, got {signature.arrow()!r}")
        if signature.form == "string":
            spec = spec.model_copy(update={"signature": signature.model_copy(update={"form": "class"})})
        return super().build(spec, tools)


class RepeatsTheLastStreamStep(ReferenceBinding):
    """A ReAct whose stream, on the step cap, emits the last step a second time (STREAM-1); the
    streamed per-call cap (LOOP-4) is then blocked by STREAM-1, not failed."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        events = outcome.events
        if events and outcome.stop_reason == "max_steps":
            steps = [e for e in events if e.kind == "step"]
            events.insert(len(events) - 1, steps[-1].model_copy())
        return outcome


class AssertsInRun(ReferenceBinding):
    """An `assert` of its own fails in its run, as the bundled bindings' `assert isinstance(...)`
    would on an agent they did not build."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        assert isinstance(agent, int), "not the agent this binding built"
        return super().run(agent, call, model)


class ConstructsAnInvalidOutcome(ReferenceBinding):
    """Returns an Outcome that skipped validation (`model_construct`), its outputs not a mapping."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return Outcome.model_construct(outputs=5, trajectory="all good")


def _note(variable: str, what: str) -> None:
    """Append a line to the file the environment variable names (the test reads it afterwards)."""
    with open(os.environ[variable], "a", encoding="utf-8") as out:
        out.write(f"{what}\n")


class CrashesOnTheThirdFuzzedCall(ReferenceBinding):
    """Its process ends on the third fuzzed call it runs: a crash on one input that a restarted
    worker does not repeat when the input is replayed."""

    fuzzed: ClassVar[int] = 0

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if call.inputs.get("question") == "Record this":
            CrashesOnTheThirdFuzzedCall.fuzzed += 1
            if CrashesOnTheThirdFuzzedCall.fuzzed == 3:
                sys.stderr.write("segfault in the native parser\n")
                sys.stderr.flush()
                os._exit(11)
        return super().run(agent, call, model)


class RaisesOnTheThirdFuzzedCall(ReferenceBinding):
    """Its own `assert` fails on the third fuzzed call it runs, and never again: a binding fault on
    one input that a replay of that input does not repeat."""

    fuzzed: ClassVar[int] = 0

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if call.inputs.get("question") == "Record this":
            RaisesOnTheThirdFuzzedCall.fuzzed += 1
            assert RaisesOnTheThirdFuzzedCall.fuzzed != 3, "the binding lost track of its agent"
        return super().run(agent, call, model)


class HangsOnFuzzedData(ReferenceBinding):
    """Hangs on every fuzzed call whose `data` is not empty, noting each hang in the file
    $HANGS_FILE names."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if call.inputs.get("question") == "Record this":
            turn = model.unused[0] if model.unused else None
            if isinstance(turn, StepTurn) and isinstance(turn.tool_args, dict) and turn.tool_args.get("data"):
                _note("HANGS_FILE", "hang")
                time.sleep(3600)
        return super().run(agent, call, model)


class SpeaksAtLength(KnowsItIgnoresTheCap):
    """Megabytes in everything it says: a 20 MB name, a 5 MB reason for a capability it lacks, and
    for its known failures."""

    name = "n" * 20_000_000
    not_claimed: ClassVar[Mapping[str, str]] = {
        **ReferenceBinding.not_claimed, "parallel-tool-calls": "r" * 5_000_000}
    known_failures: ClassVar[Mapping[str, str]] = {"LOOP-3": "k" * 5_000_000}


class CrashesAtLengthOnARaisingTool(ReferenceBinding):
    """Whenever a tool raised, the run 'crashes' with a 1 MB message: the scenarios fail or are
    blocked on it, each holding a megabyte."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        if any("Error" in str(step.observation) for step in outcome.trajectory):
            return Outcome(error=ErrorInfo(type="Boom", message="q" * 1_000_000),
                           trajectory=outcome.trajectory)
        return outcome


class PrintsAtLength(ReferenceBinding):
    """Prints a megabyte to stdout and to stderr, and logs one, in every run (a library's debug
    dump), with an ANSI escape and a workflow command."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        print("\x1b[31m::add-mask::out\n" + "o" * 1_000_000)
        sys.stderr.write("e" * 1_000_000 + "\n")
        logging.getLogger("a.library").warning("l" * 1_000_000)
        return super().run(agent, call, model)


class LeavesAnAsyncAuxiliaryCallUnnamed(ReferenceBinding):
    """Its async runs make an auxiliary call that `auxiliary_calls` does not name (its sync runs
    make none): a binding bug in the concurrent runs only."""

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        model.auxiliary("tally", LMCall(kind="auxiliary", adapter="other",
                                        messages=[{"role": "user", "content": "Count the runs."}]))
        return await super().arun(agent, call, model)


class PointsTheLibraryAtAnUnservedAPI(ReferenceBinding):
    """Its library asks the legacy completions API (`/completions`), which the seam does not serve;
    the library then fails on the refusal (as one reading a chat-completion body would): the
    binding's fault."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        from conformance import server

        with httpx.Client(transport=httpx.MockTransport(server.handler(model))) as client:
            client.post(f"{server.IN_MEMORY_URL}/completions", json={"prompt": "?"})
        return Outcome(error=ErrorInfo(type="TypeError", message="'NoneType' object is not iterable"))


# -- causes another requirement judges (attribution: test_verdicts.py, the block at its end) -----


class AsksAStepLate(ReferenceBinding):
    """A ReAct whose cap of N runs N steps, then asks the model for step N + 1 and drops the
    reply (Genkit's `maxTurns: N`): LOOP-3's defect, which blocks the scenarios of other
    requirements that stop on the cap."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return _asks_once_more(super().run(agent, call, model), model)

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return _asks_once_more(await super().arun(agent, call, model), model)


def _args_as_text(outcome: Outcome) -> Outcome:
    """`outcome` with each step's args recorded as their JSON text, in its trajectory and in its
    error's history."""
    def text(step: Any) -> Any:
        if isinstance(step, Step) and isinstance(step.tool_args, dict):
            return step.model_copy(update={"tool_args": json.dumps(step.tool_args)})
        if isinstance(step, dict) and isinstance(step.get("tool_args"), dict):
            return {**step, "tool_args": json.dumps(step["tool_args"])}
        return step

    error = outcome.error
    if error is not None and isinstance(error.fields.get("history"), list):
        history = [text(s) for s in error.fields["history"]]
        error = error.model_copy(update={"fields": {**error.fields, "history": history}})
    return outcome.model_copy(update={"trajectory": [text(s) for s in outcome.trajectory],
                                      "error": error})


class RecordsArgsAsText(ReferenceBinding):
    """Its trajectory records each step's args as their JSON text, not the object (dspy.ts's text
    protocol): TRJ-1's defect, which blocks the trajectory checks of other requirements."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return _args_as_text(super().run(agent, call, model))

    async def arun(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        return _args_as_text(await super().arun(agent, call, model))

    def resume(self, agent: object, request: ResumeRequest, model: ScriptedModel) -> Outcome:
        return _args_as_text(super().resume(agent, request, model))
_Parse = Any  # an adapter's parse method: (adapter, signature, text) -> the output values


def _reads_missing_args_as_empty(parse: _Parse) -> _Parse:
    """`parse`, but a step reply that lacks next_tool_args gets `{}` for it."""

    def guessing(adapter: reference.Adapter, signature: reference.Signature, text: str) -> dict[str, Any]:
        try:
            return dict(parse(adapter, signature, text))
        except reference.AdapterParseError as exc:
            if exc.field != "next_tool_args" or "missing from the reply" not in str(exc):
                raise
            rest = reference.Signature(inputs=dict.fromkeys(signature.inputs, str), outputs={
                n: f.annotation for n, f in signature.outputs.items() if n != "next_tool_args"})
            return {**parse(adapter, rest, text), "next_tool_args": {}}

    guessing.guesses = True  # type: ignore[attr-defined]
    return guessing


class ReadsAMissingArgsFieldAsEmpty(ReferenceBinding):
    """Adapters that read a step reply without next_tool_args as having `{}`: a tool that takes no
    arguments runs on that guess, and the agent is neither asked again nor told (STEP-4)."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        for adapter in (reference.ChatAdapter, reference.JSONAdapter):  # the library's own, process-wide
            if not getattr(adapter.parse, "guesses", False):
                adapter.parse = _reads_missing_args_as_empty(adapter.parse)  # type: ignore[method-assign]
        return super().build(spec, tools)


class _ForgetsTheCallsCap(reference.ReAct):
    """A resumed run keeps its steps, but its budget becomes the agent's cap, not the call's."""

    def _resumed(self, response: str, interrupt: reference.HumanInTheLoopRequired) -> Any:
        paused = interrupt.state()
        if isinstance(paused, _Paused):
            paused.run.budget = self.max_iters
        return super()._resumed(response, interrupt)


class ForgetsTheCallsCapOnResume(_BuildsAs):
    """A ReAct whose resume takes the agent's step cap in place of the one given to the call
    (HITL-5)."""

    react_class = _ForgetsTheCallsCap


class _RefusesABadEditBlankly(reference.ReAct):
    """Refuses an edit whose args break the tool's schema, with an error that names no field."""

    def _answer(self, run: _Run, paused: _Paused, reply: Any) -> _Part:
        if isinstance(reply, reference.ToolCall) and reply.name in self.tools:
            try:
                self.tools[reply.name].validate(reply.args)
            except reference.ToolArgsError:
                raise ValueError("the edit was refused") from None
        return (yield from super()._answer(run, paused, reply))


class RefusesABadEditWithoutSayingWhy(_BuildsAs):
    """A ReAct that refuses an edit against the tool's schema without naming the field (HITL-7):
    its resumes work (HITL-4 passes), so the refusal is judged, not blocked."""

    react_class = _RefusesABadEditBlankly


class MutatesNothing(ReferenceBinding):
    """Its `mutate_last_result` changes nothing and says so (a binding written before the
    contract covered pauses): every snapshot scenario is `errored`, never passed vacuously."""

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        return None


class ReadsTheModelsLog(ReferenceBinding):
    """A seam that reads the model's log as the bundled bindings' endpoints do (`server.handler`
    numbers each reply, and so its tool-call ids, by `len(model.calls)`) and asks the model whether
    its script holds a fault before the run (pydantic-ai's and google-adk's): it asks for step
    turns until one is not a step, and reports each reply's number as a step's call id."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        return "an agent of no library"

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        fault = model.holds_a_fault()
        steps: list[Step] = []
        while True:
            try:
                turn = model.answer(LMCall(kind="step", adapter="native", messages=[]))
            except UnexpectedModelCall:
                break
            if not isinstance(turn, StepTurn):
                break
            steps.append(Step(tool_name=turn.tool_name, tool_args={}, observation=None,
                              call_id=f"call_{len(model.calls)}"))
        return Outcome(trajectory=steps, fallback=f"fault scripted: {fault}",
                       iterations=len(model.calls))


class ChangesDirectory(ReferenceBinding):
    """Changes the working directory in `build`, as a library that finds its files by it might:
    the per-scenario report rewrites once followed it into the library's folder."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        os.makedirs("library", exist_ok=True)
        os.chdir("library")
        return super().build(spec, tools)


class BreaksTheMarkdownFolder(ReferenceBinding):
    """Puts a file where the Markdown report's folder was, once the run has started: that report
    can no longer be written, and must not take the others with it."""

    def build(self, spec: AgentSpec, tools: Sequence[SuiteTool]) -> object | ErrorInfo:
        if os.path.isdir("md"):
            shutil.rmtree("md")
            with open("md", "w") as blocker:
                blocker.write("not a folder")
        return super().build(spec, tools)


class RunsOutOfResources(ReferenceBinding):
    """Runs out of memory, of stack and of file descriptors in the scenarios of LOOP-1, as a library
    that allocates without bound does (raised, not exhausted: the test machine keeps its memory)."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        if "7" in str(call.inputs):
            raise MemoryError()
        if "8" in str(call.inputs):
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
        return super().run(agent, call, model)


class HandsOutAnImmutableTrajectory(ReferenceBinding):
    """As a library whose result is an immutable sequence (a tuple, Java's unmodifiable list): the
    caller's mutation raises, and the binding says so instead of changing nothing."""

    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        held = tuple(agent.last.trajectory)  # what such a library hands the caller
        try:
            held[0] = marker  # type: ignore[index]
        except TypeError as exc:
            return [f"refused: prediction.trajectory (a tuple of {len(held)} steps): {exc}"]
        return ["prediction.trajectory"]


class SaysRefusedWithoutSayingWhat(ReferenceBinding):
    def mutate_last_result(self, agent: object, marker: str) -> list[str] | None:
        return ["refused: "]


class JoinsEveryThoughtIntoTheAnswer(ReferenceBinding):
    """As a library whose answer joins the text beside every tool call with the final output
    ('first sumsecond sumpartial' for 'partial'): LOOP-7's cause, which EXT-2, a MUST, may not be
    blocked by, and does not judge."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        if outcome.outputs is None or "answer" not in outcome.outputs:
            return outcome
        said = "".join(str(step.thought or "") for step in outcome.trajectory)
        return outcome.model_copy(update={"outputs": {**outcome.outputs,
                                                      "answer": f"{said}{outcome.outputs['answer']}"}})


class AnswersSomethingElseOnTheCap(ReferenceBinding):
    """Its answer is not what the extraction call produced: EXT-2's own failure."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        if outcome.outputs is None or "answer" not in outcome.outputs:
            return outcome
        return outcome.model_copy(update={"outputs": {**outcome.outputs, "answer": "sumpartial later"}})


class _OutcomeTooBigToRead(Outcome):
    """An outcome the suite runs out of memory reading, as one of gigabytes would."""

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise MemoryError()


class _OutcomeTooDeepToRead(Outcome):
    """An outcome the suite runs out of stack reading, as one nested past the limit would."""

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RecursionError("maximum recursion depth exceeded")


class ReturnsWhatRunsOutOfResourcesToRead(ReferenceBinding):
    """Returns, in two scenarios, an outcome that the suite runs out of memory reading (after the
    binding call, in the suite's own step) or of stack (a result nested past the limit)."""

    def run(self, agent: object, call: CallRequest, model: ScriptedModel) -> Outcome:
        outcome = super().run(agent, call, model)
        if "7" in str(call.inputs):
            return _OutcomeTooBigToRead.model_construct(**dict(outcome))
        if "How far" in str(call.inputs):
            return _OutcomeTooDeepToRead.model_construct(**dict(outcome))
        return outcome
