"""Broken variants of the native loop, each with a bug native loops have been reported to have;
the suite must catch each on the right requirement (tests/suite/test_native.py)."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from tests.native import loop
from tests.native.approvals import ApprovingNativeBinding
from tests.native.binding import NativeBinding


class _CrashingLoop(loop.Agent):
    def execute(self, call: loop.ToolCallRequest) -> tuple[str, Any, Exception | None]:
        tool = self.tools.get(call.name)
        if tool is not None:
            args = self.parse_args(tool, call.arguments)
            return str(tool.function(**args)), args, None  # a raising tool crashes the run
        return super().execute(call)


class CrashesOnToolError(NativeBinding):
    """A tool's exception escapes the loop (ERR-1)."""

    loop_class: ClassVar[type[loop.Agent]] = _CrashingLoop


class _LastStepLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        cap = self.max_steps if max_steps is None else max_steps
        result = super().run(user, max_steps=max_steps)
        if result.stop_reason == "finish" and result.steps_used == cap:
            # Off by one: the answer given on the last allowed step is thrown away.
            result.output, result.stop_reason = None, "max_steps"
            result.message = f"I reached the step cap ({cap} steps) without an answer."
        return result


class DropsTheLastStepAnswer(NativeBinding):
    """An answer given on step N of a cap of N is discarded as if the cap had stopped the run."""

    loop_class: ClassVar[type[loop.Agent]] = _LastStepLoop


class _RepairingLoop(loop.Agent):
    def parse_args(self, tool: loop.ToolDef, text: str) -> dict[str, Any]:
        try:
            return super().parse_args(tool, text)
        except loop.ArgsError:
            # "Repair" the JSON: quote bare words, drop doubled commas, close open braces.
            fixed = re.sub(r"([{,]\s*)(\w+)\s*:", r'\1"\2":', text)
            fixed = re.sub(r":\s*([A-Za-z_]\w*)\s*([,}])", r': "\1"\2', fixed)
            fixed = re.sub(r",\s*,", ",", fixed)
            fixed += "}" * (fixed.count("{") - fixed.count("}"))
            value = json.loads(fixed)
            if not isinstance(value, dict):
                raise
            return value


class RepairsMalformedArgs(NativeBinding):
    """Malformed tool args are guessed at and the tool runs on the guess (ARGS-3)."""

    loop_class: ClassVar[type[loop.Agent]] = _RepairingLoop


class _SkippingLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        model = self.model

        def known_calls_only(messages: list[dict[str, Any]],
                             tools: list[dict[str, Any]] | None) -> loop.Reply:
            reply = model(messages, tools)
            calls = tuple(c for c in reply.tool_calls if c.name in self.tools)
            # An unknown tool is dropped without a trace; a reply left with no call reads as final.
            return loop.Reply(reply.content, calls) if calls or not reply.tool_calls else loop.Reply(
                reply.content, ())

        self.model = known_calls_only
        try:
            return super().run(user, max_steps=max_steps)
        finally:
            self.model = model


class SkipsUnknownTools(NativeBinding):
    """A call of an unknown tool is skipped without any trace: the agent is never told (LOOP-5)."""

    loop_class: ClassVar[type[loop.Agent]] = _SkippingLoop


class _TirelessLoop(loop.Agent):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.repeated = 10**9  # never stops on repeated errors


class NeverStopsOnRepeatedErrors(NativeBinding):
    """No repeated-error stop (ERR-2): ERR-3, which needs that stop, is blocked, never passed."""

    loop_class: ClassVar[type[loop.Agent]] = _TirelessLoop


class _ValueErrorsOnlyLoop(loop.Agent):
    def execute(self, call: loop.ToolCallRequest) -> tuple[str, Any, Exception | None]:
        tool = self.tools.get(call.name)
        if tool is None:
            return super().execute(call)
        try:
            args = self.parse_args(tool, call.arguments)
        except loop.ArgsError:
            return super().execute(call)
        try:
            return str(tool.function(**args)), args, None
        except ValueError as exc:  # only the exception it expected; any other escapes
            return f"Error executing {tool.name}: {exc}", args, exc


class CatchesOnlyValueErrors(NativeBinding):
    """Only a tool's ValueError becomes an observation; a KeyError or a tool's own exception type
    ends the run (ERR-1: any exception type)."""

    loop_class: ClassVar[type[loop.Agent]] = _ValueErrorsOnlyLoop


class _FirstIdLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        result = super().run(user, max_steps=max_steps)
        for step in result.steps:  # every observation answers the first call's id
            step["call_id"] = result.steps[0]["call_id"]
        return result


class BindsEveryObservationToTheFirstCall(NativeBinding):
    """Every observation carries the first call's id: none is bound to its own call (ERR-1)."""

    loop_class: ClassVar[type[loop.Agent]] = _FirstIdLoop


class _RedactingLoop(loop.Agent):
    def execute(self, call: loop.ToolCallRequest) -> tuple[str, Any, Exception | None]:
        observation, args, error = super().execute(call)
        if error is not None and not isinstance(error, loop.ArgsError | loop.NotRun):
            return f"Error: the tool {call.name} failed", args, error  # the message is dropped
        return observation, args, error


class DropsTheErrorMessage(NativeBinding):
    """A raising tool's observation says it failed, not what the exception said (ERR-4)."""

    loop_class: ClassVar[type[loop.Agent]] = _RedactingLoop


class _DroppingLoop(loop.Agent):
    def parse_args(self, tool: loop.ToolDef, text: str) -> dict[str, Any]:
        declared = tool.schema.get("properties", {})
        try:
            args = json.loads(text) if len(text) < 1000 else None
        except ValueError:
            args = None
        if isinstance(args, dict) and set(args) - set(declared):
            text = json.dumps({k: v for k, v in args.items() if k in declared})  # silently dropped
        return super().parse_args(tool, text)


class DropsUndeclaredArgs(NativeBinding):
    """An argument the schema does not declare is dropped without a word (ARGS-6)."""

    loop_class: ClassVar[type[loop.Agent]] = _DroppingLoop


class _CoercingLoop(loop.Agent):
    def parse_args(self, tool: loop.ToolDef, text: str) -> dict[str, Any]:
        try:
            return super().parse_args(tool, text)
        except loop.ArgsError:
            try:
                args = json.loads(text) if len(text) < 1000 else None
            except ValueError:
                args = None
            if not isinstance(args, dict):
                raise
            # "Coerce" to the schema: whatever is not a whole number becomes 0, a missing field "".
            for name, schema in tool.schema["properties"].items():
                value = args.get(name, "")
                if schema["type"] == "integer":
                    args[name] = int(value) if str(value).isdigit() else 0
                elif schema["type"] == "string":
                    args[name] = value if isinstance(value, str) else str(value)
            return args


class CoercesLossily(NativeBinding):
    """Args against the schema are forced into its types, losing what they said (ARGS-4)."""

    loop_class: ClassVar[type[loop.Agent]] = _CoercingLoop


class _UnguardedLoop(loop.Agent):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # No size or depth guard: the parser's RecursionError on a deep payload escapes the run.
        self.max_args_chars = self.max_args_depth = 10**9


class ParsesArgsWithoutAGuard(NativeBinding):
    """Args nested deeper than the parser's recursion limit crash the run (ARGS-5)."""

    loop_class: ClassVar[type[loop.Agent]] = _UnguardedLoop


class _AsksAfterRunningLoop(loop.Agent):
    def execute(self, call: loop.ToolCallRequest) -> tuple[str, Any, Exception | None]:
        result = self.run_call(call, approved=True)  # runs it, then asks
        if call.name in self.needs_approval and self.approve is not None:
            self.approve(call.name, result[1], call.id)
        return result


class AsksForApprovalAfterRunning(ApprovingNativeBinding):
    """The approval callback is called after the tool ran (HITL-3)."""

    loop_class: ClassVar[type[loop.Agent]] = _AsksAfterRunningLoop
class _CapStopOnTheLastStepLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        cap = self.max_steps if max_steps is None else max_steps
        result = super().run(user, max_steps=max_steps)
        if result.stop_reason == "finish" and result.steps_used == cap:
            result.stop_reason = "max_steps"  # the answer is kept, but reported as a cap stop
        return result


class ReportsTheLastStepAnswerAsACapStop(NativeBinding):
    """A final answer given on step N of a cap of N is kept, but reported as a cap stop (LOOP-3)."""

    loop_class: ClassVar[type[loop.Agent]] = _CapStopOnTheLastStepLoop


class _ForgetfulLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        model = self.model

        def recent_steps_only(messages: list[dict[str, Any]],
                              tools: list[dict[str, Any]] | None) -> loop.Reply:
            # The user's message, then the last five exchanges (an assistant reply and its results).
            starts = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
            head = messages[: starts[0]] if starts else messages
            return model([*head, *messages[starts[-5]:]] if len(starts) > 5 else messages, tools)

        self.model = recent_steps_only
        try:
            return super().run(user, max_steps=max_steps)
        finally:
            self.model = model


class ShowsOnlyTheLastFiveSteps(NativeBinding):
    """Each step call shows only the last five steps of the trajectory, not the whole (STEP-3)."""

    loop_class: ClassVar[type[loop.Agent]] = _ForgetfulLoop


class _ExtraToolLoop(loop.Agent):
    def __init__(self, tools: Any, *args: Any, **kwargs: Any) -> None:
        spare = loop.ToolDef("web_search", "Search the web.", {"type": "object", "properties": {}},
                             lambda: "nothing found")
        super().__init__([*tools, spare], *args, **kwargs)


class OffersAToolTheAgentLacks(NativeBinding):
    """Every step call declares a built-in tool the agent was not given (STEP-1)."""

    loop_class: ClassVar[type[loop.Agent]] = _ExtraToolLoop


class _SilentFailuresLoop(loop.Agent):
    def _result(self, output: str | None, reason: str, steps_used: int,
                messages: list[dict[str, Any]], steps: list[dict[str, Any]],
                errors: list[tuple[str, str, str]], message: str | None = None) -> loop.Result:
        ran = [s for s in steps if not s["failed"]]  # a failed call leaves no step behind
        return super()._result(output, reason, steps_used, messages, ran, errors, message)


class DropsFailedCallsFromTheTrajectory(NativeBinding):
    """The returned trajectory leaves out every tool call that raised (TRJ-3)."""

    loop_class: ClassVar[type[loop.Agent]] = _SilentFailuresLoop


class _DefaultCapLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        self.max_steps = self.max_steps or 10  # a cap of zero silently becomes the default
        return super().run(user, max_steps=max_steps or None)


class TakesAZeroCapForTheDefault(NativeBinding):
    """A step cap of zero is silently replaced by the default of 10 (EXH-3)."""

    loop_class: ClassVar[type[loop.Agent]] = _DefaultCapLoop


class _NoHistoryLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        try:
            return super().run(user, max_steps=max_steps)
        except loop.MaxStepsError as exc:
            raise loop.MaxStepsError(exc.max_iterations, [], exc.partial_final_answer) from None


class ForgetsTheStepsOnTheCap(NativeBinding):
    """The step-cap error carries no history of the steps that ran (EXH-2)."""

    loop_class: ClassVar[type[loop.Agent]] = _NoHistoryLoop


class _PlainCapErrorLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        try:
            return super().run(user, max_steps=max_steps)
        except loop.MaxStepsError:
            raise RuntimeError("stopped") from None  # nothing says it was the step cap


class RaisesAPlainErrorOnTheCap(NativeBinding):
    """On the step cap in raise mode the run raises a plain RuntimeError (EXH-4, EXH-1)."""

    loop_class: ClassVar[type[loop.Agent]] = _PlainCapErrorLoop


class _EmptyOnMalformedLoop(loop.Agent):
    def parse_args(self, tool: loop.ToolDef, text: str) -> dict[str, Any]:
        try:
            json.loads(text) if len(text) < 1000 else None
        except ValueError:
            text = "{}"  # malformed args read as none at all: a tool that takes none runs on it
        return super().parse_args(tool, text)


class ReadsMalformedArgsAsEmpty(NativeBinding):
    """Malformed tool-call JSON is read as `{}`: a tool that takes no arguments runs on that guess,
    while a tool with required arguments is refused as missing them (ARGS-3)."""

    loop_class: ClassVar[type[loop.Agent]] = _EmptyOnMalformedLoop


class _CountsAcrossAnswersLoop(loop.Agent):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.used = 0  # the steps of the last call, left on the agent unless a cap stopped it

    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        cap = self.max_steps if max_steps is None else max_steps
        try:
            result = super().run(user, max_steps=max(cap - self.used, 0))
        except loop.MaxStepsError:
            self.used = 0
            raise
        self.used = result.steps_used if result.stop_reason == "finish" else 0
        return result


class KeepsCountingAfterAnAnswer(NativeBinding):
    """The steps of a call that gave its final answer count against the next call's budget; a
    call the cap stopped leaves the next one the whole cap (EXH-6)."""

    loop_class: ClassVar[type[loop.Agent]] = _CountsAcrossAnswersLoop


class _LateZeroCapLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        if max_steps == 0:  # a call's own cap is checked after its first step call
            self.model([{"role": "user", "content": user}], [t.declaration() for t in self.tools.values()])
            raise loop.MaxStepsError(0, [], None)
        return super().run(user, max_steps=max_steps)


class CallsTheModelOnAZeroCallCap(NativeBinding):
    """A step cap of zero given to one call raises, but only after a model call (EXH-3); the
    agent's cap of zero raises before any."""

    loop_class: ClassVar[type[loop.Agent]] = _LateZeroCapLoop


class _UncheckedEditLoop(loop.Agent):
    def run_call(self, call: loop.ToolCallRequest, approved: bool) -> tuple[str, Any, Exception | None]:
        tool = self.tools.get(call.name)
        if not approved or tool is None:
            return super().run_call(call, approved)
        args = json.loads(call.arguments)  # the person's edit, trusted as it is: never validated
        try:
            result = tool.function(**args)
        except Exception as exc:
            return f"Error executing {tool.name}: {exc}", args, exc
        return (result if isinstance(result, str) else json.dumps(result)), args, None


class RunsTheEditUnchecked(ApprovingNativeBinding):
    """A person's edit reaches the tool as it is, whatever the tool's schema says (HITL-7)."""

    loop_class: ClassVar[type[loop.Agent]] = _UncheckedEditLoop


class _JoiningLoop(loop.Agent):
    def _result(self, output: str | None, reason: str, steps_used: int,
                messages: list[dict[str, Any]], steps: list[dict[str, Any]],
                errors: list[tuple[str, str, str]], message: str | None = None) -> loop.Result:
        if output is not None:
            # The answer is the text of every reply of the run, joined (agno's, mastra's).
            output = "".join(m["content"] for m in messages if m["role"] == "assistant")
        return super()._result(output, reason, steps_used, messages, steps, errors, message)


class JoinsTheTextOfEveryReply(NativeBinding):
    """The answer joins the text the model wrote beside its tool calls with its final reply
    (`'try itadd instead5'` for `'5'`): LOOP-7's defect, and no other requirement's."""

    loop_class: ClassVar[type[loop.Agent]] = _JoiningLoop


class _AgentCapOnlyLoop(loop.Agent):
    def run(self, user: str, *, max_steps: int | None = None) -> loop.Result:
        return super().run(user)  # the cap given to the call is dropped: the agent's applies


class IgnoresTheCallsCap(NativeBinding):
    """A step cap given to one call is ignored, the agent's applies (LOOP-4); its own cap counts
    right, so no step-cap defect of LOOP-3's stands in for it."""

    loop_class: ClassVar[type[loop.Agent]] = _AgentCapOnlyLoop
