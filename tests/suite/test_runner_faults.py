"""A binding that hangs, exits, interrupts, crashes or leaks never hangs, kills or misleads the run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="module")
def every_scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The requirement of every scenario, from a whole run of the reference."""
    run = suite_run(tmp_path_factory.mktemp("reference"), "reference")
    assert run.report is not None and run.report["complete"], run.output[-3000:]
    return {s["id"]: s["requirement"] for s in run.report["scenarios"]}


def _judged_on_all_their_scenarios(report: Report, every_scenario: dict[str, str]) -> None:
    assert report.requirements, "a partial report judged no requirement at all"
    for rid in report.requirements:
        ran = {s.id for s in report.scenarios if s.requirement == rid}
        assert ran == {i for i, r in every_scenario.items() if r == rid}, rid


def _parallel_report(workdir: Path, binding: str) -> Report:
    run = suite_run(workdir, f"{B}:{binding}", "-n", "2")
    assert run.report is not None, run.output[-3000:]
    return Report.model_validate(run.report)


def test_an_interrupted_parallel_run_reports_the_requirements_it_finished(
    tmp_path: Path, every_scenario: dict[str, str]
) -> None:
    # Under -n 2 a partial report once judged no requirement: the controller, which writes the
    # report, collects nothing, so it did not know which scenarios each requirement has.
    markdown = tmp_path / "report.md"
    run = suite_run(tmp_path, f"{B}:InterruptedLater", "-n", "2", "--conformance-markdown", str(markdown))
    assert run.returncode == 2, run.output[-3000:]  # pytest's "interrupted"
    assert run.report is not None, run.output[-3000:]
    report = Report.model_validate(run.report)
    assert report.complete is False
    assert report.stopped_by and "KeyboardInterrupt in a pytest-xdist worker in test_" in report.stopped_by
    # The scenario the interrupt stopped has no verdict: it neither failed nor errored.
    assert {s.verdict for s in report.scenarios} <= {"passed", "not-claimed"}, report.scenarios
    _judged_on_all_their_scenarios(report, every_scenario)
    assert len(report.scenarios) < len(every_scenario)
    text = markdown.read_text()
    assert "partial report" in text and next(iter(report.requirements)) in text


def test_a_worker_process_ending_in_a_scenario_costs_that_scenario_errored(
    tmp_path: Path, every_scenario: dict[str, str]
) -> None:
    # Under -n 2 the scenario a worker died in was once left out of the report, and its
    # requirement passed on the scenarios that remained.
    report = _parallel_report(tmp_path, "KillsTheProcessInOneScenario")
    errored = [s for s in report.scenarios if s.verdict == "errored"]
    assert len(errored) == 1 and errored[0].requirement == "LOOP-1", errored
    assert "the process running this scenario ended in it" in errored[0].message
    assert "crashed while running" in errored[0].message
    assert report.requirements["LOOP-1"] == "errored"
    assert {s.id for s in report.scenarios} == set(every_scenario)
    assert report.complete is True  # every scenario has its verdict


def test_a_parallel_run_that_runs_out_of_workers_is_partial_and_says_so(
    tmp_path: Path, every_scenario: dict[str, str]
) -> None:
    # Every worker process ends at its fifth run; pytest-xdist gives up after a few: the report once
    # said complete, and judged requirements on the few scenarios that had run.
    report = _parallel_report(tmp_path, "KillsTheProcess")
    assert report.complete is False
    assert report.stopped_by and "selected scenarios never ran" in report.stopped_by
    assert "worker processes ended in a scenario" in report.stopped_by
    errored = [s for s in report.scenarios if s.verdict == "errored"]
    assert errored and all("the process running this scenario ended" in s.message for s in errored)
    _judged_on_all_their_scenarios(report, every_scenario)


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


def test_a_forked_child_runs_binding_operations_on_its_own_thread() -> None:
    # mutmut forks one process per mutant from one that has already run the suite: the binding
    # thread it inherits by name does not exist there, and every operation would time out as hung.
    assert _guard.call("build", lambda: "parent", 5) == "parent"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status only
        try:
            os._exit(0 if _guard.call("build", lambda: "child", 5) == "child" else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_scenario_that_runs_out_of_a_resource_is_errored_and_says_what_ran_out(
    run_suite: RunSuite, workers: list[str]
) -> None:
    run = run_suite(f"{B}:RunsOutOfResources", "-k", "LOOP or not_text or EMFILE or STEP", *workers)
    assert run.report is not None and run.report["complete"], run.output[-3000:]
    messages = {s["message"] for s in run.report["scenarios"] if s["verdict"] == "errored"}
    assert any(m.startswith("binding.run ran out of memory (MemoryError)") for m in messages), messages
    assert all("--conformance-isolate" in m for m in messages), messages
    assert "passed" in {s["verdict"] for s in run.report["scenarios"]}  # the others still ran
    assert "ran out of memory (MemoryError)" in run.output and "--conformance-isolate" in run.output


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_resource_that_runs_out_outside_the_binding_call_is_errored_and_says_what_ran_out(
    run_suite: RunSuite, workers: list[str]
) -> None:
    # Out of the binding call (the suite's own step reading what it returned), the scenario was
    # errored as "MemoryError: " with a suite bug suspected: no word of what ran out, nor of
    # --conformance-isolate.
    run = run_suite(f"{B}:ReturnsWhatRunsOutOfResourcesToRead", "-k", "LOOP or not_text or STEP",
                    *workers)
    assert run.report is not None and run.report["complete"], run.output[-3000:]
    messages = {s["message"] for s in run.report["scenarios"] if s["verdict"] == "errored"}
    assert any(m.startswith("the scenario ran out of memory (MemoryError)") for m in messages), messages
    assert any(m.startswith("the scenario ran out of stack (recursion depth) (RecursionError")
               for m in messages), messages
    assert all("--conformance-isolate" in m and "suite has a bug" not in m for m in messages), messages
    assert "passed" in {s["verdict"] for s in run.report["scenarios"]}  # the others still ran
    assert "ran out of memory (MemoryError)" in run.output and "--conformance-isolate" in run.output


def test_a_harness_reply_the_suite_runs_out_of_memory_decoding_is_errored_not_hung(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The reader thread died on the MemoryError: the run waited out its time limit and was
    # reported hung, blamed on the library.
    import shlex
    import sys

    from conformance import _protocol
    from conformance._model import ScriptedModel
    from conformance._process import process_binding
    from conformance.binding import AgentSpec, CallRequest, FinalTurn, SignatureSpec

    decode = _protocol.decode

    def short_of_memory(adapter: Any, line: str) -> Any:
        if '"type":"ran"' in line:
            raise MemoryError()
        return decode(adapter, line)

    command = shlex.join([sys.executable, "-m", "conformance._isolate", "reference"])
    binding = process_binding(command, timeout=5)
    agent = binding.build(AgentSpec(signature=SignatureSpec(text="question -> answer"), tools=()), [])
    monkeypatch.setattr(_protocol, "decode", short_of_memory)
    model = ScriptedModel([FinalTurn(outputs={"answer": "5"})], finish_then_extract=False)
    with pytest.raises(_guard.BindingError) as raised:
        binding.run(agent, CallRequest(inputs={"question": "q"}), model)
    assert not isinstance(raised.value, _guard.ImplementationHung)
    assert "ran out of memory (MemoryError)" in str(raised.value), raised.value
    assert "--conformance-isolate" in str(raised.value)
