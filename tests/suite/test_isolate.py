"""`--conformance-isolate`: a Python binding in a worker process gets the in-process verdicts, and a
crash or `os._exit` in it costs the scenario it happened in, not the run."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from conformance._process import process_binding
from conformance.bindings.reference import ReferenceBinding
from tests.suite.bindings import PassingKnownFailure
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


def test_a_bad_name_under_isolation_is_a_usage_error_naming_the_cause(tmp_path: Path) -> None:
    run = suite_run(tmp_path, f"{B}:NoSuchBinding", "--conformance-isolate")
    assert run.returncode == 4, run.output[-3000:]  # pytest's usage error
    assert "could not load 'NoSuchBinding'" in run.output
