"""Attribution: which requirement a scenario's failure is counted under (REQUIREMENTS.md, "One
cause, one verdict").

Every scenario asserts what its own requirement says; whatever it must read first (the answer, a
step count, the trajectory, a pause) is a precondition owned by the requirement that judges that
thing (`OWNERS`). A broken precondition raises `_guard.Blocked` naming its owner: the scenario is
`blocked` by the owner when the owner failed, and `failed` when the owner passed or the run, once
complete, never judged it (`resolve_blocked`, once every scenario ran). A MUST scenario is never
blocked by a SHOULD requirement: that would hide a MUST failure behind a recommendation, so the
failure is the scenario's own (`verdict`).

The recognisers here are pure: they read outcomes, model calls and scenario results, and say
whether a failure has a cause another requirement judges.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence

import pytest
from pydantic import JsonValue
from pytest_bdd.exceptions import StepDefinitionNotFoundError

from conformance import _guard, _report
from conformance._features import Requirement, catalogue
from conformance._report import ScenarioResult, Verdict
from conformance._values import json_equal, of_declared_type
from conformance.binding import FaultTurn, FinalTurn, LMCall, Outcome, StepTurn, ToolCall, ToolSpec, Turn

#: The preconditions scenarios read, each with the requirement that judges it (its owner).
OWNERS: dict[str, str] = {
    "the final answer's text": "LOOP-7",
    "the run stopping at its step cap, neither a step early nor late, and stopping at all": "LOOP-3",
    "the chosen tool running with the chosen args": "LOOP-1",
    "the args field present in a step reply": "STEP-4",
    "a signature string form (an arrow string)": "SIG-1",
    "a step reply written as its prompt asks being read": "STEP-4",
    "a signature value form": "SIG-3",
    "a tool error not ending the run": "ERR-1",
    "repeated tool errors stopping the run": "ERR-2",
    "a pause for the person's answer (ask_to_user)": "HITL-2",
    "a pause for the person's approval": "HITL-3",
    "a resume of a paused run": "HITL-4",
    "the trajectory's record of a step (tool name, args, observation)": "TRJ-1",
    "each streamed step emitted once": "STREAM-1",
    "a global adapter taking effect": "ADP-1",
    "the model retried": "NET-1",
}
UNREAD_REPLY = OWNERS["a step reply written as its prompt asks being read"]
STEP_CAP = OWNERS["the run stopping at its step cap, neither a step early nor late, and stopping at all"]
TOOL_ERROR = OWNERS["a tool error not ending the run"]
CHOSEN_TOOL = OWNERS["the chosen tool running with the chosen args"]
TRAJECTORY = OWNERS["the trajectory's record of a step (tool name, args, observation)"]
ASK_PAUSE = OWNERS["a pause for the person's answer (ask_to_user)"]
APPROVAL_PAUSE = OWNERS["a pause for the person's approval"]

#: How a scenario that never ran, the binding being broken, is reported.
NOT_RUN = "not run: binding broken ("


# -- preconditions --------------------------------------------------------------------------


def precondition(condition: bool, owner: str, own: str | None, what: str) -> None:
    """Check a precondition `owner` judges: if it did not happen, the scenario is blocked by
    `owner`, unless `owner` is the scenario's own requirement (`own`), which then simply fails."""
    if condition:
        return
    if owner == own:
        raise AssertionError(what)
    raise _guard.Blocked(owner, what)


def level(rid: str, requirements: dict[str, Requirement] | None = None) -> str:
    """A requirement's level (`must` for one the catalogue does not know)."""
    known = catalogue() if requirements is None else requirements
    return known[rid].level if rid in known else "must"


def may_block(owner: str, own: str, requirements: dict[str, Requirement] | None = None) -> bool:
    """Whether a failure of `owner` may block a scenario of `own`: never a SHOULD a MUST."""
    return not (level(own, requirements) == "must" and level(owner, requirements) == "should")


def should_blocks_must(owner: str, own: str) -> str:
    """The note on a MUST scenario whose precondition names a SHOULD requirement."""
    return (f"\n({own} is a MUST requirement and {owner} a SHOULD: a MUST scenario is never blocked "
            f"by a SHOULD, so this failure is {own}'s own)")


# -- the recognisers ----------------------------------------------------------------------------


def ended_by_raising_tool(outcome: Outcome, raised: Sequence[str]) -> str | None:
    """Why a run a tool raised in and that then ended with an error (not a cap, not a pause) was
    ended by the raising tool (ERR-1's failure), or None."""
    error = outcome.error
    if error is None or error.kind != "other" or not raised:
        return None
    return f"a tool raised {', '.join(raised)} and the run ended with {error.type}: {error.message}"


def ended_on_unread_reply(outcome: Outcome, served: Sequence[tuple[LMCall, Turn | None]],
                          tools: Iterable[str], ran: dict[str, int],
                          written_objects: Collection[str] = (), shown: str | None = None) -> str | None:
    """Why a run ended with an error on a well-formed step reply (STEP-4's failure), or None.

    Only for a `signature` library, whose adapter writes the reply format into each step prompt and
    parses the reply: a run whose last model call was a step call, answered with a declared tool
    (or `finish`) and a JSON object of args written in full, that then ended with an error before
    that tool ran, ended because its adapter did not read a reply written as its prompt asks. A
    reply with an unknown tool, args that are no object, malformed or missing, is its own
    requirement's (LOOP-5, ARGS-2, ARGS-3, STEP-4); raw args are an object written in full only
    where the scenario says so (`written_objects`: big or deep ones, too deep to parse here).
    Once the smoke tier has `shown` that the library reads no such reply in a format (the adapter
    its call asked for), a run that ends on any step reply in that format cannot be told from that
    failure: any reply counts."""
    error = outcome.error
    if error is None or error.kind != "other" or not served:
        return None
    call, turn = served[-1]
    if call.kind != "step" or not isinstance(turn, StepTurn) or turn.parallel:
        return None
    if any(ran.get(c.tool_name) for c in turn.calls()):
        return None
    malformed = turn.without_tool_args or (
        turn.raw_tool_args not in written_objects if turn.raw_tool_args is not None
        else not isinstance(turn.tool_args, dict))
    if shown != call.adapter and (malformed or turn.tool_name not in {*tools, "finish"}):
        return None
    chose = "finish" if turn.tool_name == "finish" else f"the tool {turn.tool_name!r}"
    args = turn.args_text()
    text = args if len(args) <= 200 else f"{args[:200]}... ({len(args)} characters)"
    return (f"step call {len([c for c, _ in served if c.kind == 'step'])}'s reply chose {chose} with "
            f"the args {text}, written in the format its prompt asks for, and the run "
            f"ended with {error.type}: {error.message}: the adapter did not read the reply")


def stopped_early(outcome: Outcome, served: Sequence[tuple[LMCall, Turn | None]], cap: int,
                  ran: dict[str, int]) -> str | None:
    """Why a run that a step cap of `cap` stopped did not act on its `cap`-th step, or None.

    `served` pairs each model call of the run with the turn that answered it; `ran` counts each
    scenario tool's runs during the call. The cap stopped the run a step early when it stopped after
    exactly `cap` step calls and the last one was a final answer, or its tool calls neither ran
    nor were observed in the trajectory.
    """
    error = outcome.error
    capped = outcome.stop_reason == "max_steps" or (error is not None and error.kind == "max-iterations")
    steps = [turn for call, turn in served if call.kind == "step"]
    if not capped or cap < 1 or len(steps) != cap:
        return None
    last = steps[-1]
    if _final(last):
        return (f"the step cap of {cap} stopped the run after {cap} step call(s), though the reply to "
                f"step call {cap} was a final answer: a final answer given on step {cap} of a cap of "
                f"{cap} must be accepted")
    if not isinstance(last, StepTurn):
        return None
    before = [c.tool_name for t in steps[:-1] if isinstance(t, StepTurn) for c in t.calls()]
    dropped = [c.tool_name for c in last.calls()]
    observed = [s for s in outcome.trajectory if s.tool_name != "finish" and s.observation is not None]
    if any(name in ran for name in dropped) and len(observed) <= len(before) and all(
            count == before.count(name) for name, count in ran.items()):
        return (f"the step cap of {cap} stopped the run after {cap} step call(s), but the tool call(s) "
                f"of step {cap} ({', '.join(dropped)}) never ran: a cap of {cap} must allow {cap} step(s)")
    return None


def dropped_tool_calls(outcome: Outcome, served: Sequence[tuple[LMCall, Turn | None]],
                       runnable: Mapping[str, ToolSpec], cap: int | None,
                       ran: dict[str, int] | None = None) -> str | None:
    """Why a run that returned right after a model reply whose well-formed tool calls never ran
    dropped them (LOOP-1's defect: the tool the model chose runs), or None.

    `served` pairs each model call of the run with the turn that answered it; `runnable` holds the
    scenario's tools a call may run without a pause, by name; `ran` counts each scenario tool's
    runs during the call (None where runs are not told apart, as concurrent runs': the trajectory
    tells then).
    Only a run that returned (no error, no stop reason but `finish`), whose last model call was a
    step answered with tool calls, each well-formed (`well_formed`), is told: malformed args
    (ARGS-2, ARGS-3, STEP-4), args that break the schema (ARGS-4) or are extreme (ARGS-5), an
    unknown tool (LOOP-5), a pause (HITL-3) and a cap (LOOP-3) are other requirements' to judge.
    On its cap's last step (whose calls still run) a run is told only if it says it stopped on a
    final answer (`finish`): one that says nothing may have stopped silently at the cap."""
    if outcome.error is not None or outcome.stop_reason not in (None, "finish") or not served:
        return None
    steps = [turn for call, turn in served if call.kind == "step" and not isinstance(turn, FaultTurn)]
    last = served[-1][1]
    past_cap = cap is not None and len(steps) > cap
    at_cap = cap is not None and len(steps) == cap
    if (served[-1][0].kind != "step" or not isinstance(last, StepTurn) or _final(last)
            or last.without_tool_args or past_cap or (at_cap and outcome.stop_reason is None)):
        return None
    calls = last.calls()
    if not all(c.tool_name in runnable and well_formed(c, runnable[c.tool_name]) for c in calls):
        return None
    before = [c.tool_name for t in steps[:-1] if isinstance(t, StepTurn) for c in t.calls()]
    if ran is not None:
        if any(ran.get(c.tool_name, 0) != before.count(c.tool_name) for c in calls):
            return None
    elif len([s for s in outcome.trajectory if s.tool_name != "finish" and s.observation is not None]
             ) > len(before):
        return None
    named = ", ".join(f"{c.tool_name} {c.args_text()}" for c in calls)
    return (f"the run returned right after step call {len(steps)}, whose reply called {named} with "
            f"well-formed args, and those calls never ran: a reply with tool calls is no final "
            f"answer, even with text beside them, and the tool the model chose must run")


#: The longest args text a call told by `dropped_tool_calls` has: ARGS-5's are megabytes, or
#: thousands of levels deep.
ORDINARY_ARGS = 10_000

def well_formed(call: ToolCall, spec: ToolSpec) -> bool:
    """Whether `call` is one its tool must run: a JSON object written as JSON, of ordinary size,
    holding exactly the tool's parameters, each of its declared type."""
    args = call.tool_args
    if call.raw_tool_args is not None or not isinstance(args, dict) or len(call.args_text()) > ORDINARY_ARGS:
        return False
    declared = {p.name: p.type for p in spec.parameters}
    return set(args) == set(declared) and all(
        of_declared_type(args[name], kind) for name, kind in declared.items())


#: How `asked_late` begins the defect of a call whose own cap did not stop it (not a resumed run's,
#: not a runaway's): `late_step_count` tells such a run's larger overcounts by it.
CAP_MISSED = "the step cap of "


def asked_late(served: Sequence[tuple[LMCall, Turn | None]], cap: int | None,
               runaway: str | None = None, resumed: bool = False) -> str | None:
    """Why a run did not stop at its step cap of `cap` (LOOP-3's defect), or None: it never
    stopped (`runaway`, the scripted model's word for a run it ended), or it made step call
    `cap + 1` after `cap` step calls none of which was answered with a final answer (Genkit's
    `maxTurns`, agno's `tool_call_limit`). A step call a transient fault answered is retried, so
    it is not counted. A `resumed` run's `cap` is what its call's cap left it (zero too); a call's
    cap of zero is EXH-3's, not told here."""
    if runaway is not None:
        return runaway
    if cap is None or cap < (0 if resumed else 1):
        return None
    steps = [turn for call, turn in served if call.kind == "step" and not isinstance(turn, FaultTurn)]
    if len(steps) <= cap or any(_final(turn) for turn in steps[:cap]):
        return None
    if resumed:
        return (f"the step cap did not stop the resumed run: the steps before the pause left it "
                f"{cap} step(s), and it asked the model for step {cap + 1} without a final answer")
    return (f"{CAP_MISSED}{cap} did not stop the run: after {cap} step call(s) without a final "
            f"answer it asked the model for step {cap + 1}; a cap of {cap} must stop the loop after "
            f"{cap} step(s)")


def late_step_count(got: int, expected: int, causes: Sequence[str | None],
                    agent_cap: int | None = None) -> str | None:
    """Why `got` step calls where the scenario expects `expected` are LOOP-3's, or None: `causes`
    are the counted runs' step-cap defects (`World.early_stops`). A cap that asks a step late makes
    one step call more than its run's script (a cap that stops a step early makes none fewer), so
    a count over by at most one per such run is told. A count over by more is told for one run
    whose cap did not stop it (not a resumed one) when the agent's own cap `agent_cap` does not
    explain it either: a cap that counts something other than model calls (BeeAI's iterations,
    which ask the model again within one) is LOOP-3's; a per-call cap ignored for the agent's is
    the scenario's own."""
    told = [cause for cause in causes if cause]
    if not told or got <= expected:
        return None
    if got - expected <= len(told):
        return "; ".join(told)
    capped = len(causes) == 1 and told[0].startswith(CAP_MISSED)
    return told[0] if capped and agent_cap is not None and got != agent_cap else None


def _final(turn: Turn | None) -> bool:
    return isinstance(turn, FinalTurn) or (isinstance(turn, StepTurn) and turn.tool_name == "finish")


def args_as_text(recorded: JsonValue, expected: JsonValue) -> bool:
    """Whether a trajectory recorded a step's args as the JSON text of the expected object (a text
    protocol's action input) rather than the object: TRJ-1's defect, not the step's."""
    if not isinstance(recorded, str) or not isinstance(expected, dict):
        return False
    try:
        parsed = json.loads(recorded)
    except ValueError:
        return False
    return json_equal(parsed, expected)


def args_recorded_as_text(number: int, recorded: str) -> str:
    """What TRJ-1's failure is, said where another requirement's scenario reads the trajectory."""
    return (f"step {number}'s args are recorded in the trajectory as the text {recorded!r}, not as "
            "the args object: the trajectory must record per step the tool's args")


def precondition_of_call(step_names: Iterable[str], number: int, own: str) -> str | None:
    """The requirement a scenario's steps name for call `number` ("Then call 1 stopped with ...,
    as ERR-2 requires"), if it is not the scenario's own and may block it (never a SHOULD a MUST)."""
    for name in step_names:
        match = re.search(rf"\bcall {number}\b.*\bas ([A-Z]+-\d+) requires$", name)
        if match and match.group(1) != own:
            return match.group(1) if may_block(match.group(1), own) else None
    return None


# -- verdicts -------------------------------------------------------------------------------------


def verdict(
    report: pytest.TestReport, call: pytest.CallInfo[None], broken: str | None, own: str
) -> tuple[Verdict | None, str, str]:
    """The scenario's verdict, its message, and for a known failure what was observed."""
    longrepr = str(report.longrepr or "")
    if report.when == "setup":
        if report.skipped:
            # A skip's longrepr is (path, line, reason): keep the reason, never a machine path.
            reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else longrepr
            reason = reason.removeprefix("Skipped: ")
            if "binding broken" in reason:
                return "errored", f"{NOT_RUN}{broken})", ""
            return "not-claimed", reason, ""
        if report.failed:
            return "errored", longrepr, ""
        return None, "", ""
    if report.when == "call":
        error = call.excinfo.value if call.excinfo is not None else None
        demoted = ""
        if isinstance(error, _guard.Blocked):
            if may_block(error.requirement, own):
                # Before the known-failure check: a precondition that failed judges nothing here.
                # The binding's declared reason rides along (as `observed`) for `resolve_blocked`:
                # if the owner passed, the failure is the scenario's own, and declared.
                declared = (str(report.wasxfail).removeprefix("known failure: ")
                            if hasattr(report, "wasxfail") else "")
                return "blocked", str(error), declared
            demoted = should_blocks_must(error.requirement, own)
        if isinstance(error, _guard.BindingError | _guard.ResourceExhausted):
            # Before the known-failure check too: a broken binding, or a process short of memory,
            # is no verdict on the library.
            return "errored", str(error), ""
        if hasattr(report, "wasxfail"):
            reason = str(report.wasxfail).removeprefix("known failure: ")
            observed = f"{error}{demoted}" if error is not None else ""
            return ("known-failure", reason, observed) if report.skipped else ("passed", "", "")
        if report.passed:
            return "passed", "", ""
        if "XPASS(strict)" in longrepr:
            return "failed", f"{_report.UNEXPECTED_PASS}: remove it from the binding's known_failures", ""
        if isinstance(error, StepDefinitionNotFoundError):
            return "errored", f"suite bug, please report it: {error}", ""
        if error is not None and not demoted and not is_check(error):
            # Not a check of the suite's: what a binding returned broke the checks (or the suite
            # has a bug); either way the library was not judged.
            return "errored", (f"{type(error).__name__}: {error}\nThe suite could not judge this "
                               "scenario: something the binding returned broke its checks, or the "
                               "suite has a bug (please report it)."), ""
        message = f"{error}{demoted}" if error is not None else longrepr
        return "failed", message, ""
    if report.failed:
        return "errored", longrepr, ""
    return None, "", ""


def blocked_by(error: BaseException | None, own: str) -> str | None:
    """The requirement a scenario's exception blocks it by, if it may."""
    if isinstance(error, _guard.Blocked) and may_block(error.requirement, own):
        return error.requirement
    return None


def is_check(error: BaseException) -> bool:
    """Whether `error` is a check of the suite's failing (an `AssertionError`: the steps' own
    asserts, and `_guard.call` lets none through from a binding), or a group of only those
    (hypothesis reports several distinct failures as one)."""
    if isinstance(error, BaseExceptionGroup):
        return all(is_check(inner) for inner in error.exceptions)
    return isinstance(error, AssertionError)


def resolve_blocked(results: list[ScenarioResult], complete: bool = False) -> list[ScenarioResult]:
    """`results`, with every scenario blocked by a requirement that passed turned into a failure:
    the precondition that requirement judges held there, so the scenario's own failure stands (a
    known failure where the binding lists it: `verdict` kept its declared reason as `observed`).
    In a `complete` run, a scenario blocked by a requirement the run never judged (a `-k` or
    node-id selection without it) is its own failure too: nothing attributes it, and a blocked
    verdict would let the run pass on a failure no requirement of the run accounts for.
    Repeated until nothing changes (a requirement can fail through such a scenario); a scenario
    still blocked then shows no declared reason, which judged nothing there."""
    while True:
        verdicts = _report.requirement_verdicts(results, {})
        changed = False
        for i, r in enumerate(results):
            if r.verdict != "blocked" or not r.blocked_by:
                continue
            owner = verdicts.get(r.blocked_by)
            if owner == "passed":
                why = f"but {r.blocked_by} passed: the scenario's failure is its own"
            elif owner is None and complete:
                why = (f"but this run did not judge {r.blocked_by}: the failure is reported as the "
                       f"scenario's own; run {r.blocked_by}'s scenarios too to attribute it")
            else:
                continue
            own = f"{r.message}\n(reported as blocked by {r.blocked_by}, {why})"
            update: dict[str, object] = (
                {"verdict": "known-failure", "message": r.observed, "observed": own}
                if r.observed else {"verdict": "failed", "message": own})
            results[i] = r.model_copy(update={**update, "blocked_by": None})
            changed = True
        if not changed:
            return [r.model_copy(update={"observed": ""}) if r.verdict == "blocked" and r.observed
                    else r for r in results]
