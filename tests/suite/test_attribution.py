"""Attribution (`conformance._attribution`): each recogniser on a case that is its cause and on one
that is not, the owners, the level rule, and the resolution of a block once every scenario ran."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conformance import _attribution as a
from conformance import _guard
from conformance._features import catalogue, features_dir
from conformance._report import ScenarioResult
from conformance._steps.model_log import call_made_steps
from conformance._steps.observations import _ArgsAsText
from conformance._steps.streams import _args_recorded_as_text
from conformance._tools import SuiteTool
from conformance._world import World
from conformance.binding import (
    ErrorInfo,
    ExtractTurn,
    FaultTurn,
    FinalTurn,
    LMCall,
    Outcome,
    ParamSpec,
    Step,
    StepTurn,
    ToolCall,
    ToolSpec,
    Turn,
)
from conformance.bindings.reference import ReferenceBinding


def _step(tool: str = "add", **args: Any) -> StepTurn:
    return StepTurn(thought="t", tool_name=tool, tool_args=args or {"a": 1, "b": 1})


def _served(*turns: Turn | None) -> list[tuple[LMCall, Turn | None]]:
    """Each turn with the model call it answered: an extraction call, or a step call."""
    return [(LMCall(kind="extract" if isinstance(t, ExtractTurn) else "step", adapter="chat",
                    messages=[]), t) for t in turns]


CAPPED = Outcome(stop_reason="max_steps", trajectory=[Step(tool_name="add", observation="2")])


def _result(rid: str, verdict: str, blocked_by: str | None = None) -> ScenarioResult:
    return ScenarioResult.model_validate({"id": f"t_{rid}", "feature": "x.feature", "name": rid,
                                          "requirement": rid, "verdict": verdict,
                                          "message": "m", "blocked_by": blocked_by})


# -- owners and preconditions --------------------------------------------------------------------


def test_every_owner_is_a_requirement_of_the_catalogue() -> None:
    known = set(catalogue()) | {"LOOP-7"}  # LOOP-7 (catalogue 3.1) lands with its feature
    assert set(a.OWNERS.values()) <= known
    assert (a.STEP_CAP, a.TOOL_ERROR, a.TRAJECTORY) == ("LOOP-3", "ERR-1", "TRJ-1")
    assert a.OWNERS["the final answer's text"] == "LOOP-7"
    assert a.OWNERS["the args field present in a step reply"] == "STEP-4"
    assert a.OWNERS["a signature value form"] == "SIG-3"
    assert a.OWNERS["a signature string form (an arrow string)"] == "SIG-1"


def test_a_broken_precondition_blocks_by_its_owner_and_fails_the_owners_own_scenario() -> None:
    a.precondition(True, "ERR-1", "TRJ-3", "never said")
    with pytest.raises(_guard.Blocked) as blocked:
        a.precondition(False, "ERR-1", "TRJ-3", "the tool error ended the run")
    assert blocked.value.requirement == "ERR-1"
    assert str(blocked.value) == "blocked by ERR-1: the tool error ended the run"
    with pytest.raises(AssertionError, match="the tool error ended the run"):
        a.precondition(False, "ERR-1", "ERR-1", "the tool error ended the run")


def test_a_should_never_blocks_a_must() -> None:
    assert catalogue()["ERR-4"].level == "should" and catalogue()["ASYNC-1"].level == "must"
    assert not a.may_block("ERR-4", "ASYNC-1")
    assert a.may_block("ERR-1", "ASYNC-1") and a.may_block("ERR-1", "ERR-4")
    assert a.may_block("ERR-4", "ARGS-6")  # a SHOULD may block a SHOULD
    assert a.blocked_by(_guard.Blocked("ERR-4", "x"), "ASYNC-1") is None
    assert a.blocked_by(_guard.Blocked("ERR-1", "x"), "ASYNC-1") == "ERR-1"
    assert a.blocked_by(AssertionError("x"), "ASYNC-1") is None


def test_a_hang_is_blocked_by_the_requirement_the_scenario_names_for_that_call() -> None:
    steps = ["When the agent is called", "Then call 1 stopped with \"x\", as ERR-2 requires",
             "Then call 2 showed the agent the tool's error \"y\", as ERR-4 requires"]
    assert a.precondition_of_call(steps, 1, "ERR-3") == "ERR-2"
    assert a.precondition_of_call(steps, 1, "ERR-2") is None  # its own
    assert a.precondition_of_call(steps, 3, "ERR-3") is None  # none named for call 3
    assert a.precondition_of_call(steps, 2, "ASYNC-1") is None  # a SHOULD, in a MUST scenario


# -- the recognisers ---------------------------------------------------------------------------


def test_a_run_a_raising_tool_ended_is_err_1s() -> None:
    crashed = Outcome(error=ErrorInfo(type="DiskOnFire", message="the disk is on fire"))
    assert a.ended_by_raising_tool(crashed, ["DiskOnFire"]) == (
        "a tool raised DiskOnFire and the run ended with DiskOnFire: the disk is on fire")
    assert a.ended_by_raising_tool(crashed, []) is None  # no tool raised: another cause
    capped = Outcome(error=ErrorInfo(type="MaxIterationsError", message="cap", kind="max-iterations"))
    assert a.ended_by_raising_tool(capped, ["DiskOnFire"]) is None  # the cap ended it
    assert a.ended_by_raising_tool(Outcome(outputs={"answer": "5"}), ["DiskOnFire"]) is None


def test_a_run_that_ended_on_a_well_formed_step_reply_is_step_4s() -> None:
    unread = Outcome(error=ErrorInfo(type="output_parse_failed", message="next_tool_name not in set"))
    told = a.ended_on_unread_reply(unread, _served(_step()), ["add"], {})
    assert told == ("step call 1's reply chose the tool 'add' with the args {\"a\": 1, \"b\": 1}, "
                    "written in the format its prompt asks for, and the run ended with "
                    "output_parse_failed: next_tool_name not in set: the adapter did not read the reply")
    finish = StepTurn(thought="done", tool_name="finish")
    told_finish = a.ended_on_unread_reply(unread, _served(finish), ["add"], {})
    assert told_finish is not None and "chose finish with the args {}" in told_finish
    # Each reply that is some other requirement's, or a run that went on: not this cause.
    raw = StepTurn(thought="t", tool_name="add", raw_tool_args="{a: 1")
    for served, ran in [(_served(_step("delete_everything")), {}),  # unknown tool: LOOP-5's
                        (_served(StepTurn(thought="t", tool_name="add", tool_args=[1, 2])), {}),  # ARGS-2's
                        (_served(raw), {}),  # ARGS-3's
                        (_served(StepTurn(thought="t", tool_name="add", without_tool_args=True)), {}),
                        (_served(_step()), {"add": 1}),  # the tool ran: the run ended after it
                        (_served(_step(), ExtractTurn(outputs={"answer": "2"})), {})]:
        assert a.ended_on_unread_reply(unread, served, ["add"], ran) is None, served
    assert a.ended_on_unread_reply(Outcome(outputs={"answer": "2"}), _served(_step()), ["add"], {}) is None
    capped = Outcome(error=ErrorInfo(type="MaxIterationsError", message="cap", kind="max-iterations"))
    assert a.ended_on_unread_reply(capped, _served(_step()), ["add"], {}) is None


def test_a_cap_that_drops_a_final_answer_on_its_last_step_stopped_early() -> None:
    early = a.stopped_early(CAPPED, _served(_step(), FinalTurn(outputs={"answer": "2"})), 2, {"add": 1})
    assert early is not None and "the reply to step call 2 was a final answer" in early
    assert a.stopped_early(CAPPED, _served(_step(), _step()), 3, {"add": 2}) is None  # 2 calls of 3
    answered = Outcome(outputs={"answer": "2"})
    assert a.stopped_early(answered, _served(_step(), FinalTurn(outputs={"answer": "2"})), 2,
                           {"add": 1}) is None  # not stopped by the cap


def test_a_cap_whose_last_step_never_ran_stopped_early() -> None:
    dropped = a.stopped_early(CAPPED, _served(_step(), _step()), 2, {"add": 1})
    assert dropped is not None and "of step 2 (add) never ran" in dropped
    both = Outcome(stop_reason="max_steps", trajectory=[Step(tool_name="add", observation="2")] * 2)
    assert a.stopped_early(both, _served(_step(), _step()), 2, {"add": 2}) is None


def test_a_step_call_past_the_cap_without_a_final_answer_is_asked_late() -> None:
    late = a.asked_late(_served(_step(), _step(), None), 2)
    assert late == ("the step cap of 2 did not stop the run: after 2 step call(s) without a final "
                    "answer it asked the model for step 3; a cap of 2 must stop the loop after 2 "
                    "step(s)")
    assert a.asked_late(_served(_step(), _step()), 2) is None  # exactly the cap
    assert a.asked_late(_served(_step(), FinalTurn(outputs={"answer": "2"}), None), 2) is None
    assert a.asked_late(_served(_step(), _step(), None), None) is None  # no cap known (a resume)
    assert a.asked_late(_served(_step(), _step(), None), 0) is None  # a zero cap is EXH-3's


def test_a_retried_fault_is_not_a_step_and_an_extraction_is_not_a_step_call() -> None:
    fault = FaultTurn(fault="500")
    assert a.asked_late(_served(_step(), fault, _step()), 2) is None
    assert a.asked_late(_served(_step(), _step(), ExtractTurn(outputs={"answer": "2"})), 2) is None


def test_a_run_that_never_stopped_is_loop_3s_whatever_its_calls() -> None:
    said = "the run never stopped: it made 60 model calls"
    assert a.asked_late([], None, runaway=said) == said
    assert a.asked_late(_served(_step()), 10, runaway=None) is None


def test_args_recorded_as_their_json_text_are_trj_1s() -> None:
    assert a.args_as_text('{"a": 1, "b": 2}', {"a": 1, "b": 2.0})
    assert not a.args_as_text('{"a": 1, "b": 3}', {"a": 1, "b": 2})  # other args: not the cause
    assert not a.args_as_text({"a": 1}, {"a": 1})  # the object itself
    assert not a.args_as_text("a=1", {"a": 1})  # not JSON
    assert not a.args_as_text('"x"', "x")  # only an object's text
    assert "as the text '{\"a\": 1}'" in a.args_recorded_as_text(1, '{"a": 1}')


def _world(own: str, ran: list[dict[str, Any]]) -> World:
    world = World(ReferenceBinding(), 5.0, own)
    tool = SuiteTool(ToolSpec(name="add", description="adds", parameters=(
        ParamSpec(name="a", type="int"), ParamSpec(name="b", type="int"))))
    tool.calls.extend(ran)
    world.tools["add"] = tool
    return world


def test_a_trajectory_check_blocks_by_trj_1_only_after_its_own_checks() -> None:
    step = Step(tool_name="add", tool_args='{"a": 1, "b": 2}', observation="3")
    as_text = _ArgsAsText(_world("LOOP-1", [{"a": 1, "b": 2}]))
    assert as_text.equal(1, step, {"a": 1, "b": 2})
    with pytest.raises(_guard.Blocked, match="blocked by TRJ-1: step 1's args are recorded"):
        as_text.told()
    own = _ArgsAsText(_world("TRJ-1", [{"a": 1, "b": 2}]))
    assert own.equal(1, step, {"a": 1, "b": 2})
    with pytest.raises(AssertionError, match="step 1's args are recorded"):
        own.told()
    # The tool did not receive the args the step records: LOOP-1's own property, not a recording.
    other = _ArgsAsText(_world("LOOP-1", [{"a": 9, "b": 9}]))
    assert not other.equal(1, step, {"a": 1, "b": 2})
    other.told()


LATE = a.asked_late(_served(_step(), _step(), None), 2)


def test_a_step_count_one_over_per_run_a_cap_asked_late_in_is_loop_3s() -> None:
    assert a.late_step_count(3, 2, [LATE]) == LATE
    assert a.late_step_count(5, 3, [LATE, None, LATE]) == f"{LATE}; {LATE}"  # one each
    assert a.late_step_count(3, 2, [None]) is None  # no cause in the counted runs
    assert a.late_step_count(6, 2, [LATE]) is None  # a per-call cap ignored too: the count's own
    assert a.late_step_count(1, 2, [LATE]) is None  # short: no cap asking late makes fewer


def _counted(own: str, steps: int, cause: str | None) -> World:
    """A world whose one call made `steps` step calls, with `cause` its step-cap defect."""
    world = World(ReferenceBinding(), 5.0, own)
    world.calls_per_run.append([LMCall(kind="step", adapter="chat", messages=[])] * steps)
    world.early_stops.append(cause)
    return world


def test_a_count_of_step_calls_a_late_cap_spoiled_is_blocked_by_loop_3() -> None:
    with pytest.raises(_guard.Blocked, match=r"blocked by LOOP-3: the step cap of 2 did not stop the "
                       r".*\(call 1 should have made 2 step call\(s\); it made 3\)"):
        call_made_steps(_counted("EXH-6", 3, LATE), "1", "2")
    # LOOP-3's own scenario fails, saying why; without the cause the count fails as it is.
    with pytest.raises(AssertionError, match=r"^the step cap of 2 did not stop the run"):
        call_made_steps(_counted("LOOP-3", 3, LATE), "1", "2")
    with pytest.raises(AssertionError, match=r"^call 1 should have made 2 step call"):
        call_made_steps(_counted("EXH-6", 3, None), "1", "2")
    call_made_steps(_counted("EXH-6", 2, LATE), "1", "2")  # the count is right: nothing to tell


def test_concurrent_runs_and_stream_events_block_by_trj_1_only_for_args_the_tool_received() -> None:
    recorded = [Step(tool_name="add", tool_args='{"a": 1, "b": 2}', observation="3")]
    chosen: list[tuple[str, Any]] = [("add", {"a": 1, "b": 2})]
    cause = _args_recorded_as_text(_world("ASYNC-2", [{"a": 1, "b": 2}]), recorded, chosen)
    assert cause is not None and cause.startswith("step 1's args are recorded in the trajectory as the text")
    # The tool never received those args, or the step is another tool's: not a recording defect.
    assert _args_recorded_as_text(_world("ASYNC-2", [{"a": 9, "b": 9}]), recorded, chosen) is None
    assert _args_recorded_as_text(_world("ASYNC-2", [{"a": 1, "b": 2}]), recorded,
                                  [("search", {"a": 1, "b": 2})]) is None
    assert _args_recorded_as_text(_world("ASYNC-2", []), [], []) is None  # nothing recorded as text


def _call(error: BaseException) -> tuple[pytest.TestReport, pytest.CallInfo[None]]:
    def raises() -> None:
        raise error

    call = pytest.CallInfo.from_call(raises, "call")
    report = pytest.TestReport("t", ("x.py", 0, "t"), {}, "failed", str(error), "call")
    return report, call


def test_a_scenario_blocked_by_a_should_it_may_not_be_blocked_by_fails_on_its_own() -> None:
    assert a.verdict(*_call(_guard.Blocked("ERR-1", "crashed")), None, "ASYNC-1") == (
        "blocked", "blocked by ERR-1: crashed", "")
    verdict, message, _ = a.verdict(*_call(_guard.Blocked("ERR-4", "no message")), None, "ASYNC-1")
    assert verdict == "failed" and message.startswith("blocked by ERR-4: no message\n")
    assert "a MUST scenario is never blocked by a SHOULD, so this failure is ASYNC-1's own" in message
    # A SHOULD scenario may be blocked by a SHOULD.
    assert a.verdict(*_call(_guard.Blocked("ERR-4", "x")), None, "ARGS-6")[0] == "blocked"


def test_what_a_binding_broke_is_errored_and_a_check_that_failed_is_failed() -> None:
    assert a.verdict(*_call(_guard.BindingError("bad")), None, "LOOP-1")[:2] == ("errored", "bad")
    assert a.verdict(*_call(AssertionError("wrong")), None, "LOOP-1")[:2] == ("failed", "wrong")
    verdict, message, _ = a.verdict(*_call(KeyError("k")), None, "LOOP-1")
    assert verdict == "errored" and "The suite could not judge this scenario" in message
    assert a.is_check(ExceptionGroup("two", [AssertionError("a"), AssertionError("b")]))
    assert not a.is_check(ExceptionGroup("mixed", [AssertionError("a"), KeyError("b")]))


# -- verdicts once every scenario ran -------------------------------------------------------------


def test_a_block_by_a_requirement_that_passed_is_a_failure_and_by_one_that_failed_stays() -> None:
    results = a.resolve_blocked([_result("LOOP-3", "passed"), _result("EXH-4", "blocked", "LOOP-3"),
                                 _result("TRJ-1", "failed"), _result("TRJ-3", "blocked", "TRJ-1")])
    assert [r.verdict for r in results] == ["passed", "failed", "failed", "blocked"]
    assert "but LOOP-3 passed: the scenario's failure is its own" in results[1].message


def test_a_block_by_a_requirement_the_run_never_judged_is_a_failure_once_the_run_is_complete() -> None:
    """A `-k` run of ASYNC-1 alone whose async resume raises: HITL-4, which would say whether every
    resume fails, did not run, so nothing attributes the failure and it must not pass the run."""
    blocked = [_result("ASYNC-1", "blocked", "HITL-4"),
               _result("HITL-5", "blocked", "LOOP-3").model_copy(update={"observed": "declared"})]
    done = a.resolve_blocked([r.model_copy() for r in blocked], complete=True)
    assert [r.verdict for r in done] == ["failed", "known-failure"]
    assert "this run did not judge HITL-4" in done[0].message and done[1].message == "declared"
    # While the run goes on (a partial report), HITL-4 may simply not have run yet.
    assert [r.verdict for r in a.resolve_blocked(blocked)] == ["blocked", "blocked"]


def test_a_listed_scenario_blocked_by_a_requirement_that_passed_is_its_known_failure() -> None:
    """mastra's resumes count their steps afresh (HITL-5, listed): the steps-before-the-pause check
    first asks LOOP-3, which passed, so the failure is HITL-5's own, and the binding declared it."""
    declared = _result("HITL-5", "blocked", "LOOP-3").model_copy(update={"observed": "resumes afresh"})
    still = _result("TRJ-3", "blocked", "TRJ-1").model_copy(update={"observed": "args as text"})
    results = a.resolve_blocked([_result("LOOP-3", "passed"), declared, _result("TRJ-1", "failed"), still])
    assert [r.verdict for r in results] == ["passed", "known-failure", "failed", "blocked"]
    assert results[1].message == "resumes afresh" and results[1].blocked_by is None
    assert "but LOOP-3 passed: the scenario's failure is its own" in results[1].observed
    # Still blocked, the declared reason judged nothing there: the report does not show it.
    assert results[3].observed == "" and results[3].blocked_by == "TRJ-1"


def test_a_blocked_scenario_keeps_the_binding_s_declared_reason_for_its_resolution() -> None:
    report, call = _call(_guard.Blocked("LOOP-3", "late"))
    report.wasxfail = "known failure: resumes afresh"
    assert a.verdict(report, call, None, "HITL-5") == ("blocked", "blocked by LOOP-3: late", "resumes afresh")


# -- the feature files ---------------------------------------------------------------------------


_REQUIRES = re.compile(r"\bas ([A-Z]+-\d+) requires\b")


def _named_preconditions(text: str) -> list[tuple[int, str, str]]:
    """Each `as X requires` step of a feature file: its line, its scenario's requirement, and X."""
    found, tags, own = [], "", ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("@"):
            tags = stripped
        elif stripped.startswith(("Scenario", "Example")):
            match = re.search(r"@req:([A-Z]+-\d+)", tags)
            own, tags = (match.group(1) if match else ""), ""
        elif own:
            found += [(number, own, m.group(1)) for m in _REQUIRES.finditer(stripped)]
    return found


def test_the_reader_of_named_preconditions_sees_each_scenarios_requirement() -> None:
    text = ("  @req:ASYNC-1 @capability:async\n  Scenario: s\n    Then call 1 showed x, as ERR-4 "
            "requires\n  @req:ERR-3\n  Scenario: t\n    Then call 1 stopped with \"y\", as ERR-2 requires\n")
    assert _named_preconditions(text) == [(3, "ASYNC-1", "ERR-4"), (6, "ERR-3", "ERR-2")]


def test_no_must_scenario_names_a_should_requirement_as_its_precondition() -> None:
    levels = {rid: r.level for rid, r in catalogue().items()}
    wrong = [f"{path.name}:{line}: a {own} (MUST) scenario names {owner} (SHOULD)"
             for path in sorted(Path(features_dir()).glob("*.feature"))
             for line, own, owner in _named_preconditions(path.read_text(encoding="utf-8"))
             if levels.get(own, "must") == "must" and levels.get(owner) == "should"]
    assert not wrong, ("a MUST scenario is never blocked by a SHOULD: read what it needs another "
                       "way (REQUIREMENTS.md, \"One cause, one verdict\"):\n" + "\n".join(wrong))


def test_a_cap_that_counts_something_else_than_model_calls_is_loop_3_s_unless_the_agent_s_cap_explains_it(
) -> None:
    # BeeAI's max_iterations counts iterations, and asks the model again within one: a per-call cap
    # of 2 let 6 step calls through (agent cap 5). That is LOOP-3's defect, told in LOOP-4's count;
    # a library that ignored the per-call cap for the agent's (5 calls) fails LOOP-4 on its own.
    late = "the step cap of 2 did not stop the run: after 2 step call(s) without a final answer ..."
    assert a.late_step_count(6, 2, [late], agent_cap=5) == late
    assert a.late_step_count(5, 2, [late], agent_cap=5) is None
    resumed = "the step cap did not stop the resumed run: ..."
    assert a.late_step_count(3, 1, [resumed], agent_cap=5) is None  # a resume: HITL-5's own count
    assert a.late_step_count(3, 2, [late], agent_cap=5) == late  # one step late, as before
    assert a.late_step_count(1, 2, [late], agent_cap=5) is None  # fewer: never the cap's lateness


def _unpaused(own: str, interruptible: bool, outcome: Outcome) -> World:
    """A world whose one call ran the scripted call of `delete_file` (interruptible or not), then
    asked the model past the script."""
    world = World(ReferenceBinding(), 5.0, own)
    spec = ToolSpec(name="delete_file", description="d", interruptible=interruptible,
                    parameters=(ParamSpec(name="path", type="str", description="p"),))
    world.tools["delete_file"] = SuiteTool(spec, lambda args: "done")
    world.turns_per_run.append([_step("delete_file", path="/tmp/report")])
    world.model.violation = "model call #2 was a step call, but the script has no turns left."
    world.outcomes.append(outcome)
    return world


def test_a_run_past_the_script_after_an_interruptible_call_that_did_not_pause_is_hitl_3s() -> None:
    finished = Outcome(stop_reason="finish")
    with pytest.raises(_guard.Blocked, match=r"blocked by HITL-3: the call of the interruptible tool "
                       r"'delete_file' did not pause the run"):
        _unpaused("TRJ-2", True, finished).check_script(finished)
    # HITL-3's own scenario fails, saying why; a plain tool's call, or a run that paused, is no cause.
    with pytest.raises(AssertionError, match=r"^the call of the interruptible tool 'delete_file'"):
        _unpaused("HITL-3", True, finished).check_script(finished)
    with pytest.raises(AssertionError, match=r"^unexpected model call"):
        _unpaused("TRJ-2", False, finished).check_script(finished)
    paused = Outcome(error=ErrorInfo(type="Pause", message="", kind="human-in-the-loop"))
    with pytest.raises(AssertionError, match=r"^unexpected model call"):
        _unpaused("TRJ-2", True, paused).check_script(paused)
    # The interruptible call beside a plain one, in the same reply, is as much a call that must pause.
    beside = _unpaused("TRJ-2", True, finished)
    beside.turns_per_run[-1] = [StepTurn(thought="t", tool_name="add", tool_args={"a": 1, "b": 1},
                                         parallel=(ToolCall(tool_name="delete_file",
                                                            tool_args={"path": "/tmp/report"}),))]
    with pytest.raises(_guard.Blocked, match=r"blocked by HITL-3: the call of the interruptible tool "
                       r"'delete_file' did not pause the run"):
        beside.check_script(finished)


# -- LOOP-1: a reply's well-formed tool calls dropped as the run returns ---------------------------

FINISHED = Outcome(stop_reason="finish", trajectory=[Step(tool_name="add", observation="2")])
ADD = ToolSpec(name="add", description="adds", parameters=(ParamSpec(name="a", type="int"),
                                                          ParamSpec(name="b", type="int")))
RUNNABLE = {"add": ADD, "search": ToolSpec(name="search", description="looks up",
                                           parameters=(ParamSpec(name="query"),))}
#: A second step with text beside its call, after which the run returned (Koog's singleRunStrategy).
SEARCH = _step("search", query="capital of France")


def test_a_run_that_returned_right_after_a_reply_whose_calls_never_ran_is_loop_1s() -> None:
    dropped = a.dropped_tool_calls(FINISHED, _served(_step(), SEARCH), RUNNABLE, 10, {"add": 1})
    assert dropped is not None and dropped.startswith(
        'the run returned right after step call 2, whose reply called search {"query": "capital of '
        'France"} with well-formed args, and those calls never ran')
    # Concurrent runs' tool runs are not told apart: the trajectory, one observation, tells.
    assert a.dropped_tool_calls(FINISHED, _served(_step(), SEARCH), RUNNABLE, 10) == dropped
    # A library that reports no stop reason is told alike.
    assert a.dropped_tool_calls(Outcome(), _served(SEARCH), RUNNABLE, None, {}) is not None


def test_calls_that_ran_a_final_answer_or_an_extraction_last_are_no_dropped_calls() -> None:
    ran_both = {"add": 1, "search": 1}
    assert a.dropped_tool_calls(FINISHED, _served(_step(), SEARCH), RUNNABLE, 10, ran_both) is None
    observed = [*FINISHED.trajectory, Step(tool_name="search", observation="P")]
    both = FINISHED.model_copy(update={"trajectory": observed})
    assert a.dropped_tool_calls(both, _served(_step(), SEARCH), RUNNABLE, 10) is None
    final = FinalTurn(outputs={"answer": "2"})
    assert a.dropped_tool_calls(FINISHED, _served(_step(), final), RUNNABLE, 10, {"add": 1}) is None
    assert a.dropped_tool_calls(FINISHED, _served(_step(), SEARCH, ExtractTurn(outputs={"answer": "x"})),
                                RUNNABLE, 10, {"add": 1}) is None
    assert a.dropped_tool_calls(FINISHED, [], RUNNABLE, 10, {}) is None


def test_malformed_calls_an_unknown_tool_a_pause_a_cap_or_an_error_are_other_requirements() -> None:
    served = _served(_step(), SEARCH)
    # Malformed on purpose: args that are not JSON (ARGS-3), JSON but no object (ARGS-2), a step
    # reply without its args (STEP-4); ADK's Gemini seams end the run on such calls.
    for malformed in (SEARCH.model_copy(update={"raw_tool_args": '{"query": "capital'}),
                      SEARCH.model_copy(update={"tool_args": ["capital of France"]}),
                      SEARCH.model_copy(update={"without_tool_args": True})):
        assert a.dropped_tool_calls(FINISHED, _served(_step(), malformed), RUNNABLE, 10, {"add": 1}) is None
    # One malformed call among parallel ones is enough to leave the reply to ARGS-2/3.
    parallel = SEARCH.model_copy(update={"parallel": (ToolCall(tool_name="add", raw_tool_args="{"),)})
    assert a.dropped_tool_calls(FINISHED, _served(_step(), parallel), RUNNABLE, 10, {"add": 1}) is None
    # Args that break the schema (ARGS-4: a wrong type, a missing or an undeclared field), or of
    # extreme size (ARGS-5: LangChain's create_agent ends the run on an invalid_tool_call).
    for broken in ({"query": 5}, {}, {"query": "q", "page": 2}, {"query": "x" * 10_001}):
        call = SEARCH.model_copy(update={"tool_args": broken})
        assert a.dropped_tool_calls(FINISHED, _served(_step(), call), RUNNABLE, 10, {"add": 1}) is None
    assert not a.well_formed(_step(a=True, b=1), ADD)  # a bool is no int
    assert a.well_formed(_step(a=1, b=2), ADD)
    # An unknown tool name (LOOP-5), or a tool that pauses for approval (HITL-3): not runnable.
    assert a.dropped_tool_calls(FINISHED, served, {"add": ADD}, 10, {"add": 1}) is None
    # A cap stop (LOOP-3): reported as such, or at the cap's step whatever the stop reason says.
    assert a.dropped_tool_calls(CAPPED, served, RUNNABLE, 10, {"add": 1}) is None
    assert a.dropped_tool_calls(FINISHED, served, RUNNABLE, 1, {"add": 1}) is None  # past the cap
    # On the cap's last step the calls still run: a run that says it finished dropped them, one that
    # says nothing may have stopped silently at the cap.
    assert a.dropped_tool_calls(FINISHED, served, RUNNABLE, 2, {"add": 1}) is not None
    assert a.dropped_tool_calls(Outcome(), served, RUNNABLE, 2, {"add": 1}) is None
    # A library's own stop (repeated errors), or a run that ended with an error.
    own_stop = FINISHED.model_copy(update={"stop_reason": "repeated_tool_errors"})
    assert a.dropped_tool_calls(own_stop, served, RUNNABLE, 10, {"add": 1}) is None
    raised = Outcome(error=ErrorInfo(type="ValueError", message="bad call", kind="other"))
    assert a.dropped_tool_calls(raised, served, RUNNABLE, 10, {"add": 1}) is None


def _dropped(own: str, cause: str | None) -> World:
    """A world whose one call returned with one scripted turn unused, `cause` its dropped calls."""
    world = World(ReferenceBinding(), 5.0, own)
    world.model = world.new_model([FinalTurn(outputs={"answer": "Paris"})])
    world.outcomes.append(FINISHED)
    world.early_stops.append(None)
    world.dropped_calls.append(cause)
    world.calls_per_run.append([LMCall(kind="step", adapter="chat", messages=[])] * 2)
    return world


DROPPED = a.dropped_tool_calls(FINISHED, _served(_step(), SEARCH), RUNNABLE, 10, {"add": 1})


def test_a_script_cut_short_or_a_step_count_short_by_dropped_calls_is_blocked_by_loop_1() -> None:
    with pytest.raises(_guard.Blocked, match=r"blocked by LOOP-1: the run returned right after step call 2"):
        _dropped("TRJ-1", DROPPED).check_script(FINISHED)
    with pytest.raises(_guard.Blocked, match=r"blocked by LOOP-1: .*\(call 1 should have made 3 step call"):
        call_made_steps(_dropped("EXH-6", DROPPED), "1", "3")
    with pytest.raises(_guard.Blocked, match=r"blocked by LOOP-1"):
        _dropped("EXH-1", DROPPED).blocked_if_stopped_early()
    # LOOP-1's own scenario fails, saying why; without the cause the script check fails as it is.
    with pytest.raises(AssertionError, match=r"^the run returned right after step call 2"):
        _dropped("LOOP-1", DROPPED).check_script(FINISHED)
    with pytest.raises(AssertionError, match=r"^the implementation made fewer model calls"):
        _dropped("TRJ-1", None).check_script(FINISHED)
    call_made_steps(_dropped("EXH-6", DROPPED), "1", "2")  # the count is right: nothing to tell
