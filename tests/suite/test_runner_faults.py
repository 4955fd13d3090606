"""A binding that hangs, exits, interrupts, crashes or leaks never hangs, kills or misleads the run."""

from __future__ import annotations

import pytest

from tests.suite.conftest import RunSuite, SuiteRun

B = "tests.suite.bindings"


def _verdicts(run: SuiteRun) -> set[str]:
    assert run.report is not None, run.output[-3000:]
    return {s["verdict"] for s in run.report["scenarios"]}


def test_a_binding_hanging_in_build_costs_its_scenarios_not_the_run(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:HangsInBuild", "--conformance-timeout", "0.2", timeout=180)
    assert run.report is not None, run.output[-3000:]
    hung = [s for s in run.report["scenarios"] if "binding.build did not return within 0.2 s" in s["message"]]
    assert hung, run.report["scenarios"][:3]


def test_systemexit_in_build_is_a_binding_fault(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:ExitsInBuild")
    assert run.returncode == 1
    assert "failed" not in _verdicts(run), run.report
    assert "errored" in _verdicts(run)
    assert run.report is not None
    assert any("binding.build raised SystemExit(3)" in s["message"] for s in run.report["scenarios"])


@pytest.mark.parametrize(("binding", "scenarios"), [
    ("ConcurrentNonsense", "fifty_overlapping"),
    ("ThreadedNonsense", "different_adapters_running_at_the_same_time"),
])
def test_a_non_outcome_from_concurrent_runs_is_errored(
    run_suite: RunSuite, binding: str, scenarios: str
) -> None:
    run = run_suite(f"{B}:{binding}", "-k", scenarios)
    assert run.report is not None, run.output[-3000:]
    assert run.report["scenarios"], run.output[-3000:]
    assert _verdicts(run) == {"errored"}, run.report["scenarios"]
    assert all("not a valid Outcome" in s["message"] for s in run.report["scenarios"])
