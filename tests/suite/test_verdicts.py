"""The suite's verdicts: the reference passes everything; every kind of wrong is told apart."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import pytest

from conformance._features import catalogue
from conformance._report import Report
from conformance.bindings.reference import ReferenceBinding
from tests.suite.conftest import RunSuite, SuiteRun, suite_run
from tests.suite.test_native import fails_alone

B = "tests.suite.bindings"


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    """One full run against the reference, shared by the tests that read it."""
    workdir = tmp_path_factory.mktemp("reference")
    return suite_run(workdir, "reference", "--conformance-markdown", str(workdir / "report.md"))


def test_the_reference_passes_every_claimed_requirement(reference_run: SuiteRun) -> None:
    assert reference_run.returncode == 0, reference_run.output[-3000:]
    report = reference_run.report
    assert report is not None
    failing = {s["name"]: s["message"] for s in report["scenarios"]
               if s["verdict"] not in ("passed", "not-claimed")}
    assert failing == {}
    claimed = {rid for rid, r in catalogue().items()
               if r.profile == "core" or set(r.profile.split("|")) & set(report["binding"]["capabilities"])}
    assert reference_run.requirements("passed") == claimed
    unclaimed = {rid: r.profile for rid, r in catalogue().items() if rid not in claimed}
    assert reference_run.requirements("not-claimed") == set(unclaimed)


def test_the_json_report_has_the_documented_shape(reference_run: SuiteRun) -> None:
    report = reference_run.report
    assert report is not None
    Report.model_validate(report)
    assert report["format_version"] == 3
    assert report["binding"]["name"] == "reference"
    assert set(report["binding"]) == {"name", "version", "capabilities", "not_claimed", "cannot_express",
                                      "contract_version", "dependencies", "auxiliary_calls", "parity",
                                      "digest", "run_outside_ci"}
    assert report["binding"]["digest"].startswith("sha256:") and report["binding"]["run_outside_ci"] is None
    assert report["binding"]["contract_version"] == 3
    assert report["binding"]["parity"] == dict(ReferenceBinding.parity)
    # Catalogue 3: every requirement's level, whether the library conforms, k of n where it applies.
    assert report["levels"] == {rid: r.level for rid, r in catalogue().items()}
    assert report["conforms"] is True and report["judged"] == {}
    assert set(report["binding"]["not_claimed"]) == {"max-steps-return", "parallel-tool-calls"}
    assert set(report["requirements"]) == set(catalogue())
    assert set(report["requirements"].values()) <= {
        "passed", "failed", "errored", "not-claimed", "known-failure", "blocked"}
    # Every requirement not passed says why; a not-claimed one gives the binding's reason.
    assert set(report["reasons"]) == {r for r, v in report["requirements"].items() if v != "passed"}
    assert "one tool call per step" in report["reasons"]["LOOP-6"]
    assert report["generated"].endswith("+00:00")
    for scenario in report["scenarios"]:
        assert set(scenario) == {"id", "feature", "name", "requirement", "verdict", "message",
                                 "blocked_by", "observed", "auxiliary_calls"}
        assert scenario["feature"].endswith(".feature")


def test_parallel_runs_give_identical_verdicts(run_suite: RunSuite, reference_run: SuiteRun) -> None:
    parallel = run_suite("reference", "-n", "2")
    assert parallel.report is not None, parallel.output[-2000:]
    assert reference_run.report is not None
    assert parallel.report["requirements"] == reference_run.report["requirements"]
    serial = {s["id"]: s["verdict"] for s in reference_run.report["scenarios"]}
    assert {s["id"]: s["verdict"] for s in parallel.report["scenarios"]} == serial


@pytest.mark.parametrize(
    ("binding", "requirement"),
    [
        ("IgnoresTheCap", "LOOP-3"),
        ("DropsTheAdapterOverride", "ADP-2"),
        ("LeaksTheAdapterOverride", "ADP-3"),
        ("ReordersTheTrajectory", "TRJ-3"),
        ("RunsUnknownTools", "LOOP-5"),
        ("ReplaysTheStream", "STREAM-1"),
        ("BlocksTheEventLoop", "ASYNC-2"),
        ("SharesTheAdapterAcrossRuns", "ASYNC-2"),
        ("RunsBeforeApproval", "HITL-3"),
        ("HidesTheArgumentSchema", "STEP-3"),
        ("NamesNoStatus", "NET-1"),
        ("QuotesOnlyTheEndpoint", "NET-1"),
        ("KeepsTheCallOnTheAgent", "ASYNC-2"),
        ("AsksNoOneByDefault", "HITL-1"),
        ("ApprovesEveryToolByDefault", "HITL-3"),
        ("SkipsUnknownTools", "LOOP-5"),
        ("GuessesMalformedArgs", "ARGS-3"),
        ("RestartsTheBudgetOnResume", "HITL-5"),
        ("BacksOffConstantly", "NET-1"),
        ("TriesOnceMoreAtOnce", "NET-1"),
        ("WaitsForEver", "NET-1"),
        ("IgnoresRetryAfter", "NET-1"),
        ("DropsFieldDescriptions", "SIG-2"),
        ("NamesEveryInput", "SIG-6"),
        ("NamesTheInputBare", "SIG-6"),
        ("NamesOnlyTheMisspelledInput", "SIG-6"),
        ("CountsTheMissingInputs", "SIG-6"),
        ("ReadsArrowStringsAsText", "EXT-1"),
        ("CrashesOnAReplyWithoutArgs", "ARGS-3"),
        ("CrashesOnAFencedReply", "ARGS-3"),
        ("ShowsAPlaceholderForStructuredResults", "LOOP-1"),
        ("LosesThePartialAnswer", "EXH-3"),
        ("RefusesWholeFloats", "EXT-1"),
        ("SkipsTheLimitsUnderTheJSONAdapter", "ARGS-5"),
        ("LosesTrackOfEscapes", "ARGS-5"),
        ("ForgetsTheDepthOnEachClose", "ARGS-5"),
        ("CrashesOnArgsThatAreNotAnObject", "ARGS-2"),
        ("ShowsOnlyTextInputs", "STEP-3"),
        ("KeepsNumbersInTextOutputs", "EXT-1"),
        ("KeepsUnparsedNumbers", "EXT-1"),
        ("GuessesUnparsedNumbers", "EXT-1"),
        ("FailsOnUnparsedNumbersWithoutSaying", "EXT-1"),
        ("CrashesOnADeeplyNestedOutput", "EXT-1"),
        ("EmptiesADeeplyNestedOutput", "EXT-1"),
        ("ForgetsAnsweredPausesOnANewPause", "HITL-6"),
        ("ResumesAnotherAgentsPause", "HITL-6"),
        ("RunsAReplayedPauseAgain", "HITL-8"),
        ("RunsTheCallOnAnEditOfNoTool", "HITL-7"),
        ("SharesThePausedTrajectory", "TRJ-2"),
        ("RejectsWithoutTellingTheAgent", "HITL-4"),
        ("CrashesOnAnUnparsableStep", "STEP-4"),
        ("SaysNothingOfJSON", "STEP-2"),
        ("SaysNothingOfTheSignature", "SIG-5"),
        ("RepeatsTheLastStreamStep", "STREAM-1"),
    ],
)
def test_a_broken_implementation_fails_the_right_requirement(
    run_suite: RunSuite, binding: str, requirement: str
) -> None:
    run = run_suite(f"{B}:{binding}")
    assert run.returncode == 1
    assert requirement in run.requirements("failed"), run.output[-3000:]
    assert not run.requirements("errored")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_scenario_blocked_by_a_passed_requirement_fails_in_every_report(
    run_suite: RunSuite, tmp_path: Path, workers: list[str]
) -> None:
    junit = tmp_path / "junit.xml"
    run = run_suite(f"{B}:BlockedByAPassedRequirement", "--junitxml", str(junit), "-ra", *workers)
    assert run.returncode == 1, run.output[-3000:]
    assert run.requirements("failed") == {"ERR-2", "TRJ-3"} and "ERR-1" in run.requirements("passed")
    # pytest's own tally and JUnit XML say so too, not "skipped"
    summary = run.output.split("short test summary")[-1].splitlines()
    assert "3 failed" in run.output and not any(
        line.startswith("SKIPPED") and "blocked by ERR-1" in line for line in summary), run.output[-3000:]
    assert "but ERR-1 passed: the scenario's failure is its own" in run.output
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("failures"), suite.get("skipped")) == ("3", "5")
    failed = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert len(failed) == 3 and all(case.find("skipped") is None for case in failed)


def test_a_library_that_cannot_resume_does_not_pass_by_refusing_another_agents_pause(
    run_suite: RunSuite,
) -> None:
    run = run_suite(f"{B}:CannotResume", "-k", "another_agent or approving_runs")
    assert run.report is not None, run.output[-3000:]
    assert "HITL-4" in run.requirements("failed")
    (scenario,) = [s for s in run.report["scenarios"]
                   if s["name"] == "A pause answered through another agent is refused"]
    assert (scenario["verdict"], scenario["blocked_by"]) == ("blocked", "HITL-4"), scenario


def test_a_cap_that_stops_a_step_early_fails_loop_3_and_blocks_what_counts_steps(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:StopsAStepEarly")
    assert run.report is not None, run.output[-3000:]
    assert "LOOP-3" in run.requirements("failed")
    # Each of these counts steps up to a cap, the agent's or the call's, synchronous or streamed:
    # LOOP-3's failure, not theirs (where LOOP-3 passed, the report turns such a block into a failure).
    # So is a final answer on the last allowed step not taken (EXH-1), in concurrent runs too (ASYNC-2).
    dependent = {"TRJ-3", "EXH-1", "EXH-2", "EXH-4", "ERR-2", "LOOP-4", "STREAM-1", "ASYNC-2"}
    assert dependent <= run.requirements("blocked"), run.report["requirements"]
    blocked = [s for s in run.report["scenarios"] if s["verdict"] == "blocked"]
    assert {s["blocked_by"] for s in blocked if s["requirement"] in dependent} == {"LOOP-3"}
    final = next(s for s in run.report["scenarios"]
                 if s["name"] == "A final answer on the last allowed step is accepted")
    assert "though the reply to step call 2 was a final answer" in final["message"], final
    assert not run.requirements("errored")


def test_a_run_that_never_stops_ends_once_its_script_is_spent_and_fails_saying_so(
    run_suite: RunSuite,
) -> None:
    run = run_suite(f"{B}:NeverStops", "-k", "never_chooses_finish", "--conformance-timeout", "120")
    assert run.report is not None, run.output[-3000:]
    (scenario,) = [s for s in run.report["scenarios"]
                   if s["name"] == "The step cap stops a loop that never chooses finish"]
    assert scenario["verdict"] == "failed", scenario
    assert scenario["message"].startswith("the run never stopped: it made "), scenario["message"]
    assert "did not return within" not in scenario["message"]


def test_a_run_that_never_settles_once_asked_past_its_cap_is_blocked_by_loop_3_not_a_hang(
    run_suite: RunSuite,
) -> None:
    # A harness whose library leaves the script's refusal unhandled reports the run as never
    # settled: what made it hang is the call past the cap, LOOP-3's, as if the refusal had raised.
    run = run_suite(f"{B}:NeverStopsThenHangs", "--conformance-timeout", "3", "-k",
                    "never_chooses_finish or run_stopped_by_the_step_cap")
    assert run.report is not None, run.output[-3000:]
    assert run.report["requirements"]["LOOP-3"] == "failed"
    exh4 = [s for s in run.report["scenarios"] if s["requirement"] == "EXH-4"]
    assert exh4 and all(s["verdict"] == "blocked" and s["blocked_by"] == "LOOP-3" for s in exh4), exh4
    assert not run.requirements("errored")


def test_a_hanging_binding_fails_its_scenario_and_the_run_goes_on(run_suite: RunSuite) -> None:
    # Not the smoke tier: a hang there would (rightly) report the whole binding as broken.
    run = run_suite(f"{B}:Hanging", "--conformance-timeout", "0.2", "-k", "malformed or lacks_a_required")
    assert run.report is not None, run.output[-2000:]
    hung = [s for s in run.report["scenarios"] if "did not return within 0.2 s" in s["message"]]
    assert hung and all(s["verdict"] in ("failed", "errored") for s in hung)
    assert run.requirements("passed") >= {"SIG-5"}  # scenarios that never call run still pass


def test_a_precondition_that_hangs_blocks_the_scenario_by_the_requirement_it_names(
    run_suite: RunSuite,
) -> None:
    alone = run_suite(f"{B}:HangsOnTheFirstTry", "--conformance-timeout", "0.5", "-k",
                      "clean_error_tracking")
    assert alone.report is not None, alone.output[-2000:]
    (err3,) = [s for s in alone.report["scenarios"] if s["requirement"] == "ERR-3"]
    # ERR-2 did not run, so nothing attributes the hang: the run does not pass on it.
    assert err3["verdict"] == "failed" and "blocked by ERR-2" in err3["message"], err3
    assert "did not return within 0.5 s" in err3["message"]
    assert "this run did not judge ERR-2" in err3["message"] and alone.returncode == 1
    # With ERR-2 judged and passed, the hang is ERR-3's own failure.
    both = run_suite(f"{B}:HangsOnTheFirstTry", "--conformance-timeout", "0.5", "-k",
                     "clean_error_tracking or similar_failures_in_a_row")
    assert both.report is not None, both.output[-2000:]
    assert both.report["requirements"]["ERR-2"] == "passed"
    (err3,) = [s for s in both.report["scenarios"] if s["requirement"] == "ERR-3"]
    assert err3["verdict"] == "failed" and "but ERR-2 passed" in err3["message"], err3
    assert both.returncode == 1


@pytest.mark.parametrize(("binding", "says"), [
    ("Nonsense", "not a valid Outcome"),
    ("Raising", "binding.run raised KeyError"),
])
def test_a_binding_bug_is_reported_as_errored_not_failed(
    run_suite: RunSuite, binding: str, says: str
) -> None:
    run = run_suite(f"{B}:{binding}")
    assert run.returncode == 1
    assert run.report is not None
    assert not run.requirements("failed"), run.report["requirements"]
    assert run.requirements("errored")
    assert any(says in s["message"] for s in run.report["scenarios"])


def test_a_failing_smoke_tier_reports_a_broken_binding(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:BrokenSmoke")
    assert run.returncode == 1
    assert "the binding looks broken" in run.output
    assert "if the library itself fails that scenario by design, list it in known_failures" in run.output
    assert run.report is not None
    not_run = [s for s in run.report["scenarios"] if s["message"].startswith("not run: binding broken")]
    assert len(not_run) > 20 and all(s["verdict"] == "errored" for s in not_run)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_smoke_scenario_listed_as_a_known_failure_does_not_break_the_tier(
    run_suite: RunSuite, workers: tuple[str, ...]
) -> None:
    run = run_suite(f"{B}:FailsTheSmokeTierByDesign", "-k",
                    "choosing_finish_stops or arrow_string or chosen_tool_runs", *workers)
    assert run.returncode == 1, run.output[-3000:]
    assert "the binding looks broken" not in run.output
    assert run.report is not None
    verdicts = {s["name"]: (s["verdict"], s["message"]) for s in run.report["scenarios"]}
    assert verdicts["Choosing finish stops the loop at once"][0] == "known-failure"
    chosen = verdicts["The chosen tool runs with exactly the chosen args and its result becomes an "
                      "observation"]
    assert chosen[0] == "failed" and not chosen[1].startswith("not run"), chosen


def test_a_known_failure_that_passes_fails_the_run_as_stale(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:PassingKnownFailure", "-k", "finish")
    assert run.returncode == 1
    assert run.report is not None
    stale = [s for s in run.report["scenarios"] if s["name"] == "Choosing finish stops the loop at once"]
    assert stale and stale[0]["verdict"] == "failed"
    assert "remove it from the binding's known_failures" in stale[0]["message"]



def test_a_scenarios_own_known_failure_reason_wins_over_its_requirements(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:KnowsItIgnoresTheCap", "-k", "step_cap")
    assert run.report is not None, run.output[-3000:]
    reasons = {s["name"]: s["message"] for s in run.report["scenarios"] if s["requirement"] == "LOOP-3"}
    assert "this scenario's own reason" in reasons["The step cap stops a loop that never chooses finish"]
    assert any("the whole requirement's reason" in m for n, m in reasons.items()
               if n != "The step cap stops a loop that never chooses finish"), reasons


def test_a_library_without_arrow_strings_fails_sig_1_once_and_is_judged_in_its_own_form(
    run_suite: RunSuite,
) -> None:
    # A harness once built a class from every arrow string (DSPy.rb has no string form): SIG-1 and
    # SIG-4 passed on its emulation, and SIG-5's rows failed on errors the library never raises.
    selected = "signature or arrow or string_form or input or finish_first"
    run = run_suite(f"{B}:HasNoArrowStrings", "-k", selected)
    assert run.report is not None, run.output[-3000:]
    verdicts = {(s["requirement"], s["id"].partition("[")[2] or s["name"]): (s["verdict"], s["blocked_by"])
                for s in run.report["scenarios"]}
    assert verdicts[("SIG-1", "An arrow-string signature takes its input and returns its output")] == (
        "known-failure", None)
    blocked = {key for key, verdict in verdicts.items() if verdict == ("blocked", "SIG-1")}
    assert {rid for rid, _ in blocked} == {"SIG-4", "SIG-5", "EXT-1"}, verdicts
    assert len([key for key in blocked if key[0] == "SIG-5"]) == 5, verdicts
    assert run.report["requirements"]["SIG-6"] == run.report["requirements"]["SIG-3"] == "passed"
    assert run.report["requirements"]["LOOP-2"] == "passed"  # the default string form, as a class
    assert run.requirements("known-failure") == {"SIG-1"}, run.output[-3000:]
    assert not run.requirements("failed") and not run.requirements("errored"), run.output[-3000:]


def test_a_repeated_stream_step_blocks_the_streamed_cap_by_stream_1(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:RepeatsTheLastStreamStep", "-k", "stream")
    assert run.report is not None, run.output[-3000:]
    assert run.report["requirements"]["STREAM-1"] == "failed"
    (streamed,) = [s for s in run.report["scenarios"] if s["requirement"] == "LOOP-4"
                   and s["verdict"] != "not-claimed"]
    assert (streamed["verdict"], streamed["blocked_by"]) == ("blocked", "STREAM-1"), streamed


def test_an_unnamed_auxiliary_call_in_concurrent_runs_is_a_binding_error(run_suite: RunSuite) -> None:
    # The check once covered the scenario's own model only: the concurrent runs' models answered
    # an unnamed auxiliary call silently, and the report could not say what the call was.
    run = run_suite(f"{B}:LeavesAnAsyncAuxiliaryCallUnnamed", "-k", "overlapping")
    assert run.report is not None, run.output[-3000:]
    verdicts = {s["name"]: (s["verdict"], s["message"]) for s in run.report["scenarios"]}
    assert len(verdicts) == 2 and {v for v, _ in verdicts.values()} == {"errored"}, verdicts
    assert all("auxiliary call 'tally' (concurrent run 0)" in m for _, m in verdicts.values()), verdicts
    assert run.requirements("errored") == {"ASYNC-2"}, run.output[-3000:]


def test_a_request_to_a_path_the_seam_does_not_serve_is_the_bindings_error(run_suite: RunSuite) -> None:
    # The seam once answered a Responses-API request (served since) with a chat-completion body: the
    # library then failed (TypeError) and the scenario was blamed on it.
    run = run_suite(f"{B}:PointsTheLibraryAtAnUnservedAPI", "-k", "finish")
    assert run.report is not None, run.output[-3000:]
    verdicts = {s["verdict"] for s in run.report["scenarios"] if s["verdict"] != "not-claimed"}
    messages = [s["message"] for s in run.report["scenarios"] if s["verdict"] == "errored"]
    assert verdicts == {"errored"} and messages, run.output[-3000:]
    assert any("'/v1/completions'" in m and "'/chat/completions'" in m for m in messages), messages


# -- attribution: a cause another requirement judges blocks by its owner (conformance._attribution) --


def _blocked_by(run: SuiteRun, owner: str) -> set[str]:
    """The requirements of the scenarios `owner` blocked."""
    assert run.report is not None, run.output[-3000:]
    return {s["requirement"] for s in run.report["scenarios"]
            if s["verdict"] == "blocked" and s["blocked_by"] == owner}


def test_a_run_that_never_stops_fails_loop_3_and_blocks_the_scenarios_of_others(
    run_suite: RunSuite,
) -> None:
    run = run_suite(f"{B}:NeverStops", "--conformance-timeout", "120")
    assert run.report is not None, run.output[-3000:]
    assert run.report["requirements"]["LOOP-3"] == "failed"
    # agno's `tool_call_limit`: everything that stops on the cap, a resume's remaining budget too.
    dependent = {"EXH-1", "EXH-2", "EXH-3", "EXH-4", "EXH-6", "TRJ-3", "ERR-2", "LOOP-4", "LOOP-5",
                 "HITL-5", "STREAM-1"}
    assert dependent <= _blocked_by(run, "LOOP-3") and dependent <= run.requirements("blocked")
    assert not run.requirements("failed") - {"LOOP-3"} and not run.requirements("errored")
    messages = [s["message"] for s in run.report["scenarios"]
                if s["requirement"] == "EXH-4" and s["verdict"] != "passed"]
    assert messages and all(m.startswith("blocked by LOOP-3: the run never stopped: it made ")
                            for m in messages), messages


def test_a_cap_that_asks_a_step_late_fails_loop_3_and_blocks_what_stops_on_the_cap(
    run_suite: RunSuite,
) -> None:
    run = run_suite(f"{B}:AsksAStepLate")
    assert run.report is not None, run.output[-3000:]
    assert run.report["requirements"]["LOOP-3"] == "failed"
    # Genkit's `maxTurns`: a script of N steps under a cap of N meets a step call N + 1, and every
    # count of step calls under the cap (EXH-1, EXH-6, LOOP-4) is one over.
    dependent = {"TRJ-3", "EXH-1", "EXH-2", "EXH-5", "EXH-6", "EXT-2", "LOOP-4"}
    assert dependent <= _blocked_by(run, "LOOP-3") and dependent <= run.requirements("blocked")
    (trj3,) = [s for s in run.report["scenarios"] if s["requirement"] == "TRJ-3"
               and s["verdict"] == "blocked" and "step cap of 3" in s["message"]]
    assert ("the step cap of 3 did not stop the run: after 3 step call(s) without a final answer it "
            "asked the model for step 4") in trj3["message"]
    (exh6,) = [s for s in run.report["scenarios"] if s["requirement"] == "EXH-6"
               and "call 2 should have made 3 step call(s); it made 4" in s["message"]]
    assert exh6["verdict"] == "blocked" and exh6["message"].startswith("blocked by LOOP-3: the step cap")
    # Its one other failure is its own: it asks the model once even under a cap of zero (EXH-3's).
    assert run.requirements("failed") == {"LOOP-3", "EXH-3"}, run.report["requirements"]
    assert not run.requirements("errored")


def test_a_cap_one_step_over_in_every_form_of_call_fails_loop_3_alone(run_suite: RunSuite) -> None:
    """A cap that runs one step more, given to the agent or to one call, is one defect (LOOP-3's):
    the per-call counts it spoils (LOOP-4) are blocked by it. A per-call cap ignored altogether
    fails LOOP-4 on its own (tests/native: IgnoresTheCallsCap)."""
    run = run_suite(f"{B}:IgnoresTheCap", "-k", "step_cap")
    assert run.report is not None, run.output[-3000:]
    assert run.report["requirements"]["LOOP-3"] == "failed"
    assert run.report["requirements"]["LOOP-4"] == "blocked" and "LOOP-4" in _blocked_by(run, "LOOP-3")


def test_args_recorded_as_text_fail_trj_1_and_block_the_trajectory_checks_of_others(
    run_suite: RunSuite,
) -> None:
    run = run_suite(f"{B}:RecordsArgsAsText")
    assert run.report is not None, run.output[-3000:]
    assert run.report["requirements"]["TRJ-1"] == "failed"
    (own,) = [s for s in run.report["scenarios"] if s["requirement"] == "TRJ-1"]
    assert own["message"].startswith("step 1's args are recorded in the trajectory as the text "
                                     "'{\"a\": 1234, \"b\": 4321}', not as the args object"), own
    # dspy.ts's text protocol: LOOP-1's trajectory line, TRJ-2, TRJ-3, ERR-1, the concurrent runs'
    # trajectories (ASYNC-2) and the stream's events compared with the trajectory (STREAM-1).
    dependent = {"LOOP-1", "TRJ-2", "TRJ-3", "ERR-1", "ASYNC-2", "STREAM-1"}
    assert dependent <= _blocked_by(run, "TRJ-1") and dependent <= run.requirements("blocked")
    assert run.requirements("failed") == {"TRJ-1"}, run.report["requirements"]
    assert not run.requirements("errored")


# -- Gaps an independent implementation slipped through (issue 37): each broken implementation
# -- fails its own requirement alone, on the scenario written for that gap.

@pytest.mark.parametrize(("binding", "requirement", "scenario"), [
    ("ReadsAMissingArgsFieldAsEmpty", "STEP-4",
     "A step reply without the args of a tool that takes none is asked again or shown as an error"),
    ("ForgetsTheCallsCapOnResume", "HITL-5",
     "Resuming keeps the step cap given to the call and the steps used before the pause"),
    ("RefusesABadEditWithoutSayingWhy", "HITL-7",
     "An edit whose args break the tool's schema never reaches the tool with a wrong or missing value"),
])
def test_a_gap_fails_its_own_requirement_alone_on_its_own_scenario(
    run_suite: RunSuite, binding: str, requirement: str, scenario: str
) -> None:
    fails_alone(run_suite(f"{B}:{binding}"), requirement, scenario)
