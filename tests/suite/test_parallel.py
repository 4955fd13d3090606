"""Every broken binding in tests/ gets the same verdicts under `-n 2` as in a serial run.

Each binding runs on the requirements it breaks (after the smoke tier, `-p tests.suite.only`), once
serially and once on two pytest-xdist workers: a whole run of each, twice, would cost minutes.
"""

from __future__ import annotations

import importlib
import inspect
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.binding import Binding
from tests.suite.conftest import SuiteRun, suite_run

B, HTTP, CI, NATIVE = ("tests.suite.bindings", "tests.suite.http_bindings", "tests.suite.ci_bindings",
                       "tests.native.broken")
TIMEOUT = ("--conformance-timeout", "0.2")
OFF = ("--conformance-cassettes=off",)

#: Each broken binding: the requirements it breaks, and the options its tests run it with.
BREAKS: dict[str, tuple[str, tuple[str, ...]]] = {
    f"{B}:Hanging": ("SIG-6", TIMEOUT),
    f"{B}:Nonsense": ("LOOP-1", ()),
    f"{B}:Raising": ("LOOP-1", ()),
    f"{B}:PassingKnownFailure": ("LOOP-2", ()),
    f"{B}:BrokenSmoke": ("LOOP-1", ()),
    f"{B}:HangsInBuild": ("LOOP-1", TIMEOUT),
    f"{B}:ExitsInBuild": ("LOOP-1", ()),
    f"{B}:InterruptedInBuild": ("LOOP-1", ()),
    f"{B}:LeaksAThread": ("LOOP-2", ()),
    f"{B}:ConcurrentNonsense": ("ASYNC-2", ()),
    f"{B}:ThreadedNonsense": ("ADP-3", ()),
    f"{B}:IgnoresTheCap": ("LOOP-3,LOOP-4", ()),
    f"{B}:NeverStops": ("LOOP-3", ()),
    f"{B}:HangsOnTheFirstTry": ("ERR-2,ERR-3", ("--conformance-timeout", "0.5")),
    f"{B}:StopsAStepEarly": ("LOOP-3,LOOP-4,TRJ-3,ERR-2,STREAM-1", ()),
    f"{B}:DropsTheAdapterOverride": ("ADP-2", ()),
    f"{B}:ReordersTheTrajectory": ("TRJ-3", ()),
    f"{B}:RunsUnknownTools": ("LOOP-5", ()),
    f"{B}:LeaksTheAdapterOverride": ("ADP-1,ADP-2,ADP-3", ()),
    f"{B}:ReplaysTheStream": ("STREAM-1", ()),
    f"{B}:BlocksTheEventLoop": ("ASYNC-2", ()),
    f"{B}:SharesTheAdapterAcrossRuns": ("ASYNC-2", ()),
    f"{B}:RunsBeforeApproval": ("HITL-3", ()),
    f"{B}:KeepsTheCallOnTheAgent": ("ASYNC-2", ()),
    f"{B}:KnowsItIgnoresTheCap": ("LOOP-3,LOOP-4", ()),
    f"{B}:HidesTheArgumentSchema": ("STEP-3", ()),
    f"{B}:NamesNoStatus": ("NET-1", ()),
    f"{B}:AsksNoOneByDefault": ("HITL-1", ()),
    f"{B}:ApprovesEveryToolByDefault": ("HITL-3", ()),
    f"{B}:SkipsUnknownTools": ("LOOP-5", ()),
    f"{B}:GuessesMalformedArgs": ("ARGS-3", ()),
    f"{B}:RestartsTheBudgetOnResume": ("HITL-5", ()),
    f"{B}:BacksOffConstantly": ("NET-1", ()),
    f"{B}:WaitsForEver": ("NET-1", ()),
    f"{B}:IgnoresRetryAfter": ("NET-1", ()),
    f"{B}:DropsFieldDescriptions": ("SIG-2", ()),
    f"{B}:NamesEveryInput": ("SIG-6", ()),
    f"{B}:CrashesOnAReplyWithoutArgs": ("ARGS-3", ()),
    f"{B}:CrashesOnAFencedReply": ("ARGS-3", ()),
    f"{B}:CountsTheMissingInputs": ("SIG-6", ()),
    f"{B}:CrashesOnArgsThatAreNotAnObject": ("ARGS-2", ()),
    f"{B}:ForgetsTheDepthOnEachClose": ("ARGS-5", ()),
    f"{B}:KeepsNumbersInTextOutputs": ("EXT-1", ()),
    f"{B}:KeepsUnparsedNumbers": ("EXT-1", ()),
    f"{B}:GuessesUnparsedNumbers": ("EXT-1", ()),
    f"{B}:FailsOnUnparsedNumbersWithoutSaying": ("EXT-1", ()),
    f"{B}:CrashesOnADeeplyNestedOutput": ("EXT-1", ()),
    f"{B}:EmptiesADeeplyNestedOutput": ("EXT-1", ()),
    f"{B}:LosesThePartialAnswer": ("EXH-3", ()),
    f"{B}:LosesTrackOfEscapes": ("ARGS-5", ()),
    f"{B}:NamesOnlyTheMisspelledInput": ("SIG-6", ()),
    f"{B}:NamesTheInputBare": ("SIG-6", ()),
    f"{B}:QuotesOnlyTheEndpoint": ("NET-1", ()),
    f"{B}:ReadsArrowStringsAsText": ("EXT-1", ()),
    f"{B}:RefusesWholeFloats": ("EXT-1", ()),
    f"{B}:ShowsAPlaceholderForStructuredResults": ("LOOP-1", ()),
    f"{B}:ShowsOnlyTextInputs": ("STEP-3", ()),
    f"{B}:SkipsTheLimitsUnderTheJSONAdapter": ("ARGS-5", ()),
    f"{B}:TriesOnceMoreAtOnce": ("NET-1", ()),
    f"{B}:CrashesOnAnUnparsableStep": ("STEP-4", ()),
    f"{B}:SaysNothingOfJSON": ("STEP-2", ()),
    f"{B}:SaysNothingOfTheSignature": ("SIG-5", ()),
    f"{B}:HasNoArrowStrings": ("SIG-1,SIG-4,SIG-5", ()),
    f"{B}:RepeatsTheLastStreamStep": ("STREAM-1,LOOP-4", ()),
    f"{HTTP}:RetriesRefusals": ("NET-1", OFF),
    f"{HTTP}:AmendsRetries": ("NET-1", OFF),
    f"{CI}:NoSizeLimit": ("ARGS-5", ()),
    f"{CI}:DropsEmptyKeys": ("ARGS-1", ()),
    f"{NATIVE}:CrashesOnToolError": ("ERR-1", ()),
    f"{NATIVE}:DropsTheLastStepAnswer": ("LOOP-3,EXH-7", ()),
    f"{NATIVE}:RepairsMalformedArgs": ("ARGS-3", ()),
    f"{NATIVE}:SkipsUnknownTools": ("LOOP-5", ()),
    f"{NATIVE}:NeverStopsOnRepeatedErrors": ("ERR-2", ()),
    f"{NATIVE}:ReportsTheLastStepAnswerAsACapStop": ("LOOP-3", ()),
    f"{NATIVE}:ShowsOnlyTheLastFiveSteps": ("STEP-3", ()),
    f"{NATIVE}:OffersAToolTheAgentLacks": ("STEP-1", ()),
    f"{NATIVE}:DropsFailedCallsFromTheTrajectory": ("TRJ-3", ()),
    f"{NATIVE}:TakesAZeroCapForTheDefault": ("EXH-3", ()),
    f"{NATIVE}:ForgetsTheStepsOnTheCap": ("EXH-2", ()),
    f"{NATIVE}:RaisesAPlainErrorOnTheCap": ("EXH-4", ()),
    f"{NATIVE}:AsksForApprovalAfterRunning": ("HITL-3", ()),
    f"{NATIVE}:BindsEveryObservationToTheFirstCall": ("ERR-1", ()),
    f"{NATIVE}:CatchesOnlyValueErrors": ("ERR-1", ()),
    f"{NATIVE}:CoercesLossily": ("ARGS-4", ()),
    f"{NATIVE}:DropsTheErrorMessage": ("ERR-4", ()),
    f"{NATIVE}:DropsUndeclaredArgs": ("ARGS-6", ()),
    f"{NATIVE}:ParsesArgsWithoutAGuard": ("ARGS-5", ()),
    f"{B}:ForgetsAnsweredPausesOnANewPause": ("HITL-6", ()),
    f"{B}:ResumesAnotherAgentsPause": ("HITL-6", ()),
    f"{B}:CannotResume": ("HITL-4,HITL-6", ()),
    f"{B}:RunsAReplayedPauseAgain": ("HITL-8", ()),
    f"{B}:RunsTheCallOnAnEditOfNoTool": ("HITL-7", ()),
    f"{B}:SharesThePausedTrajectory": ("TRJ-2", ()),
    f"{B}:RejectsWithoutTellingTheAgent": ("HITL-4", ()),
    f"{B}:CrashesAtLengthOnARaisingTool": ("ERR-1", ()),
    f"{B}:PrintsAtLength": ("LOOP-1", ()),
    f"{B}:LeavesAnAsyncAuxiliaryCallUnnamed": ("ASYNC-2", ()),
    f"{B}:ReadsAMissingArgsFieldAsEmpty": ("STEP-4", ()),
    f"{B}:ForgetsTheCallsCapOnResume": ("HITL-5", ()),
    f"{B}:RefusesABadEditWithoutSayingWhy": ("HITL-7", ()),
    f"{NATIVE}:ReadsMalformedArgsAsEmpty": ("ARGS-3", ()),
    f"{NATIVE}:KeepsCountingAfterAnAnswer": ("EXH-6", ()),
    f"{NATIVE}:CallsTheModelOnAZeroCallCap": ("EXH-3", ()),
    f"{NATIVE}:RunsTheEditUnchecked": ("HITL-7", ()),
    f"{B}:MutatesNothing": ("TRJ-2", ()),
    f"{B}:AsksAStepLate": ("LOOP-3,TRJ-3,EXH-2,EXT-2,EXH-5,EXH-1,EXH-3,EXH-6,LOOP-4", ()),
    f"{B}:RecordsArgsAsText": ("TRJ-1,LOOP-1,TRJ-2,TRJ-3,ERR-1,ASYNC-1,ASYNC-2,STREAM-1", ()),
    f"{NATIVE}:JoinsTheTextOfEveryReply": ("LOOP-7,ERR-1,LOOP-3,LOOP-5,ARGS-2,ARGS-4,ARGS-6,EXH-7", ()),
    f"{NATIVE}:IgnoresTheCallsCap": ("LOOP-4,LOOP-3", ()),
}
#: The broken bindings that cannot give the same verdicts both ways, by design.
DIFFERENT_BY_DESIGN = {
    # The process ends, or is interrupted, at a count of runs or builds in one process: a serial run
    # stops there, while two workers each count their own, and pytest-xdist starts new ones
    # (test_runner_faults.py checks their -n 2 reports).
    f"{B}:KillsTheProcess", f"{B}:KillsTheProcessInOneScenario", f"{B}:InterruptedLater",
    # Usage errors: no scenario runs at all (test_runner_faults.py, test_loader_errors.py).
    f"{B}:StaleKnownFailure", f"{CI}:Abstract", f"{CI}:RaisesOnCreation",
    f"{CI}:NoneKnownFailureReason", f"{CI}:BlankKnownFailureReason",
    f"{B}:MistypedKnownFailures",  # test_known_failures.py
}
#: The broken bindings of the robustness tests, which run each serially and under `-n 2` themselves
#: (test_blame.py, test_text_safety.py, test_known_failures.py, test_fuzz_options.py,
#: test_verdicts.py): the fuzzing
#: at scale they need would cost minutes here.
COMPARED_WHERE_THEY_ARE_TESTED = {
    f"{B}:AssertsInRun", f"{B}:ConstructsAnInvalidOutcome", f"{B}:CrashesOnTheThirdFuzzedCall",
    f"{B}:RaisesOnTheThirdFuzzedCall", f"{B}:NeverStopsThenHangs",
    f"{B}:HangsOnFuzzedData", f"{B}:ListsAFuzzFailureItPasses", f"{B}:LosesArgsAtScale",
    f"{B}:SpeaksAtLength", f"{B}:SpeaksInCommands", f"{B}:SpeaksInSurrogates",
    f"{CI}:NoisyAndFailsAtScale",
    f"{B}:BlockedByAPassedRequirement",  # test_verdicts.py, serially and under -n 2
    f"{B}:FailsTheSmokeTierByDesign",  # test_verdicts.py, serially and under -n 2
    f"{B}:ChangesDirectory", f"{B}:BreaksTheMarkdownFolder",  # test_text_safety.py, both ways
    f"{B}:RunsOutOfResources",  # test_runner_faults.py, serially and under -n 2
    f"{B}:ReturnsWhatRunsOutOfResourcesToRead",  # test_runner_faults.py, serially and under -n 2
    f"{B}:ListsAPassedRequirementById", f"{B}:ListsTheCapById",  # test_known_failures.py
    f"{B}:PointsTheLibraryAtAnUnservedAPI",  # test_verdicts.py, test_isolate.py both ways
    # test_isolate.py drives it through the contract, in process and in the isolated worker.
    f"{B}:ReadsTheModelsLog",
    # test_contract.py, serially and under -n 2.
    f"{B}:HandsOutAnImmutableTrajectory", f"{B}:SaysRefusedWithoutSayingWhat",
    # test_contract.py: two scenarios, EXT-2's and LOOP-7's.
    f"{B}:JoinsEveryThoughtIntoTheAnswer", f"{B}:AnswersSomethingElseOnTheCap",
}


def test_every_broken_binding_in_tests_is_compared() -> None:
    found = set()
    for module in (B, HTTP, CI, NATIVE):
        for name, value in vars(importlib.import_module(module)).items():
            if (inspect.isclass(value) and issubclass(value, Binding) and not name.startswith("_")
                    and value.__module__ == module):
                found.add(f"{module}:{name}")
    elsewhere = DIFFERENT_BY_DESIGN | COMPARED_WHERE_THEY_ARE_TESTED
    assert found - set(BREAKS) - elsewhere == set(), "add them to BREAKS"
    assert set(BREAKS) | elsewhere <= found, "stale names"


def _verdicts(run: SuiteRun) -> tuple[dict[str, str], dict[str, str]]:
    assert run.report is not None, run.output[-3000:]
    return run.report["requirements"], {s["id"]: s["verdict"] for s in run.report["scenarios"]}


@pytest.mark.parametrize("binding", sorted(BREAKS))
def test_a_broken_binding_gets_the_same_verdicts_serially_and_in_parallel(
    tmp_path: Path, binding: str
) -> None:
    requirements, options = BREAKS[binding]
    args = ("-p", "tests.suite.only", "--only", requirements, *options)
    (tmp_path / "serial").mkdir()
    (tmp_path / "parallel").mkdir()
    with ThreadPoolExecutor(2) as pool:  # the two child runs at once: most of each is start-up
        serial = pool.submit(suite_run, tmp_path / "serial", binding, *args)
        parallel = pool.submit(suite_run, tmp_path / "parallel", binding, *args, "-n", "2")
    judged, scenarios = _verdicts(serial.result())
    assert _verdicts(parallel.result()) == (judged, scenarios), parallel.result().output[-3000:]
    if binding != f"{B}:InterruptedInBuild":  # interrupted in its first build: nothing is judged
        assert set(requirements.split(",")) <= set(judged), "the runs missed what the binding breaks"
