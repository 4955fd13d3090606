"""Known failures are names of the whole catalogue, whichever scenarios a run selects; a fuzz known
failure applies, strictly, only to a run that fuzzes at scale."""

from __future__ import annotations

from tests.suite.conftest import RunSuite

ANY_OBJECT = "Any JSON object the model writes reaches the tool intact"


def test_a_binding_listing_known_failures_by_scenario_name_reruns_any_one_scenario(
    run_suite: RunSuite,
) -> None:
    # KnowsItIgnoresTheCap lists a LOOP-3 scenario by name; neither run selects it.
    node = "conformance/_suite/test_conformance.py::test_choosing_finish_stops_the_loop_at_once"
    by_node = run_suite("tests.suite.bindings:KnowsItIgnoresTheCap", node)
    assert by_node.returncode == 0, by_node.output[-3000:]
    assert "1 passed" in by_node.output
    by_k = run_suite("tests.suite.bindings:KnowsItIgnoresTheCap", "-k", "any_json_object")
    assert by_k.returncode == 0, by_k.output[-3000:]
    assert by_k.requirements("passed") == {"ARGS-1"}


def test_a_fuzz_known_failure_applies_only_to_a_run_fuzzing_at_scale(run_suite: RunSuite) -> None:
    default = run_suite("tests.suite.bindings:LosesArgsAtScale", "-k", "any_json_object")
    assert default.returncode == 0, default.output[-3000:]
    assert default.requirements("passed") == {"ARGS-1"}

    fuzzed = run_suite("tests.suite.bindings:LosesArgsAtScale", "-k", "any_json_object",
                       "--conformance-examples", "150")
    assert fuzzed.returncode == 0, fuzzed.output[-3000:]
    assert fuzzed.requirements("known-failure") == {"ARGS-1"}
    assert fuzzed.report is not None
    assert fuzzed.report["reasons"]["ARGS-1"] == "data is lost after 100 calls"


def test_a_fuzz_known_failure_that_passes_at_scale_fails_the_run(run_suite: RunSuite) -> None:
    run = run_suite("tests.suite.bindings:ListsAFuzzFailureItPasses", "-k", "any_json_object",
                    "--conformance-examples", "60")
    assert run.returncode == 1, run.output[-3000:]
    assert run.requirements("failed") == {"ARGS-1"}
    assert "listed as a known failure but passed" in run.output




def test_an_entry_that_matches_nothing_is_a_usage_error_naming_the_closest_names(
    run_suite: RunSuite,
) -> None:
    run = run_suite("tests.suite.bindings:MistypedKnownFailures", "-k", "any_json_object")
    assert run.returncode == 4, run.output[-3000:]
    assert ("'Choosing finsh stops the loop at once': did you mean "
            "'Choosing finish stops the loop at once'") in run.output
    # A bare Outline id names no test; its rows' ids do.
    assert ("'test_approving_runs_the_pending_call_exactly_once': did you mean "
            "'test_approving_runs_the_pending_call_exactly_once[") in run.output
