"""`--conformance-isolate`: a Python binding in a worker process gets the in-process verdicts, and a
crash or `os._exit` in it costs the scenario it happened in, not the run."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from conformance._model import ScriptedModel
from conformance._process import process_binding
from conformance.binding import Binding, CallRequest, Outcome
from conformance.bindings.reference import ReferenceBinding
from tests.suite.bindings import PassingKnownFailure, ReadsTheModelsLog
from tests.suite.conftest import SuiteRun, suite_run

B = "tests.suite.bindings"
#: LOOP-1's scenario, the one `KillsTheProcessInOneScenario` ends the process in.
KILLED = "The chosen tool runs with exactly the chosen args and its result becomes an observation"


def _verdicts(run: SuiteRun) -> dict[str, str]:
    assert run.report is not None, run.output[-3000:]
    return {s["id"]: s["verdict"] for s in run.report["scenarios"]}


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    return suite_run(tmp_path_factory.mktemp("in-process"), "reference")


def test_the_isolated_reference_gets_the_in_process_verdicts(
    in_process: SuiteRun, tmp_path: Path
) -> None:
    isolated = suite_run(tmp_path, "reference", "--conformance-isolate")
    assert isolated.returncode == 0, isolated.output[-3000:]
    assert isolated.report is not None and in_process.report is not None
    assert isolated.report["binding"]["name"] == "reference"
    assert isolated.report["complete"] is True
    assert _verdicts(isolated) == _verdicts(in_process)
    assert isolated.report["requirements"] == in_process.report["requirements"]


def test_os_exit_in_one_scenario_costs_only_that_scenario_under_isolation(
    in_process: SuiteRun, tmp_path: Path
) -> None:
    run = suite_run(tmp_path, f"{B}:KillsTheProcessInOneScenario", "--conformance-isolate")
    assert run.report is not None, run.output[-3000:]
    assert run.report["complete"] is True, run.report.get("stopped_by")
    killed = [s for s in run.report["scenarios"] if s["name"] == KILLED]
    assert [s["verdict"] for s in killed] == ["errored"], killed
    assert "exited with code 7" in killed[0]["message"]
    others = {i: v for i, v in _verdicts(run).items() if i != killed[0]["id"]}
    expected = {i: v for i, v in _verdicts(in_process).items() if i != killed[0]["id"]}
    assert others == expected
    assert set(others.values()) == {"passed", "not-claimed"}


def test_the_worker_welcome_carries_what_the_binding_declares() -> None:
    command = shlex.join([sys.executable, "-m", "conformance._isolate", f"{B}:PassingKnownFailure"])
    binding = process_binding(command, timeout=30)
    assert binding.name == "reference"
    assert binding.contract_version == ReferenceBinding.contract_version
    assert binding.capabilities == ReferenceBinding.capabilities
    assert dict(binding.not_claimed) == dict(ReferenceBinding.not_claimed)
    assert dict(binding.known_failures) == dict(PassingKnownFailure.known_failures)
    # What a scenario reads of the binding: ASYNC-2 builds an agent per run by its parity.
    assert dict(binding.fuzz_known_failures) == dict(PassingKnownFailure.fuzz_known_failures)
    assert dict(binding.auxiliary_calls) == dict(PassingKnownFailure.auxiliary_calls)
    assert binding.approval_form == PassingKnownFailure.approval_form
    assert dict(binding.parity) == dict(PassingKnownFailure.parity) != {}


def test_a_bad_name_under_isolation_is_a_usage_error_naming_the_cause(tmp_path: Path) -> None:
    run = suite_run(tmp_path, f"{B}:NoSuchBinding", "--conformance-isolate")
    assert run.returncode == 4, run.output[-3000:]  # pytest's usage error
    assert "could not load 'NoSuchBinding'" in run.output


def _model_log_outcomes(binding: Binding) -> list[Outcome]:
    """Two calls on one model (as a run and its resume are), then one whose script holds a fault."""
    from conformance.binding import AgentSpec, FaultTurn, FinalTurn, SignatureSpec, StepTurn

    agent = binding.build(AgentSpec(signature=SignatureSpec(), tools=()), [])
    step = StepTurn(thought="t", tool_name="add", tool_args={})
    final = FinalTurn(outputs={"answer": "5"})
    model = ScriptedModel([step, step, final, step, final], finish_then_extract=False)
    request = CallRequest(inputs={"question": "q"})
    faulty = ScriptedModel([FaultTurn(fault="connection"), final], finish_then_extract=False)
    return [binding.run(agent, request, model), binding.run(agent, request, model),
            binding.run(agent, request, faulty)]


def test_an_isolated_seam_reads_the_model_s_log_as_in_process() -> None:
    # The worker's model logged nothing: every reply was numbered 0 (call ids all `call_0`, so
    # results kept by call id overwrote each other: TRJ-1, TRJ-3, ERR-1, HITL-5 and ASYNC-2 failed
    # isolated and passed in process), a resume numbered afresh, and no script held a fault.
    command = shlex.join([sys.executable, "-m", "conformance._isolate", f"{B}:ReadsTheModelsLog"])
    isolated = _model_log_outcomes(process_binding(command, timeout=30))
    in_process = _model_log_outcomes(ReadsTheModelsLog())
    assert [o.model_dump() for o in isolated] == [o.model_dump() for o in in_process]
    assert [s.call_id for s in in_process[1].trajectory] == ["call_4"]
    assert [o.fallback for o in in_process] == [
        "fault scripted: False", "fault scripted: False", "fault scripted: True"]


def test_an_isolated_binding_that_hangs_fails_its_scenarios_as_in_process(tmp_path: Path) -> None:
    # The worker's replies waited only 0.9 of the suite's limit: a library that hangs in a run was
    # reported as a stalled worker (errored), not as the hang the same binding is in process; and
    # the worker's one binding thread, stuck in the hung run, left every later operation waiting.
    args = ("--conformance-timeout", "1", "-k", "malformed or lacks_a_required")
    (tmp_path / "in").mkdir(), (tmp_path / "iso").mkdir()
    in_process = suite_run(tmp_path / "in", f"{B}:Hanging", *args)
    isolated = suite_run(tmp_path / "iso", f"{B}:Hanging", *args, "--conformance-isolate")
    assert isolated.report is not None and in_process.report is not None, isolated.output[-3000:]
    hung = [s for s in isolated.report["scenarios"] if "did not return within 1 s" in s["message"]]
    assert len(hung) >= 2 and {s["verdict"] for s in hung} == {"failed"}, hung
    assert [(s["verdict"], s["message"]) for s in isolated.report["scenarios"]] == [
        (s["verdict"], s["message"]) for s in in_process.report["scenarios"]]


def test_an_isolated_seam_s_refusal_is_the_binding_s_error_as_in_process(tmp_path: Path) -> None:
    # The worker's model kept the seam's refusal (a request to a path it does not serve) to
    # itself: the suite's model never held it, so the library's failure on the refusal was judged
    # as the library's, where in process the scenario is errored as the binding's.
    args = ("-k", "finish")
    (tmp_path / "in").mkdir(), (tmp_path / "iso").mkdir()
    in_process = suite_run(tmp_path / "in", f"{B}:PointsTheLibraryAtAnUnservedAPI", *args)
    isolated = suite_run(tmp_path / "iso", f"{B}:PointsTheLibraryAtAnUnservedAPI", *args,
                         "--conformance-isolate")
    assert isolated.report is not None and in_process.report is not None, isolated.output[-3000:]
    refused = [s for s in isolated.report["scenarios"] if "'/v1/completions'" in s["message"]]
    assert refused and {s["verdict"] for s in refused} == {"errored"}, isolated.output[-3000:]
    assert [(s["verdict"], s["message"]) for s in isolated.report["scenarios"]] == [
        (s["verdict"], s["message"]) for s in in_process.report["scenarios"]]


def test_an_isolated_binding_that_runs_out_of_memory_says_what_ran_out(tmp_path: Path) -> None:
    # The worker reported "binding.run raised MemoryError: ", where in process the scenario says
    # what ran out.
    run = suite_run(tmp_path, f"{B}:RunsOutOfResources", "-k", "not_text", "--conformance-isolate")
    assert run.report is not None, run.output[-3000:]
    messages = [s["message"] for s in run.report["scenarios"] if s["verdict"] == "errored"]
    assert len(messages) == 1, run.output[-3000:]
    assert "binding.run ran out of memory (MemoryError)" in messages[0], messages
    assert "Its worker process may be short of it too" in messages[0], messages


def test_an_isolated_worker_s_messages_name_no_folder_of_the_machine(tmp_path: Path) -> None:
    # The worker's command was quoted whole: every message of a harness failure carried the
    # interpreter's absolute path (a CI machine's, in a published report).
    folder = tmp_path / "machine-folder"
    folder.mkdir()
    (folder / "python").symlink_to(sys.executable)  # an interpreter on no PATH, out of the checkout
    (tmp_path / "run").mkdir()
    run = suite_run(tmp_path / "run", f"{B}:KillsTheProcessInOneScenario", "-k", "exactly",
                    "--conformance-isolate", "-ra", python=folder / "python")
    assert run.report is not None, run.output[-3000:]
    killed = [s["message"] for s in run.report["scenarios"] if s["verdict"] == "errored"]
    assert killed and "exited with code 7" in killed[0], run.output[-3000:]
    assert "'python -m conformance._isolate" in killed[0], killed
    assert str(folder) not in json.dumps(run.report) and str(folder) not in run.output
