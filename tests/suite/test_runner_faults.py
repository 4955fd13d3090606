"""A binding that hangs, exits, interrupts, crashes or leaks never hangs, kills or misleads the run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance import _guard
from conformance._report import Report
from tests.suite.conftest import RunSuite, SuiteRun, suite_run

B = "tests.suite.bindings"


def _verdicts(run: SuiteRun) -> set[str]:
    assert run.report is not None, run.output[-3000:]
    return {s["verdict"] for s in run.report["scenarios"]}


def test_a_binding_hanging_in_build_costs_its_scenarios_not_the_run(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:HangsInBuild", "--conformance-timeout", "0.2", timeout=180)
    assert run.report is not None, run.output[-3000:]
    hung = [s for s in run.report["scenarios"] if "binding.build did not return within 0.2 s" in s["message"]]
    assert hung, run.report["scenarios"][:3]
    assert run.report["complete"] is True


def test_systemexit_in_build_is_a_binding_fault(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:ExitsInBuild")
    assert run.returncode == 1
    assert "failed" not in _verdicts(run), run.report
    assert "errored" in _verdicts(run)
    assert run.report is not None
    assert any("binding.build raised SystemExit(3)" in s["message"] for s in run.report["scenarios"])


def test_keyboardinterrupt_in_build_stops_the_run_and_the_report_says_so(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    markdown = tmp_path / "report.md"
    run = run_suite(f"{B}:InterruptedInBuild", "--conformance-markdown", str(markdown))
    assert run.returncode == 2, run.output[-3000:]  # pytest's "interrupted"
    assert run.report is not None, run.output[-3000:]
    report = Report.model_validate(run.report)
    assert report.complete is False
    assert report.stopped_by and "KeyboardInterrupt" in report.stopped_by
    # No requirement is judged on scenarios that never ran.
    assert "passed" not in report.requirements.values()
    assert "partial report" in markdown.read_text()


def test_a_binding_ending_the_process_leaves_a_valid_partial_report(
    run_suite: RunSuite, tmp_path: Path
) -> None:
    markdown = tmp_path / "report.md"
    run = run_suite(f"{B}:KillsTheProcess", "--conformance-markdown", str(markdown))
    assert run.returncode == 7, run.output[-3000:]
    assert run.report is not None, run.output[-3000:]
    report = Report.model_validate(run.report)
    assert report.complete is False
    assert report.stopped_by
    assert 1 <= len(report.scenarios) < 50
    assert "partial report" in markdown.read_text()


def test_a_leaked_thread_neither_keeps_the_run_alive_nor_goes_unnamed(run_suite: RunSuite) -> None:
    run = run_suite(f"{B}:LeaksAThread", "-k", "finish_stops", timeout=120)
    assert run.returncode == 0, run.output[-3000:]
    assert "leaked-by-the-binding" in run.output
    assert run.report is not None and run.report["complete"] is True


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


@pytest.mark.parametrize("binding", ["BrokenSmoke", "ExitsInBuild", "Raising"])
def test_a_broken_binding_gets_the_same_verdicts_serially_and_in_parallel(
    tmp_path: Path, binding: str
) -> None:
    (tmp_path / "serial").mkdir()
    (tmp_path / "parallel").mkdir()
    serial = suite_run(tmp_path / "serial", f"{B}:{binding}")
    parallel = suite_run(tmp_path / "parallel", f"{B}:{binding}", "-n", "2")
    assert serial.report is not None and parallel.report is not None, parallel.output[-3000:]
    assert parallel.report["requirements"] == serial.report["requirements"]
    assert ({s["id"]: s["verdict"] for s in parallel.report["scenarios"]}
            == {s["id"]: s["verdict"] for s in serial.report["scenarios"]})


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # 3.12+
def test_a_forked_process_calls_the_binding_on_a_worker_of_its_own() -> None:
    # mutmut's fork server runs each mutant in a process forked from one that already called the
    # binding: the inherited worker has no thread there, and a call must not wait on it for ever.
    assert _guard.call("warm up", lambda: 1, timeout=5) == 1
    child = os.fork()
    if child == 0:
        os._exit(0 if _guard.call("build", lambda: 2, timeout=5) == 2 else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
