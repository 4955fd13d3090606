"""Known failures are names of the whole catalogue, whichever scenarios a run selects; a fuzz known
failure applies, strictly, only to a run that fuzzes at scale."""

from __future__ import annotations

import json
from pathlib import Path

from conformance._known_failures import PLACEHOLDER, as_json
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


def _pasted(output: str) -> str:
    """The `known_failures = {...}` block a failing run printed."""
    lines = output.splitlines()
    start = lines.index("known_failures = {")
    end = lines.index("}", start)
    return "\n".join(lines[start:end + 1])


def test_a_failing_run_prints_the_known_failures_that_would_list_what_failed(
    run_suite: RunSuite, tmp_path: Path,
) -> None:
    failing = run_suite("tests.suite.bindings:IgnoresTheCap", "-k", "step_cap")
    assert failing.returncode == 1, failing.output[-3000:]
    assert failing.report is not None
    failed = {s["id"] if "[" in s["id"] else s["name"]
              for s in failing.report["scenarios"] if s["verdict"] == "failed"}
    assert failed
    block = _pasted(failing.output)
    namespace: dict[str, dict[str, str]] = {}
    exec(block, namespace)  # the suite's own output, as a maintainer pastes it
    assert set(namespace["known_failures"]) == failed
    assert set(namespace["known_failures"].values()) == {PLACEHOLDER}

    # Pasted as printed, the placeholder is refused; with reasons, the run passes.
    module = tmp_path / "pasted.py"
    body = "\n".join("    " + line for line in block.splitlines())
    module.write_text("from tests.suite.bindings import IgnoresTheCap\n\n\n"
                      f"class Pasted(IgnoresTheCap):\n{body}\n")
    refused = run_suite("pasted:Pasted", "-k", "step_cap")
    assert refused.returncode == 4, refused.output[-3000:]
    assert "still gives the placeholder reason" in refused.output
    module.write_text(module.read_text().replace(PLACEHOLDER, "runs one step past its cap"))
    listed = run_suite("pasted:Pasted", "-k", "step_cap")
    assert listed.returncode == 0, listed.output[-3000:]
    assert "known_failures that would list" not in listed.output


def test_runxfail_shows_listed_known_failures_without_suggesting_them_again(
    run_suite: RunSuite,
) -> None:
    # The site's Reproduce command for a known failure adds pytest's --runxfail.
    shown = run_suite("tests.suite.bindings:KnowsItIgnoresTheCap", "-k", "step_cap", "--runxfail")
    assert shown.returncode == 1, shown.output[-3000:]
    assert shown.report is not None
    assert any(s["verdict"] == "failed" for s in shown.report["scenarios"])
    assert "listed in known_failures ran as plain failures" in shown.output
    suggested: dict[str, dict[str, str]] = {}
    exec(_pasted(shown.output), suggested)
    failed = {s["name"]: s["requirement"] for s in shown.report["scenarios"] if s["verdict"] == "failed"}
    assert "LOOP-3" in failed.values()  # listed by ID: shown, never suggested again
    assert set(suggested["known_failures"]) == {n for n, r in failed.items() if r != "LOOP-3"}


def test_a_passing_run_prints_no_known_failures(run_suite: RunSuite) -> None:
    run = run_suite("reference", "-k", "step_cap")
    assert run.returncode == 0, run.output[-3000:]
    assert "known_failures" not in run.output


def test_a_harness_gets_the_entries_as_its_welcome_writes_them() -> None:
    names = ["A scenario", "test_x[a-b]", 'quoted "name"']
    welcome = json.loads("{" + as_json(names) + "}")
    assert welcome == {"known_failures": dict.fromkeys(names, PLACEHOLDER)}


LOOP3 = "-k", "step_cap_stops or cap_of_one_allows or final_answer_on_step_n"


def test_a_requirement_listed_by_id_covers_only_its_failing_scenarios(run_suite: RunSuite) -> None:
    run = run_suite("tests.suite.bindings:ListsTheCapById", *LOOP3)
    assert run.returncode == 0, run.output[-3000:]
    assert run.report is not None
    assert run.report["requirements"] == {"LOOP-3": "known-failure"}
    verdicts = {s["id"]: s["verdict"] for s in run.report["scenarios"]}
    assert verdicts["test_a_final_answer_on_step_n_of_a_cap_of_n_is_reported_as_a_final_answer"] == "passed"
    assert sorted(verdicts.values()) == ["known-failure", "known-failure", "passed"]
    assert run.report["judged"] == {"LOOP-3": [2, 3]}
    assert "LOOP-3    MUST   known-failure (2 of 3) runs one step past its cap" in run.output
    assert "listed as a known failure but passed" not in run.output


def test_a_requirement_listed_by_id_whose_every_scenario_passed_fails_the_run(
    run_suite: RunSuite,
) -> None:
    run = run_suite("tests.suite.bindings:ListsAPassedRequirementById", *LOOP3)
    assert run.returncode == 1, run.output[-3000:]
    assert run.requirements("failed") == {"LOOP-3"}
    assert run.report is not None
    assert run.report["reasons"]["LOOP-3"].startswith(
        "listed as a known failure but passed: LOOP-3 is listed by ID and every one of its scenarios passed")
    assert "3 failed" in run.output
