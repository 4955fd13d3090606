"""The native shape: a tool-calling loop with no signature runs through the same feature files,
passes everything it claims, and its broken variants are caught on the right requirement."""

from __future__ import annotations

import re

import pytest

from conformance._features import catalogue
from conformance._fixtures import PAUSE_AND_RESUME_ONLY
from conformance.binding import CAPABILITIES
from tests.suite.conftest import RunSuite, SuiteRun, suite_run

N = "tests.native"


@pytest.fixture(scope="module")
def native_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    return suite_run(tmp_path_factory.mktemp("native"), f"{N}.binding:NativeBinding")


def test_the_native_loop_passes_everything_it_claims(native_run: SuiteRun) -> None:
    assert native_run.returncode == 0, native_run.output[-3000:]
    report = native_run.report
    assert report is not None
    claimed = set(report["binding"]["capabilities"])
    applies = {rid for rid, r in catalogue().items()
               if r.profile == "core" or set(r.profile.split("|")) & claimed}
    assert native_run.requirements("passed") == applies
    assert native_run.requirements("not-claimed") == set(catalogue()) - applies
    # Every unclaimed capability says why, in the report.
    assert set(report["binding"]["not_claimed"]) | claimed == CAPABILITIES


def test_approval_by_callback_passes_what_it_claims_and_leaves_pause_and_resume_unclaimed(
        run_suite: RunSuite) -> None:
    run = run_suite(f"{N}.approvals:ApprovingNativeBinding", "-k", "approv or reject or edit or "
                    "interrupt or resum or pause or free_text or plain_tool")
    assert run.report is not None and run.returncode == 0, run.output[-3000:]
    assert {"HITL-3", "HITL-4", "HITL-7"} <= run.requirements("passed"), run.report["requirements"]
    # Its approvals are a callback: what judges pause-and-resume only is not claimed.
    assert {"HITL-5", "HITL-6", "HITL-8"} <= run.requirements("not-claimed")
    paused = [s for s in run.report["scenarios"] if s["requirement"] in PAUSE_AND_RESUME_ONLY]
    assert paused and all(s["verdict"] == "not-claimed" for s in paused)
    assert all("approval_form" in s["message"] for s in paused if s["requirement"] != "HITL-8")


def test_raise_mode_admits_an_extra_model_call_for_the_partial_answer(native_run: SuiteRun) -> None:
    """EXH-2 lets a library fill partial_final_answer with one more model call: the loop does."""
    assert native_run.report is not None
    raise_mode = [s for s in native_run.report["scenarios"] if s["requirement"] in ("EXH-1", "EXH-2")]
    assert raise_mode and all(s["verdict"] == "passed" for s in raise_mode)


@pytest.mark.parametrize(("binding", "requirement"), [
    ("CrashesOnToolError", "ERR-1"),
    ("DropsTheLastStepAnswer", "LOOP-3"),
    ("RepairsMalformedArgs", "ARGS-3"),
    ("SkipsUnknownTools", "LOOP-5"),
    ("NeverStopsOnRepeatedErrors", "ERR-2"),
    ("CatchesOnlyValueErrors", "ERR-1"),
    ("BindsEveryObservationToTheFirstCall", "ERR-1"),
    ("DropsTheErrorMessage", "ERR-4"),
    ("DropsUndeclaredArgs", "ARGS-6"),
    ("CoercesLossily", "ARGS-4"),
    ("ParsesArgsWithoutAGuard", "ARGS-5"),
    ("AsksForApprovalAfterRunning", "HITL-3"),
    ("ReportsTheLastStepAnswerAsACapStop", "LOOP-3"),
    ("ShowsOnlyTheLastFiveSteps", "STEP-3"),
    ("OffersAToolTheAgentLacks", "STEP-1"),
    ("DropsFailedCallsFromTheTrajectory", "TRJ-3"),
    ("TakesAZeroCapForTheDefault", "EXH-3"),
    ("ForgetsTheStepsOnTheCap", "EXH-2"),
    ("RaisesAPlainErrorOnTheCap", "EXH-4"),
    ("IgnoresTheCallsCap", "LOOP-4"),
])
def test_a_broken_native_loop_fails_the_right_requirement(
    run_suite: RunSuite, binding: str, requirement: str
) -> None:
    run = run_suite(f"{N}.broken:{binding}")
    assert run.report is not None, run.output[-2000:]
    assert requirement in run.requirements("failed"), run.report["requirements"]
    assert not run.requirements("errored"), run.report["requirements"]


def test_a_requirement_whose_precondition_failed_is_blocked_not_passed(run_suite: RunSuite) -> None:
    run = run_suite(f"{N}.broken:NeverStopsOnRepeatedErrors", "-k", "similar or clean_error")
    assert run.report is not None, run.output[-2000:]
    assert run.report["requirements"]["ERR-3"] == "blocked"
    assert run.report["reasons"]["ERR-3"].startswith("blocked by ERR-2:")
    (scenario,) = [s for s in run.report["scenarios"] if s["requirement"] == "ERR-3"]
    assert scenario["blocked_by"] == "ERR-2"
    # The run fails on ERR-2, the requirement that broke; the blocked scenario is no failure of its own.
    failed = sum(1 for s in run.report["scenarios"] if s["verdict"] == "failed")
    assert run.returncode == 1
    assert re.search(rf"\b{failed} failed\b", run.output), run.output[-500:]


def test_a_final_answer_taken_for_a_cap_stop_fails_loop_3_alone(run_suite: RunSuite) -> None:
    """One cause, one verdict: a final answer on step N of a cap of N reported as a cap stop is
    LOOP-3's defect; the same scenario under each cap behaviour (EXH-1, EXH-7) is blocked by it."""
    run = run_suite(f"{N}.broken:DropsTheLastStepAnswer", "-k", "last_allowed_step or step_n_of")
    assert run.report is not None, run.output[-2000:]
    assert run.report["requirements"] == {"LOOP-3": "failed", "EXH-1": "blocked", "EXH-7": "blocked"}
    assert all(run.report["reasons"][r].startswith("blocked by LOOP-3:") for r in ("EXH-1", "EXH-7"))


def test_an_argument_schema_written_as_json_text_is_read(run_suite: RunSuite) -> None:
    """STEP-3 reads a schema however the library writes it: here a JSON string in the declaration."""
    run = run_suite(f"{N}.variants:DeclaresSchemasAsJSONText", "-k", "argument_schema or each_tools_name")
    assert run.report is not None, run.output[-2000:]
    step_3 = [s for s in run.report["scenarios"] if s["requirement"] == "STEP-3"]
    assert step_3 and all(s["verdict"] == "passed" for s in step_3), step_3


def test_an_auxiliary_call_is_logged_and_reported_without_a_scripted_turn(run_suite: RunSuite) -> None:
    run = run_suite(f"{N}.observing:ObservesEachResult", "-k", "chosen_tool_runs or choosing_finish")
    assert run.returncode == 0, run.output[-3000:]
    assert run.requirements("passed") == {"LOOP-1", "LOOP-2"}
    assert run.report is not None
    assert run.report["binding"]["auxiliary_calls"] == {
        "observation": "the loop may rewrite each tool result with a model call"}
    made = {s["name"]: s["auxiliary_calls"] for s in run.report["scenarios"] if s["verdict"] == "passed"}
    # One per tool result: that scenario runs add, then search.
    assert made["The chosen tool runs with exactly the chosen args and its result becomes an "
                "observation"] == {"observation": 2}, made


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_an_auxiliary_call_the_binding_does_not_name_is_a_binding_error(
    run_suite: RunSuite, workers: tuple[str, ...]
) -> None:
    run = run_suite(f"{N}.observing:ObservesWithoutNamingIt", "-k", "chosen_tool_runs", *workers)
    assert run.returncode == 1, run.output[-3000:]
    assert run.requirements("errored") == {"LOOP-1"}, run.output[-3000:]
    assert run.report is not None
    [scenario] = [s for s in run.report["scenarios"] if s["verdict"] == "errored"]
    assert "auxiliary call 'observation'" in scenario["message"]
    assert "auxiliary_calls" in scenario["message"]


# -- Gaps an independent implementation slipped through (issue 37): each broken native loop fails
# -- its own requirement alone, on the scenario written for that gap.

@pytest.mark.parametrize(("binding", "requirement", "scenario"), [
    ("ReadsMalformedArgsAsEmpty", "ARGS-3",
     "Malformed JSON tool args never reach a tool that takes no arguments"),
    ("KeepsCountingAfterAnAnswer", "EXH-6",
     "A call after one that gave its final answer starts with a fresh step budget"),
    ("CallsTheModelOnAZeroCallCap", "EXH-3",
     "A step cap of zero given to one call is refused, or raises before any model call"),
    ("RunsTheEditUnchecked", "HITL-7",
     "An edit whose args break the tool's schema never reaches the tool with a wrong or missing value"),
])
def test_a_gap_fails_its_own_requirement_alone_on_its_own_scenario(
    run_suite: RunSuite, binding: str, requirement: str, scenario: str
) -> None:
    fails_alone(run_suite(f"{N}.broken:{binding}"), requirement, scenario)


def fails_alone(run: SuiteRun, requirement: str, scenario: str) -> None:
    """`run` failed `requirement` on `scenario` alone: nothing else failed, errored or was blocked."""
    assert run.report is not None, run.output[-3000:]
    assert run.requirements("failed") == {requirement}, run.report["requirements"]
    assert not run.requirements("errored") | run.requirements("blocked"), run.report["requirements"]
    failed = {s["name"] for s in run.report["scenarios"] if s["verdict"] == "failed"}
    assert failed == {scenario}, failed


def test_an_answer_that_joins_the_text_of_every_reply_fails_loop_7_alone(run_suite: RunSuite) -> None:
    """One cause, one verdict: agno's and mastra's answer, every reply's text joined ('try itadd
    instead5' for '5'), fails LOOP-7 on its own scenario; every scenario that needs the run's final
    answer (ERR-1, LOOP-3, LOOP-5, ARGS-*, EXH-7) reads that it was reached, not its text, and passes."""
    run = run_suite(f"{N}.broken:JoinsTheTextOfEveryReply")
    fails_alone(run, "LOOP-7",
                "The answer is the final reply alone, not joined with the text beside earlier tool calls")
    assert run.report is not None
    (own,) = [s for s in run.report["scenarios"] if s["verdict"] == "failed"]
    assert "'try itadd instead5', expected '5'" in own["message"], own
